#include "markdown_blocks.h"

#include <QRegularExpression>
#include <QStringList>

#include "code_highlight.h"

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

// "> text" (up to three spaces before the mark): the line's text after the mark.
bool quoteLine(const QString& line, QString& inner) {
  static const QRegularExpression mark(QStringLiteral("^ {0,3}> ?"));
  const QRegularExpressionMatch m = mark.match(line);
  if (!m.hasMatch()) return false;
  inner = line.mid(m.capturedLength());
  return true;
}

// A table's delimiter row: |---|:---:|, outer bars optional.
bool delimiterRow(const QString& line) {
  static const QRegularExpression row(QStringLiteral("^\\s*\\|?\\s*:?-+:?\\s*(\\|\\s*:?-+:?\\s*)*\\|?\\s*$"));
  return line.contains(QLatin1Char('-')) && line.contains(QLatin1Char('|')) && row.match(line).hasMatch();
}

QStringList cells(QString line) {
  line = line.trimmed();
  if (line.startsWith(QLatin1Char('|'))) line.remove(0, 1);
  if (line.endsWith(QLatin1Char('|')) && !line.endsWith(QStringLiteral("\\|"))) line.chop(1);
  QStringList out;
  QString cell;
  for (qsizetype i = 0; i < line.size(); ++i) {
    if (line[i] == QLatin1Char('\\') && i + 1 < line.size() && line[i + 1] == QLatin1Char('|')) {
      cell += QLatin1Char('|');
      ++i;
    } else if (line[i] == QLatin1Char('|')) {
      out << cell.trimmed();
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  out << cell.trimmed();
  return out;
}

// Prose lines outside code: quotes and tables become blocks of their own.
void splitProse(const QStringList& lines, std::vector<MarkdownBlock>& blocks) {
  QStringList prose;
  auto flush = [&] {
    const QString joined = prose.join(QLatin1Char('\n'));
    if (!joined.trimmed().isEmpty()) blocks.push_back({MarkdownBlock::Kind::Prose, joined, {}, true, {}});
    prose.clear();
  };
  for (qsizetype i = 0; i < lines.size();) {
    QString inner;
    if (quoteLine(lines[i], inner)) {
      flush();
      QStringList quote;
      for (; i < lines.size() && quoteLine(lines[i], inner); ++i) quote << inner;
      blocks.push_back({MarkdownBlock::Kind::Quote, quote.join(QLatin1Char('\n')), {}, true, {}});
      continue;
    }
    if (lines[i].contains(QLatin1Char('|')) && i + 1 < lines.size() && delimiterRow(lines[i + 1])) {
      flush();
      MarkdownBlock table{MarkdownBlock::Kind::Table, {}, {}, true, {}};
      const QStringList header = cells(lines[i]);
      table.rows << header;
      for (i += 2; i < lines.size() && lines[i].contains(QLatin1Char('|')) && !lines[i].trimmed().isEmpty(); ++i) {
        QStringList row = cells(lines[i]);
        while (row.size() < header.size()) row << QString();
        row.resize(header.size());
        table.rows << row;
      }
      blocks.push_back(std::move(table));
      continue;
    }
    prose << lines[i++];
  }
  flush();
}

}  // namespace

QString keepLineBreaks(const QString& markdown) {
  const QStringList lines = markdown.split(QLatin1Char('\n'));
  QStringList out;
  for (qsizetype i = 0; i < lines.size(); ++i) {
    const QString& line = lines[i];
    const bool nextIsText = i + 1 < lines.size() && !lines[i + 1].trimmed().isEmpty();
    // Two trailing spaces: CommonMark's hard line break. Not after a line that already ends in
    // one (or in a backslash), and never inside a table row.
    if (nextIsText && !line.trimmed().isEmpty() && !line.endsWith(QStringLiteral("  ")) &&
        !line.endsWith(QLatin1Char('\\')) && !line.trimmed().startsWith(QLatin1Char('|')))
      out << line + QStringLiteral("  ");
    else
      out << line;
  }
  return out.join(QLatin1Char('\n'));
}

std::vector<MarkdownBlock> splitMarkdown(const QString& text) {
  std::vector<MarkdownBlock> blocks;
  QStringList prose, code;
  Fence open;
  bool inCode = false;
  auto flushProse = [&] {
    splitProse(prose, blocks);
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
      blocks.push_back({MarkdownBlock::Kind::Code, code.join(QLatin1Char('\n')), open.info.section(QLatin1Char(' '), 0, 0), true, {}});
      inCode = false;
    } else {
      code << line;
    }
  }
  if (inCode) blocks.push_back({MarkdownBlock::Kind::Code, code.join(QLatin1Char('\n')), open.info.section(QLatin1Char(' '), 0, 0), false, {}});
  else flushProse();
  return blocks;
}

QVariantList MarkdownBlocks::split(const QString& text) {
  static const char* const kKinds[] = {"prose", "code", "quote", "table"};
  QVariantList out;
  for (const MarkdownBlock& b : splitMarkdown(text)) {
    QVariantList rows;
    for (const QStringList& row : b.rows) rows << QVariant(row);
    const bool prose = b.kind == MarkdownBlock::Kind::Prose || b.kind == MarkdownBlock::Kind::Quote;
    out << QVariantMap{{"kind", QString::fromLatin1(kKinds[static_cast<int>(b.kind)])},
                       {"text", prose ? keepLineBreaks(b.text) : b.text},
                       {"language", b.language},
                       {"closed", b.closed},
                       {"rows", rows}};
  }
  return out;
}

QString MarkdownBlocks::highlight(const QString& code, const QString& language, const QVariantMap& colours) {
  return highlightCode(code, language,
                       {colours.value("keyword").toString(), colours.value("string").toString(),
                        colours.value("comment").toString(), colours.value("number").toString()});
}

}  // namespace kiln::gui
