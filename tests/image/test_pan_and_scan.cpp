// Pan-and-scan cuts what transformers' Gemma3ImageProcessor.pan_and_scan cuts
// (src/transformers/models/gemma3/image_processing_gemma3.py): the counts and sizes below follow
// its rule by hand (crops ~ long/short rounded half up, at most long/256, clamped to [2, 4], each
// ceil(long/count); none under ratio 1.2 or for a crop shorter than 256).
#include <QtTest>

#include "image/image.h"

namespace {

kiln::RgbImage picture(int w, int h) {
  kiln::RgbImage image{w, h, std::vector<uint8_t>(size_t(w) * h * 3)};
  for (size_t i = 0; i < image.pixels.size(); ++i) image.pixels[i] = uint8_t(i * 31 % 251);
  return image;
}

std::vector<std::pair<int, int>> sizes(const std::vector<kiln::RgbImage>& crops) {
  std::vector<std::pair<int, int>> out;
  for (const auto& c : crops) out.emplace_back(c.width, c.height);
  return out;
}

using Sizes = std::vector<std::pair<int, int>>;

}  // namespace

class TestPanAndScan : public QObject {
  Q_OBJECT

 private slots:
  void crop_counts_and_sizes() {
    // 1000/300 = 3.33 -> 3 crops of ceil(1000/3) = 334, the last cut to 332.
    QCOMPARE(sizes(kiln::pan_and_scan_crops(picture(1000, 300))), (Sizes{{334, 300}, {334, 300}, {332, 300}}));
    QCOMPARE(sizes(kiln::pan_and_scan_crops(picture(300, 1000))), (Sizes{{300, 334}, {300, 334}, {300, 332}}));
    // Ratio exactly 1.2 is enough (transformers compares with the double 1.2); 1 crop rounds up to 2.
    QCOMPARE(sizes(kiln::pan_and_scan_crops(picture(600, 500))), (Sizes{{300, 500}, {300, 500}}));
    QVERIFY(kiln::pan_and_scan_crops(picture(599, 500)).empty());
    // 2000/256 = 7.8 -> 8, at most 2000/256 = 7, at most 4.
    QCOMPARE(sizes(kiln::pan_and_scan_crops(picture(2000, 256))), (Sizes{{500, 256}, {500, 256}, {500, 256}, {500, 256}}));
    QVERIFY(kiln::pan_and_scan_crops(picture(2000, 255)).empty());  // crops 255 high
    QVERIFY(kiln::pan_and_scan_crops(picture(400, 300)).empty());   // two crops of 200 wide
    QVERIFY(kiln::pan_and_scan_crops(picture(896, 896)).empty());
    kiln::PanAndScan two;
    two.max_crops = 2;
    QCOMPARE(sizes(kiln::pan_and_scan_crops(picture(2000, 256), two)), (Sizes{{1000, 256}, {1000, 256}}));
  }

  void crops_hold_the_pixels_they_cover() {
    const kiln::RgbImage image = picture(1000, 300);
    const auto crops = kiln::pan_and_scan_crops(image);
    QCOMPARE(crops.size(), size_t(3));
    for (int k = 0; k < 3; ++k)
      for (int y : {0, 151, 299})
        for (int x : {0, 100, crops[k].width - 1})
          for (int c = 0; c < 3; ++c)
            QCOMPARE(crops[k].pixels[(size_t(y) * crops[k].width + x) * 3 + c],
                     image.pixels[(size_t(y) * 1000 + 334 * k + x) * 3 + c]);
  }
};

QTEST_APPLESS_MAIN(TestPanAndScan)
#include "test_pan_and_scan.moc"
