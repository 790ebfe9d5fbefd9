// Branches on the real engine: a regenerated answer and an edited question keep the old version,
// ‹ 2/3 › moves between them (what followed each version comes along), all of it is saved and
// comes back after a restart, and a conversation saved by an older Kiln (format 1) still loads.
// Export (Markdown, Kiln's JSON) and import of that JSON as a new conversation.
// Also the sidebar's preview (plain text, never "nothing" for a conversation with messages) and an
// answer stopped before its first token.
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include "app_settings.h"
#include "chat_controller.h"
#include "gui_test_support.h"

using namespace kiln::gui;
using namespace kiln::gui::test;

namespace {

bool waitForAnswer(ChatController& chat) { return QTest::qWaitFor([&] { return !chat.generating(); }, 30000); }

QVariant roleAt(const ChatController& chat, int row, MessageListModel::Roles role) {
  return chat.messages()->data(chat.messages()->index(row), role);
}

}  // namespace

class TestChatBranches : public QObject {
  Q_OBJECT

  QTemporaryDir home_;
  std::unique_ptr<EngineController> engine_;
  std::unique_ptr<AppSettings> settings_;

  QString conversationsDir() const { return home_.path() + "/conversations"; }

  std::unique_ptr<ChatController> makeChat() { return chatOn(*engine_, *settings_, conversationsDir()); }

 private slots:
  void initTestCase() {
    QVERIFY(home_.isValid());
    useScratchHome(home_);
    settings_ = std::make_unique<AppSettings>();
    settings_->setTemperature(0);
    engine_ = std::make_unique<EngineController>();
    QVERIFY(loadFixture(*engine_, 4096));
  }

  void init() {
    QDir(conversationsDir()).removeRecursively();
    settings_->setMaxTokens(16);
  }

  void regenerateAndEditKeepTheOldVersions() {
    auto chat = makeChat();
    // Two answers of different lengths, so each version is told apart by its text.
    settings_->setMaxTokens(3);
    QVERIFY(chat->send("What does the license say?"));
    QVERIFY(waitForAnswer(*chat));
    const QString first = chat->messages()->textAt(1);
    QVERIFY(!first.isEmpty());
    settings_->setMaxTokens(12);
    QVERIFY(chat->regenerate());
    QVERIFY(waitForAnswer(*chat));
    const QString second = chat->messages()->textAt(1);
    QVERIFY2(second != first, qPrintable(second));
    QCOMPARE(chat->messages()->rowCount(), 2);
    QCOMPARE(roleAt(*chat, 1, MessageListModel::VariantRole).toInt(), 2);
    QCOMPARE(roleAt(*chat, 1, MessageListModel::VariantCountRole).toInt(), 2);

    // ‹ 1/2: the first answer is back, with its own numbers.
    QVERIFY(chat->switchVariant(1, 1));
    QCOMPARE(chat->messages()->textAt(1), first);
    QCOMPARE(roleAt(*chat, 1, MessageListModel::GeneratedTokensRole).toInt(), 3);
    QCOMPARE(roleAt(*chat, 1, MessageListModel::VariantCountRole).toInt(), 2);
    QVERIFY(chat->switchVariant(1, 2));
    QCOMPARE(chat->messages()->textAt(1), second);
    QVERIFY(!chat->switchVariant(1, 3));  // there is no third

    // Editing the question: a new version of it, and a new answer under it.
    QVERIFY(chat->editAndResend(0, "What may I do with the code?"));
    QVERIFY(waitForAnswer(*chat));
    QCOMPARE(chat->messages()->rowCount(), 2);
    QCOMPARE(chat->messages()->textAt(0), QString("What may I do with the code?"));
    QCOMPARE(roleAt(*chat, 0, MessageListModel::VariantRole).toInt(), 2);
    QCOMPARE(roleAt(*chat, 1, MessageListModel::VariantCountRole).toInt(), 1);
    // Back to the first question: both its answers are still there.
    QVERIFY(chat->switchVariant(0, 1));
    QCOMPARE(chat->messages()->textAt(0), QString("What does the license say?"));
    QCOMPARE(chat->messages()->textAt(1), second);
    QCOMPARE(roleAt(*chat, 1, MessageListModel::VariantCountRole).toInt(), 2);

    // A restart: the same versions, the same one on screen.
    const QString id = chat->currentId();
    chat.reset();
    QFile saved(conversationsDir() + "/" + id + ".json");
    QVERIFY(saved.open(QIODevice::ReadOnly));
    QCOMPARE(QJsonDocument::fromJson(saved.readAll()).object().value("version").toInt(), 2);
    auto again = makeChat();
    again->select(id);
    QCOMPARE(again->messages()->rowCount(), 2);
    QCOMPARE(again->messages()->textAt(1), second);
    QCOMPARE(roleAt(*again, 0, MessageListModel::VariantCountRole).toInt(), 2);
    QCOMPARE(roleAt(*again, 0, MessageListModel::VariantRole).toInt(), 1);
    QVERIFY(again->switchVariant(1, 1));
    QCOMPARE(again->messages()->textAt(1), first);
    QVERIFY(again->switchVariant(0, 2));
    QCOMPARE(again->messages()->textAt(0), QString("What may I do with the code?"));
  }

