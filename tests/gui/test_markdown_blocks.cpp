// Splitting answers into prose and code blocks, as the chat renders them.
#include <QTest>

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

  void qmlGetsTheSameAsMaps() {
    const QVariantList blocks = kiln::gui::MarkdownBlocks::split("a\n```\nb\n```");
    QCOMPARE(blocks.size(), 2);
    QCOMPARE(blocks[1].toMap().value("kind").toString(), QStringLiteral("code"));
    QCOMPARE(blocks[1].toMap().value("text").toString(), QStringLiteral("b"));
  }
};

QTEST_APPLESS_MAIN(TestMarkdownBlocks)
#include "test_markdown_blocks.moc"
