// A bounded load run over loopback: hundreds of requests from concurrent clients (chat and
// completions, streamed and not), then throughput, latency and resident memory before and after.
// Label `load`; it stops issuing requests after the time budget whatever happens.
// KILN_LOAD_REQUESTS and KILN_LOAD_SECONDS make a longer run by hand (defaults: 480 and 45).
#include <curl/curl.h>

#include <QtTest>
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

#include "server_fixture.h"

using namespace kiln;
using namespace kiln::test;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kClients = 8;
constexpr int kWarmup = 48;     // requests before the first memory reading (arenas, thread stacks, caches)

int env_or(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}
const int kRequests = env_or("KILN_LOAD_REQUESTS", 480);  // after the warm-up
const auto kTimeBudget = std::chrono::seconds(env_or("KILN_LOAD_SECONDS", 45));

struct Tally {
  std::atomic<int> ok{0}, failed{0};
  std::mutex mutex;
  std::vector<double> latencies_ms;
  std::string first_failure;
};

// Sends `count` requests from kClients threads; request i decides its own kind and seed.
void run_clients(const HttpClient& client, int first, int count, Clock::time_point deadline, Tally& tally) {
  std::atomic<int> next{first};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c)
    threads.emplace_back([&] {
      for (int i = next++; i < first + count && Clock::now() < deadline; i = next++) {
        QJsonObject extra = varied_sampling(i);
        extra["max_tokens"] = 16 + i % 17;
        extra["stream"] = i % 2 == 0;
        const bool chat = i % 3 != 0;
        const std::string prompt = "request " + std::to_string(i) + " of the load run";
        const auto t0 = Clock::now();
        const HttpResponse r = chat ? client.post("/v1/chat/completions", chat_body(prompt, extra))
                                    : client.post("/v1/completions", completion_body(prompt, extra));
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        const bool complete = r.status == 200 && (!(i % 2 == 0) || read_stream(r.body).done_last);
        std::lock_guard lock(tally.mutex);
        if (complete) {
          ++tally.ok;
          tally.latencies_ms.push_back(ms);
        } else {
          ++tally.failed;
          if (tally.first_failure.empty()) tally.first_failure = std::to_string(r.status) + " " + r.curl_error + " " + r.body;
        }
      }
    });
  for (auto& t : threads) t.join();
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

}  // namespace

class ServerLoadTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  void cleanupTestCase() { curl_global_cleanup(); }

  void hundreds_of_requests_no_failure_no_growth() {
    server::ServerOptions options;
    options.max_waiting = 2 * kClients;  // every client can wait: overload is not what this run measures
    auto s = start_tiny_server(options, 512);
    const HttpClient& client = *s->client;
    const auto deadline = Clock::now() + kTimeBudget;

    Tally warmup;
    run_clients(client, 0, kWarmup, deadline, warmup);
    QCOMPARE(warmup.failed.load(), 0);
    const long rss_before = resident_kib();
    const auto tokens_before = s->server->counters().generated_tokens;

    Tally tally;
    const auto t0 = Clock::now();
    run_clients(client, kWarmup, kRequests, deadline, tally);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    const long rss_after = resident_kib();
    const auto tokens = s->server->counters().generated_tokens - tokens_before;

    qInfo("load: %d requests from %d clients in %.2f s: %.1f requests/s, %.0f generated tokens/s; "
          "latency p50 %.1f ms, p95 %.1f ms; resident memory %.1f MiB before, %.1f MiB after (%+ld KiB)",
          tally.ok.load(), kClients, seconds, tally.ok / seconds, double(tokens) / seconds,
          percentile(tally.latencies_ms, 0.5), percentile(tally.latencies_ms, 0.95), rss_before / 1024.0,
          rss_after / 1024.0, rss_after - rss_before);
    QVERIFY2(tally.failed == 0, tally.first_failure.c_str());
    QVERIFY2(tally.ok >= kRequests / 2, "the time budget ran out before half the requests were served");
    // No leak: whatever a request allocates is given back. 4 MiB covers allocator noise, not a leak of
    // even 10 KiB per request.
    QVERIFY2(rss_after - rss_before < 4 * 1024, qPrintable(QString::number(rss_after - rss_before)));
    const server::ServerCounters c = s->server->counters();
    QCOMPARE(c.completed, uint64_t(kWarmup + tally.ok));
    QCOMPARE(c.waiting + c.running + c.failed + c.cancelled + c.refused, uint64_t(0));
  }
};

QTEST_GUILESS_MAIN(ServerLoadTest)
#include "test_server_load.moc"
