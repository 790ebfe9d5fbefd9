// ChatController on the real engine: sending, streaming into the right conversation, stop,
// regenerate, edit-and-resend, saving and reloading, and damaged conversation files.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app_settings.h"
#include "chat_controller.h"
#include "gui_test_support.h"
#include "kiln/engine.h"

using namespace kiln::gui;
using namespace kiln::gui::test;

namespace {

// The conversation as saved on disk, read without the app's own reader.
QJsonObject readSaved(const QString& directory, const QString& id) {
  QFile file(directory + "/" + id + ".json");
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(file.readAll()).object();
}

bool waitForAnswer(ChatController& chat) { return QTest::qWaitFor([&] { return !chat.generating(); }, 30000); }

}  // namespace

class TestChatController : public QObject {
  Q_OBJECT

  QTemporaryDir home_;
  std::unique_ptr<EngineController> engine_;
  std::unique_ptr<AppSettings> settings_;

  QString conversationsDir() const { return home_.path() + "/conversations"; }

  std::unique_ptr<ChatController> makeChat() {
    auto chat = std::make_unique<ChatController>(conversationsDir(), nullptr);
    chat->setEngine(engine_.get());
    chat->setSettings(settings_.get());
    return chat;
  }

 private slots:
  void initTestCase() {
    QVERIFY(home_.isValid());
    useScratchHome(home_);
    settings_ = std::make_unique<AppSettings>();
    settings_->setTemperature(0);  // greedy: answers repeat exactly
    settings_->setMaxTokens(16);
    engine_ = std::make_unique<EngineController>();
    QVERIFY(loadFixture(*engine_, 4096));
  }

  void init() { QDir(conversationsDir()).removeRecursively(); }

  void sendStreamsTheAnswerAndSavesIt() {
    auto chat = makeChat();
    QSignalSpy finished(chat.get(), &ChatController::answerFinished);
    // The first piece of the answer shows while it is still streaming, not only at the end.
    bool shownWhileStreaming = false;
    connect(chat->messages(), &MessageListModel::dataChanged, this, [&](const QModelIndex& index) {
      if (index.row() == 1 && index.data(MessageListModel::StreamingRole).toBool() &&
          !index.data(MessageListModel::TextRole).toString().isEmpty())
        shownWhileStreaming = true;
    });
    QVERIFY(chat->send("What does the license say?"));
    QVERIFY(chat->generating());
    QCOMPARE(chat->messages()->rowCount(), 2);  // the question, and the answer on its way
    QVERIFY(finished.wait(30000));

    QVERIFY(shownWhileStreaming);
    const QString answer = chat->messages()->textAt(1);
    QVERIFY(!answer.isEmpty());
    QCOMPARE(chat->currentTitle(), QStringLiteral("What does the license say?"));
    const QModelIndex last = chat->messages()->index(1);
    QVERIFY(last.data(MessageListModel::HasStatsRole).toBool());
    QVERIFY(last.data(MessageListModel::GeneratedTokensRole).toInt() > 0);
    QVERIFY(last.data(MessageListModel::TokensPerSecondRole).toDouble() > 0);
    QVERIFY(!last.data(MessageListModel::StreamingRole).toBool());

    const QJsonObject saved = readSaved(conversationsDir(), chat->currentId());
    const QJsonArray messages = saved.value("messages").toArray();
    QCOMPARE(messages.size(), 2);
    QCOMPARE(messages[0].toObject().value("role").toString(), QStringLiteral("user"));
    QCOMPARE(messages[1].toObject().value("text").toString(), answer);
    QVERIFY(messages[1].toObject().value("stats").toObject().value("generated_tokens").toInt() > 0);
  }

  void refusesToSendWithoutAModel() {
    EngineController empty;
    ChatController chat(conversationsDir(), nullptr);
    chat.setEngine(&empty);
    QVERIFY(!chat.send("Hello"));
    QVERIFY(!chat.lastError().isEmpty());
    QCOMPARE(chat.messages()->rowCount(), 0);
  }

  void stopKeepsWhatWasWritten() {
    settings_->setMaxTokens(4000);  // longer than the fixture writes before the first words show
    auto chat = makeChat();
    auto press = connect(engine_.get(), &EngineController::textArrived, chat.get(), [&] { chat->stop(); });
    QVERIFY(chat->send("Keep going"));
    QVERIFY(waitForAnswer(*chat));
    disconnect(press);
    settings_->setMaxTokens(16);

    const QModelIndex answer = chat->messages()->index(1);
    QCOMPARE(answer.data(MessageListModel::StopReasonRole).toString(), QStringLiteral("cancelled"));
    QVERIFY(answer.data(MessageListModel::GeneratedTokensRole).toInt() < 4000);
    QVERIFY(!answer.data(MessageListModel::TextRole).toString().isEmpty());  // what came is kept
    const QJsonArray saved = readSaved(conversationsDir(), chat->currentId()).value("messages").toArray();
    QCOMPARE(saved.size(), 2);
    QCOMPARE(saved[1].toObject().value("text").toString(), answer.data(MessageListModel::TextRole).toString());
  }

