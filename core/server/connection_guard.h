// Slow clients and too many connections, for cpp-httplib 0.11.4 (server side only; httplib.h users).
//
// httplib gives each connection a pool thread and only a per-read timeout, so a client that sends a
// byte every few seconds holds its thread forever, and once the fixed pool is taken every new
// connection queues silently (slowloris). GuardedHttpServer replaces httplib's per-connection loop
// (process_and_close_socket, the one virtual hook httplib offers) with its own over DeadlineStream,
// a socket stream whose every read waits at most until the current deadline:
//   * the request head (request line and headers) must be complete within head_timeout of the
//     connection's start, or, on a kept-alive connection, of the next request's first byte;
//   * the body must be complete within body_timeout of the head's end.
// Enforcing the deadline inside read() is what makes it hold against trickling: each single read may
// be quick, but none may wait past the deadline, whatever arrives in between.
// Connections beyond max_connections get 503 at once (JSON, Retry-After) instead of waiting for a thread.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::server {

using GuardClock = std::chrono::steady_clock;

struct GuardLimits {
  std::chrono::milliseconds head_timeout{10000};
  std::chrono::milliseconds body_timeout{60000};
  size_t max_connections = 256;
};

// A connection's socket with a read buffer and a moving deadline. Writes keep httplib's own timeout.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(socket_t sock, std::chrono::milliseconds read_timeout, std::chrono::milliseconds write_timeout,
                 std::function<bool()> stopping);
  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return sock_; }

  void set_deadline(GuardClock::time_point deadline) { deadline_ = deadline; }
  bool deadline_passed() const { return deadline_hit_; }
  // Waits up to `idle` for the next request's first byte; false on timeout, hang-up or server stop.
  bool wait_for_request(std::chrono::milliseconds idle);
  size_t written() const { return written_; }

 private:
  // poll() for `events` until `until`, in slices so that a stopping server is noticed; >0 ready.
  int wait(short events, GuardClock::time_point until) const;
  socket_t sock_;
  std::chrono::milliseconds read_timeout_, write_timeout_;
  std::function<bool()> stopping_;
  GuardClock::time_point deadline_ = GuardClock::time_point::max();
  bool deadline_hit_ = false;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;
  size_t written_ = 0;
};

// Threads made on demand up to a limit and kept for reuse (httplib's ThreadPool makes them all up front).
class GrowingThreadPool final : public httplib::TaskQueue {
 public:
  explicit GrowingThreadPool(size_t max_threads) : max_threads_(max_threads) {}
  ~GrowingThreadPool() override { shutdown(); }
  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

 private:
  void work();
  size_t max_threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool closing_ = false;
};

class GuardedHttpServer final : public httplib::Server {
 public:
  GuardedHttpServer();
  // Call before listening: sets the limits and installs the thread pool (max_connections + spares).
  void set_limits(const GuardLimits& limits);
  size_t open_connections() const { return active_; }
  // After binding: httplib 0.11 listens with a backlog of 5, so a burst of connections (a hundred
  // clients at once, or an attack) overflows it, and the kernel then drops handshakes for seconds.
  void widen_backlog();

  // For handlers, on the connection's own thread: did this request's read stop at its deadline?
  static bool request_timed_out();
  // From the logger: the response said "Connection: close", so the connection ends after it.
  static void close_after_response();

 private:
  bool process_and_close_socket(socket_t sock) override;
  void refuse(socket_t sock);
  GuardLimits limits_;
  std::atomic<size_t> active_{0};
};

}  // namespace kiln::server
