// Parallel requests (--parallel): slots decoded together give each client the answer it gets alone,
// on the CPU and on Vulkan (lavapipe); a client that hangs up mid-stream frees its slot for the next
// request; a follow-up reuses the cache of the slot that holds its prefix; a request that arrives
// while another decodes starts before that one ends.
#include <curl/curl.h>

#include <QJsonDocument>
#include <QtTest>
#include <atomic>
#include <set>
#include <thread>

#include "server_fixture.h"

using namespace kiln;
using namespace kiln::test;
using namespace std::chrono_literals;

namespace {

struct Request {
  std::string path, body;
  bool stream = false;
};

// What a client sees: the text of a 200 answer, else the status and body.
std::string answer(const HttpResponse& r, bool stream) {
  if (r.status != 200) return "HTTP " + std::to_string(r.status) + " " + r.body;
  return stream ? read_stream(r.body).text : response_text(json_object(r.body));
}

// Half greedy (the case), half seeded sampling whose varied text shows any mix-up; chat and
// completions, streamed and not; one under a JSON grammar, one with log-probabilities.
std::vector<Request> mixed_requests(int count, int max_tokens) {
  std::vector<Request> out;
  for (int i = 0; i < count; ++i) {
    QJsonObject extra = i % 2 == 0 ? QJsonObject{{"temperature", 0}} : varied_sampling(300 + i);
    extra["max_tokens"] = max_tokens - 3 * i;
    const bool stream = i % 3 == 1;
    extra["stream"] = stream;
    const std::string prompt = "parallel client " + std::to_string(i) + (i % 4 == 3 ? " with a longer question" : "");
    if (i == 5) extra["response_format"] = QJsonObject{{"type", "json_object"}};  // a grammar in its slot
    if (i == 2) extra["logprobs"] = true;
    if (i % 2 == 1 && i % 3 == 0) out.push_back({"/v1/completions", completion_body(prompt, extra), stream});
    else out.push_back({"/v1/chat/completions", chat_body(prompt, extra), stream});
  }
  return out;
}

// Each request alone, one after another, then all at once; the answers must be the same. Returns the
// most requests /health saw running at once during the parallel round.
int alone_equals_together(RunningServer& s, const std::vector<Request>& requests) {
  std::vector<std::string> alone, together(requests.size());
  for (const Request& r : requests) alone.push_back(answer(s.client->post(r.path, r.body), r.stream));
  std::atomic<bool> done{false};
  std::atomic<int> most_running{0};
  std::thread watcher([&] {
    while (!done) {
      most_running = std::max(most_running.load(), health(*s.client)["running"].toInt());
      std::this_thread::sleep_for(2ms);
    }
  });
  std::vector<std::thread> clients;
  for (size_t i = 0; i < requests.size(); ++i)
    clients.emplace_back([&, i] { together[i] = answer(s.client->post(requests[i].path, requests[i].body), requests[i].stream); });
  for (auto& t : clients) t.join();
  done = true;
  watcher.join();
  for (size_t i = 0; i < requests.size(); ++i) {
    if (together[i] != alone[i])
      qWarning("request %zu: together %s\nalone %s", i, together[i].c_str(), alone[i].c_str());
    if (together[i] != alone[i]) return -1;
    if (alone[i].rfind("HTTP ", 0) == 0) return -2;
  }
  std::set<std::string> distinct(alone.begin(), alone.end());
  if (distinct.size() < requests.size() / 2) return -3;  // a mix-up between clients could not go unseen
  return most_running;
}

}  // namespace

class ServerParallelTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  void cleanupTestCase() { curl_global_cleanup(); }

  void parallel_clients_get_the_answers_they_get_alone_on_the_cpu() {
    auto s = start_tiny_server({}, 1024);  // --parallel's default: 4 slots
    const int most_running = alone_equals_together(*s, mixed_requests(8, 240));
    QVERIFY2(most_running >= 0, qPrintable(QString::number(most_running)));
    QCOMPARE(health(*s->client)["slots"].toInt(), 4);
    qInfo("at most %d requests ran at once", most_running);
    QVERIFY(most_running >= 2);
    QVERIFY(health(*s->client)["running"].toInt() == 0);
    const std::string metrics = s->client->get("/metrics").body;
    QVERIFY(metrics.find("\nkiln_slots 4\n") != std::string::npos);
    QVERIFY(metrics.find("\nkiln_slots_idle 4\n") != std::string::npos);
  }

  void parallel_clients_get_the_answers_they_get_alone_on_vulkan() {
#ifndef KILN_HAVE_VULKAN
    QSKIP("built without Vulkan");
#else
    LoadOptions load = tiny_load_options(256);
    load.backend = BackendKind::Vulkan;
    std::unique_ptr<RunningServer> s;
    try {
      s = start_server(load, {});
    } catch (const Error& e) {
      QSKIP(e.what());
    }
    if (s->engine_thread->model_info().backend.rfind("vulkan", 0) != 0) QSKIP("no Vulkan device (not even lavapipe)");
    const int most_running = alone_equals_together(*s, mixed_requests(5, 40));
    QVERIFY2(most_running >= 0, qPrintable(QString::number(most_running)));
    // --parallel's default of 4 slots, their tokens decoded in one batch a step.
    qInfo("vulkan: %d slots, at most %d requests ran at once", health(*s->client)["slots"].toInt(), most_running);
    QCOMPARE(health(*s->client)["slots"].toInt(), 4);
    QVERIFY(most_running >= 2);
#endif
  }

  void a_hang_up_mid_stream_frees_the_slot_for_the_next_request() {
    // Two slots, both busy with long greedy streams (the tiny model at this context never ends its
    // turn); a third request waits. When one client hangs up, the waiting one is served while the
    // other stream still runs.
    server::ServerOptions two;
    two.parallel = 2;
    auto s = start_tiny_server(two, 4096);
    const HttpClient& c = *s->client;
    const std::string long_stream = chat_body("Hello there", {{"max_tokens", 4000}, {"temperature", 0}, {"stream", true}});
    std::atomic<bool> hang_up{false}, keep_going_seen{false};
    HttpResponse leaver, stayer, waiting;
    std::thread a([&] { leaver = c.post_streaming("/v1/chat/completions", long_stream, [&](std::string_view) { return !hang_up.load(); }); });
    std::thread b([&] {
      stayer = c.post_streaming("/v1/chat/completions", long_stream, [&](std::string_view) {
        keep_going_seen = true;
        return true;
      });
    });
    QVERIFY(wait_for_health(c, [](const QJsonObject& h) { return h["running"].toInt() == 2; }));
    std::thread w([&] { waiting = c.post("/v1/chat/completions", chat_body("me next", {{"max_tokens", 5}, {"temperature", 0}})); });
    QVERIFY(wait_for_health(c, [](const QJsonObject& h) { return h["waiting"].toInt() == 1; }));
    hang_up = true;
    w.join();  // served while the other stream still runs
    QCOMPARE(waiting.status, 200L);
    QCOMPARE(json_object(waiting.body)["usage"].toObject()["completion_tokens"].toInt(), 5);
    const QJsonObject h = health(c);
    QCOMPARE(h["cancelled"].toInt(), 1);
    QCOMPARE(h["running"].toInt(), 1);  // the stayer, still streaming
    a.join();
    QVERIFY(!leaver.curl_error.empty());
    b.join();
    QCOMPARE(stayer.status, 200L);
    QVERIFY(read_stream(stayer.body).done_last);
    QCOMPARE(read_stream(stayer.body).finish_reason, std::string("length"));
  }

  void a_follow_up_prefills_only_its_new_tokens() {
    auto s = start_tiny_server({}, 512);
    const HttpClient& c = *s->client;
    auto reference = Engine::load(tiny_load_options(512));
    const std::string first = "The opening of a long conversation about kilns and pottery";
    const std::string follow = first + " and what comes after it";
    const int first_tokens = int(reference->tokenize(first, true).size());
    auto usage = [&](const std::string& prompt) {
      const HttpResponse r = c.post("/v1/completions", completion_body(prompt, {{"max_tokens", 1}, {"temperature", 0}}));
      return json_object(r.body)["usage"].toObject();
    };
    QCOMPARE(usage(first)["prompt_tokens_details"].toObject()["cached_tokens"].toInt(), 0);
    // Another conversation in between takes another slot (it shares only BOS with the first).
    QCOMPARE(usage("Something unrelated")["prompt_tokens_details"].toObject()["cached_tokens"].toInt(), 0);
    const QJsonObject u = usage(follow);
    QCOMPARE(u["prompt_tokens"].toInt(), int(reference->tokenize(follow, true).size()));
    QCOMPARE(u["prompt_tokens_details"].toObject()["cached_tokens"].toInt(), first_tokens);
    // The same holds for chat: the second turn carries the first turn and its answer.
    const HttpResponse turn1 = c.post("/v1/chat/completions", chat_body("Tell me about glazes", {{"max_tokens", 6}, {"temperature", 0}}));
    const std::string reply = response_text(json_object(turn1.body));
    const int turn1_prompt = json_object(turn1.body)["usage"].toObject()["prompt_tokens"].toInt();
    QJsonArray messages{QJsonObject{{"role", "user"}, {"content", "Tell me about glazes"}},
                        QJsonObject{{"role", "assistant"}, {"content", QString::fromStdString(reply)}},
                        QJsonObject{{"role", "user"}, {"content", "And about firing?"}}};
    const std::string body = QJsonDocument(QJsonObject{{"model", "tiny"}, {"messages", messages}, {"max_tokens", 4}, {"temperature", 0}})
                                 .toJson(QJsonDocument::Compact).toStdString();
    const QJsonObject u2 = json_object(c.post("/v1/chat/completions", body).body)["usage"].toObject();
    QVERIFY2(u2["prompt_tokens_details"].toObject()["cached_tokens"].toInt() >= turn1_prompt,
             qPrintable(QString("%1 cached of %2; turn 1 had %3").arg(u2["prompt_tokens_details"].toObject()["cached_tokens"].toInt())
                            .arg(u2["prompt_tokens"].toInt()).arg(turn1_prompt)));
  }

  void a_request_joins_while_another_decodes() {
    server::ServerOptions options;
    options.parallel = 2;
    auto s = start_tiny_server(options, 4096);
    const HttpClient& c = *s->client;
    std::atomic<bool> first_text{false};
    std::chrono::steady_clock::time_point long_done, short_done;
    HttpResponse long_one;
    std::thread streamer([&] {
      long_one = c.post_streaming("/v1/chat/completions",
                                  chat_body("Hello there", {{"max_tokens", 3000}, {"temperature", 0}, {"stream", true}}),
                                  [&](std::string_view) { first_text = true; return true; });
      long_done = std::chrono::steady_clock::now();
    });
    while (!first_text) std::this_thread::sleep_for(1ms);
    const HttpResponse short_one = c.post("/v1/chat/completions", chat_body("quick", {{"max_tokens", 8}, {"temperature", 0}}));
    short_done = std::chrono::steady_clock::now();
    streamer.join();
    QCOMPARE(short_one.status, 200L);
    QCOMPARE(long_one.status, 200L);
    QCOMPARE(read_stream(long_one.body).finish_reason, std::string("length"));
    // It joined the running decode instead of waiting for it to end.
    QVERIFY(short_done < long_done);
  }
};

QTEST_GUILESS_MAIN(ServerParallelTest)
#include "test_server_parallel.moc"
