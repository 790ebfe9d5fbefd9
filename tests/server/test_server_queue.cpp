// The server's queue and threads: inference on a thread the owner provides (the desktop app's case),
// 503 when the queue is full, round-robin between clients, clients that hang up, many clients at once,
// and stopping while requests run and wait.
#include <curl/curl.h>

#include <QtTest>
#include <atomic>
#include <deque>
#include <set>
#include <thread>

#include "server_fixture.h"

using namespace kiln;
using namespace kiln::test;
using namespace std::chrono_literals;

namespace {

// The app's arrangement: tasks are handed to the thread that owns the Engine, which runs them when
// it chooses (here: when the test says so, on the test's thread).
class OwnerThreadExecutor : public server::InferenceExecutor {
 public:
  void post(std::function<void(Engine&)> task) override {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  size_t pending() const {
    std::lock_guard lock(mutex_);
    return tasks_.size();
  }
  bool run_one(Engine& engine) {
    std::function<void(Engine&)> task;
    {
      std::lock_guard lock(mutex_);
      if (tasks_.empty()) return false;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task(engine);
    return true;
  }

 private:
  mutable std::mutex mutex_;
  std::deque<std::function<void(Engine&)>> tasks_;
};

struct ServerWithOwner {
  std::shared_ptr<OwnerThreadExecutor> executor = std::make_shared<OwnerThreadExecutor>();
  std::unique_ptr<Engine> engine;  // owned by "the app", used only on the test's thread
  std::unique_ptr<server::Server> server;
  std::unique_ptr<HttpClient> client;
};

std::unique_ptr<ServerWithOwner> start_with_owner(server::ServerOptions options) {
  auto s = std::make_unique<ServerWithOwner>();
  s->engine = Engine::load(tiny_load_options(256));
  options.host = "127.0.0.1";
  options.port = 0;
  s->server = std::make_unique<server::Server>(options, s->engine->info(), s->executor);
  s->server->start();
  s->client = std::make_unique<HttpClient>("http://127.0.0.1:" + std::to_string(s->server->port()));
  return s;
}

std::string chat_reference(Engine& engine, const std::string& prompt, const SamplingParams& sampling, int max_tokens) {
  GenerateOptions o;
  o.sampling = SamplingChoice::exactly(sampling);
  o.max_tokens = max_tokens;
  std::string text;
  engine.chat({{Role::User, prompt}}, o, [&](std::string_view t) { text += t; return true; });
  return text;
}

}  // namespace

class ServerQueueTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  void cleanupTestCase() { curl_global_cleanup(); }

  void inference_runs_on_the_owners_thread() {
    auto s = start_with_owner({});
    HttpResponse response;
    std::thread client([&] { response = s->client->post("/v1/chat/completions", chat_body("hello", {{"max_tokens", 8}, {"temperature", 0}})); });
    QVERIFY(wait_for_health(*s->client, [](const QJsonObject& h) { return h["waiting"].toInt() == 1; }));
    // Nothing runs until the owner runs the task: the server has no inference thread of its own here.
    std::this_thread::sleep_for(50ms);
    QCOMPARE(response.status, 0L);
    QCOMPARE(s->executor->pending(), size_t(1));
    QVERIFY(s->executor->run_one(*s->engine));
    client.join();
    QCOMPARE(response.status, 200L);
    auto reference = Engine::load(tiny_load_options(256));
    QCOMPARE(response_text(json_object(response.body)), chat_reference(*reference, "hello", SamplingParams{.temperature = 0}, 8));
    // A task whose request is already served finds nothing to do and returns at once.
    QVERIFY(!s->executor->run_one(*s->engine));
  }

  void a_full_queue_answers_503() {
    server::ServerOptions options;
    options.max_waiting = 2;
    auto s = start_with_owner(options);
    std::vector<HttpResponse> waiting(2);
    std::vector<std::thread> clients;
    for (int i = 0; i < 2; ++i)
      clients.emplace_back([&, i] {
        waiting[i] = s->client->post("/v1/chat/completions", chat_body("queued " + std::to_string(i), {{"max_tokens", 4}}));
      });
    QVERIFY(wait_for_health(*s->client, [](const QJsonObject& h) { return h["waiting"].toInt() == 2; }));
    const HttpResponse refused = s->client->post("/v1/chat/completions", chat_body("one too many"));
    QCOMPARE(refused.status, 503L);
    const QJsonObject error = json_object(refused.body)["error"].toObject();
    QCOMPARE(error["code"].toString(), QString("server_overloaded"));
    QCOMPARE(error["type"].toString(), QString("server_error"));
    QCOMPARE(refused.header("retry-after"), std::string("1"));
    while (s->executor->run_one(*s->engine)) {}
    for (auto& t : clients) t.join();
    QCOMPARE(waiting[0].status, 200L);
    QCOMPARE(waiting[1].status, 200L);
    QCOMPARE(health(*s->client)["refused"].toInt(), 1);
  }

