#include "markdown_blocks.h"

#include <QStringList>

namespace kiln::gui {

namespace {

// A fence line: up to three spaces, then at least three backticks or tildes.
struct Fence {
  QChar marker;
  qsizetype length = 0;
  QString info;
};

bool parseFence(const QString& line, Fence& fence) {
  qsizetype i = 0;
  while (i < line.size() && i < 4 && line[i] == QLatin1Char(' ')) ++i;
  if (i > 3 || i >= line.size()) return false;
  const QChar marker = line[i];
  if (marker != QLatin1Char('`') && marker != QLatin1Char('~')) return false;
  qsizetype run = 0;
  while (i + run < line.size() && line[i + run] == marker) ++run;
  if (run < 3) return false;
  fence = {marker, run, line.mid(i + run).trimmed()};
  // CommonMark: a backtick fence's info string may not contain a backtick.
  return !(marker == QLatin1Char('`') && fence.info.contains(marker));
}

bool closes(const QString& line, const Fence& open) {
  Fence fence;
  return parseFence(line, fence) && fence.marker == open.marker && fence.length >= open.length && fence.info.isEmpty();
}

}  // namespace

std::vector<MarkdownBlock> splitMarkdown(const QString& text) {
  std::vector<MarkdownBlock> blocks;
  QStringList prose, code;
  Fence open;
  bool inCode = false;
  auto flushProse = [&] {
    const QString joined = prose.join(QLatin1Char('\n'));
    if (!joined.trimmed().isEmpty()) blocks.push_back({MarkdownBlock::Kind::Prose, joined, {}, true});
    prose.clear();
  };
  for (const QString& line : text.split(QLatin1Char('\n'))) {
    if (!inCode) {
      if (parseFence(line, open)) {
        flushProse();
        inCode = true;
        code.clear();
      } else {
        prose << line;
      }
    } else if (closes(line, open)) {
      blocks.push_back({MarkdownBlock::Kind::Code, code.join(QLatin1Char('\n')), open.info.section(QLatin1Char(' '), 0, 0), true});
      inCode = false;
    } else {
      code << line;
    }
  }
  if (inCode) blocks.push_back({MarkdownBlock::Kind::Code, code.join(QLatin1Char('\n')), open.info.section(QLatin1Char(' '), 0, 0), false});
  else flushProse();
  return blocks;
}

QVariantList MarkdownBlocks::split(const QString& text) {
  QVariantList out;
  for (const MarkdownBlock& b : splitMarkdown(text))
    out << QVariantMap{{"kind", b.kind == MarkdownBlock::Kind::Code ? QStringLiteral("code") : QStringLiteral("prose")},
                       {"text", b.text},
                       {"language", b.language},
                       {"closed", b.closed}};
  return out;
}

}  // namespace kiln::gui
