// ChatController on the real engine: sending, streaming into the right conversation, stop,
// regenerate, edit-and-resend, saving and reloading, damaged conversation files, sampling that
// follows the model unless the user sets it, and turns that alternate as Gemma's format needs.
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

// A copy of the fixture model with `generationConfig` as its generation_config.json.
bool copyFixtureWith(const QString& folder, const QByteArray& generationConfig) {
  if (!QDir().mkpath(folder)) return false;
  for (const QString& name : QDir(fixtureModel()).entryList(QDir::Files))
    if (!QFile::copy(fixtureModel() + "/" + name, folder + "/" + name)) return false;
  QFile file(folder + "/generation_config.json");
  return file.open(QIODevice::WriteOnly) && file.write(generationConfig) == generationConfig.size();
}

kiln::GenerateOptions greedyWithPenalty(float repeatPenalty, int maxTokens) {
  kiln::GenerateOptions options;
  options.sampling.temperature = 0;
  options.sampling.repeat_penalty = repeatPenalty;
  options.max_tokens = maxTokens;
  return options;
}

}  // namespace

class TestChatController : public QObject {
  Q_OBJECT

  QTemporaryDir home_;
  std::unique_ptr<EngineController> engine_;
  std::unique_ptr<AppSettings> settings_;

  std::unique_ptr<kiln::Engine> direct_;  // the fixture without the app, to compare answers with

  QString conversationsDir() const { return home_.path() + "/conversations"; }

  // What the engine itself answers to `messages`, without the app in between.
  QString directAnswer(const std::vector<kiln::ChatMessage>& messages, const kiln::GenerateOptions& options) {
    if (!direct_) {
      kiln::LoadOptions load;
      load.path = fixtureModel().toStdString();
      load.precision = kiln::Precision::F16;
      load.backend = kiln::BackendKind::Cpu;
      load.context_length = 256;
      load.threads = 1;
      direct_ = kiln::Engine::load(load);
    }
    std::string text;
    try {
      direct_->chat(messages, options, [&](std::string_view piece) {
        text += piece;
        return true;
      });
    } catch (const kiln::Error& error) {
      return QStringLiteral("<error: %1>").arg(error.what());
    }
    return QString::fromStdString(text);
  }

  // Asks the same question in `count` new conversations; returns the answers.
  QStringList askRepeatedly(ChatController& chat, const QString& question, int count) {
    QStringList answers;
    for (int i = 0; i < count; ++i) {
      chat.newConversation();
      if (!chat.send(question) || !waitForAnswer(chat)) return answers;
      answers << chat.messages()->textAt(1);
    }
    return answers;
  }

  std::unique_ptr<ChatController> makeChat() { return chatOn(*engine_, *settings_, conversationsDir()); }

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

  // Every test starts from the same sampling: greedy, everything else the model's.
  void cleanup() {
    settings_->useModelDefaults();
    settings_->setTemperature(0);
    settings_->setMaxTokens(16);
  }

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
    // The damaged file is moved aside for the user to rescue, byte for byte, and not reported again.
    QFile aside(conversationsDir() + "/broken.json.corrupt");
    QVERIFY(aside.open(QIODevice::ReadOnly));
    QCOMPARE(aside.readAll(), truncated);
    QVERIFY(errors.filter("moved aside").size() == 1);
    QCOMPARE(makeChat()->storageErrors().size(), 1);  // foreign.json, whole JSON, stays reported
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

  // Settings > Answers > Repeat penalty: the model's default out of the box, kept within 1..2 once
  // set, and it reaches the engine: the app's answer is what the engine itself writes with it.
  void repeatPenaltySettingReachesTheEngine() {
    QVERIFY(!settings_->repeatPenalty().isValid());  // a first start: the model's default
    settings_->setRepeatPenalty(0.5);
    QCOMPARE(settings_->repeatPenalty().toDouble(), 1.0);
    settings_->setRepeatPenalty(7.0);
    QCOMPARE(settings_->repeatPenalty().toDouble(), 2.0);
    settings_->setRepeatPenalty(1.3);
    QCOMPARE(AppSettings().repeatPenalty().toDouble(), 1.3);  // saved, under the key the app documents
    QCOMPARE(QSettings().value("sampling/repeat_penalty").toDouble(), 1.3);
    // The fixture's random weights favour a blank line so strongly that only a firm penalty
    // changes its answer; the user's choice of 1.5 must reach the engine.
    settings_->setRepeatPenalty(1.5);
    constexpr int kTokens = 48;
    settings_->setMaxTokens(kTokens);
    auto chat = makeChat();
    QVERIFY(chat->send("Tell me a long story."));
    QVERIFY(waitForAnswer(*chat));
    const QString answer = chat->messages()->textAt(1);

    const std::vector<kiln::ChatMessage> story{{kiln::Role::User, "Tell me a long story."}};
    QCOMPARE(answer, directAnswer(story, greedyWithPenalty(1.5f, kTokens)));
    QVERIFY2(answer != directAnswer(story, greedyWithPenalty(1.0f, kTokens)),
             "the fixture answers differently without the penalty, so the check above means something");
  }

