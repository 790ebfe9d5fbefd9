// Base64 for data: URLs (the server reads them, the remote client writes them), against Qt's own
// codec on every length around the 3-byte groups, and the image type sniffed from a file's bytes.
#include <QFile>
#include <QRandomGenerator>
#include <QtTest>

#include "common/base64.h"

class Base64 : public QObject {
  Q_OBJECT
 private slots:
  void agrees_with_qt_both_ways() {
    QRandomGenerator random(7);
    for (int size = 0; size < 70; ++size) {
      QByteArray bytes(size, '\0');
      for (char& c : bytes) c = char(random.bounded(256));
      const std::string ours = kiln::encode_base64(bytes.toStdString());
      QCOMPARE(QByteArray::fromStdString(ours), bytes.toBase64());
      std::string back;
      QVERIFY(kiln::decode_base64(bytes.toBase64().toStdString(), back));
      QCOMPARE(QByteArray::fromStdString(back), bytes);
      // Without padding, and wrapped at 76 columns as MIME writers do, it still reads.
      QVERIFY(kiln::decode_base64(bytes.toBase64(QByteArray::OmitTrailingEquals).toStdString(), back));
      QCOMPARE(QByteArray::fromStdString(back), bytes);
    }
    std::string wrapped = kiln::encode_base64(std::string(200, 'x'));
    wrapped.insert(76, "\r\n");
    std::string back;
    QVERIFY(kiln::decode_base64(wrapped, back));
    QCOMPARE(back, std::string(200, 'x'));
  }

  void refuses_what_is_not_base64() {
    std::string out;
    QVERIFY(!kiln::decode_base64("aGVs!G8=", out));   // a character outside the alphabet
    QVERIFY(!kiln::decode_base64("aGVsbG8=aGVs", out));  // data after the padding
    QVERIFY(!kiln::decode_base64("aGVsb", out));      // one character of a group: cut off
    QVERIFY(!kiln::decode_base64("aGVsbG8-", out));   // the URL-safe alphabet is not data URLs'
  }

  void image_types_from_the_bytes() {
    QFile png(QString(KILN_TEST_DATA) + "/vision/exact.png");
    QVERIFY(png.open(QIODevice::ReadOnly));
    QCOMPARE(kiln::image_mime_type(png.readAll().toStdString()), std::string("image/png"));
    QCOMPARE(kiln::image_mime_type(std::string("\xff\xd8\xff\xe0\x00\x10JFIF", 10)), std::string("image/jpeg"));
    QCOMPARE(kiln::image_mime_type(std::string("RIFF\x24\x00\x00\x00WEBPVP8 ", 16)), std::string("image/webp"));
    QCOMPARE(kiln::image_mime_type("GIF89a......"), std::string());
    QCOMPARE(kiln::image_mime_type(""), std::string());
  }
};

QTEST_GUILESS_MAIN(Base64)
#include "test_base64.moc"
