// The Settings page's API server switch: EngineController serves the loaded model through
// core/server, with each request run on the app's own engine worker.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTest>
#include <QUrl>
#include <atomic>
#include <thread>

#include "engine_controller.h"
#include "gui_test_support.h"

using kiln::gui::EngineController;

namespace {

// Joins a chunked body ("<hex size>\r\n<bytes>\r\n" ... "0\r\n\r\n").
QByteArray dechunk(const QByteArray& chunked) {
  QByteArray body;
  qsizetype at = 0;
  for (;;) {
    const qsizetype eol = chunked.indexOf("\r\n", at);
    bool ok = false;
    const qsizetype size = eol < 0 ? 0 : chunked.mid(at, eol - at).toLongLong(&ok, 16);
    if (!ok || size == 0) return body;
    body += chunked.mid(eol + 2, size);
    at = eol + 2 + size + 2;
  }
}

// One HTTP exchange on a plain socket; returns the body of a 200 reply, else nothing. The client runs on its own thread, as a real one would, while the test's event
// loop keeps turning.
QByteArray post(int port, const QByteArray& path, const QByteArray& body) {
  QByteArray reply;
  std::atomic<bool> done = false;
  std::thread client([&] {
    QTcpSocket socket;
    socket.connectToHost("127.0.0.1", static_cast<quint16>(port));
    if (socket.waitForConnected(5000)) {
      socket.write("POST " + path + " HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: " +
                   QByteArray::number(body.size()) + "\r\n\r\n" + body);
      QByteArray all;
      while (socket.waitForReadyRead(20000)) all += socket.readAll();
      const qsizetype split = all.indexOf("\r\n\r\n");
      if (all.startsWith("HTTP/1.1 200") && split > 0) {
        const bool chunked = all.left(split).toLower().contains("transfer-encoding: chunked");
        reply = chunked ? dechunk(all.mid(split + 4)) : all.mid(split + 4);
      }
    }
    done = true;
  });
  if (!QTest::qWaitFor([&] { return done.load(); }, 60000)) qWarning("no answer within 60 s");
  client.join();
  return reply;
}

int portOf(const QString& url) { return QUrl(url).port(); }

}  // namespace

class TestLocalServer : public QObject {
  Q_OBJECT

 private slots:
  void servesTheLoadedModelWhileSwitchedOn() {
    if (!EngineController::serverAvailable()) QSKIP("this build has no kiln_server");
    EngineController engine;
    engine.setServerPort(0);  // any free port
    engine.setServerEnabled(true);
    QVERIFY(!engine.serverRunning());  // nothing to serve yet
    QVERIFY(kiln::gui::test::loadFixture(engine));
    QVERIFY2(engine.serverRunning(), qPrintable(engine.serverError()));
    const int port = portOf(engine.serverUrl());
    QVERIFY(port > 0);

    const QByteArray body = post(port, "/v1/chat/completions",
                                 R"({"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 8, "temperature": 0})");
    const QJsonObject reply = QJsonDocument::fromJson(body).object();
    QVERIFY2(!reply.isEmpty(), body.constData());
    QVERIFY(reply.value("choices").toArray().first().toObject().value("message").toObject().value("content").isString());
    QCOMPARE(reply.value("usage").toObject().value("completion_tokens").toInt(), 8);

    // The app's own chat still works beside it.
    QSignalSpy finished(&engine, &EngineController::generationFinished);
    kiln::GenerateOptions options;
    options.max_tokens = 4;
    QVERIFY(engine.startChat({{kiln::Role::User, "Hi"}}, options) != 0);
    QVERIFY(finished.wait(30000));

    engine.setServerEnabled(false);
    QVERIFY(!engine.serverRunning());
    QVERIFY(post(port, "/v1/chat/completions", R"({"messages": [{"role": "user", "content": "Hi"}]})").isEmpty());
  }

  void stopsBeforeTheModelGoes() {
    if (!EngineController::serverAvailable()) QSKIP("this build has no kiln_server");
    EngineController engine;
    engine.setServerPort(0);
    engine.setServerEnabled(true);
    QVERIFY(kiln::gui::test::loadFixture(engine));
    QVERIFY(engine.serverRunning());
    engine.unload();
    QVERIFY(!engine.serverRunning());
    QVERIFY(kiln::gui::test::loadFixture(engine));  // and comes back with the next model
    QVERIFY(engine.serverRunning());
  }

  void aPortInUseIsReported() {
    if (!EngineController::serverAvailable()) QSKIP("this build has no kiln_server");
    EngineController first, second;
    first.setServerPort(0);
    first.setServerEnabled(true);
    QVERIFY(kiln::gui::test::loadFixture(first));
    QVERIFY(first.serverRunning());
    second.setServerPort(portOf(first.serverUrl()));
    second.setServerEnabled(true);
    QVERIFY(kiln::gui::test::loadFixture(second));
    QVERIFY(!second.serverRunning());
    QVERIFY2(!second.serverError().isEmpty(), "the reason is shown in Settings");
    QVERIFY(second.modelLoaded());  // the model itself is fine
  }
};

QTEST_GUILESS_MAIN(TestLocalServer)
#include "test_local_server.moc"
