// Images in the app's chat, through ChatController on the real engine: attaching is refused (saying
// why) for a model that cannot see and for files that are no image; with the tiny vision model an
// attached image reaches the engine (the answer is the engine's own for the same turn), is kept in
// the conversation store beside the JSON, comes back after a restart, and a corrupt image fails
// its answer with the engine's message while the conversation stays.
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
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

QString visionModel() { return QStringLiteral(KILN_TEST_DATA "/vision"); }
QString exactPng() { return visionModel() + "/exact.png"; }

QByteArray readAll(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

bool waitForAnswer(ChatController& chat) { return QTest::qWaitFor([&] { return !chat.generating(); }, 60000); }

}  // namespace

class TestChatImages : public QObject {
  Q_OBJECT

  QTemporaryDir home_;
  std::unique_ptr<AppSettings> settings_;

  QString conversationsDir() const { return home_.path() + "/conversations"; }

  std::unique_ptr<ChatController> makeChat(EngineController& engine) {
    return chatOn(engine, *settings_, conversationsDir());
  }

 private slots:
  void initTestCase() {
    QVERIFY(home_.isValid());
    useScratchHome(home_);
    settings_ = std::make_unique<AppSettings>();
    settings_->setTemperature(0);
    settings_->setRepeatPenalty(1.5);  // greedy alone, the tiny model writes newlines
    settings_->setMaxTokens(8);
  }

  void init() { QDir(conversationsDir()).removeRecursively(); }

  void aTextOnlyModelRefusesImagesSayingWhy() {
    EngineController engine;
    QVERIFY(loadFixture(engine));
    QVERIFY(!engine.modelInfo().value("vision").toBool());
    auto chat = makeChat(engine);
    QVERIFY(!chat->attachImage(QUrl::fromLocalFile(exactPng())));
    QVERIFY2(chat->lastError().contains("cannot see images"), qPrintable(chat->lastError()));
    QVERIFY(chat->pendingImages().isEmpty());
  }

  void filesThatAreNoImagesAreRefusedNamingThem() {
    EngineController none;  // no model: the file itself is checked
    auto chat = makeChat(none);
    QVERIFY(!chat->attachImage(QStringLiteral("/no/such/cat.png")));
    QVERIFY2(chat->lastError().contains("/no/such/cat.png"), qPrintable(chat->lastError()));
    QVERIFY(!chat->attachImage(visionModel() + "/config.json"));
    QVERIFY2(chat->lastError().contains("config.json") && chat->lastError().contains("PNG"), qPrintable(chat->lastError()));
    QVERIFY(chat->pendingImages().isEmpty());
    QVERIFY(chat->attachImage(QUrl::fromLocalFile(exactPng())));  // a real one, as a file URL from a dialog
    QCOMPARE(chat->pendingImages(), QStringList{QUrl::fromLocalFile(exactPng()).toString()});
    chat->removePendingImage(0);
    QVERIFY(chat->pendingImages().isEmpty());
  }

  void theStoreKeepsImagesAndStaysReadableByOlderKilns() {
    Conversation c;
    c.id = "c1";
    c.created = c.updated = QDateTime::currentDateTimeUtc();
    Message question;
    question.text = "Look";
    question.images << MessageImage{"cat.png", "abc.png"};
    Message edited = question;  // an edit: the earlier version, with its images, is a branch
    edited.text = "Look again";
    edited.others.push_back({question});
    edited.variant = 1;
    Message answer;
    answer.role = Message::Role::Assistant;
    answer.text = "A cat.";
    c.messages << edited << answer;
    const QJsonObject json = conversationToJson(c);
    QCOMPARE(json["version"].toInt(), 3);
    Conversation back;
    QCOMPARE(conversationFromJson(json, back), QString());
    QCOMPARE(back.messages[0].images.size(), 1);
    QCOMPARE(back.messages[0].images[0].name, QStringLiteral("cat.png"));
    QCOMPARE(back.messages[0].images[0].file, QStringLiteral("abc.png"));
    QCOMPARE(back.messages[0].others[0][0].images.size(), 1);

    // Without images the file stays version 2, which Kilns before images read.
    c.messages[0].images.clear();
    c.messages[0].others.clear();
    QCOMPARE(conversationToJson(c)["version"].toInt(), 2);

    // An image file name that leaves the image folder is refused, naming the message.
    QJsonObject hostile = json;
    QJsonArray messages = hostile["messages"].toArray();
    QJsonObject first = messages[0].toObject();
    first["images"] = QJsonArray{QJsonObject{{"name", "x"}, {"file", "../../.ssh/id_rsa"}}};
    messages[0] = first;
    hostile["messages"] = messages;
    Conversation refused;
    QVERIFY(conversationFromJson(hostile, refused).contains("bad file name"));

    // saveImage: one file per content, named by its hash.
    ConversationStore store(conversationsDir());
    QString error;
    const QString a = store.saveImage(readAll(exactPng()), "png", &error);
    QVERIFY2(!a.isEmpty(), qPrintable(error));
    QCOMPARE(store.saveImage(readAll(exactPng()), "png", &error), a);
    QCOMPARE(readAll(store.imagePath(a)), readAll(exactPng()));
    QCOMPARE(QDir(store.imageDirectory()).entryList(QDir::Files).size(), 1);
    QVERIFY(store.imagePath("../x.png").isEmpty());
  }

  // ---- the tiny vision model (needs the engine's vision path) ----

