// A fixed set of worker threads for data-parallel loops. Owned by a backend, never global.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kiln {

// The threads a pool gets by default: one per physical core this process may run on. SMT siblings
// share a core's vector units, and the matmul kernels keep those busy, so a second thread per core
// adds contention, not speed. Falls back to hardware concurrency where the topology is unknown.
int default_thread_count();

// Physical cores among `cpus` as described under sysfs_cpu_dir (normally /sys/devices/system/cpu):
// CPUs whose topology/physical_package_id and topology/core_id match share one core. 0 when any
// CPU's topology cannot be read.
int count_physical_cores(const std::string& sysfs_cpu_dir, const std::vector<int>& cpus);

class ThreadPool {
 public:
  explicit ThreadPool(int threads = 0);  // 0: default_thread_count()
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const;
  // Calls fn(begin, end) over disjoint chunks covering [0, n), on all threads (the caller too);
  // returns when every chunk is done. Chunks are at least `grain` long.
  void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& fn, int64_t grain = 1);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace kiln
