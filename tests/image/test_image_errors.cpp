// Bad pictures: empty, garbage, truncated, corrupt, zero-size, too many bytes and decompression
// bombs each give a kiln::Error that names the file, and nothing crashes or prints.
#include <QtTest>

#include "image/image.h"
#include "image_test_data.h"

using image_test::error_of;
using image_test::kImages;
using image_test::read_file;

namespace {

std::string decode_error(const std::string& bytes, const std::string& name, kiln::ImageOptions limits = {}) {
  return error_of([&] { kiln::decode_image(bytes, name, limits); });
}

uint32_t crc32(const std::string& data) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : data) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
  }
  return ~c;
}

std::string be32(uint32_t v) { return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }

std::string png_chunk(const std::string& type, const std::string& payload) {
  return be32(uint32_t(payload.size())) + type + payload + be32(crc32(type + payload));
}

// A well-formed PNG header (signature, IHDR with valid CRC, 8-bit RGB) and nothing else: no IDAT.
std::string png_header_only(uint32_t width, uint32_t height) {
  const std::string ihdr = be32(width) + be32(height) + std::string("\x08\x02\x00\x00\x00", 5);
  return std::string("\x89PNG\r\n\x1a\n", 8) + png_chunk("IHDR", ihdr) + png_chunk("IEND", "");
}

// The offset of the baseline or progressive SOF segment's height field in a JPEG.
size_t jpeg_sof_height(const std::string& jpeg) {
  for (size_t i = 2; i + 9 < jpeg.size(); ++i)
    if (uint8_t(jpeg[i]) == 0xff && (uint8_t(jpeg[i + 1]) == 0xc0 || uint8_t(jpeg[i + 1]) == 0xc2)) return i + 5;
  return std::string::npos;
}

void expect_error(const std::string& message, const std::string& name, const char* also = nullptr) {
  QVERIFY2(!message.empty(), qPrintable(QString::fromStdString(name) + " was accepted"));
  QVERIFY2(message.rfind(name + ": ", 0) == 0, message.c_str());
  if (also) QVERIFY2(message.find(also) != std::string::npos, message.c_str());
}

}  // namespace

class TestImageErrors : public QObject {
  Q_OBJECT

 private slots:
  void empty_and_garbage_files() {
    expect_error(decode_error("", "empty.png"), "empty.png", "empty");
    expect_error(decode_error("hello, this is text", "notes.png"), "notes.png", "PNG, JPEG and WebP");
    expect_error(decode_error("GIF89a\x01\x00\x01\x00", "anim.gif"), "anim.gif", "GIF");
    expect_error(decode_error(std::string("\x89PNG\r\n\x1a\n", 8) + std::string(40, 'x'), "fake.png"), "fake.png");
    expect_error(decode_error("\xff\xd8\xff" + std::string(100, '\x13'), "fake.jpg"), "fake.jpg", "JPEG");
    expect_error(decode_error("RIFF\x10\x00\x00\x00WEBPVP8 garbagegarbage", "fake.webp"), "fake.webp", "WebP");
  }

  void truncated_files() {
    for (const char* name : {"png_rgb8.png", "png_rgb8_interlaced.png", "jpeg_baseline.jpg", "jpeg_progressive.jpg",
                             "webp_lossy.webp", "webp_lossless.webp", "noise_150x90.png"}) {
      const std::string bytes = read_file(kImages + name);
      for (size_t keep : {size_t(12), size_t(30), bytes.size() / 2, bytes.size() - 20})
        expect_error(decode_error(bytes.substr(0, keep), name), name);
    }
  }

  void corrupt_files() {
    std::string png = read_file(kImages + "noise_150x90.png");
    png[png.size() / 2] ^= 0x55;  // inside IDAT: libpng's CRC check catches it
    expect_error(decode_error(png, "flipped.png"), "flipped.png", "corrupt PNG");
    std::string jpeg = read_file(kImages + "jpeg_baseline.jpg");
    const size_t sof = jpeg_sof_height(jpeg);
    QVERIFY(sof != std::string::npos);
    jpeg[sof - 1] = 3;  // 3-bit samples: no such JPEG
    expect_error(decode_error(jpeg, "bits.jpg"), "bits.jpg", "corrupt JPEG");
  }

  void zero_size_images() {
    expect_error(decode_error(png_header_only(0, 10), "zero.png"), "zero.png", "zero size");
    std::string jpeg = read_file(kImages + "jpeg_baseline.jpg");
    const size_t sof = jpeg_sof_height(jpeg);
    jpeg[sof] = jpeg[sof + 1] = 0;
    expect_error(decode_error(jpeg, "zero.jpg"), "zero.jpg");
  }

  // The header alone claims the size. The PNG and WebP here hold no pixel data at all and are
  // refused for their size, which shows the check runs before any decoding (a decoder would find
  // the data missing first).
  void decompression_bombs_are_refused_from_the_header() {
    expect_error(decode_error(png_header_only(100000, 100000), "bomb.png"), "bomb.png", "limit of 50000000 pixels");

    std::string jpeg = read_file(kImages + "jpeg_baseline.jpg");
    const size_t sof = jpeg_sof_height(jpeg);
    jpeg[sof] = jpeg[sof + 2] = char(0xea), jpeg[sof + 1] = jpeg[sof + 3] = 0x60;  // 60000 x 60000
    expect_error(decode_error(jpeg, "bomb.jpg"), "bomb.jpg", "limit of 50000000 pixels");  // scans of 40x24 follow

    std::string webp = read_file(kImages + "webp_lossless.webp");
    QCOMPARE(webp.substr(12, 4), std::string("VP8L"));
    uint32_t bits;  // after the 0x2f signature: width-1 and height-1, 14 bits each
    std::memcpy(&bits, webp.data() + 21, 4);
    bits = (bits & 0xf0000000u) | 16383u | (16383u << 14);
    std::memcpy(webp.data() + 21, &bits, 4);
    expect_error(decode_error(webp.substr(0, 40), "bomb.webp"), "bomb.webp", "limit of 50000000 pixels");
  }

  void pixel_and_byte_limits_are_exact() {
    const std::string png = read_file(kImages + "noise_150x90.png");
    kiln::ImageOptions limits;
    limits.max_pixels = 150 * 90;
    QCOMPARE(decode_error(png, "a.png", limits), std::string());
    limits.max_pixels = 150 * 90 - 1;
    expect_error(decode_error(png, "a.png", limits), "a.png", "13500 pixels");
    limits = {};
    limits.max_bytes = png.size();
    QCOMPARE(decode_error(png, "a.png", limits), std::string());
    limits.max_bytes = png.size() - 1;
    expect_error(decode_error(png, "a.png", limits), "a.png", "bytes");
  }
};

QTEST_APPLESS_MAIN(TestImageErrors)
#include "test_image_errors.moc"
