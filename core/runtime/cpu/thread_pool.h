// A fixed set of worker threads for data-parallel loops. Owned by a backend, never global.
#pragma once

#include <cstdint>
#include <functional>

namespace kiln {

class ThreadPool {
 public:
  explicit ThreadPool(int threads = 0);  // 0: hardware concurrency
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