  // A first start: every sampling setting is "model default" (undefined in QML), nothing of them
  // goes into the options, and answers follow the model's generation_config.json. This copy of
  // the fixture asks for greedy decoding with a firm repeat penalty (which changes its answer).
  void freshSettingsFollowTheModelsDefaults() {
    QSettings().remove("sampling");
    AppSettings fresh;
    for (const char* name : {"temperature", "topK", "topP", "minP", "repeatPenalty"})
      QVERIFY2(!fresh.property(name).isValid(), name);
    const kiln::SamplingChoice choice = fresh.samplingChoice();
    QVERIFY(!choice.temperature && !choice.top_k && !choice.top_p && !choice.min_p && !choice.repeat_penalty);
    QVERIFY(!choice.repeat_last_n && !choice.seed);

    QTemporaryDir models;
    const QString folder = models.path() + "/greedy";
    QVERIFY(copyFixtureWith(folder, R"({"do_sample": false, "repetition_penalty": 1.5})"));
    EngineController engine;
    QVERIFY(loadModel(engine, folder));
    // What the Settings page shows as "model default", and the Models page's origins.
    const QVariantMap defaults = engine.modelInfo().value("samplingDefaults").toMap();
    QCOMPARE(defaults.value("temperature").toDouble(), 0.0);
    QCOMPARE(defaults.value("repeatPenalty").toDouble(), 1.5);
    QCOMPARE(defaults.value("topP").toDouble(), 0.95);  // Kiln's, exactly as written (not 0.949999988)
    bool penaltyOrigin = false;
    for (const QVariant& v : engine.modelInfo().value("settingOrigins").toList()) {
      const QVariantMap o = v.toMap();
      if (o.value("name") == "repeat_penalty")
        penaltyOrigin = o.value("value") == "1.5" && o.value("origin").toString().startsWith("generation_config.json");
    }
    QVERIFY(penaltyOrigin);

    constexpr int kTokens = 48;
    settings_->setMaxTokens(kTokens);
    ChatController chat(conversationsDir(), nullptr);
    chat.setEngine(&engine);
    chat.setSettings(&fresh);
    const QStringList answers = askRepeatedly(chat, "Tell me a long story.", 2);
    QCOMPARE(answers.size(), 2);
    QCOMPARE(answers[0], answers[1]);  // greedy, as the model asks
    const std::vector<kiln::ChatMessage> story{{kiln::Role::User, "Tell me a long story."}};
    QCOMPARE(answers[0], directAnswer(story, greedyWithPenalty(1.5f, kTokens)));
    QVERIFY2(answers[0] != directAnswer(story, greedyWithPenalty(1.0f, kTokens)),
             "the model's own penalty shows in the answer, so the check above means something");
  }

  // A temperature the user sets goes into the options, over the model's default: this copy of
  // the fixture samples at temperature 1; the user's 0 makes every answer the greedy one.
  void anExplicitTemperatureOverridesTheModel() {
    QTemporaryDir models;
    const QString folder = models.path() + "/sampled";
    QVERIFY(copyFixtureWith(folder, R"({"do_sample": true, "temperature": 1.0, "top_k": 0,
                                         "repetition_penalty": 1.5})"));
    EngineController engine;
    QVERIFY(loadModel(engine, folder));
    QCOMPARE(engine.modelInfo().value("samplingDefaults").toMap().value("temperature").toDouble(), 1.0);

    settings_->useModelDefaults();
    settings_->setTemperature(0);
    const kiln::SamplingChoice choice = settings_->samplingChoice();
    QVERIFY(choice.temperature && *choice.temperature == 0.0f);
    QVERIFY(!choice.top_k && !choice.top_p && !choice.min_p && !choice.repeat_penalty);  // still the model's

    constexpr int kTokens = 48;
    settings_->setMaxTokens(kTokens);
    ChatController chat(conversationsDir(), nullptr);
    chat.setEngine(&engine);
    chat.setSettings(settings_.get());
    const std::vector<kiln::ChatMessage> story{{kiln::Role::User, "Tell me a long story."}};
    const QString greedy = directAnswer(story, greedyWithPenalty(1.5f, kTokens));
    QCOMPARE(askRepeatedly(chat, "Tell me a long story.", 2), QStringList({greedy, greedy}));

    // Back to the model's temperature: it samples, so some answer differs from the greedy one.
    settings_->resetTemperature();
    QVERIFY(!AppSettings().temperature().isValid());  // saved as unset
    const QStringList sampled = askRepeatedly(chat, "Tell me a long story.", 3);
    QCOMPARE(sampled.size(), 3);
    QVERIFY2(sampled.count(greedy) < 3, "at the model's temperature 1 the answers vary");
  }

