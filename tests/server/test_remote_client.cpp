// The remote-endpoint client (core/remote) against a real Kiln server on loopback, the same
// arrangement `kiln serve` runs: the model list, a streamed answer that matches the model run
// locally, stop mid-stream, a wrong API key, an unreachable endpoint. A hostile peer (cpp-httplib
// in this process) answers garbage, errors and streams cut short, as a broken proxy would.
#include <curl/curl.h>
#include <httplib.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <QProcess>
#include <QtTest>
#include <chrono>
#include <thread>

#include "remote/openai_client.h"
#include "remote/sse_reader.h"
#include "server_fixture.h"

using namespace kiln;
using namespace kiln::test;
using remote::RemoteError;
using Kind = RemoteError::Kind;

namespace {

// A port nothing listens on: bound, read back and closed again.
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// The kind a call throws, or nullopt when it does not throw a RemoteError.
template <typename F>
std::optional<RemoteError> error_of(F&& call) {
  try {
    call();
  } catch (const RemoteError& e) {
    return e;
  }
  return std::nullopt;
}

GenerateOptions seeded_options(int seed, int max_tokens) {
  GenerateOptions o;
  o.sampling = SamplingChoice::exactly(varied_sampling_params(seed));
  o.max_tokens = max_tokens;
  return o;
}

// A peer that speaks HTTP but not the API properly (and one slow but proper stream), on 127.0.0.1.
class HostilePeer {
 public:
  HostilePeer() {
    server_.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<html><body>Welcome to nginx!</body></html>", "text/html");
    });
    server_.Post("/garbage/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"Hi\"}}]}\n\ndata: {oops\n\n",
                      "text/event-stream");
    });
    server_.Post("/html/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<html>502 Bad Gateway</html>", "text/html");
    });
    server_.Post("/cut/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"Once upon\"}}]}\n\n",
                      "text/event-stream");
    });
    server_.Post("/fails/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
      res.status = 500;
      res.set_content(R"({"error": {"message": "CUDA out of memory", "type": "server_error"}})", "application/json");
    });
    server_.Post("/midway/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"Hi\"}}]}\n\n"
                      "data: {\"error\": {\"message\": \"the engine crashed\"}}\n\n",
                      "text/event-stream");
    });
    server_.Post("/slow/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/event-stream", [](size_t, httplib::DataSink& sink) {
        for (const char* piece : {"One,", " two,", " three."}) {
          const std::string event = std::string("data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"") + piece +
                                    "\"}, \"finish_reason\": null}]}\n\n";
          sink.write(event.data(), event.size());
          std::this_thread::sleep_for(std::chrono::milliseconds(150));
        }
        const std::string end = "data: {\"choices\": [{\"index\": 0, \"delta\": {}, \"finish_reason\": \"stop\"}]}\n\ndata: [DONE]\n\n";
        sink.write(end.data(), end.size());
        sink.done();
        return true;
      });
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~HostilePeer() {
    server_.stop();
    thread_.join();
  }
  std::string url(const std::string& prefix = {}) const { return "http://127.0.0.1:" + std::to_string(port_) + prefix; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace

class RemoteClientTest : public QObject {
  Q_OBJECT

  std::unique_ptr<RunningServer> open_;    // no API key
  std::unique_ptr<RunningServer> locked_;  // needs "sk-right"
  std::unique_ptr<Engine> reference_;      // the same model, run here
  static constexpr int kContext = 256;

  std::string open_url() const { return "http://127.0.0.1:" + std::to_string(open_->server->port()); }
  std::string locked_url() const { return "http://127.0.0.1:" + std::to_string(locked_->server->port()) + "/v1"; }

  std::string reference_chat(const std::vector<ChatMessage>& messages, const GenerateOptions& options) {
    std::string text;
    reference_->chat(messages, options, [&](std::string_view t) { text += t; return true; });
    return text;
  }

 private slots:
  void initTestCase() {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    server::ServerOptions open;
    open.model_id = "tiny-remote";
    open_ = start_tiny_server(open, kContext);
    server::ServerOptions locked;
    locked.api_key = "sk-right";
    locked_ = start_tiny_server(locked, kContext);
    reference_ = Engine::load(tiny_load_options(kContext));
  }
  void cleanupTestCase() {
    open_.reset();
    locked_.reset();
    curl_global_cleanup();
  }

  void base_urls_as_users_type_them() {
    QCOMPARE(remote::api_root("http://127.0.0.1:8080"), std::string("http://127.0.0.1:8080/v1"));
    QCOMPARE(remote::api_root(" localhost:8080/ "), std::string("http://localhost:8080/v1"));
    QCOMPARE(remote::api_root("https://host/v1/"), std::string("https://host/v1"));
    QCOMPARE(remote::api_root("HTTPS://host/v1/chat/completions"), std::string("https://host/v1"));
    QCOMPARE(remote::api_root("http://host:11434/v1/models"), std::string("http://host:11434/v1"));
    // A path of the provider's own is kept as given.
    QCOMPARE(remote::api_root("https://host/api/openai"), std::string("https://host/api/openai"));
    QCOMPARE(error_of([] { remote::api_root("ftp://host"); })->kind(), Kind::BadUrl);
    QCOMPARE(error_of([] { remote::api_root(""); })->kind(), Kind::BadUrl);
    QCOMPARE(error_of([] { remote::api_root("http:///v1"); })->kind(), Kind::BadUrl);
  }

  void events_split_anywhere_read_the_same() {
    const std::string stream = ": keep-alive\r\ndata: {\"a\": 1}\r\n\r\nevent: x\ndata: line one\ndata: line two\n\ndata: [DONE]\n\n";
    const std::vector<std::string> expected{"{\"a\": 1}", "line one\nline two", "[DONE]"};
    for (size_t cut = 0; cut <= stream.size(); ++cut) {
      std::vector<std::string> got;
      remote::SseReader reader([&](const std::string& d) { got.push_back(d); return true; });
      QVERIFY(reader.feed(std::string_view(stream).substr(0, cut)));
      QVERIFY(reader.feed(std::string_view(stream).substr(cut)));
      QVERIFY(reader.finish());
      QCOMPARE(got, expected);
      QVERIFY(!reader.saw_foreign_lines());
    }
    // The last event without its blank line still arrives when the stream ends.
    std::vector<std::string> got;
    remote::SseReader reader([&](const std::string& d) { got.push_back(d); return true; });
    reader.feed("data: last");
    QVERIFY(got.empty());
    reader.finish();
    QCOMPARE(got, std::vector<std::string>{"last"});
  }

  void lists_the_served_model() {
    const auto models = remote::list_models({open_url(), ""});
    QCOMPARE(models.size(), size_t(1));
    QCOMPARE(models[0].id, std::string("tiny-remote"));
  }

  void a_streamed_answer_is_what_the_model_says_locally() {
    const std::vector<ChatMessage> messages{{Role::System, "Be brief."}, {Role::User, "Tell me about kilns"}};
    const GenerateOptions options = seeded_options(3, 24);  // a seed whose tokens are whole characters, one a chunk
    std::vector<std::string> pieces;
    const GenerationStats stats = remote::chat({open_url(), ""}, "tiny-remote", messages, options, [&](std::string_view t) {
      pieces.emplace_back(t);
      return true;
    });
    std::string text;
    for (const auto& p : pieces) text += p;
    QCOMPARE(text, reference_chat(messages, options));
    // (How many pieces is the server's business: a fast model's tokens may leave in one event.)
    QCOMPARE(stats.generated_tokens, 24);  // from the stream's usage chunk
    QCOMPARE(stats.prompt_tokens, int(reference_->chat_tokens(messages).size()));
    QCOMPARE(stats.stop_reason, StopReason::MaxTokens);
    QCOMPARE(stats.token_times_ms.size(), pieces.size());
  }

  void pieces_are_handed_on_as_they_arrive() {
    HostilePeer peer;  // here a slow but correct server: three chunks 150 ms apart
    std::vector<double> arrived_ms;
    const auto start = std::chrono::steady_clock::now();
    std::string text;
    const GenerationStats stats = remote::chat({peer.url("/slow/v1"), ""}, "m", {{Role::User, "hi"}}, seeded_options(1, 8),
                                               [&](std::string_view t) {
                                                 text += t;
                                                 arrived_ms.push_back(std::chrono::duration<double, std::milli>(
                                                                          std::chrono::steady_clock::now() - start).count());
                                                 return true;
                                               });
    QCOMPARE(text, std::string("One, two, three."));
    QCOMPARE(arrived_ms.size(), size_t(3));
    QVERIFY2(arrived_ms[2] - arrived_ms[0] >= 250, "the first piece was handed on before the last was sent");
    QCOMPARE(stats.stop_reason, StopReason::EndOfTurn);
    QCOMPARE(stats.generated_tokens, 3);  // no usage chunk: one a piece
    QVERIFY(stats.decode_tokens_per_s > 0);
  }

  void stop_mid_stream_closes_the_request() {
    std::stop_source stop;
    GenerateOptions options = seeded_options(9, 100000);  // runs until the context is full unless stopped
    options.cancel = stop.get_token();
    int pieces = 0;
    const GenerationStats stats = remote::chat({open_url(), ""}, "tiny-remote", {{Role::User, "Go on"}}, options,
                                               [&](std::string_view) {
                                                 if (++pieces == 3) stop.request_stop();
                                                 return true;
                                               });
    QCOMPARE(stats.stop_reason, StopReason::Cancelled);
    QVERIFY2(pieces < 20, qPrintable(QString::number(pieces)));
    // on_text saying no stops the same way.
    int more = 0;
    const GenerationStats by_callback = remote::chat({open_url(), ""}, "tiny-remote", {{Role::User, "Go on"}},
                                                     seeded_options(9, 100000), [&](std::string_view) { return ++more < 2; });
    QCOMPARE(by_callback.stop_reason, StopReason::Cancelled);
    QCOMPARE(more, 2);
    // The server let go of both: the next answer comes in full.
    const auto next = remote::chat({open_url(), ""}, "tiny-remote", {{Role::User, "Hello"}}, seeded_options(2, 8),
                                   [](std::string_view) { return true; });
    QCOMPARE(next.generated_tokens, 8);
  }

  void a_wrong_or_missing_api_key_is_unauthorized() {
    const auto wrong = error_of([&] { remote::list_models({locked_url(), "sk-wrong"}); });
    QVERIFY(wrong);
    QCOMPARE(wrong->kind(), Kind::Unauthorized);
    QCOMPARE(wrong->status(), 401L);
    QVERIFY2(std::string(wrong->what()).find("refused the API key") != std::string::npos, wrong->what());
    const auto missing = error_of([&] {
      remote::chat({locked_url(), ""}, "tiny", {{Role::User, "hi"}}, seeded_options(1, 4), [](std::string_view) { return true; });
    });
    QVERIFY(missing);
    QCOMPARE(missing->kind(), Kind::Unauthorized);
    QVERIFY2(std::string(missing->what()).find("needs an API key") != std::string::npos, missing->what());
    // The right key: the list and an answer.
    QCOMPARE(remote::list_models({locked_url(), "sk-right"}).size(), size_t(1));
    std::string text;
    remote::chat({locked_url(), "sk-right"}, "tiny", {{Role::User, "hi"}}, seeded_options(1, 4), [&](std::string_view t) {
      text += t;
      return true;
    });
    QVERIFY(!text.empty());
  }

  void an_unreachable_endpoint_says_so() {
    const std::string url = "http://127.0.0.1:" + std::to_string(closed_port());
    const auto listing = error_of([&] { remote::list_models({url, ""}); });
    QVERIFY(listing);
    QCOMPARE(listing->kind(), Kind::Unreachable);
    QVERIFY2(std::string(listing->what()).find("cannot reach " + url + "/v1/models") != std::string::npos, listing->what());
    const auto chat = error_of([&] {
      remote::chat({url, ""}, "m", {{Role::User, "hi"}}, seeded_options(1, 4), [](std::string_view) { return true; });
    });
    QVERIFY(chat);
    QCOMPARE(chat->kind(), Kind::Unreachable);
  }

  void a_wrong_path_is_not_found() {
    const auto e = error_of([&] { remote::list_models({open_url() + "/api", ""}); });
    QVERIFY(e);
    QCOMPARE(e->kind(), Kind::NotFound);
    QCOMPARE(e->status(), 404L);
  }

  void garbage_errors_and_cut_streams_from_a_hostile_peer() {
    HostilePeer peer;
    auto chat_at = [&](const std::string& prefix, std::string* text = nullptr) {
      return error_of([&] {  // a base URL with a path of its own is taken as given: ".../v1" named
        remote::chat({peer.url(prefix + "/v1"), ""}, "m", {{Role::User, "hi"}}, seeded_options(1, 4), [&](std::string_view t) {
          if (text) *text += t;
          return true;
        });
      });
    };
    const auto models = error_of([&] { remote::list_models({peer.url(), ""}); });
    QVERIFY(models);
    QCOMPARE(models->kind(), Kind::BadResponse);
    QVERIFY2(std::string(models->what()).find("Welcome to nginx") != std::string::npos, models->what());

    std::string text;
    const auto garbage = chat_at("/garbage", &text);
    QVERIFY(garbage);
    QCOMPARE(garbage->kind(), Kind::BadResponse);
    QCOMPARE(text, std::string("Hi"));  // what came before the bad event was shown
    QVERIFY2(std::string(garbage->what()).find("{oops") != std::string::npos, garbage->what());

    QCOMPARE(chat_at("/html")->kind(), Kind::BadResponse);

    const auto cut = chat_at("/cut");
    QVERIFY(cut);
    QCOMPARE(cut->kind(), Kind::EndedEarly);

    const auto fails = chat_at("/fails");
    QVERIFY(fails);
    QCOMPARE(fails->kind(), Kind::ServerError);
    QCOMPARE(fails->status(), 500L);
    QCOMPARE(fails->detail(), std::string("CUDA out of memory"));

    const auto midway = chat_at("/midway");
    QVERIFY(midway);
    QCOMPARE(midway->kind(), Kind::ServerError);
    QCOMPARE(midway->detail(), std::string("the engine crashed"));
  }

  // `kiln chat --endpoint … --model …` in the terminal: the answer printed, a wrong key refused.
  void kiln_chat_with_an_endpoint() {
    QProcess process;
    process.setProgram(KILN_CLI_PATH);
    process.setArguments({"chat", "--endpoint", QString::fromStdString(open_url()), "--model", "tiny-remote", "--temperature",
                          "1.5", "--top-k", "0", "--top-p", "1", "--min-p", "0", "--repeat-penalty", "1.5", "--seed", "5",
                          "-n", "12"});
    process.start();
    QVERIFY(process.waitForStarted(10000));
    process.write("Tell me about kilns\n\n");
    process.closeWriteChannel();
    QVERIFY(process.waitForFinished(60000));
    const QString err = QString::fromUtf8(process.readAllStandardError());
    QCOMPARE(process.exitCode(), 0);
    QVERIFY2(err.contains("Chatting with tiny-remote at " + QString::fromStdString(open_url()) + "/v1"), qPrintable(err));
    const std::string expected = reference_chat({{Role::User, "Tell me about kilns"}}, seeded_options(5, 12));
    QCOMPARE(process.readAllStandardOutput().toStdString(), expected + "\n");

    QProcess refused;
    refused.setProgram(KILN_CLI_PATH);
    refused.setArguments({"chat", "--endpoint", QString::fromStdString(locked_url()), "--api-key", "sk-wrong", "--model", "tiny"});
    refused.start();
    QVERIFY(refused.waitForFinished(30000));
    QCOMPARE(refused.exitCode(), 1);
    const QString why = QString::fromUtf8(refused.readAllStandardError());
    QVERIFY2(why.contains("kiln: error: the endpoint refused the API key (HTTP 401)"), qPrintable(why));
    QVERIFY2(!why.contains("sk-wrong"), qPrintable(why));  // the key is never printed
  }
};

QTEST_GUILESS_MAIN(RemoteClientTest)
#include "test_remote_client.moc"
