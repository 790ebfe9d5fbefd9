// Splitting answers into prose, quote, table and code blocks, as the chat renders them; single
// line breaks kept; code highlighted.
#include <QTest>

#include "code_highlight.h"
#include "markdown_blocks.h"

using kiln::gui::MarkdownBlock;
using kiln::gui::splitMarkdown;

class TestMarkdownBlocks : public QObject {
  Q_OBJECT

 private slots:
  void proseOnlyIsOneBlock() {
    const auto blocks = splitMarkdown("Some *text*\n\nand a list:\n- a\n- b");
    QCOMPARE(blocks.size(), size_t(1));
    QCOMPARE(blocks[0].kind, MarkdownBlock::Kind::Prose);
    QCOMPARE(blocks[0].text, QStringLiteral("Some *text*\n\nand a list:\n- a\n- b"));
  }

  void fencedCodeIsItsOwnBlockWithItsLanguage() {
    const auto blocks = splitMarkdown("Here:\n```python\nprint('hi')\n\nx = 1\n```\nDone.");
    QCOMPARE(blocks.size(), size_t(3));
    QCOMPARE(blocks[0].text, QStringLiteral("Here:"));
    QCOMPARE(blocks[1].kind, MarkdownBlock::Kind::Code);
    QCOMPARE(blocks[1].language, QStringLiteral("python"));
    QCOMPARE(blocks[1].text, QStringLiteral("print('hi')\n\nx = 1"));  // blank lines inside code stay
    QVERIFY(blocks[1].closed);
    QCOMPARE(blocks[2].text, QStringLiteral("Done."));
  }

  void tildesLongerFencesAndIndentedFences() {
    const auto blocks = splitMarkdown("~~~\na\n```\nstill code\n~~~\n   ````sh\nls\n````");
    QCOMPARE(blocks.size(), size_t(2));
    QCOMPARE(blocks[0].text, QStringLiteral("a\n```\nstill code"));  // ``` does not close ~~~
    QCOMPARE(blocks[1].language, QStringLiteral("sh"));
    QCOMPARE(blocks[1].text, QStringLiteral("ls"));
  }

  void anOpenFenceWhileStreamingIsCode() {
    const auto blocks = splitMarkdown("Look:\n```js\nconst x =");
    QCOMPARE(blocks.size(), size_t(2));
    QCOMPARE(blocks[1].kind, MarkdownBlock::Kind::Code);
    QCOMPARE(blocks[1].text, QStringLiteral("const x ="));
    QVERIFY(!blocks[1].closed);
  }

  void inlineBackticksAreNotFences() {
    const auto blocks = splitMarkdown("Use `ls` or ``a`` and ```not a fence``` inline.");
    QCOMPARE(blocks.size(), size_t(1));
    QCOMPARE(blocks[0].kind, MarkdownBlock::Kind::Prose);
  }

  void emptyTextHasNoBlocks() { QVERIFY(splitMarkdown("").empty()); QVERIFY(splitMarkdown("\n\n").empty()); }

  void quotesAreTheirOwnBlock() {
    const auto blocks = splitMarkdown("He said:\n> first line\n>second line\n\nAfter.");
    QCOMPARE(blocks.size(), size_t(3));
    QCOMPARE(blocks[1].kind, MarkdownBlock::Kind::Quote);
    QCOMPARE(blocks[1].text, QStringLiteral("first line\nsecond line"));
    QCOMPARE(blocks[2].text, QStringLiteral("\nAfter."));
  }

  void tablesBecomeRowsOfCells() {
    const auto blocks = splitMarkdown("Sizes:\n| Model | Size |\n|:---|---:|\n| 1B | 1 GB |\n| 4B \\| QAT |\n\nEnd.");
    QCOMPARE(blocks.size(), size_t(3));
    QCOMPARE(blocks[1].kind, MarkdownBlock::Kind::Table);
    QCOMPARE(blocks[1].rows.size(), 3);
    QCOMPARE(blocks[1].rows[0], QStringList({"Model", "Size"}));
    QCOMPARE(blocks[1].rows[1], QStringList({"1B", "1 GB"}));
    QCOMPARE(blocks[1].rows[2], QStringList({"4B | QAT", ""}));  // an escaped bar; a missing cell is empty
    // A line with a bar but no delimiter row under it is prose.
    QCOMPARE(splitMarkdown("a | b\nc").front().kind, MarkdownBlock::Kind::Prose);
  }

  void singleLineBreaksAreKept() {
    QCOMPARE(kiln::gui::keepLineBreaks("Roses are red,\nviolets are blue.\n\nNew verse"),
             QStringLiteral("Roses are red,  \nviolets are blue.\n\nNew verse"));
    // QML gets prose with the breaks in, and Qt's Markdown reader then keeps them as line breaks.
    const QVariantList blocks = kiln::gui::MarkdownBlocks::split("one\ntwo");
    QCOMPARE(blocks[0].toMap().value("text").toString(), QStringLiteral("one  \ntwo"));
  }

  void codeIsHighlighted() {
    const kiln::gui::CodeColours colours{"#111111", "#222222", "#333333", "#444444"};
    const QString html = kiln::gui::highlightCode("int x = 42; // a <b>\nreturn \"s\";", "cpp", colours);
    QVERIFY2(html.contains("<span style=\"color:#111111\">int</span>"), qPrintable(html));
    QVERIFY2(html.contains("<span style=\"color:#111111\">return</span>"), qPrintable(html));
    QVERIFY2(html.contains("<span style=\"color:#444444\">42</span>"), qPrintable(html));
    QVERIFY2(html.contains("<span style=\"color:#333333\">// a &lt;b&gt;</span>"), qPrintable(html));
    QVERIFY2(html.contains("<span style=\"color:#222222\">&quot;s&quot;</span>"), qPrintable(html));
    QVERIFY(!html.contains("<b>"));  // the code's own text is never markup
    // Python comments start with #; "x" is no keyword anywhere.
    const QString py = kiln::gui::highlightCode("def f(x):  # note", "python", colours);
    QVERIFY2(py.contains("<span style=\"color:#111111\">def</span> f(x):"), qPrintable(py));
    QVERIFY2(py.contains("<span style=\"color:#333333\"># note</span>"), qPrintable(py));
  }

  void qmlGetsTheSameAsMaps() {
    const QVariantList blocks = kiln::gui::MarkdownBlocks::split("a\n```\nb\n```");
    QCOMPARE(blocks.size(), 2);
    QCOMPARE(blocks[1].toMap().value("kind").toString(), QStringLiteral("code"));
    QCOMPARE(blocks[1].toMap().value("text").toString(), QStringLiteral("b"));
  }
};

QTEST_APPLESS_MAIN(TestMarkdownBlocks)
#include "test_markdown_blocks.moc"