  void aConversationFromFormatOneStillLoads() {
    QVERIFY(QDir().mkpath(conversationsDir()));
    const QString id = "0b7f3c1e-5a2d-4c61-9a43-1f0e2d7c8b90";
    QVERIFY(QFile::copy(KILN_TEST_DATA "/conversations/format-v1.json", conversationsDir() + "/" + id + ".json"));
    auto chat = makeChat();
    QVERIFY2(chat->storageErrors().isEmpty(), qPrintable(chat->storageErrors().join('\n')));
    chat->select(id);
    QCOMPARE(chat->currentTitle(), QString("Licences"));
    QCOMPARE(chat->systemPrompt(), QString("Be brief."));
    QCOMPARE(chat->messages()->rowCount(), 2);
    QCOMPARE(chat->messages()->textAt(1), QString("## Permissions\n\n- use, *copy* and modify"));
    QCOMPARE(roleAt(*chat, 1, MessageListModel::GeneratedTokensRole).toInt(), 12);
    QCOMPARE(roleAt(*chat, 1, MessageListModel::VariantCountRole).toInt(), 1);
    // The sidebar shows the answer's words, not its Markdown.
    const int row = chat->conversations()->indexOf(id);
    const QString preview = chat->conversations()->data(chat->conversations()->index(row), ConversationListModel::PreviewRole).toString();
    QCOMPARE(preview, QString("Permissions use, copy and modify"));
    // Going on with it writes the current format, and it loads again.
    QVERIFY(chat->regenerate());
    QVERIFY(waitForAnswer(*chat));
    chat.reset();
    auto again = makeChat();
    QVERIFY(again->storageErrors().isEmpty());
    again->select(id);
    QCOMPARE(roleAt(*again, 1, MessageListModel::VariantCountRole).toInt(), 2);
    QVERIFY(again->switchVariant(1, 1));
    QCOMPARE(again->messages()->textAt(1), QString("## Permissions\n\n- use, *copy* and modify"));
  }

