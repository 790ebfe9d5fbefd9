// Pictures in, the vision tower's input out, against PIL (tests/tools/image_reference.py): every
// PNG, JPEG and WebP layout decodes to PIL's pixels, Exif orientations turn as exif_transpose,
// the bilinear resize equals PIL's to the bit, and tower_input equals Gemma3ImageProcessor's floats.
#include <QtTest>

#include <cstring>

#include "image/exif_orientation.h"
#include "image/image.h"
#include "image_test_data.h"

using image_test::kImages;
using image_test::read_file;

namespace {

kiln::RgbImage decode_file(const std::string& name) {
  return kiln::decode_image(read_file(kImages + name), name, kiln::ImageOptions{});
}

// A little-endian TIFF block with one IFD0 entry (tag, type, count, value).
std::string tiff_with(uint16_t tag, uint16_t type, uint32_t value, bool big_endian = false) {
  std::string t;
  auto put = [&](uint32_t v, int n) {
    for (int i = 0; i < n; ++i) t += char(big_endian ? (v >> (8 * (n - 1 - i))) & 0xff : (v >> (8 * i)) & 0xff);
  };
  t += big_endian ? std::string("MM\0*", 4) : std::string("II*\0", 4);
  put(8, 4);
  put(1, 2);
  put(tag, 2), put(type, 2), put(1, 4);
  if (type == 3) put(value, 2), put(0, 2);
  else put(value, 4);
  put(0, 4);  // no next IFD
  return t;
}

}  // namespace

class TestImage : public QObject {
  Q_OBJECT

 private slots:
  void decodes_every_layout_as_pil() {
    const auto ref = image_test::reference();
    QVERIFY(ref["decode"].size() >= 20);
    for (const auto& c : ref["decode"]) {
      const std::string name = c["file"];
      const kiln::RgbImage image = decode_file(name);
      const std::string expected = read_file(kImages + std::string(c["expected"]));
      QCOMPARE(image.width, c["width"].get<int>());
      QCOMPARE(image.height, c["height"].get<int>());
      QCOMPARE(image.pixels.size(), expected.size());
      int max_diff = 0;
      size_t first = expected.size();
      for (size_t i = 0; i < expected.size(); ++i) {
        const int d = std::abs(int(image.pixels[i]) - int(uint8_t(expected[i])));
        if (d > 0 && first == expected.size()) first = i;
        max_diff = std::max(max_diff, d);
      }
      // libjpeg-turbo and libwebp are the libraries PIL decodes with, so even the lossy files match exactly.
      if (max_diff != 0)
        QFAIL(qPrintable(QString("%1: max difference %2 from PIL, first at byte %3").arg(name.c_str()).arg(max_diff).arg(first)));
    }
  }

  void reads_the_orientation_tag() {
    for (int n = 1; n <= 8; ++n) {
      const std::string jpeg = read_file(kImages + "exif_" + std::to_string(n) + ".jpg");
      // The Exif APP1 segment, as the decoder hands it over: found here by its "Exif\0\0" header.
      const size_t at = jpeg.find(std::string("Exif\0\0", 6));
      QVERIFY(at != std::string::npos);
      QCOMPARE(kiln::exif_orientation(std::string_view(jpeg).substr(at, 200)), n);
    }
    QCOMPARE(kiln::exif_orientation(tiff_with(0x0112, 3, 6)), 6);
    QCOMPARE(kiln::exif_orientation(tiff_with(0x0112, 3, 6, true)), 6);
    QCOMPARE(kiln::exif_orientation(std::string("Exif\0\0", 6) + tiff_with(0x0112, 3, 8, true)), 8);
    QCOMPARE(kiln::exif_orientation(tiff_with(0x0112, 4, 5)), 5);
    QCOMPARE(kiln::exif_orientation(tiff_with(0x0112, 3, 9)), 1);   // out of range
    QCOMPARE(kiln::exif_orientation(tiff_with(0x0110, 3, 6)), 1);   // another tag
    QCOMPARE(kiln::exif_orientation(tiff_with(0x0112, 2, 6)), 1);   // ASCII is no orientation
    QCOMPARE(kiln::exif_orientation(""), 1);
  }

  void survives_malformed_exif() {
    const std::string good = tiff_with(0x0112, 3, 6);  // 8 header, 2 count, 12 entry, 4 next
    for (size_t cut = 0; cut <= good.size(); ++cut)   // every truncation; the entry ends at 22
      QCOMPARE(kiln::exif_orientation(good.substr(0, cut)), cut >= 22 ? 6 : 1);
    std::string far = good;
    far[4] = far[5] = far[6] = '\xf0', far[7] = '\xff';  // IFD0 past the end
    QCOMPARE(kiln::exif_orientation(far), 1);
    std::string many = good;
    many[8] = many[9] = '\xff';  // 65535 entries claimed, one present, not the orientation:
    many[10] = 0x10;              // the walk must stop at the block's end
    QCOMPARE(kiln::exif_orientation(many), 1);
    QCOMPARE(kiln::exif_orientation(std::string("MM\0*", 4) + std::string(2, '\xff')), 1);
  }

