// The CPU read-bandwidth probe `kiln bench` reports beside decode: its sum covers every word of
// any length at any alignment (so the read cannot be cut short unseen), and a measurement on 1 and
// 2 threads returns a rate and leaves nothing behind.
#include <QtTest>

#include <cstring>
#include <random>
#include <vector>

#include "runtime/cpu/read_bandwidth.h"
#include "runtime/cpu/thread_pool.h"

using namespace kiln;

class TestReadBandwidth : public QObject {
  Q_OBJECT

 private slots:
  // Against a plain word-by-word sum, over lengths around the 32-byte loads and offsets off alignment.
  void sum_bytes_adds_every_whole_word() {
    std::mt19937_64 rng(7);
    std::vector<uint8_t> bytes(4096 + 64);
    for (uint8_t& b : bytes) b = uint8_t(rng());
    for (size_t offset : {size_t(0), size_t(1), size_t(8), size_t(31)})
      for (size_t n : {size_t(0), size_t(7), size_t(8), size_t(31), size_t(32), size_t(33), size_t(40), size_t(63),
                       size_t(64), size_t(1000), size_t(4096)}) {
        uint64_t want = 0;
        for (size_t i = 0; i + 8 <= n; i += 8) {
          uint64_t v;
          std::memcpy(&v, bytes.data() + offset + i, 8);
          want += v;
        }
        QCOMPARE(sum_bytes(bytes.data() + offset, n), want);
      }
  }

  void measures_a_positive_rate_on_each_pool_size() {
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      const double gbs = measure_read_bandwidth(pool, size_t(8) << 20, 2);
      // Any machine that runs Kiln reads 8 MiB faster than 0.01 GB/s (0.8 s) and slower than 100 TB/s:
      // the bounds catch a wrong unit or a zero time, not speed.
      QVERIFY2(gbs > 0.01 && gbs < 1e5, qPrintable(QString::number(gbs)));
    }
  }
};

QTEST_APPLESS_MAIN(TestReadBandwidth)
#include "test_read_bandwidth.moc"
