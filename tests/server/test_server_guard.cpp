// A hostile web page and slow clients, over loopback: foreign Host and Origin get 403, a key hides
// /health's details, trickling connections are cut at their deadline while /health stays quick, and
// connections above the cap get 503 at once. Raw sockets where curl would not misbehave on purpose.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QtTest>
#include <atomic>
#include <thread>

#include "server/request_policy.h"
#include "server_fixture.h"

using namespace kiln;
using namespace kiln::test;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A blocking TCP connection to 127.0.0.1:port; -1 on failure.
int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends `text` and reads until the server closes or `timeout_ms` passes.
std::string raw_exchange(int port, const std::string& text, int timeout_ms = 5000) {
  const int fd = connect_loopback(port);
  if (fd < 0) return {};
  (void)::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
  std::string out;
  const auto t0 = Clock::now();
  char buf[4096];
  pollfd p{fd, POLLIN, 0};
  while (seconds_since(t0) * 1000 < timeout_ms && ::poll(&p, 1, 50) >= 0) {
    if (!(p.revents & (POLLIN | POLLHUP))) continue;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, size_t(n));
  }
  ::close(fd);
  return out;
}

QString error_code(const HttpResponse& r) { return json_object(r.body)["error"].toObject()["code"].toString(); }

}  // namespace

class ServerGuardTest : public QObject {
  Q_OBJECT

  static std::string host(const std::string& name) { return "Host: " + name; }

 private slots:
  void initTestCase() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  void cleanupTestCase() { curl_global_cleanup(); }

  void foreign_host_gets_403_everywhere() {
    auto s = start_tiny_server({}, 256);
    const HttpClient& c = *s->client;
    const std::string port = std::to_string(s->server->port());
    for (const std::string& foreign : std::vector<std::string>{"attacker.test", "attacker.test:" + port, "localhost", "localhost:1",
                                       "127.0.0.1:" + port + "0", "127.0.0.2:" + port, "localhost.:" + port}) {
      const HttpResponse health = c.get("/health", {host(foreign)});
      QVERIFY2(health.status == 403, foreign.c_str());
      QCOMPARE(error_code(health), QString("host_not_allowed"));
      QVERIFY(health.header("content-type").find("application/json") == 0);
      const HttpResponse chat = c.post("/v1/chat/completions", chat_body("hi", {{"max_tokens", 2}}), {host(foreign)});
      QVERIFY2(chat.status == 403, foreign.c_str());
      QCOMPARE(error_code(chat), QString("host_not_allowed"));
    }
    QCOMPARE(s->server->counters().completed, uint64_t(0));  // nothing was generated for them
    for (const std::string& own : std::vector<std::string>{"127.0.0.1:" + port, "localhost:" + port, "LocalHost:" + port, "[::1]:" + port}) {
      QVERIFY2(c.get("/health", {host(own)}).status == 200, own.c_str());
      QVERIFY2(c.post("/v1/chat/completions", chat_body("hi", {{"max_tokens", 2}}), {host(own)}).status == 200, own.c_str());
    }
    QCOMPARE(c.get("/health").status, 200L);  // what curl sends by itself
    // HTTP/1.0 without Host is not a browser, so it cannot be DNS rebinding. (httplib drops an empty
    // header, so "Host:" with no value reads as no Host; browsers never send one.)
    QVERIFY(raw_exchange(s->server->port(), "GET /health HTTP/1.0\r\n\r\n").rfind("HTTP/1.1 200", 0) == 0);
  }

  void policy_for_other_bindings() {
    // Bound to every interface (not started here: tests listen on loopback only), any IP address
    // with the port names the server, since an address cannot be rebound; names still cannot.
    const server::RequestPolicy every("0.0.0.0", 8080, {}, "");
    QVERIFY(every.host_allowed("192.168.1.5:8080"));
    QVERIFY(every.host_allowed("[fe80::1]:8080"));
    QVERIFY(!every.host_allowed("192.168.1.5:9090"));
    QVERIFY(!every.host_allowed("192.168.1.5"));  // port 8080 is not the default one a client may leave out
    QVERIFY(!every.host_allowed("evil.test:8080"));
    QVERIFY(every.origin_allowed("http://192.168.1.5:8080"));
    QVERIFY(!every.origin_allowed("http://evil.test:8080"));
    const server::RequestPolicy lan("192.168.1.5", 80, {"fe80::2"}, "http://app.test/");
    QVERIFY(lan.host_allowed("192.168.1.5") && lan.host_allowed("192.168.1.5:80") && lan.host_allowed("localhost"));
    QVERIFY(lan.host_allowed("[fe80::2]:80") && lan.host_allowed("[FE80::2]"));
    QVERIFY(!lan.host_allowed("10.0.0.1:80"));
    QVERIFY(lan.origin_allowed("http://app.test") && lan.origin_allowed("http://localhost"));
    QVERIFY(!lan.origin_allowed("http://app.test.evil.test"));
    const server::RequestPolicy v6("::1", 8080, {}, "*");
    QVERIFY(v6.host_allowed("[::1]:8080") && !v6.host_allowed("::1:8080"));
    QVERIFY(v6.origin_allowed("http://anything.example"));  // --cors '*' is the user's choice
    QVERIFY(v6.host_allowed("", false));  // no Host at all: not a browser
  }

