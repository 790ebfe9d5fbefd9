// A persistent pool: workers wait between loops, so a parallel_for costs a hand-over rather than a
// thread creation. A decode token runs ~200 short loops (7 matrix products a layer, each a few
// hundred microseconds), and waking a thread blocked in the kernel costs tens of microseconds on a
// VM each time, so workers (and the caller, waiting for them) first spin for a short while
// (kSpinTime) and only then block on a condition variable. Chunks are handed out through an atomic
// counter, which balances uneven work (a descheduled worker just takes fewer chunks).
#include "runtime/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace kiln {

int count_physical_cores(const std::string& sysfs_cpu_dir, const std::vector<int>& cpus) {
  std::set<std::pair<long, long>> cores;  // (package, core)
  for (int cpu : cpus) {
    const std::string topology = sysfs_cpu_dir + "/cpu" + std::to_string(cpu) + "/topology/";
    std::ifstream package_file(topology + "physical_package_id"), core_file(topology + "core_id");
    long package = -1, core = -1;
    if (!(package_file >> package) || !(core_file >> core)) return 0;
    cores.emplace(package, core);
  }
  return static_cast<int>(cores.size());
}

int default_thread_count() {
  const int logical = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
#if defined(__linux__)
  cpu_set_t allowed;  // the CPUs this process may use (a container or taskset may allow fewer)
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
    std::vector<int> cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
    if (const int cores = count_physical_cores("/sys/devices/system/cpu", cpus); cores > 0) return cores;
    if (!cpus.empty()) return static_cast<int>(cpus.size());
  }
#endif
  return logical;
}

namespace {
// The pool whose loop the current thread is running (caller or worker): a parallel_for issued from
// inside a chunk runs inline instead of waiting for workers that are busy with the outer loop.
thread_local const void* tls_running_pool = nullptr;

// How long a thread spins for the next loop (or for the last worker) before it blocks: longer than
// the small ops between two matrix products of a token, short enough that an idle pool sleeps.
// After the first kPauseTime it yields between checks, so that on a busy machine (more runnable
// threads than cores) a spinning thread hands its core to one with work.
constexpr auto kSpinTime = std::chrono::microseconds(300);
constexpr auto kPauseTime = std::chrono::microseconds(20);

inline void cpu_relax() {
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  __builtin_ia32_pause();  // eases the spin on an SMT sibling and the memory order machinery
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
  asm volatile("yield");
#endif
}

// Spins until done() or kSpinTime has passed; true when done().
template <typename Done>
bool spin_until(Done done) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    for (int i = 0; i < 32; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    const auto spent = std::chrono::steady_clock::now() - start;
    if (spent > kSpinTime) return done();
    if (spent > kPauseTime) std::this_thread::yield();
  }
}
}  // namespace

// Hand-over without lost wake-ups: a thread about to block first announces it (sleepers,
// caller_sleeping), then re-checks its condition under `mutex`; the side that changes the
// condition does so first and then, seeing the announcement, takes `mutex` before notifying.
// Both sides use sequentially consistent operations, so one of them always sees the other.
//
// A worker joins a loop only while it is open (`state`); the caller closes it once it has run out
// of chunks and then waits only for the workers that joined. A worker that was descheduled, or
// still waking, when the loop started does not hold the caller up: it finds the loop closed.
struct ThreadPool::Impl {
  std::vector<std::thread> workers;
  std::mutex call_mutex;  // one loop at a time when several threads share the pool

  std::mutex mutex;                  // for blocking only (and `error`)
  std::condition_variable wake;      // workers: a new loop, or stop
  std::condition_variable all_done;  // caller: the last worker that joined finished
  std::atomic<uint64_t> generation{0};  // bumped for each loop (and for stop); publishes the fields below
  std::atomic<bool> stopping{false};
  // The current loop's generation << 33 | closed << 32 | workers that joined it and still run.
  static constexpr uint64_t kClosed = uint64_t(1) << 32;
  static constexpr uint64_t kActive = kClosed - 1;
  std::atomic<uint64_t> state{0};
  std::atomic<int> sleepers{0};            // workers blocked, or about to block, on `wake`
  std::atomic<bool> caller_sleeping{false};  // the caller blocks, or is about to, on `all_done`
  std::exception_ptr error;          // the first exception thrown by a chunk; guarded by `mutex`

