// A remote endpoint in the app, against a real `kiln serve` the test starts on loopback (with an
// API key): the Models page's endpoint list (models, a wrong key, an unreachable address, kept
// across starts), and chat through it exactly as with a local model: streamed, stopped, and
// failures said in the app's words.
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <thread>

#include "app_settings.h"
#include "chat_controller.h"
#include "gui_test_support.h"
#include "kiln/engine.h"
#include "remote_endpoints.h"

using namespace kiln::gui;
using namespace kiln::gui::test;

namespace {

const QString kKey = QStringLiteral("sk-kiln-test");
const QString kModel = QStringLiteral("tiny-gemma3-a");

int closedPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

QVariantMap endpointFor(const RemoteEndpoints& endpoints, const QString& url) {
  for (const QVariant& e : endpoints.endpoints())
    if (e.toMap().value("url").toString() == url) return e.toMap();
  return {};
}

// Waits until the endpoint's model list (or its error) is in.
QVariantMap listed(const RemoteEndpoints& endpoints, const QString& url) {
  if (!QTest::qWaitFor([&] { return !endpointFor(endpoints, url).value("listing").toBool(); }, 30000)) return {};
  return endpointFor(endpoints, url);
}

// A peer that answers garbage to /v1/models and cuts its chat stream short (a broken proxy).
class BrokenPeer {
 public:
  BrokenPeer() {
    server_.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<html>502 Bad Gateway</html>", "text/html");
    });
    server_.Post("/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"Once upon\"}}]}\n\n",
                      "text/event-stream");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~BrokenPeer() {
    server_.stop();
    thread_.join();
  }
  QString url() const { return QStringLiteral("http://127.0.0.1:%1/v1").arg(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace

class TestRemoteEndpoint : public QObject {
  Q_OBJECT

  QTemporaryDir home_;
  QProcess serve_;
  QString url_;
  std::unique_ptr<AppSettings> settings_;

  std::unique_ptr<ChatController> makeChat(EngineController& engine) {
    return chatOn(engine, *settings_, home_.path() + "/conversations");
  }

  // The same model here, without the app or the network: what the endpoint must answer.
  QString localAnswer(const QString& question, int maxTokens) {
    kiln::LoadOptions load;
    load.path = fixtureModel().toStdString();
    load.precision = kiln::Precision::F16;
    load.backend = kiln::BackendKind::Cpu;
    load.context_length = 1024;
    load.threads = 1;
    auto engine = kiln::Engine::load(load);
    kiln::GenerateOptions options;
    options.sampling.temperature = 0;
    options.max_tokens = maxTokens;
    std::string text;
    engine->chat({{kiln::Role::User, question.toStdString()}}, options, [&](std::string_view t) {
      text += t;
      return true;
    });
    return QString::fromStdString(text);
  }

 private slots:
  void initTestCase() {
    QVERIFY(home_.isValid());
    useScratchHome(home_);
    settings_ = std::make_unique<AppSettings>();
    settings_->setTemperature(0);  // greedy: the answer is known
    settings_->setMaxTokens(12);
    serve_.setProgram(QStringLiteral(KILN_CLI_PATH));
    serve_.setArguments({"serve", "--model", fixtureModel(), "--backend", "cpu", "--precision", "f16", "--ctx", "1024",
                         "--threads", "1", "--port", "0", "--api-key", kKey});
    serve_.start();
    QVERIFY(serve_.waitForStarted(10000));
    const QRegularExpression listening(R"(at (http://127\.0\.0\.1:\d+/v1))");
    QByteArray out;
    QVERIFY(QTest::qWaitFor([&] {
      serve_.waitForReadyRead(100);
      out += serve_.readAllStandardOutput();
      const auto m = listening.match(QString::fromUtf8(out));
      if (m.hasMatch()) url_ = m.captured(1);
      return m.hasMatch() || serve_.state() == QProcess::NotRunning;
    }, 30000));
    QVERIFY2(!url_.isEmpty(), out.constData());
  }

  void cleanupTestCase() {
    serve_.terminate();
    serve_.waitForFinished(10000);
  }

  void endpointsListTheirModelsAndAreKept() {
    {
      RemoteEndpoints endpoints;
      QCOMPARE(endpoints.add(url_, kKey), QString());
      const QVariantMap e = listed(endpoints, url_);
      QCOMPARE(e.value("models").toStringList(), QStringList{kModel});
      QCOMPARE(e.value("error").toString(), QString());
      QCOMPARE(e.value("hasKey").toBool(), true);
      QCOMPARE(endpoints.apiKey(url_), kKey);
    }
    RemoteEndpoints again;  // the next start
    QCOMPARE(endpointFor(again, url_).value("root").toString(), url_);
    QCOMPARE(again.apiKey(url_), kKey);
    again.refresh();
    QCOMPARE(listed(again, url_).value("models").toStringList(), QStringList{kModel});
    // The model chatted with last is what the next start uses (Main.qml), until a local one loads.
    QVERIFY(again.lastUsed().isEmpty());
    again.remember(url_, kModel);
    QCOMPARE(RemoteEndpoints().lastUsed(), (QVariantMap{{"url", url_}, {"model", kModel}}));
    again.remember({}, {});
    QVERIFY(RemoteEndpoints().lastUsed().isEmpty());
    again.remember(url_, kModel);
    again.remove(url_);  // a removed endpoint is not started with
    QVERIFY(RemoteEndpoints().endpoints().isEmpty());
    QVERIFY(RemoteEndpoints().lastUsed().isEmpty());
  }

  void aWrongKeyAnUnreachableAddressAndNoAddressAreSaid() {
    RemoteEndpoints endpoints;
    QCOMPARE(endpoints.add(url_, "sk-wrong"), QString());
    const QString refused = listed(endpoints, url_).value("error").toString();
    QVERIFY2(refused.contains("refused the API key (HTTP 401)"), qPrintable(refused));
    QVERIFY(!refused.contains("sk-wrong"));

    const QString nowhere = QStringLiteral("http://127.0.0.1:%1").arg(closedPort());
    QCOMPARE(endpoints.add(nowhere, {}), QString());
    const QString unreachable = listed(endpoints, nowhere).value("error").toString();
    QVERIFY2(unreachable.startsWith("Cannot reach " + nowhere + "/v1."), qPrintable(unreachable));

    QVERIFY(endpoints.add("ftp://files.example", {}).contains("is not a web address"));
    QCOMPARE(endpoints.endpoints().size(), 2);  // the bad address was not added
    endpoints.remove(url_);
    endpoints.remove(nowhere);
  }

  void chatWithARemoteModelAsWithALocalOne() {
    EngineController engine;
    engine.useRemote(url_, kKey, kModel);
    QVERIFY(engine.modelLoaded());
    QVERIFY(engine.remote());
    QCOMPARE(engine.modelInfo().value("name").toString(), kModel);
    QCOMPARE(engine.modelInfo().value("endpoint").toString(), url_);

    auto chat = makeChat(engine);
    chat->newConversation();
    QSignalSpy finished(chat.get(), &ChatController::answerFinished);
    QVERIFY(chat->send("What does the license say?"));
    QVERIFY(chat->generating());
    QVERIFY(finished.wait(30000));
    QCOMPARE(chat->messages()->textAt(1), localAnswer("What does the license say?", 12));
    const QVariantMap stats = finished.first().at(1).toMap();
    QCOMPARE(stats.value("generatedTokens").toInt(), 12);
    QCOMPARE(stats.value("stopReason").toString(), QString::fromStdString(kiln::to_string(kiln::StopReason::MaxTokens)));

    // A follow-up carries the conversation (the endpoint is stateless: the app sends it all).
    finished.clear();
    QVERIFY(chat->send("And then?"));
    QVERIFY(finished.wait(30000));
    QVERIFY(finished.first().at(1).toMap().value("promptTokens").toInt() > 20);

    // Loading a local model ends the remote one.
    QVERIFY(loadFixture(engine));
    QVERIFY(!engine.remote());
  }

  void stopEndsTheRemoteAnswer() {
    EngineController engine;
    engine.useRemote(url_, kKey, kModel);
    settings_->setMaxTokens(0);  // until the end of the turn: long on the tiny model
    settings_->setTemperature(1.5);
    auto chat = makeChat(engine);
    QSignalSpy finished(chat.get(), &ChatController::answerFinished);
    connect(&engine, &EngineController::textArrived, chat.get(), [&] { chat->stop(); }, Qt::SingleShotConnection);
    QVERIFY(chat->send("Tell me a long story"));
    QVERIFY(finished.wait(30000));
    QCOMPARE(finished.first().at(1).toMap().value("stopReason").toString(),
             QString::fromStdString(kiln::to_string(kiln::StopReason::Cancelled)));
    // (Cancelled: the connection was closed before the stream's end; a stop after it reports how it ended.)
    settings_->setMaxTokens(12);
    settings_->setTemperature(0);
    // The server let go of it: the next answer comes.
    finished.clear();
    QVERIFY(chat->send("Hello"));
    QVERIFY(finished.wait(30000));
  }

  void failuresAreSaidOnTheAnswer() {
    EngineController engine;
    engine.useRemote(url_, "sk-wrong", kModel);
    auto chat = makeChat(engine);
    QSignalSpy failed(chat.get(), &ChatController::answerFailed);
    QVERIFY(chat->send("Hello"));
    QVERIFY(failed.wait(30000));
    QVERIFY2(failed.first().at(1).toString().contains("refused the API key"), qPrintable(failed.first().at(1).toString()));
    QVERIFY(!chat->generating());
    QVERIFY(engine.modelLoaded());  // still chosen: the user fixes the key, or the server comes back

    const QString nowhere = QStringLiteral("http://127.0.0.1:%1").arg(closedPort());
    engine.useRemote(nowhere, {}, kModel);
    failed.clear();
    QVERIFY(chat->send("Hello again"));
    QVERIFY(failed.wait(30000));
    QVERIFY2(failed.first().at(1).toString().startsWith("Cannot reach " + nowhere + "/v1."), qPrintable(failed.first().at(1).toString()));
  }

  void garbageAndCutStreamsAreSaid() {
    BrokenPeer peer;
    RemoteEndpoints endpoints;
    QCOMPARE(endpoints.add(peer.url(), {}), QString());
    const QString listing = listed(endpoints, peer.url()).value("error").toString();
    QVERIFY2(listing.startsWith("The endpoint's answer is not what an OpenAI-compatible server sends:") &&
                 listing.contains("502 Bad Gateway"), qPrintable(listing));
    endpoints.remove(peer.url());

    EngineController engine;
    engine.useRemote(peer.url(), {}, "any");
    auto chat = makeChat(engine);
    QSignalSpy failed(chat.get(), &ChatController::answerFailed);
    chat->newConversation();
    QVERIFY(chat->send("Tell me a story"));
    QVERIFY(failed.wait(30000));
    QVERIFY2(failed.first().at(1).toString().startsWith("The connection ended before the answer did."),
             qPrintable(failed.first().at(1).toString()));
    QCOMPARE(chat->messages()->textAt(1), QStringLiteral("Once upon"));  // what came is kept, with the error
  }
};

QTEST_MAIN(TestRemoteEndpoint)
#include "test_remote_endpoint.moc"