  void allowed_host_option_adds_names() {
    server::ServerOptions options;
    options.allowed_hosts = {"kiln.lan", "Proxy.Test:9000"};
    auto s = start_tiny_server(options, 256);
    const HttpClient& c = *s->client;
    const std::string port = std::to_string(s->server->port());
    for (const std::string& ok : std::vector<std::string>{"kiln.lan", "kiln.lan:" + port, "proxy.test:9000", "127.0.0.1:" + port})
      QVERIFY2(c.get("/health", {host(ok)}).status == 200, ok.c_str());
    for (const std::string& no : std::vector<std::string>{"proxy.test", "proxy.test:" + port, "kiln.lan.attacker.test", "other.lan"})
      QVERIFY2(c.get("/health", {host(no)}).status == 403, no.c_str());
    // A page served under an allowed name is one of the server's own origins.
    QCOMPARE(c.get("/v1/models", {"Origin: http://kiln.lan:" + port}).status, 200L);
  }

  void foreign_origin_gets_403() {
    auto s = start_tiny_server({}, 256);
    const HttpClient& c = *s->client;
    const int port = s->server->port();
    for (const std::string& foreign : std::vector<std::string>{"http://evil.example", "null", "http://localhost:3000", "https://evil.example:" +
                                       std::to_string(port), "http://127.0.0.1:" + std::to_string(port) + ".evil.example"}) {
      const HttpResponse chat = c.post("/v1/chat/completions", chat_body("hi", {{"max_tokens", 2}}), {"Origin: " + foreign});
      QVERIFY2(chat.status == 403, foreign.c_str());
      QCOMPARE(error_code(chat), QString("origin_not_allowed"));
      QVERIFY(chat.header("access-control-allow-origin").empty());
    }
    // The "simple" request a page can send without a preflight: text/plain JSON.
    const std::string body = chat_body("hi", {{"max_tokens", 2}});
    const std::string attack = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                               "\r\nConnection: close\r\nOrigin: http://evil.example\r\nContent-Type: text/plain\r\nContent-Length: " +
                               std::to_string(body.size()) + "\r\n\r\n" + body;
    const std::string answer = raw_exchange(port, attack);
    QVERIFY2(answer.rfind("HTTP/1.1 403", 0) == 0, answer.c_str());
    QCOMPARE(s->server->counters().completed, uint64_t(0));
    // The server's own origins and clients that send none pass.
    for (const std::string& own : std::vector<std::string>{"http://127.0.0.1:" + std::to_string(port), "http://localhost:" + std::to_string(port)})
      QVERIFY2(c.post("/v1/chat/completions", body, {"Origin: " + own}).status == 200, own.c_str());
    QCOMPARE(c.post("/v1/chat/completions", body).status, 200L);
  }

  void cors_origin_passes_with_headers() {
    server::ServerOptions options;
    options.cors_origin = "http://localhost:3000";
    auto s = start_tiny_server(options, 256);
    const HttpClient& c = *s->client;
    const std::string origin = "Origin: http://localhost:3000";
    const HttpResponse preflight = c.request("OPTIONS", "/v1/chat/completions", {origin, "Access-Control-Request-Method: POST"});
    QCOMPARE(preflight.status, 204L);
    QCOMPARE(preflight.header("access-control-allow-origin"), std::string("http://localhost:3000"));
    const HttpResponse chat = c.post("/v1/chat/completions", chat_body("hi", {{"max_tokens", 2}}), {origin});
    QCOMPARE(chat.status, 200L);
    QCOMPARE(chat.header("access-control-allow-origin"), std::string("http://localhost:3000"));
    const HttpResponse evil = c.post("/v1/chat/completions", chat_body("hi"), {"Origin: http://evil.example"});
    QCOMPARE(evil.status, 403L);
    QCOMPARE(c.request("OPTIONS", "/v1/chat/completions", {"Origin: http://evil.example"}).status, 403L);
  }

