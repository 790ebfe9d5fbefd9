// ThreadPool: every index exactly once, chunks honour the grain, workers really run in parallel,
// persist between calls and wake after idle gaps, exceptions reach the caller, and nesting or
// sharing does not deadlock.
#include <QtTest>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/cpu/thread_pool.h"

using namespace kiln;

namespace {

// A loop of two chunks that each wait (up to 10 s) until both have started: true only if two
// threads ran them at the same time.
bool two_chunks_run_at_once(ThreadPool& pool) {
  std::atomic<int> started{0};
  std::atomic<bool> timed_out{false};
  pool.parallel_for(2, [&](int64_t, int64_t) {
    started.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 2) {
      if (std::chrono::steady_clock::now() > deadline) { timed_out = true; return; }
      std::this_thread::yield();
    }
  });
  return !timed_out;
}

}  // namespace

class TestThreadPool : public QObject {
  Q_OBJECT

 private slots:
  void covers_every_index_exactly_once() {
    for (int threads : {1, 2, 3, 5}) {
      ThreadPool pool(threads);
      QCOMPARE(pool.size(), threads);
      for (int64_t n : {int64_t(1), int64_t(2), int64_t(7), int64_t(1000), int64_t(100003)}) {
        for (int64_t grain : {int64_t(1), int64_t(3), int64_t(64), int64_t(5000)}) {
          std::vector<std::atomic<int>> hits(n);
          std::atomic<bool> bad_chunk{false};
          pool.parallel_for(n, [&](int64_t begin, int64_t end) {
            // Only the chunk that ends at n may be shorter than the grain.
            if (begin < 0 || end > n || begin >= end || (end != n && end - begin < grain)) bad_chunk = true;
            for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
          }, grain);
          QVERIFY2(!bad_chunk, qPrintable(QString("threads %1 n %2 grain %3").arg(threads).arg(n).arg(grain)));
          for (int64_t i = 0; i < n; ++i) {
            if (hits[i] != 1) QFAIL(qPrintable(QString("index %1 of %2 ran %3 times").arg(i).arg(n).arg(hits[i].load())));
          }
        }
      }
    }
  }

  void empty_range_calls_nothing() {
    ThreadPool pool(2);
    bool called = false;
    pool.parallel_for(0, [&](int64_t, int64_t) { called = true; });
    pool.parallel_for(-5, [&](int64_t, int64_t) { called = true; });
    QVERIFY(!called);
  }