  void aStopBeforeTheFirstTokenLeavesNoEmptyTurn() {
    auto chat = makeChat();
    // A long question: its prefill outlasts the stop that follows the send at once.
    QString question;
    for (int i = 0; i < 120; ++i) question += "Permission is hereby granted, free of charge. ";
    QVERIFY(chat->send(question));
    chat->stop();
    QVERIFY(waitForAnswer(*chat));
    QVERIFY2(roleAt(*chat, 1, MessageListModel::ErrorRole).toString().isEmpty(), qPrintable(roleAt(*chat, 1, MessageListModel::ErrorRole).toString()));
    QCOMPARE(roleAt(*chat, 1, MessageListModel::StopReasonRole).toString(), QString("cancelled"));
    QCOMPARE(roleAt(*chat, 1, MessageListModel::GeneratedTokensRole).toInt(), 0);
    QVERIFY(chat->messages()->textAt(1).isEmpty());
    // The sidebar still has something to show: the question.
    const int row = chat->conversations()->indexOf(chat->currentId());
    QVERIFY(!chat->conversations()->data(chat->conversations()->index(row), ConversationListModel::PreviewRole).toString().isEmpty());
    // The empty answer is no turn of the model's: the next question is answered normally.
    QVERIFY(chat->send("And in short?"));
    QVERIFY(waitForAnswer(*chat));
    QVERIFY(roleAt(*chat, 3, MessageListModel::ErrorRole).toString().isEmpty());
    QVERIFY(roleAt(*chat, 3, MessageListModel::GeneratedTokensRole).toInt() > 0);
  }

  void exportAndImportKeepTheConversation() {
    auto chat = makeChat();
    chat->setSystemPrompt("Be brief.\nAnd kind.");
    QVERIFY(chat->send("What does the license say?"));
    QVERIFY(waitForAnswer(*chat));
    QVERIFY(chat->regenerate());
    QVERIFY(waitForAnswer(*chat));
    const QString answer = chat->messages()->textAt(1);
    QCOMPARE(chat->suggestedFileName("markdown"), QString("What does the license say.md"));
    QCOMPARE(chat->suggestedFileName("json"), QString("What does the license say.json"));

    // A name typed without an extension gets the format's; a file URL works as a path does.
    QTemporaryDir out;
    const QString markdown = chat->exportCurrent(QUrl::fromLocalFile(out.path() + "/notes"), "markdown");
    QCOMPARE(markdown, out.path() + "/notes.md");
    QFile md(markdown);
    QVERIFY(md.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(md.readAll());
    QVERIFY2(text.startsWith("# What does the license say?\n"), qPrintable(text));
    QVERIFY2(text.contains("> Be brief.\n> And kind.\n"), qPrintable(text));
    QVERIFY2(text.contains("## You\n\nWhat does the license say?\n"), qPrintable(text));
    QVERIFY2(text.contains("## Gemma\n\n" + answer.trimmed()), qPrintable(text));

    const QString json = chat->exportCurrent(out.path() + "/copy.json", "json");
    QCOMPARE(json, out.path() + "/copy.json");
    const QString original = chat->currentId();
    const int before = chat->conversations()->rowCount();
    const QString imported = chat->importFrom(QUrl::fromLocalFile(json));
    QVERIFY2(!imported.isEmpty(), qPrintable(chat->lastError()));
    QVERIFY(imported != original);  // a copy, never over the original
    QCOMPARE(chat->conversations()->rowCount(), before + 1);
    QCOMPARE(chat->currentId(), imported);
    QCOMPARE(chat->systemPrompt(), QString("Be brief.\nAnd kind."));
    QCOMPARE(chat->messages()->textAt(1), answer);
    QCOMPARE(roleAt(*chat, 1, MessageListModel::VariantCountRole).toInt(), 2);
    QVERIFY(QFile::exists(conversationsDir() + "/" + imported + ".json"));

    // Anything else is refused with the file's name.
    QVERIFY(chat->importFrom(markdown).isEmpty());
    QVERIFY2(chat->lastError().contains(markdown), qPrintable(chat->lastError()));
    QCOMPARE(chat->conversations()->rowCount(), before + 1);
  }

  void previewsAreThePlainWords() {
    QCOMPARE(plainTextOf("# Title\n> quoted **bold** and `code`\n1. [a link](http://x) ~~gone~~"),
             QString("Title\nquoted bold and code\na link gone"));
    QCOMPARE(plainTextOf("| a | b |\n|---|---|\n| 1 | 2 |").simplified(), QString("a b 1 2"));
    QCOMPARE(plainTextOf("```cpp\nint x;\n```").simplified(), QString("int x;"));
  }
};

QTEST_MAIN(TestChatBranches)
#include "test_chat_branches.moc"
