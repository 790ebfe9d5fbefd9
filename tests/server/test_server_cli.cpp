// `kiln serve` as a user runs it: it says where it listens, serves, and stops cleanly on Ctrl+C.
#include <curl/curl.h>
#include <signal.h>

#include <QProcess>
#include <QRegularExpression>
#include <QtTest>
#include <thread>

#include "serve_process.h"
#include "server_fixture.h"

using namespace kiln;
using namespace kiln::test;

class ServerCliTest : public QObject {
  Q_OBJECT

  // `kiln serve` for the tiny model on a free port (serve_process.h).
  static int start_serve(QProcess& process, const QStringList& extra = {}) {
    return kiln::test::start_serve(process, tiny_model_path(), extra);
  }

 private slots:
  void initTestCase() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  void cleanupTestCase() { curl_global_cleanup(); }

  void serves_then_stops_on_ctrl_c() {
    QProcess process;
    const int port = start_serve(process);
    QVERIFY(port > 0);
    const HttpClient client("http://127.0.0.1:" + std::to_string(port));
    QCOMPARE(client.get("/health").status, 200L);
    const HttpResponse chat = client.post("/v1/chat/completions", chat_body("hello", {{"max_tokens", 4}}));
    QCOMPARE(chat.status, 200L);
    QCOMPARE(json_object(chat.body)["object"].toString(), QString("chat.completion"));

    // Ctrl+C in the middle of a long streamed answer: the process still ends at once, with status 0.
    std::thread streamer([&] {
      client.post_streaming("/v1/completions", completion_body("x", {{"max_tokens", 250}, {"stream", true}}),
                            [](std::string_view) { return true; });
    });
    QTest::qWait(20);
    ::kill(pid_t(process.processId()), SIGINT);
    QVERIFY(process.waitForFinished(10000));
    streamer.join();
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 0);
    const QString log = QString::fromUtf8(process.readAllStandardError());
    QVERIFY2(log.contains("POST /v1/chat/completions 200"), qPrintable(log));  // one line per request
    QVERIFY2(log.contains("Stopped."), qPrintable(log));
    QCOMPARE(client.get("/health").status, 0L);  // the port is closed
  }

  void api_key_from_the_environment() {
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("KILN_API_KEY", "sk-from-env");
    process.setProcessEnvironment(env);
    const int port = start_serve(process);
    QVERIFY(port > 0);
    const HttpClient client("http://127.0.0.1:" + std::to_string(port));
    QCOMPARE(client.get("/v1/models").status, 401L);
    QCOMPARE(client.get("/v1/models", {"Authorization: Bearer sk-from-env"}).status, 200L);
    ::kill(pid_t(process.processId()), SIGTERM);
    QVERIFY(process.waitForFinished(10000));
    QCOMPARE(process.exitCode(), 0);
  }

  void allowed_host_and_limits_from_the_command_line() {
    QProcess process;
    const int port = start_serve(process, {"--allowed-host", "kiln.lan", "--allowed-host", "other.lan:81", "--head-timeout",
                                           "1500", "--body-timeout", "5000", "--max-connections", "32"});
    QVERIFY(port > 0);
    const HttpClient client("http://127.0.0.1:" + std::to_string(port));
    QCOMPARE(client.get("/health").status, 200L);
    QCOMPARE(client.get("/health", {"Host: kiln.lan:" + std::to_string(port)}).status, 200L);
    QCOMPARE(client.get("/health", {"Host: other.lan:81"}).status, 200L);
    QCOMPARE(client.get("/health", {"Host: attacker.test"}).status, 403L);
    QCOMPARE(client.get("/v1/models", {"Origin: http://evil.example"}).status, 403L);
    ::kill(pid_t(process.processId()), SIGTERM);
    QVERIFY(process.waitForFinished(10000));
    QCOMPARE(process.exitCode(), 0);
  }

  void a_taken_port_is_a_clear_error() {
    server::ServerOptions options;
    auto first = start_tiny_server(options);
    QProcess process;
    process.setProgram(KILN_CLI_PATH);
    process.setArguments({"serve", "--model", QString::fromStdString(tiny_model_path()), "--backend", "cpu", "--port",
                          QString::number(first->server->port())});
    process.start();
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitCode(), 1);
    const QString err = QString::fromUtf8(process.readAllStandardError()).trimmed();
    QVERIFY2(err.contains("cannot listen on 127.0.0.1:" + QString::number(first->server->port())), qPrintable(err));
    QCOMPARE(err.count('\n'), 0);  // one line
  }

  void the_start_message_says_who_can_connect() {
    // Not started: only the description of each binding is checked, nothing listens beyond loopback.
    auto engine_thread = std::make_shared<server::EngineThread>(Engine::load(tiny_load_options(64)));
    server::ServerOptions everyone;
    everyone.host = "0.0.0.0";
    everyone.port = 8080;
    server::Server open(everyone, engine_thread->model_info(), engine_thread);
    const std::string text = server::describe_listening(open, everyone);
    QVERIFY2(text.find("all network interfaces") != std::string::npos, text.c_str());
    QVERIFY2(text.find("no API key") != std::string::npos, text.c_str());
    everyone.api_key = "k";
    QVERIFY(server::describe_listening(open, everyone).find("need the API key") != std::string::npos);
    QCOMPARE(server::default_model_id("/models/gemma-3-1b-it/"), std::string("gemma-3-1b-it"));
    QCOMPARE(server::default_model_id("/models/gemma-3-4b-it-Q4_0.gguf"), std::string("gemma-3-4b-it-Q4_0"));
  }
};

QTEST_GUILESS_MAIN(ServerCliTest)
#include "test_server_cli.moc"