  void regenerateReplacesTheLastAnswer() {
    auto chat = makeChat();
    QVERIFY(chat->send("Explain the warranty."));
    QVERIFY(waitForAnswer(*chat));
    const QString first = chat->messages()->textAt(1);
    QVERIFY(chat->regenerate());
    QCOMPARE(chat->messages()->rowCount(), 2);  // the old answer went, the new one is coming
    QVERIFY(waitForAnswer(*chat));
    QCOMPARE(chat->messages()->rowCount(), 2);
    QCOMPARE(chat->messages()->textAt(1), first);  // greedy: the same question gives the same answer
  }

  void editAndResendDropsWhatFollowed() {
    auto chat = makeChat();
    QVERIFY(chat->send("First question"));
    QVERIFY(waitForAnswer(*chat));
    QVERIFY(chat->send("Second question"));
    QVERIFY(waitForAnswer(*chat));
    QCOMPARE(chat->messages()->rowCount(), 4);

    QVERIFY(chat->editAndResend(0, "A different first question"));
    QVERIFY(waitForAnswer(*chat));
    QCOMPARE(chat->messages()->rowCount(), 2);
    QCOMPARE(chat->messages()->textAt(0), QStringLiteral("A different first question"));
    QVERIFY(!chat->messages()->textAt(1).isEmpty());
    QVERIFY(!chat->editAndResend(1, "not a question"));  // answers cannot be edited
  }

  void conversationsComeBackAfterRestart() {
    QString id, answer;
    {
      auto chat = makeChat();
      chat->setSystemPrompt("Answer briefly.");
      QVERIFY(chat->send("Question one"));
      QVERIFY(waitForAnswer(*chat));
      id = chat->currentId();
      answer = chat->messages()->textAt(1);
      chat->rename(id, "Renamed chat");
      chat->newConversation();
      QVERIFY(chat->send("Question two"));
      QVERIFY(waitForAnswer(*chat));
    }
    auto chat = makeChat();
    QVERIFY(chat->storageErrors().isEmpty());
    QCOMPARE(chat->conversations()->rowCount(), 2);
    QCOMPARE(chat->conversations()->idAt(1), id);  // the newest first
    chat->select(id);
    QCOMPARE(chat->currentTitle(), QStringLiteral("Renamed chat"));
    QCOMPARE(chat->systemPrompt(), QStringLiteral("Answer briefly."));
    QCOMPARE(chat->messages()->rowCount(), 2);
    QCOMPARE(chat->messages()->textAt(0), QStringLiteral("Question one"));
    QCOMPARE(chat->messages()->textAt(1), answer);
  }

  void damagedFilesAreReportedAndNothingElseIsLost() {
    QString goodId;
    {
      auto chat = makeChat();
      QVERIFY(chat->send("Keep me"));
      QVERIFY(waitForAnswer(*chat));
      goodId = chat->currentId();
    }
    const QByteArray truncated = "{\"format\": \"kiln-conversation\", \"messages\": [{\"role\": \"us";
    QFile broken(conversationsDir() + "/broken.json");
    QVERIFY(broken.open(QIODevice::WriteOnly));
    broken.write(truncated);
    broken.close();
    QFile foreign(conversationsDir() + "/foreign.json");
    QVERIFY(foreign.open(QIODevice::WriteOnly));
    foreign.write("{\"hello\": \"world\"}");
    foreign.close();

    auto chat = makeChat();
    const QStringList errors = chat->storageErrors();
    QCOMPARE(errors.size(), 2);
    QVERIFY2(errors.filter("broken.json").size() == 1 && errors.filter("not valid JSON").size() == 1, qPrintable(errors.join('\n')));
    QVERIFY2(errors.filter("foreign.json").size() == 1, qPrintable(errors.join('\n')));
    for (const QString& e : errors) QVERIFY2(!e.contains('\n'), "each problem is one line");
    QCOMPARE(chat->conversations()->rowCount(), 1);
    QCOMPARE(chat->conversations()->idAt(0), goodId);
    // The damaged file is left for the user to rescue, byte for byte.
    QVERIFY(broken.open(QIODevice::ReadOnly));
    QCOMPARE(broken.readAll(), truncated);
  }

