// `kiln serve --allow-remote-images`: an http(s) image_url is fetched by the server (from an image
// host on loopback, cpp-httplib in this test) only with the flag; without it, and for a URL the host
// cannot give, the client gets a 400 that says why.
#include <curl/curl.h>
#include <httplib.h>
#include <signal.h>

#include <QFile>
#include <QJsonDocument>
#include <QProcess>
#include <QRegularExpression>
#include <QtTest>
#include <atomic>
#include <thread>

#include "serve_process.h"
#include "server_fixture.h"

using namespace kiln;
using namespace kiln::test;

namespace {

std::string vision_dir() { return std::string(KILN_TEST_DATA) + "/vision"; }

void stop_serve(QProcess& process) {
  ::kill(pid_t(process.processId()), SIGTERM);
  process.waitForFinished(10000);
}

std::string image_body(const std::string& url) {
  const QJsonObject part{{"type", "image_url"}, {"image_url", QJsonObject{{"url", QString::fromStdString(url)}}}};
  const QJsonObject body{{"model", "tiny"},
                         {"max_tokens", 4},
                         {"messages", QJsonArray{QJsonObject{{"role", "user"},
                                                             {"content", QJsonArray{part, QJsonObject{{"type", "text"},
                                                                                                      {"text", "What?"}}}}}}}};
  return QJsonDocument(body).toJson(QJsonDocument::Compact).toStdString();
}

QString message_of(const HttpResponse& r) { return json_object(r.body)["error"].toObject()["message"].toString(); }

}  // namespace

class ServerRemoteImagesTest : public QObject {
  Q_OBJECT

  httplib::Server host_;
  std::thread host_thread_;
  int host_port_ = 0;
  std::atomic<int> fetched_{0};
  std::string png_;

  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(host_port_) + path; }

 private slots:
  void initTestCase() {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    QFile f(QString::fromStdString(vision_dir() + "/exact.png"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    png_ = f.readAll().toStdString();
    host_.Get("/cat.png", [this](const httplib::Request&, httplib::Response& res) {
      ++fetched_;
      res.set_content(png_, "image/png");
    });
    host_port_ = host_.bind_to_any_port("127.0.0.1");
    QVERIFY(host_port_ > 0);
    host_thread_ = std::thread([this] { host_.listen_after_bind(); });
    while (!host_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  void cleanupTestCase() {
    host_.stop();
    if (host_thread_.joinable()) host_thread_.join();
    curl_global_cleanup();
  }

  void refused_without_the_flag() {
    QProcess serve;
    const int port = start_serve(serve, tiny_model_path());
    QVERIFY(port > 0);
    const HttpClient client("http://127.0.0.1:" + std::to_string(port));
    const HttpResponse r = client.post("/v1/chat/completions", image_body(url("/cat.png")));
    QCOMPARE(r.status, 400L);
    QVERIFY2(message_of(r).contains("--allow-remote-images"), r.body.c_str());
    QCOMPARE(fetched_.load(), 0);  // the server made no request
    stop_serve(serve);
  }

  void fetched_with_the_flag() {
    QProcess serve;
    const int port = start_serve(serve, tiny_model_path(), {"--allow-remote-images"});
    QVERIFY(port > 0);
    const HttpClient client("http://127.0.0.1:" + std::to_string(port));
    // The text-only model: fetched, then refused for what the model is.
    const int before = fetched_;
    HttpResponse r = client.post("/v1/chat/completions", image_body(url("/cat.png")));
    QCOMPARE(r.status, 400L);
    QVERIFY2(message_of(r).contains("cannot see images"), r.body.c_str());
    QCOMPARE(fetched_.load(), before + 1);
    // A URL the host does not have, and a host that is not there.
    r = client.post("/v1/chat/completions", image_body(url("/missing.png")));
    QCOMPARE(r.status, 400L);
    QVERIFY2(message_of(r).contains("could not be fetched: HTTP 404"), r.body.c_str());
    r = client.post("/v1/chat/completions", image_body("http://127.0.0.1:1/cat.png"));
    QCOMPARE(r.status, 400L);
    QVERIFY2(message_of(r).contains("could not be fetched"), r.body.c_str());
    stop_serve(serve);
  }

  void kiln_chat_sends_images_to_an_endpoint() {
    // `kiln chat --endpoint` sends /image files as data-URL content parts: this text-only server
    // sees the image (and refuses it, saying so), and the chat goes on.
    QProcess serve;
    const int port = start_serve(serve, tiny_model_path());
    QVERIFY(port > 0);
    QProcess chat;
    chat.start(KILN_CLI_PATH, {"chat", "--endpoint", QString("http://127.0.0.1:%1/v1").arg(port), "-n", "4"});
    QVERIFY(chat.waitForStarted(10000));
    chat.write("/image " + QByteArray::fromStdString(vision_dir()) + "/exact.png\nWhat is this?\nhello\n\n");
    chat.closeWriteChannel();
    QVERIFY(chat.waitForFinished(60000));
    const QString err = QString::fromUtf8(chat.readAllStandardError());
    QCOMPARE(chat.exitCode(), 0);
    QVERIFY2(err.contains("attached"), qPrintable(err));
    QVERIFY2(err.contains("cannot see images"), qPrintable(err));
    stop_serve(serve);
    const QString log = QString::fromUtf8(serve.readAllStandardError());
    QVERIFY2(log.contains("POST /v1/chat/completions 400") && log.contains("POST /v1/chat/completions 200"), qPrintable(log));
  }

  // Needs the engine's vision path.
  void a_fetched_image_is_answered_by_a_model_that_sees() {
    QProcess serve;
    const int port = start_serve(serve, vision_dir(), {"--allow-remote-images"});
    QVERIFY(port > 0);
    const HttpClient client("http://127.0.0.1:" + std::to_string(port));
    const HttpResponse r = client.post("/v1/chat/completions", image_body(url("/cat.png")));
    QVERIFY2(r.status == 200L, r.body.c_str());
    QCOMPARE(json_object(r.body)["object"].toString(), QString("chat.completion"));
    stop_serve(serve);
  }
};

QTEST_GUILESS_MAIN(ServerRemoteImagesTest)
#include "test_server_remote_images.moc"