  void turns_pixels_like_exif_transpose() {
    // 3x2 picture, pixel value = its index; orientation 6 is a clockwise quarter turn.
    kiln::RgbImage image{3, 2, {}};
    for (int i = 0; i < 6; ++i) image.pixels.insert(image.pixels.end(), {uint8_t(i), 0, 0});
    const kiln::RgbImage turned = kiln::apply_exif_orientation(image, 6);
    QCOMPARE(turned.width, 2);
    QCOMPARE(turned.height, 3);
    // Rows of the original: [0 1 2] [3 4 5]; clockwise: [3 0] [4 1] [5 2].
    const int expected[6] = {3, 0, 4, 1, 5, 2};
    for (int i = 0; i < 6; ++i) QCOMPARE(int(turned.pixels[i * 3]), expected[i]);
    QCOMPARE(kiln::apply_exif_orientation(image, 1).pixels, image.pixels);
  }

  void format_comes_from_the_bytes() {
    const std::string png = read_file(kImages + "png_rgb8.png");
    const kiln::RgbImage a = kiln::decode_image(png, "holiday.jpg", {});
    QCOMPARE(a.pixels, decode_file("png_rgb8.png").pixels);
    const std::string webp = read_file(kImages + "webp_lossless.webp");
    QCOMPARE(kiln::decode_image(webp, "scan.png", {}).width, 40);
  }

  void resize_matches_pil_bit_for_bit() {
    const auto ref = image_test::reference();
    QVERIFY(ref["resize"].size() >= 10);
    for (const auto& c : ref["resize"]) {
      const std::string source = c["source"];
      const int w = c["width"], h = c["height"];
      const kiln::RgbImage out = kiln::resize_bilinear(decode_file(source), w, h);
      const QString what = QString("%1 -> %2x%3").arg(source.c_str()).arg(w).arg(h);
      QVERIFY2(out.width == w && out.height == h, qPrintable(what));
      for (const auto& s : c["samples"]) {
        const uint8_t* p = &out.pixels[(size_t(s[1].get<int>()) * w + s[0].get<int>()) * 3];
        QVERIFY2(p[0] == s[2].get<int>() && p[1] == s[3].get<int>() && p[2] == s[4].get<int>(),
                 qPrintable(what + QString(" differs from PIL at (%1, %2)").arg(s[0].get<int>()).arg(s[1].get<int>())));
      }
      if (c.contains("expected")) {
        const std::string expected = read_file(kImages + std::string(c["expected"]));
        QVERIFY2(expected.size() == out.pixels.size() && std::memcmp(expected.data(), out.pixels.data(), expected.size()) == 0,
                 qPrintable(what + " differs from PIL"));
      }
      char hash[17];
      std::snprintf(hash, sizeof hash, "%016llx", (unsigned long long)image_test::fnv1a64(out.pixels.data(), out.pixels.size()));
      QVERIFY2(std::string(hash) == c["fnv1a64"].get<std::string>(), qPrintable(what + ": the bytes' hash differs from PIL's"));
    }
  }

  void tower_input_matches_gemma3_image_processor() {
    const auto tower = image_test::reference()["tower"];
    kiln::PixelNorm norm;
    for (int c = 0; c < 3; ++c) norm.mean[c] = tower["mean"][c], norm.std[c] = tower["std"][c];
    const int size = tower["size"];
    const std::vector<float> input = kiln::tower_input(decode_file(tower["source"]), size, norm);
    const std::string expected = read_file(kImages + std::string(tower["expected"]));
    QCOMPARE(input.size(), size_t(3) * size * size);
    QCOMPARE(expected.size(), input.size() * sizeof(float));
    float max_diff = 0;
    for (size_t i = 0; i < input.size(); ++i) {
      float e;
      std::memcpy(&e, expected.data() + i * sizeof(float), sizeof e);
      max_diff = std::max(max_diff, std::abs(input[i] - e));
    }
    QCOMPARE(max_diff, 0.0f);
    QVERIFY(*std::min_element(input.begin(), input.end()) >= -1.0f);
    QVERIFY(*std::max_element(input.begin(), input.end()) <= 1.0f);
  }

  void tower_input_refuses_an_empty_image() {
    const std::string e = image_test::error_of([] { kiln::tower_input(kiln::RgbImage{}, 64, {}); });
    QVERIFY2(e.find("tower_input") != std::string::npos, e.c_str());
  }
};

QTEST_APPLESS_MAIN(TestImage)
#include "test_image.moc"