  void health_without_the_key_says_only_ok() {
    server::ServerOptions options;
    options.api_key = "sk-guard";
    auto s = start_tiny_server(options, 256);
    const HttpClient& c = *s->client;
    for (const std::vector<std::string>& headers : {std::vector<std::string>{}, {"Authorization: Bearer sk-wrong"}}) {
      const HttpResponse r = c.get("/health", headers);
      QCOMPARE(r.status, 200L);
      QCOMPARE(json_object(r.body), (QJsonObject{{"status", "ok"}}));
    }
    const QJsonObject full = json_object(c.get("/health", {"Authorization: Bearer sk-guard"}).body);
    QCOMPARE(full["status"].toString(), QString("ok"));
    QCOMPARE(full["model"].toString(), QString("tiny-gemma3-a"));
    QVERIFY(full.contains("completed"));
  }

  void trickling_connections_are_cut_and_health_stays_quick() {
    constexpr int kTricklers = 150;
    constexpr double kHeadSeconds = 2.0;
    server::ServerOptions options;
    options.head_timeout_ms = int(kHeadSeconds * 1000);  // the body's stays long: a head cut at 2 s is the head's
    auto s = start_tiny_server(options, 256);
    const int port = s->server->port();
    const std::string head = "GET /health HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\nX-Slow: " +
                             std::string(200, 'a');

    struct Trickler {
      int fd = -1;
      size_t sent = 0;
      double closed_at = -1;  // seconds after its connect
      std::string answer;
      Clock::time_point start;
    };
    std::vector<Trickler> tricklers(kTricklers);
    for (auto& t : tricklers) {
      t.fd = connect_loopback(port);
      QVERIFY(t.fd >= 0);
      t.start = Clock::now();
      ::fcntl(t.fd, F_SETFL, O_NONBLOCK);
    }

    // /health from a real client while they trickle: each answer within a second.
    std::atomic<bool> trickling{true};
    std::vector<double> health_seconds;
    std::vector<long> health_status;
    std::thread checker([&] {
      while (trickling) {
        const auto t0 = Clock::now();
        const HttpResponse r = s->client->get("/health");
        health_seconds.push_back(seconds_since(t0));
        health_status.push_back(r.status);
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
      }
    });

    // Each connection sends its next byte every 200 ms, well within any per-read timeout; bounded at 20 s.
    const auto t0 = Clock::now();
    int open = kTricklers;
    char buf[1024];
    while (open > 0 && seconds_since(t0) < 20) {
      for (auto& t : tricklers) {
        if (t.closed_at >= 0) continue;
        if (t.sent < head.size() && seconds_since(t.start) * 5 >= double(t.sent))
          if (::send(t.fd, head.data() + t.sent, 1, MSG_NOSIGNAL) == 1) ++t.sent;
        const ssize_t n = ::recv(t.fd, buf, sizeof buf, 0);
        if (n > 0) t.answer.append(buf, size_t(n));
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
          t.closed_at = seconds_since(t.start);
          ::close(t.fd);
          --open;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    trickling = false;
    checker.join();
    for (auto& t : tricklers)
      if (t.closed_at < 0) ::close(t.fd);

    QCOMPARE(open, 0);
    double first = 1e9, last = 0;
    for (const auto& t : tricklers) {
      first = std::min(first, t.closed_at);
      last = std::max(last, t.closed_at);
      QVERIFY2(t.answer.rfind("HTTP/1.1 408", 0) == 0, qPrintable(QString("after %1 s, %2 bytes sent: '%3'").arg(t.closed_at).arg(t.sent).arg(QString::fromStdString(t.answer))));
      QVERIFY(t.sent < head.size());  // cut mid-head, not answered
    }
    qInfo("%d trickling connections closed between %.2f s and %.2f s; /health answered %zu times, slowest %.3f s",
          kTricklers, first, last, health_seconds.size(), *std::max_element(health_seconds.begin(), health_seconds.end()));
    QVERIFY2(first >= kHeadSeconds - 0.1, qPrintable(QString::number(first)));
    QVERIFY2(last <= kHeadSeconds + 1.5, qPrintable(QString::number(last)));
    QVERIFY(health_seconds.size() >= 3);
    for (size_t i = 0; i < health_seconds.size(); ++i) {
      QCOMPARE(health_status[i], 200L);
      QVERIFY2(health_seconds[i] < 1.0, qPrintable(QString::number(health_seconds[i])));
    }
  }

  void kept_alive_connection_serves_then_its_next_head_has_a_deadline() {
    server::ServerOptions options;
    options.head_timeout_ms = 1000;
    auto s = start_tiny_server(options, 256);
    const int port = s->server->port();
    const int fd = connect_loopback(port);
    QVERIFY(fd >= 0);
    const std::string request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n\r\n";
    // Reads one response (headers and Content-Length body) from the connection, or "" after 3 s.
    std::string pending;
    auto read_response = [&]() -> std::string {
      char buf[4096];
      pollfd p{fd, POLLIN, 0};
      const auto t0 = Clock::now();
      while (seconds_since(t0) < 3) {
        const size_t end = pending.find("\r\n\r\n");
        if (end != std::string::npos) {
          const size_t at = pending.find("Content-Length: ");
          const size_t length = at == std::string::npos ? 0 : std::stoul(pending.substr(at + 16));
          if (pending.size() >= end + 4 + length) {
            std::string one = pending.substr(0, end + 4 + length);
            pending.erase(0, one.size());
            return one;
          }
        }
        if (::poll(&p, 1, 50) > 0) {
          const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
          if (n <= 0) break;
          pending.append(buf, size_t(n));
        }
      }
      return {};
    };
    // Two requests on one connection, the second after the first head's deadline would have passed.
    QCOMPARE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), ssize_t(request.size()));
    QVERIFY(read_response().rfind("HTTP/1.1 200", 0) == 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    QCOMPARE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), ssize_t(request.size()));
    QVERIFY(read_response().rfind("HTTP/1.1 200", 0) == 0);
    // A third head trickled on the same connection: cut a second after its first byte.
    const auto t0 = Clock::now();
    std::string answer;
    for (size_t i = 0; i < request.size() - 2 && answer.empty() && seconds_since(t0) < 5; ++i) {
      (void)::send(fd, request.data() + i, 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 0) > 0) answer = read_response();
    }
    ::close(fd);
    QVERIFY2(answer.rfind("HTTP/1.1 408", 0) == 0, answer.c_str());
    QVERIFY2(seconds_since(t0) > 0.9 && seconds_since(t0) < 2, qPrintable(QString::number(seconds_since(t0))));
  }

  void trickled_body_is_cut_at_its_deadline() {
    server::ServerOptions options;
    options.body_timeout_ms = 1000;
    auto s = start_tiny_server(options, 256);
    const int port = s->server->port();
    const int fd = connect_loopback(port);
    QVERIFY(fd >= 0);
    const std::string head = "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                             "\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{";
    QCOMPARE(::send(fd, head.data(), head.size(), MSG_NOSIGNAL), ssize_t(head.size()));
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
    const auto t0 = Clock::now();
    std::string answer;
    char buf[1024];
    double closed_at = -1;
    while (closed_at < 0 && seconds_since(t0) < 10) {
      (void)::send(fd, " ", 1, MSG_NOSIGNAL);  // a byte every 100 ms
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n > 0) answer.append(buf, size_t(n));
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) closed_at = seconds_since(t0);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::close(fd);
    QVERIFY2(closed_at >= 0.9 && closed_at < 2.5, qPrintable(QString::number(closed_at)));
    QVERIFY2(answer.rfind("HTTP/1.1 408", 0) == 0, answer.c_str());
    QVERIFY2(answer.find("request_timeout") != std::string::npos, answer.c_str());
  }

  void connections_above_the_cap_get_503_at_once() {
    server::ServerOptions options;
    options.max_connections = 4;
    auto s = start_tiny_server(options, 256);
    const HttpClient& c = *s->client;
    std::vector<int> held;
    for (int i = 0; i < 4; ++i) held.push_back(connect_loopback(s->server->port()));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // accepted and counted
    const auto t0 = Clock::now();
    const HttpResponse over = c.get("/health");
    QVERIFY2(seconds_since(t0) < 1.0, qPrintable(QString::number(seconds_since(t0))));
    QCOMPARE(over.status, 503L);
    QCOMPARE(over.header("retry-after"), std::string("1"));
    QCOMPARE(error_code(over), QString("too_many_connections"));
    QCOMPARE(json_object(over.body)["error"].toObject()["type"].toString(), QString("server_error"));
    for (int fd : held) ::close(fd);
    // Once they are gone, the server serves again.
    long status = 0;
    for (int i = 0; i < 20 && status != 200; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      status = c.get("/health").status;
    }
    QCOMPARE(status, 200L);
  }
};

QTEST_GUILESS_MAIN(ServerGuardTest)
#include "test_server_guard.moc"