  void anAttachedImageIsAnsweredSavedAndReloaded() {
    EngineController engine;
    QVERIFY(loadModel(engine, visionModel(), 256, QStringLiteral("fp32")));
    QVERIFY2(engine.modelInfo().value("vision").toBool(), "the tiny vision model should see");
    QString firstAnswer, id;
    {
      auto chat = makeChat(engine);
      QSignalSpy finished(chat.get(), &ChatController::answerFinished);
      QVERIFY2(chat->attachImage(exactPng()), qPrintable(chat->lastError()));
      QVERIFY(chat->send("What is this?"));
      QVERIFY(chat->pendingImages().isEmpty());  // they went with the message
      QVERIFY(waitForAnswer(*chat));
      QCOMPARE(finished.size(), 1);
      QCOMPARE(chat->messages()->rowCount(), 2);
      QVERIFY(chat->messages()->index(1).data(MessageListModel::ErrorRole).toString().isEmpty());
      firstAnswer = chat->messages()->textAt(1);
      id = chat->currentId();

      // The engine itself, given the same turn, answers the same: the image reached the model.
      kiln::LoadOptions load;
      load.path = visionModel().toStdString();
      load.precision = kiln::Precision::F32;
      load.backend = kiln::BackendKind::Cpu;
      load.context_length = 256;
      load.threads = 1;
      auto direct = kiln::Engine::load(load);
      kiln::GenerateOptions o;
      o.sampling = settings_->samplingChoice();
      o.max_tokens = 8;
      std::string expected;
      direct->chat({{kiln::Role::User, "What is this?", {{"exact.png", readAll(exactPng()).toStdString()}}}}, o,
                   [&](std::string_view t) { expected += t; return true; });
      QVERIFY2(!firstAnswer.trimmed().isEmpty(), qPrintable(firstAnswer));
      QCOMPARE(firstAnswer, QString::fromStdString(expected));
      std::string without;  // the same words without the picture answer otherwise
      direct->chat({{kiln::Role::User, "What is this?", {}}}, o, [&](std::string_view t) { without += t; return true; });
      QVERIFY(QString::fromStdString(without) != firstAnswer);

      // The thumbnail points at the store's copy.
      const QStringList thumbnails = chat->messages()->index(0).data(MessageListModel::ImagesRole).toStringList();
      QCOMPARE(thumbnails.size(), 1);
      QCOMPARE(readAll(QUrl(thumbnails[0]).toLocalFile()), readAll(exactPng()));
    }
    // On disk: the JSON names the file, the bytes sit in images/ under their hash.
    const QJsonObject saved = QJsonDocument::fromJson(readAll(conversationsDir() + "/" + id + ".json")).object();
    const QJsonArray images = saved["messages"].toArray()[0].toObject()["images"].toArray();
    QCOMPARE(images.size(), 1);
    QCOMPARE(images[0].toObject()["name"].toString(), QStringLiteral("exact.png"));
    const QString hash = QCryptographicHash::hash(readAll(exactPng()), QCryptographicHash::Sha256).toHex();
    QCOMPARE(images[0].toObject()["file"].toString(), hash + ".png");

    // A restart: the conversation comes back with its image, and a regenerate sees it again.
    auto chat = makeChat(engine);
    chat->select(id);
    QCOMPARE(chat->messages()->index(0).data(MessageListModel::ImageNamesRole).toStringList(), QStringList{"exact.png"});
    QVERIFY(chat->regenerate());
    QVERIFY(waitForAnswer(*chat));
    QCOMPARE(chat->messages()->textAt(1), firstAnswer);  // greedy: the same turn, image included

    // Deleting a conversation deletes its pictures, but not one another conversation still shows.
    const QString stored = conversationsDir() + "/images/" + hash + ".png";
    chat->newConversation();
    QVERIFY(chat->attachImage(exactPng()));
    QVERIFY(chat->send("Again?"));
    QVERIFY(waitForAnswer(*chat));
    const QString second = chat->currentId();
    chat->remove(id);
    QVERIFY(QFile::exists(stored));
    chat->remove(second);
    QVERIFY(!QFile::exists(stored));
    QVERIFY(chat->storageErrors().isEmpty());
  }

  void aCorruptImageFailsItsAnswerAndTheConversationStays() {
    EngineController engine;
    QVERIFY(loadModel(engine, visionModel(), 256, QStringLiteral("fp32")));
    QTemporaryDir scratch;
    const QString broken = scratch.path() + "/broken.png";
    {
      QFile out(broken);
      QVERIFY(out.open(QIODevice::WriteOnly));
      out.write(readAll(exactPng()).left(200));  // a PNG header, then nothing
    }
    auto chat = makeChat(engine);
    QSignalSpy failed(chat.get(), &ChatController::answerFailed);
    QVERIFY2(chat->attachImage(broken), qPrintable(chat->lastError()));
    QVERIFY(chat->send("What is this?"));
    QVERIFY(waitForAnswer(*chat));
    QCOMPARE(failed.size(), 1);
    const QString error = chat->messages()->index(1).data(MessageListModel::ErrorRole).toString();
    QVERIFY2(error.contains("broken.png"), qPrintable(error));
    // The question is kept, and the chat goes on without images.
    QCOMPARE(chat->messages()->textAt(0), QStringLiteral("What is this?"));
    QVERIFY(chat->send("And now?"));
    QVERIFY(waitForAnswer(*chat));
    QCOMPARE(failed.size(), 1);
  }
};

QTEST_MAIN(TestChatImages)
#include "test_chat_images.moc"
