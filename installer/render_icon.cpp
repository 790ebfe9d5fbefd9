// kiln-render-icon SVG PNG SIZE: renders the app's scalable icon to one square PNG at build time,
// so the hicolor PNG sizes always match the SVG that is committed.
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>
#include <cstdio>
#include <cstdlib>

int main(int argc, char* argv[]) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: kiln-render-icon ICON.svg OUT.png SIZE\n");
    return 2;
  }
  const char* svg_path = argv[1];
  const char* png_path = argv[2];
  const int size = std::atoi(argv[3]);
  if (size < 8 || size > 1024) {
    std::fprintf(stderr, "kiln-render-icon: size %s is not between 8 and 1024\n", argv[3]);
    return 2;
  }
  QSvgRenderer renderer{QString::fromLocal8Bit(svg_path)};
  if (!renderer.isValid()) {
    std::fprintf(stderr, "kiln-render-icon: %s: not a valid SVG\n", svg_path);
    return 1;
  }
  QImage image(size, size, QImage::Format_ARGB32_Premultiplied);  // size x size, transparent
  image.fill(Qt::transparent);
  {
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::SmoothPixmapTransform);
    renderer.render(&painter, QRectF(0, 0, size, size));
  }
  // PNG in straight alpha; icon themes expect 8-bit RGBA.
  if (!image.convertToFormat(QImage::Format_ARGB32).save(QString::fromLocal8Bit(png_path), "PNG")) {
    std::fprintf(stderr, "kiln-render-icon: %s: could not write\n", png_path);
    return 1;
  }
  return 0;
}
