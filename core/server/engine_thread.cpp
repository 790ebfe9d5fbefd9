// The executor for `kiln serve`: one thread that owns the Engine and runs the server's tasks in order.
#include <cstdio>

#include "server/server.h"

namespace kiln::server {

EngineThread::EngineThread(std::unique_ptr<Engine> engine)
    : engine_(std::move(engine)), info_(engine_->info()), thread_([this] { loop(); }) {}

EngineThread::~EngineThread() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void EngineThread::post(std::function<void(Engine&)> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
}

void EngineThread::loop() {
  for (;;) {
    std::function<void(Engine&)> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return closing_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // closing, and nothing left
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    try {
      task(*engine_);
    } catch (const std::exception& e) {
      // Tasks report their own errors to their clients; anything that escapes must not end the thread.
      std::fprintf(stderr, "kiln serve: inference task failed: %s\n", e.what());
    }
  }
}

}  // namespace kiln::server