  void answerGoesToItsConversationWhenTheUserSwitches() {
    settings_->setMaxTokens(40);
    auto chat = makeChat();
    QVERIFY(chat->send("Long answer please"));
    const QString first = chat->currentId();
    const QString second = chat->newConversation();  // switch away while it streams
    QVERIFY(second != first);
    QCOMPARE(chat->messages()->rowCount(), 0);
    QVERIFY(waitForAnswer(*chat));
    settings_->setMaxTokens(16);
    QCOMPARE(chat->messages()->rowCount(), 0);  // nothing leaked into the new one
    const QJsonArray saved = readSaved(conversationsDir(), first).value("messages").toArray();
    QCOMPARE(saved.size(), 2);
    QVERIFY(!saved[1].toObject().value("text").toString().isEmpty());
    chat->select(first);
    QCOMPARE(chat->messages()->textAt(1), saved[1].toObject().value("text").toString());
  }

  void deletingTheAnsweringConversationIsSafe() {
    auto chat = makeChat();
    QVERIFY(chat->send("Delete me while you answer"));
    const QString id = chat->currentId();
    chat->remove(id);
    QVERIFY(waitForAnswer(*chat));
    QVERIFY(!QFile::exists(conversationsDir() + "/" + id + ".json"));
    QVERIFY(chat->currentId() != id);
    QCOMPARE(chat->messages()->rowCount(), 0);
  }

  void searchNarrowsTheList() {
    auto chat = makeChat();
    QVERIFY(chat->send("apples and pears"));
    QVERIFY(waitForAnswer(*chat));
    chat->newConversation();
    QVERIFY(chat->send("bananas"));
    QVERIFY(waitForAnswer(*chat));
    QCOMPARE(chat->conversations()->rowCount(), 2);
    chat->conversations()->setSearchText("PEARS");
    QCOMPARE(chat->conversations()->rowCount(), 1);
    chat->conversations()->setSearchText("no such words");
    QCOMPARE(chat->conversations()->rowCount(), 0);
    chat->conversations()->setSearchText("");
    QCOMPARE(chat->conversations()->rowCount(), 2);
  }

  // Settings > Answers > Repeat penalty: on (1.1) out of the box, kept within 1..2, and it reaches
  // the engine: the app's answer is what the engine itself writes with the same sampling.
  void repeatPenaltySettingReachesTheEngine() {
    QCOMPARE(settings_->repeatPenalty(), 1.1);  // a first start: nothing saved yet
    settings_->setRepeatPenalty(0.5);
    QCOMPARE(settings_->repeatPenalty(), 1.0);
    settings_->setRepeatPenalty(7.0);
    QCOMPARE(settings_->repeatPenalty(), 2.0);
    settings_->setRepeatPenalty(1.3);
    QCOMPARE(AppSettings().repeatPenalty(), 1.3);  // saved, under the key the app documents
    QCOMPARE(QSettings().value("sampling/repeat_penalty").toDouble(), 1.3);
    // The fixture's random weights favour a blank line so strongly that only a firm penalty
    // changes its answer; the user's choice of 1.5 must reach the engine.
    settings_->setRepeatPenalty(1.5);
    constexpr int kTokens = 48;
    settings_->setMaxTokens(kTokens);
    auto chat = makeChat();
    QVERIFY(chat->send("Tell me a long story."));
    QVERIFY(waitForAnswer(*chat));
    settings_->setMaxTokens(16);
    const QString answer = chat->messages()->textAt(1);

    // The same request straight to the engine, with every sampling option the app has.
    kiln::LoadOptions load;
    load.path = fixtureModel().toStdString();
    load.precision = kiln::Precision::F16;
    load.backend = kiln::BackendKind::Cpu;
    load.context_length = 256;
    load.threads = 1;
    auto direct = kiln::Engine::load(load);
    const auto write = [&](float repeatPenalty) {
      kiln::GenerateOptions options;
      options.sampling.temperature = static_cast<float>(settings_->temperature());
      options.sampling.top_k = settings_->topK();
      options.sampling.top_p = static_cast<float>(settings_->topP());
      options.sampling.min_p = static_cast<float>(settings_->minP());
      options.sampling.repeat_penalty = repeatPenalty;
      options.max_tokens = kTokens;
      std::string text;
      direct->chat({{kiln::Role::User, "Tell me a long story."}}, options, [&](std::string_view piece) {
        text += piece;
        return true;
      });
      return QString::fromStdString(text);
    };
    settings_->setRepeatPenalty(1.1);
    QCOMPARE(answer, write(1.5f));
    QVERIFY2(answer != write(1.0f), "the fixture answers differently without the penalty, so the check above means something");
  }
};

QTEST_GUILESS_MAIN(TestChatController)
#include "test_chat_controller.moc"
