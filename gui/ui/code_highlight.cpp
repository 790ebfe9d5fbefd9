#include "code_highlight.h"

#include <QSet>
#include <algorithm>
#include <QStringList>

namespace kiln::gui {

namespace {

enum class Comments { Slash, Hash, Dash };  // "//" and /* */; "#"; "--" (SQL, Lua)

struct Language {
  QSet<QString> keywords;
  Comments comments = Comments::Slash;
  bool caseInsensitive = false;
};

QSet<QString> words(const char* list) {
  QSet<QString> out;
  for (const QString& w : QString::fromLatin1(list).split(QLatin1Char(' '), Qt::SkipEmptyParts)) out.insert(w);
  return out;
}

Language languageFor(const QString& name) {
  const QString n = name.toLower();
  if (n == "python" || n == "py")
    return {words("and as assert async await break class continue def del elif else except False finally for from "
                  "global if import in is lambda None nonlocal not or pass raise return True try while with yield self"),
            Comments::Hash};
  if (n == "sh" || n == "bash" || n == "shell" || n == "zsh" || n == "console")
    return {words("if then else elif fi for while until do done case esac in function return export local echo cd "
                  "exit set unset source"),
            Comments::Hash};
  if (n == "sql")
    return {words("select from where insert into values update set delete create table drop alter join left right "
                  "inner outer on group by order having limit as and or not null primary key index distinct union"),
            Comments::Dash, true};
  if (n == "yaml" || n == "yml" || n == "toml" || n == "ruby" || n == "rb" || n == "perl")
    return {words("true false null nil def end class module if else elsif unless do return require"), Comments::Hash};
  // C, C++, Java, C#, JavaScript, TypeScript, Rust, Go, Kotlin, Swift, JSON and anything unnamed.
  return {words("alignas auto bool break case catch char class const constexpr continue default delete do double "
                "else enum explicit extern false final float for friend if inline int long namespace new noexcept "
                "nullptr operator override private protected public return short signed sizeof static struct switch "
                "template this throw true try typedef typename union unsigned using virtual void volatile while "
                "import package interface extends implements function var let async await yield export from of in "
                "instanceof typeof undefined null fn impl mut pub use mod trait match loop where crate self Self "
                "func go chan defer select type map range struct val fun when is string"),
          Comments::Slash};
}

QString span(const QString& colour, const QString& text) {
  return colour.isEmpty() ? text.toHtmlEscaped()
                          : QStringLiteral("<span style=\"color:%1\">%2</span>").arg(colour, text.toHtmlEscaped());
}

bool isWordChar(QChar c) { return c.isLetterOrNumber() || c == QLatin1Char('_'); }

}  // namespace

QString highlightCode(const QString& code, const QString& language, const CodeColours& colours) {
  const Language lang = languageFor(language);
  QString out = QStringLiteral("<pre style=\"margin:0\">");
  bool inBlockComment = false;
  const QStringList lines = code.split(QLatin1Char('\n'));
  for (qsizetype l = 0; l < lines.size(); ++l) {
    const QString& line = lines[l];
    qsizetype i = 0;
    while (i < line.size()) {
      if (inBlockComment) {
        const qsizetype end = line.indexOf(QStringLiteral("*/"), i);
        const qsizetype stop = end < 0 ? line.size() : end + 2;
        out += span(colours.comment, line.mid(i, stop - i));
        i = stop;
        inBlockComment = end < 0;
        continue;
      }
      const QStringView rest = QStringView(line).mid(i);
      const bool lineComment = (lang.comments == Comments::Slash && rest.startsWith(QLatin1String("//"))) ||
                               (lang.comments == Comments::Hash && rest.startsWith(QLatin1Char('#'))) ||
                               (lang.comments == Comments::Dash && rest.startsWith(QLatin1String("--")));
      if (lineComment) {
        out += span(colours.comment, line.mid(i));
        break;
      }
      if (lang.comments == Comments::Slash && rest.startsWith(QLatin1String("/*"))) {
        inBlockComment = true;
        out += span(colours.comment, QStringLiteral("/*"));
        i += 2;
        continue;
      }
      const QChar c = line[i];
      if (c == QLatin1Char('"') || c == QLatin1Char('\'') || c == QLatin1Char('`')) {
        qsizetype j = i + 1;
        while (j < line.size() && line[j] != c) j += line[j] == QLatin1Char('\\') ? 2 : 1;
        j = std::min(j + 1, line.size());
        out += span(colours.string, line.mid(i, j - i));
        i = j;
        continue;
      }
      if (c.isDigit() && (i == 0 || !isWordChar(line[i - 1]))) {
        qsizetype j = i;
        while (j < line.size() && (isWordChar(line[j]) || line[j] == QLatin1Char('.'))) ++j;
        out += span(colours.number, line.mid(i, j - i));
        i = j;
        continue;
      }
      if (isWordChar(c)) {
        qsizetype j = i;
        while (j < line.size() && isWordChar(line[j])) ++j;
        const QString word = line.mid(i, j - i);
        const bool keyword = lang.keywords.contains(lang.caseInsensitive ? word.toLower() : word);
        out += keyword ? span(colours.keyword, word) : word.toHtmlEscaped();
        i = j;
        continue;
      }
      out += QString(c).toHtmlEscaped();
      ++i;
    }
    if (l + 1 < lines.size()) out += QLatin1Char('\n');
  }
  return out + QStringLiteral("</pre>");
}

}  // namespace kiln::gui