  void default_size_is_hardware_concurrency() {
    ThreadPool pool;
    QCOMPARE(pool.size(), static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  }

  void caller_and_worker_run_at_the_same_time() {
    // Each of the two chunks waits until both have started: this finishes only if two threads run
    // chunks concurrently (the caller takes one, a worker the other).
    ThreadPool pool(2);
    for (int round = 0; round < 20; ++round) {
      QVERIFY(two_chunks_run_at_once(pool));
    }
  }

  void threads_persist_between_calls() {
    ThreadPool pool(3);
    std::mutex mutex;
    std::set<std::thread::id> seen;
    for (int call = 0; call < 200; ++call) {
      pool.parallel_for(64, [&](int64_t, int64_t) {
        std::lock_guard lock(mutex);
        seen.insert(std::this_thread::get_id());
      });
    }
    // A pool that created threads per call would show up to 200 * 2 distinct ids.
    QVERIFY(seen.size() <= 3);
    QVERIFY(seen.count(std::this_thread::get_id()) == 1);  // the caller takes part
  }

  void many_quick_calls_finish() {
    ThreadPool pool(2);
    int64_t total = 0;
    for (int call = 0; call < 20000; ++call) {
      std::atomic<int64_t> sum{0};
      pool.parallel_for(8, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) sum.fetch_add(i);
      });
      total += sum.load();
    }
    QCOMPARE(total, int64_t(20000) * 28);
  }

  void workers_asleep_after_an_idle_gap_wake_for_the_next_loop() {
    // Workers spin for a short while after a loop, then block. After each gap long enough for them
    // to block, a loop of two chunks that each wait for the other to start finishes only if a
    // worker was woken (a lost wake-up times out); the gaps alternate with back-to-back loops.
    for (int threads : {2, 4}) {
      ThreadPool pool(threads);
      for (int round = 0; round < 30; ++round) {
        if (round % 2 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(3));
        QVERIFY2(two_chunks_run_at_once(pool), qPrintable(QString("threads %1 round %2").arg(threads).arg(round)));
      }
    }
  }

  void exception_reaches_the_caller_and_pool_still_works() {
    for (int threads : {1, 2, 4}) {
      ThreadPool pool(threads);
      for (int64_t bad : {int64_t(0), int64_t(500), int64_t(999)}) {
        bool caught = false;
        try {
          pool.parallel_for(1000, [&](int64_t begin, int64_t end) {
            if (bad >= begin && bad < end) throw std::runtime_error("chunk failed at " + std::to_string(bad));
          }, 10);
        } catch (const std::runtime_error& e) {
          caught = true;
          QCOMPARE(QString(e.what()), QString("chunk failed at %1").arg(bad));
        }
        QVERIFY(caught);
      }
      std::atomic<int64_t> count{0};
      pool.parallel_for(1000, [&](int64_t begin, int64_t end) { count += end - begin; });
      QCOMPARE(count.load(), int64_t(1000));
    }
  }

  void nested_loops_run_inline() {
    ThreadPool pool(2);
    std::vector<std::atomic<int>> hits(40 * 50);
    pool.parallel_for(40, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        pool.parallel_for(50, [&](int64_t b, int64_t e) {
          for (int64_t j = b; j < e; ++j) hits[i * 50 + j].fetch_add(1);
        });
      }
    });
    for (auto& h : hits) QCOMPARE(h.load(), 1);
  }

  void shared_by_several_caller_threads() {
    ThreadPool pool(2);
    std::atomic<bool> wrong{false};
    std::vector<std::thread> callers;
    for (int c = 0; c < 3; ++c) {
      callers.emplace_back([&] {
        for (int call = 0; call < 300; ++call) {
          std::atomic<int64_t> sum{0};
          pool.parallel_for(100, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) sum += i;
          }, 7);
          if (sum != 4950) wrong = true;
        }
      });
    }
    for (auto& t : callers) t.join();
    QVERIFY(!wrong);
  }

  void physical_cores_count_smt_siblings_once() {
    // A fake sysfs tree: two packages, the first with two SMT cores (CPUs 0/4 and 1/5), the second
    // with one core without SMT (CPU 2); CPU 3 is not given to the process.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const int package[] = {0, 0, 1, 1, 0, 0}, core[] = {0, 1, 0, 7, 0, 1};
    for (int cpu = 0; cpu < 6; ++cpu) {
      const QString topology = dir.path() + QString("/cpu%1/topology").arg(cpu);
      QVERIFY(QDir().mkpath(topology));
      QFile p(topology + "/physical_package_id"), c(topology + "/core_id");
      QVERIFY(p.open(QIODevice::WriteOnly) && c.open(QIODevice::WriteOnly));
      p.write(QByteArray::number(package[cpu]) + "\n");
      c.write(QByteArray::number(core[cpu]) + "\n");
    }
    const std::string root = dir.path().toStdString();
    QCOMPARE(count_physical_cores(root, {0, 1, 2, 4, 5}), 3);
    QCOMPARE(count_physical_cores(root, {0, 4}), 1);
    QCOMPARE(count_physical_cores(root, {0, 1, 2, 3, 4, 5}), 4);  // same core_id, other package: another core
    QCOMPARE(count_physical_cores(root, {0, 9}), 0);              // unreadable topology: unknown
  }

  void default_pool_has_one_thread_per_physical_core() {
    const int threads = default_thread_count();
    QVERIFY(threads >= 1);
    QVERIFY(threads <= int(std::max(1u, std::thread::hardware_concurrency())));
    ThreadPool pool;
    QCOMPARE(pool.size(), threads);
  }
};

QTEST_APPLESS_MAIN(TestThreadPool)
#include "test_thread_pool.moc"