  void clients_take_turns() {
    // alice queues three requests before bob queues one: bob is served second, not fourth. One slot,
    // so that each task serves one request.
    server::ServerOptions one_slot;
    one_slot.parallel = 1;
    auto s = start_with_owner(one_slot);
    std::mutex mutex;
    std::vector<std::string> served;
    std::vector<std::thread> clients;
    const std::vector<std::pair<std::string, std::string>> order = {
        {"alice", "a1"}, {"alice", "a2"}, {"alice", "a3"}, {"bob", "b1"}};
    for (size_t i = 0; i < order.size(); ++i) {
      const auto [user, label] = order[i];
      clients.emplace_back([&, user, label] {
        const HttpResponse r =
            s->client->post("/v1/chat/completions", chat_body(label, {{"user", QString::fromStdString(user)}, {"max_tokens", 2}}));
        std::lock_guard lock(mutex);
        served.push_back(r.status == 200 ? label : "error");
      });
      QVERIFY(wait_for_health(*s->client, [&](const QJsonObject& h) { return h["waiting"].toInt() == int(i + 1); }));
    }
    for (size_t i = 0; i < order.size(); ++i) {
      QVERIFY(s->executor->run_one(*s->engine));
      const auto until = std::chrono::steady_clock::now() + 10s;
      while (std::chrono::steady_clock::now() < until) {
        std::lock_guard lock(mutex);
        if (served.size() == i + 1) break;
      }
    }
    for (auto& t : clients) t.join();
    QCOMPARE(served, (std::vector<std::string>{"a1", "b1", "a2", "a3"}));
  }

  void a_client_that_hangs_up_stops_its_generation() {
    // At the tiny model's full context a greedy chat runs 4000 tokens without an end token (about a
    // second): long enough to see that hanging up stops it early.
    auto s = start_tiny_server({}, 4096);
    const HttpClient& c = *s->client;
    const int max_tokens = 4000;
    const std::string body = chat_body("Hello there", {{"max_tokens", max_tokens}, {"temperature", 0}, {"stream", true}});
    {
      auto reference = Engine::load(tiny_load_options(4096));
      GenerateOptions o;
      o.sampling.temperature = 0;
      o.max_tokens = max_tokens;
      QCOMPARE(reference->chat({{Role::User, "Hello there"}}, o, nullptr).generated_tokens, max_tokens);
    }
    // Hang up as soon as the first generated text (a newline, escaped in JSON) arrives.
    const HttpResponse aborted = c.post_streaming("/v1/chat/completions", body, [](std::string_view piece) {
      return piece.find("\"content\":\"\\n") == std::string_view::npos;
    });
    QVERIFY(!aborted.curl_error.empty());
    const auto hung_up = std::chrono::steady_clock::now();
    QVERIFY(wait_for_health(c, [](const QJsonObject& h) { return h["running"].toInt() == 0 && h["cancelled"].toInt() == 1; }));
    const double stop_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - hung_up).count();
    const int generated = health(c)["generated_tokens"].toInt();
    qInfo("hung up after the first chunk: %d of %d tokens generated, slot free after %.1f ms", generated, max_tokens, stop_ms);
    QVERIFY2(generated < max_tokens / 2, qPrintable(QString::number(generated)));

    // A non-streaming client that gives up is noticed too.
    const HttpResponse impatient = c.post_with_timeout(
        "/v1/chat/completions", chat_body("Hello there", {{"max_tokens", max_tokens}, {"temperature", 0}}), 50);
    QVERIFY(!impatient.curl_error.empty());
    QVERIFY(wait_for_health(c, [](const QJsonObject& h) { return h["running"].toInt() == 0 && h["cancelled"].toInt() == 2; }));
    QVERIFY(health(c)["generated_tokens"].toInt() < max_tokens);