  // The current loop; written by the caller before the generation bump that publishes it.
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0;
  int64_t chunk = 1;
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};

  static uint64_t open_state(uint64_t gen) { return gen << 33; }

  void run_chunks() {
    while (!failed.load(std::memory_order_relaxed)) {
      const int64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= n) return;
      try {
        (*fn)(begin, std::min(n, begin + chunk));
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
  }

  // Starts loop (or stop) number generation + 1 on the workers.
  void publish() {
    const uint64_t gen = generation.load(std::memory_order_relaxed) + 1;
    state.store(open_state(gen));
    generation.store(gen);
    if (sleepers.load() > 0) {
      { std::lock_guard lock(mutex); }
      wake.notify_all();
    }
  }

  void stop_and_join() {
    stopping.store(true);
    publish();
    for (auto& t : workers) t.join();
  }

  // Waits for the generation after `seen`; false when it asks the workers to stop.
  bool wait_for_loop(uint64_t& seen) {
    if (!spin_until([&] { return generation.load(std::memory_order_acquire) != seen; })) {
      sleepers.fetch_add(1);
      {
        std::unique_lock lock(mutex);
        wake.wait(lock, [&] { return generation.load() != seen; });
      }
      sleepers.fetch_sub(1);
    }
    seen = generation.load();
    return !stopping.load();
  }

  // Counts this worker into loop `gen` if that loop is still open.
  bool join(uint64_t gen) {
    uint64_t s = state.load();
    while ((s & ~kActive) == open_state(gen))
      if (state.compare_exchange_weak(s, s + 1)) return true;
    return false;
  }

  void worker_loop(const void* owner) {
    tls_running_pool = owner;
    uint64_t seen = 0;
    while (wait_for_loop(seen)) {
      if (!join(seen)) continue;
      run_chunks();
      const uint64_t before = state.fetch_sub(1);
      if ((before & kActive) == 1 && (before & kClosed) && caller_sleeping.load()) {
        { std::lock_guard lock(mutex); }
        all_done.notify_one();
      }
    }
  }

  // Closes the loop to newcomers and waits for the workers in it.
  void wait_for_workers() {
    if ((state.fetch_or(kClosed) & kActive) == 0) return;
    const auto none_left = [&] { return (state.load(std::memory_order_acquire) & kActive) == 0; };
    if (spin_until(none_left)) return;
    caller_sleeping.store(true);
    {
      std::unique_lock lock(mutex);
      all_done.wait(lock, [&] { return (state.load() & kActive) == 0; });
    }
    caller_sleeping.store(false);
  }
};

ThreadPool::ThreadPool(int threads) : impl_(new Impl) {
  if (threads <= 0) threads = default_thread_count();
  try {
    for (int i = 1; i < threads; ++i) impl_->workers.emplace_back([this] { impl_->worker_loop(this); });
  } catch (...) {  // could not start a thread: stop the ones that did start
    impl_->stop_and_join();
    delete impl_;
    throw;
  }
}

ThreadPool::~ThreadPool() {
  impl_->stop_and_join();
  delete impl_;
}

int ThreadPool::size() const { return static_cast<int>(impl_->workers.size()) + 1; }

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int threads = size();
  if (threads == 1 || n <= grain || tls_running_pool == this) {
    fn(0, n);
    return;
  }
  std::lock_guard call_lock(impl_->call_mutex);
  Impl& s = *impl_;
  // About four chunks a thread for balance, each a multiple of grain so that only the last is short.
  const int64_t target = (n + 4 * threads - 1) / (4 * threads);
  s.chunk = std::max<int64_t>(1, (target + grain - 1) / grain) * grain;
  s.fn = &fn;
  s.n = n;
  s.next.store(0, std::memory_order_relaxed);
  s.failed.store(false, std::memory_order_relaxed);
  s.error = nullptr;  // no worker runs between loops
  s.publish();

  const void* outer_pool = std::exchange(tls_running_pool, this);
  s.run_chunks();
  tls_running_pool = outer_pool;

  s.wait_for_workers();
  std::exception_ptr error;
  {
    std::lock_guard lock(s.mutex);
    error = std::exchange(s.error, nullptr);
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace kiln
