// A persistent pool: workers sleep on a condition variable between loops, so a parallel_for costs
// one wake-up rather than a thread creation. Chunks are handed out through an atomic counter, which
// balances uneven work (a descheduled worker just takes fewer chunks).
#include "runtime/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
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
}  // namespace

struct ThreadPool::Impl {
  std::vector<std::thread> workers;
  std::mutex call_mutex;  // one loop at a time when several threads share the pool

  std::mutex mutex;                 // guards everything below up to `error`
  std::condition_variable wake;     // workers: a new loop, or stop
  std::condition_variable all_done; // caller: the last worker finished
  uint64_t generation = 0;
  bool stopping = false;
  int workers_busy = 0;
  std::exception_ptr error;         // the first exception thrown by a chunk

  // The current loop; written by the caller before the generation bump that publishes it.
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0;
  int64_t chunk = 1;
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};

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

  void stop_and_join() {
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (auto& t : workers) t.join();
  }

  void worker_loop(const void* owner) {
    tls_running_pool = owner;
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex);
        wake.wait(lock, [&] { return stopping || generation != seen; });
        if (stopping) return;
        seen = generation;
      }
      run_chunks();
      std::lock_guard lock(mutex);
      if (--workers_busy == 0) all_done.notify_one();
    }
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
  {
    std::lock_guard lock(s.mutex);  // also publishes the fields above to the workers
    s.error = nullptr;
    s.workers_busy = static_cast<int>(s.workers.size());
    ++s.generation;
  }
  s.wake.notify_all();

  const void* outer_pool = std::exchange(tls_running_pool, this);
  s.run_chunks();
  tls_running_pool = outer_pool;

  std::exception_ptr error;
  {
    std::unique_lock lock(s.mutex);
    s.all_done.wait(lock, [&] { return s.workers_busy == 0; });
    error = std::exchange(s.error, nullptr);
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace kiln
