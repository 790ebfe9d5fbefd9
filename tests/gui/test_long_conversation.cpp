// The third message on the bundled model with the app's default settings: the answers run until
// the end of the turn (or until the context is full), so the conversation soon outgrows the
// model's 2048 tokens. It must go on: the oldest turns roll off, the answer says so, and the
// system prompt still reaches the model.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "app_settings.h"
#include "chat_controller.h"
#include "gui_test_support.h"
#include "kiln/engine.h"

using namespace kiln::gui;
using namespace kiln::gui::test;

class TestLongConversation : public QObject {
  Q_OBJECT

  QTemporaryDir home_;

  QVariant roleAt(const ChatController& chat, int row, MessageListModel::Roles role) {
    return chat.messages()->data(chat.messages()->index(row), role);
  }

 private slots:
  void initTestCase() {
    QVERIFY(home_.isValid());
    useScratchHome(home_);
  }

  void theThirdMessageIsAnswered() {
    const QString model = QString::fromStdString(kiln::default_model_path());
    QVERIFY2(!model.isEmpty(), "the bundled model is part of the source tree");
    AppSettings settings;  // fresh: every setting at its default
    QCOMPARE(settings.maxTokens(), 0);  // until the end of the turn
    EngineController engine;
    // As the app loads it: the settings' context (0: the model's own) and precision.
    QVERIFY(loadModel(engine, model, settings.contextLength(), settings.precision()));
    const int context = engine.modelInfo().value("contextLength").toInt();
    QCOMPARE(context, engine.modelInfo().value("maxContext").toInt());

    ChatController chat(home_.path() + "/conversations", nullptr);
    chat.setEngine(&engine);
    chat.setSettings(&settings);
    chat.setSystemPrompt("You are a helpful assistant.");
    const QStringList questions{"Tell me a long story about a lighthouse keeper.",
                                "Now tell it again from the point of view of the sea.",
                                "And once more, as a poem."};
    int rolledOffSeen = 0;
    for (int i = 0; i < questions.size(); ++i) {
      QVERIFY(chat.send(questions[i]));
      QVERIFY(QTest::qWaitFor([&] { return !chat.generating(); }, 120000));
      const int answer = 2 * i + 1;
      QCOMPARE(chat.messages()->rowCount(), answer + 1);
      QVERIFY2(roleAt(chat, answer, MessageListModel::ErrorRole).toString().isEmpty(),
               qPrintable(QString("answer %1: %2").arg(i + 1).arg(roleAt(chat, answer, MessageListModel::ErrorRole).toString())));
      QVERIFY2(roleAt(chat, answer, MessageListModel::GeneratedTokensRole).toInt() > 0, qPrintable(QString::number(i + 1)));
      // Never cut at a fixed length: the model's end of turn, or the context, ends it.
      const QString reason = roleAt(chat, answer, MessageListModel::StopReasonRole).toString();
      QVERIFY2(reason == "end_of_turn" || reason == "end_of_sequence" || reason == "context_full", qPrintable(reason));
      rolledOffSeen = std::max(rolledOffSeen, roleAt(chat, answer, MessageListModel::RolledOffRole).toInt());
    }
    // Three questions and two long answers are more than the context holds, unless every answer
    // was short: then nothing needed to go.
    int answered = 0;
    for (int row = 1; row < chat.messages()->rowCount(); row += 2)
      answered += roleAt(chat, row, MessageListModel::GeneratedTokensRole).toInt();
    qInfo("answers: %d tokens in all; context %d; most messages rolled off: %d", answered, context, rolledOffSeen);
    if (answered > context) QVERIFY2(rolledOffSeen >= 2, qPrintable(QString::number(rolledOffSeen)));
    QCOMPARE(rolledOffSeen % 2, 0);  // whole question/answer pairs
  }
};

QTEST_MAIN(TestLongConversation)
#include "test_long_conversation.moc"