    // The next client is served normally.
    const HttpResponse next = c.post("/v1/chat/completions", chat_body("Hello there", {{"max_tokens", 12}, {"temperature", 0}}));
    QCOMPARE(next.status, 200L);
    QCOMPARE(json_object(next.body)["usage"].toObject()["completion_tokens"].toInt(), 12);
    QCOMPARE(health(c)["completed"].toInt(), 1);
  }

  void concurrent_clients_get_their_own_answers() {
    auto s = start_tiny_server({}, 256);
    auto reference = Engine::load(tiny_load_options(256));
    constexpr int kClients = 6, kEach = 4;
    // Every client asks its own questions with its own seed; each answer must be the one the engine
    // gives to that question alone, streamed or not.
    std::vector<std::vector<std::string>> expected(kClients), got(kClients);
    auto prompt_of = [](int c, int i) { return "client " + std::to_string(c) + " question " + std::to_string(i); };
    for (int c = 0; c < kClients; ++c)
      for (int i = 0; i < kEach; ++i) expected[c].push_back(chat_reference(*reference, prompt_of(c, i), varied_sampling_params(100 + c * 10 + i), 20));
    std::vector<std::thread> threads;
    for (int c = 0; c < kClients; ++c)
      threads.emplace_back([&, c] {
        for (int i = 0; i < kEach; ++i) {
          const bool stream = (c + i) % 2 == 1;
          QJsonObject extra = varied_sampling(100 + c * 10 + i);
          extra["max_tokens"] = 20;
          extra["stream"] = stream;
          const std::string body = chat_body(prompt_of(c, i), extra);
          const HttpResponse r = s->client->post("/v1/chat/completions", body);
          if (r.status != 200) got[c].push_back("HTTP " + std::to_string(r.status) + " " + r.body);
          else got[c].push_back(stream ? read_stream(r.body).text : response_text(json_object(r.body)));
        }
      });
    for (auto& t : threads) t.join();
    for (int c = 0; c < kClients; ++c) QCOMPARE(got[c], expected[c]);
    // The answers differ from each other, so a mix-up between clients could not go unseen.
    std::set<std::string> distinct;
    for (const auto& answers : expected) distinct.insert(answers.begin(), answers.end());
    QVERIFY2(distinct.size() >= size_t(kClients * kEach) / 2, qPrintable(QString::number(distinct.size())));
    QCOMPARE(health(*s->client)["completed"].toInt(), kClients * kEach);
  }

  void stopping_while_requests_run_and_wait_is_clean() {
    server::ServerOptions one_slot;  // so that the second request waits
    one_slot.parallel = 1;
    auto s = start_tiny_server(one_slot, 4096);
    const HttpClient& c = *s->client;
    std::atomic<bool> first_text{false};
    HttpResponse streaming, queued;
    std::thread streamer([&] {
      streaming = c.post_streaming("/v1/chat/completions",
                                   chat_body("Hello there", {{"max_tokens", 4000}, {"temperature", 0}, {"stream", true}}),
                                   [&](std::string_view) { first_text = true; return true; });
    });
    while (!first_text) std::this_thread::sleep_for(1ms);
    std::thread waiter([&] { queued = c.post("/v1/chat/completions", chat_body("me next", {{"max_tokens", 4}})); });
    QVERIFY(wait_for_health(c, [](const QJsonObject& h) { return h["waiting"].toInt() == 1; }));
    QCOMPARE(health(c)["running"].toInt(), 1);

    const auto t0 = std::chrono::steady_clock::now();
    s->server->stop();
    const double stop_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    streamer.join();
    waiter.join();
    qInfo("stop() with one request running and one waiting took %.1f ms", stop_ms);
    QVERIFY2(stop_ms < 2000, qPrintable(QString::number(stop_ms)));
    QCOMPARE(queued.status, 503L);
    QCOMPARE(json_object(queued.body)["error"].toObject()["code"].toString(), QString("server_shutting_down"));
    // The stream ended without its normal ending.
    QVERIFY(!read_stream(streaming.body).done_last || !read_stream(streaming.body).error.isEmpty());
    QCOMPARE(c.get("/health").status, 0L);  // the port is closed
    s->server->stop();                       // a second stop is harmless
    const auto t1 = std::chrono::steady_clock::now();
    s.reset();  // the engine thread finishes the cancelled generation and joins
    QVERIFY(std::chrono::steady_clock::now() - t1 < 2s);
  }
};

QTEST_GUILESS_MAIN(ServerQueueTest)
#include "test_server_queue.moc"