  // Gemma's format needs alternating turns, but a question asked while the model was busy stays
  // in the conversation unanswered; the next one joins it as one turn instead of failing.
  void twoQuestionsInARowBecomeOneTurn() {
    settings_->setRepeatPenalty(1.5);  // without it the fixture answers every prompt alike
    constexpr int kTokens = 24;
    settings_->setMaxTokens(kTokens);
    auto chat = makeChat();
    kiln::GenerateOptions longAnswer;
    longAnswer.max_tokens = 4000;
    QVERIFY(engine_->startChat({{kiln::Role::User, "Keep going"}}, longAnswer) != 0);  // e.g. the API server
    QVERIFY(!chat->send("First question"));
    QCOMPARE(chat->messages()->rowCount(), 1);  // kept, unanswered
    engine_->stop();
    QVERIFY(QTest::qWaitFor([&] { return !engine_->generating(); }, 30000));

    QSignalSpy failed(chat.get(), &ChatController::answerFailed);
    QVERIFY(chat->send("Second question"));
    QVERIFY(waitForAnswer(*chat));
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(1).toString()));
    QCOMPARE(chat->messages()->rowCount(), 3);
    const QString answer = chat->messages()->textAt(2);
    const auto options = greedyWithPenalty(1.5f, kTokens);
    QCOMPARE(answer, directAnswer({{kiln::Role::User, "First question\n\nSecond question"}}, options));
    QVERIFY2(answer != directAnswer({{kiln::Role::User, "Second question"}}, options),
             "the fixture's answer depends on the question, so the check above means something");
  }

  // A failed answer is an assistant message with the error and no text; it is no turn of the
  // model's, and the questions around it become one.
  void aFailedAnswerIsLeftOutOfTheHistory() {
    auto chat = makeChat();
    QSignalSpy failed(chat.get(), &ChatController::answerFailed);
    QVERIFY(chat->send(QString("license ").repeated(6000)));  // more than the 4096 tokens of context
    QVERIFY(waitForAnswer(*chat));
    QCOMPARE(failed.size(), 1);
    const QModelIndex failure = chat->messages()->index(1);
    QCOMPARE(failure.data(MessageListModel::RoleRole).toString(), QStringLiteral("assistant"));
    QVERIFY(failure.data(MessageListModel::TextRole).toString().isEmpty());
    QVERIFY(!failure.data(MessageListModel::ErrorRole).toString().isEmpty());

    // The same shape between two short questions, as saved on disk.
    const QString error = failure.data(MessageListModel::ErrorRole).toString();
    QJsonArray messages{QJsonObject{{"role", "user"}, {"text", "First question"}},
                        QJsonObject{{"role", "assistant"}, {"text", ""}, {"error", error}},
                        QJsonObject{{"role", "user"}, {"text", "Second question"}}};
    QFile file(conversationsDir() + "/with-failure.json");
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QJsonDocument(QJsonObject{{"format", "kiln-conversation"}, {"version", 1}, {"id", "with-failure"},
                                         {"title", "With a failure"}, {"messages", messages}})
                   .toJson());
    file.close();

    settings_->setRepeatPenalty(1.5);
    constexpr int kTokens = 24;
    settings_->setMaxTokens(kTokens);
    auto reopened = makeChat();
    reopened->select("with-failure");
    QCOMPARE(reopened->messages()->rowCount(), 3);
    QVERIFY(reopened->regenerate());  // answers the last question
    QVERIFY(waitForAnswer(*reopened));
    QCOMPARE(reopened->messages()->rowCount(), 4);
    const QString answer = reopened->messages()->textAt(3);
    const auto options = greedyWithPenalty(1.5f, kTokens);
    QCOMPARE(answer, directAnswer({{kiln::Role::User, "First question\n\nSecond question"}}, options));
    QVERIFY2(answer != directAnswer({{kiln::Role::User, "First question"}, {kiln::Role::Assistant, ""},
                                     {kiln::Role::User, "Second question"}}, options),
             "an empty model turn would change the answer, so the check above means something");
  }
};

QTEST_GUILESS_MAIN(TestChatController)
#include "test_chat_controller.moc"
