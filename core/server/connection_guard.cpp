#include "server/connection_guard.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "server/openai_protocol.h"

namespace kiln::server {

namespace {

using std::chrono::milliseconds;

// Threads besides max_connections, so that refusing the connections above the cap never waits.
constexpr size_t kSpareThreads = 8;
// How often a waiting read looks at whether the server is stopping.
constexpr milliseconds kStopCheck{100};

// The connection the calling pool thread serves: handlers and the logger run on that same thread.
struct Connection {
  DeadlineStream* stream = nullptr;
  bool close = false;
};
thread_local Connection* tl_connection = nullptr;

milliseconds to_ms(time_t sec, time_t usec) { return milliseconds(sec * 1000 + usec / 1000); }

// A complete response written straight to the socket, for when httplib has not written one.
void write_raw(socket_t sock, const ApiError& error, const char* reason, const char* extra_headers) {
  const std::string body = error_body(error);
  const std::string text = "HTTP/1.1 " + std::to_string(error.status()) + " " + reason +
                           "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                           "\r\n" + extra_headers + "Connection: close\r\n\r\n" + body;
  pollfd p{sock, POLLOUT, 0};
  if (::poll(&p, 1, 1000) > 0) (void)::send(sock, text.data(), text.size(), MSG_NOSIGNAL);
}

// Closes after the client has our last answer: closing with its bytes still unread would reset the
// connection, and a reset can destroy the answer before the client reads it. So: end our side, read
// what still comes for a moment (or until the client closes), then close.
void close_gently(socket_t sock, milliseconds linger) {
  ::shutdown(sock, SHUT_WR);
  const auto until = GuardClock::now() + linger;
  char sink[4096];
  pollfd p{sock, POLLIN, 0};
  while (GuardClock::now() < until && ::poll(&p, 1, 10) >= 0)
    if ((p.revents & (POLLIN | POLLHUP)) && ::recv(sock, sink, sizeof sink, MSG_DONTWAIT) <= 0 && errno != EAGAIN) break;
  ::close(sock);
}

void address_of(const sockaddr_storage& addr, socklen_t len, std::string& ip, int& port) {
  char host[NI_MAXHOST] = {};
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) == 0)
    ip = host;
  if (addr.ss_family == AF_INET) port = ntohs(reinterpret_cast<const sockaddr_in&>(addr).sin_port);
  if (addr.ss_family == AF_INET6) port = ntohs(reinterpret_cast<const sockaddr_in6&>(addr).sin6_port);
}

}  // namespace

// --- DeadlineStream ---

DeadlineStream::DeadlineStream(socket_t sock, milliseconds read_timeout, milliseconds write_timeout,
                               std::function<bool()> stopping)
    : sock_(sock), read_timeout_(read_timeout), write_timeout_(write_timeout), stopping_(std::move(stopping)),
      buffer_(16 * 1024) {}

int DeadlineStream::wait(short events, GuardClock::time_point until) const {
  for (;;) {
    // Rounded up, so that a wait never ends short of `until` and a deadline is seen as passed.
    const auto left = std::chrono::ceil<milliseconds>(until - GuardClock::now());
    if (left.count() <= 0) return 0;
    // Reads give up when the server stops; writes go on, so that refusals (503) still reach clients.
    const milliseconds slice = events == POLLIN ? std::min(left, kStopCheck) : left;
    pollfd p{sock_, events, 0};
    const int r = ::poll(&p, 1, int(std::max<int64_t>(1, slice.count())));
    if (r < 0 && errno == EINTR) continue;
    if (r != 0) return r;
    if (events == POLLIN && stopping_ && stopping_()) return -1;
  }
}

bool DeadlineStream::is_readable() const {
  return begin_ < end_ || wait(POLLIN, std::min(deadline_, GuardClock::now() + read_timeout_)) > 0;
}

bool DeadlineStream::is_writable() const {
  if (wait(POLLOUT, GuardClock::now() + write_timeout_) <= 0) return false;
  // As httplib does: a socket that reads as closed (EOF) is a client that hung up.
  pollfd p{sock_, POLLIN, 0};
  if (::poll(&p, 1, 0) == 0) return true;
  char byte;
  const ssize_t n = ::recv(sock_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

ssize_t DeadlineStream::read(char* ptr, size_t size) {
  if (begin_ == end_) {
    const auto now = GuardClock::now();
    if (now >= deadline_) {
      deadline_hit_ = true;
      return -1;
    }
    if (wait(POLLIN, std::min(deadline_, now + read_timeout_)) <= 0) {
      deadline_hit_ = GuardClock::now() >= deadline_;
      return -1;
    }
    ssize_t n;
    do n = ::recv(sock_, buffer_.data(), buffer_.size(), 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return n;
    begin_ = 0;
    end_ = size_t(n);
  }
  const size_t n = std::min(size, end_ - begin_);
  std::memcpy(ptr, buffer_.data() + begin_, n);
  begin_ += n;
  return ssize_t(n);
}

ssize_t DeadlineStream::write(const char* ptr, size_t size) {
  if (!is_writable()) return -1;
  ssize_t n;
  do n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n > 0) written_ += size_t(n);
  return n;
}

void DeadlineStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getpeername(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) address_of(addr, len, ip, port);
}

void DeadlineStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getsockname(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) address_of(addr, len, ip, port);
}

bool DeadlineStream::wait_for_request(milliseconds idle) {
  return begin_ < end_ || wait(POLLIN, GuardClock::now() + idle) > 0;
}

// --- GrowingThreadPool ---

void GrowingThreadPool::enqueue(std::function<void()> fn) {
  std::lock_guard lock(mutex_);
  if (closing_) return;
  jobs_.push_back(std::move(fn));
  if (idle_ < jobs_.size() && threads_.size() < max_threads_) threads_.emplace_back([this] { work(); });
  wake_.notify_one();
}

void GrowingThreadPool::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (closing_) return;
    closing_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();  // threads_ no longer changes: enqueue refuses once closing_
}

void GrowingThreadPool::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    ++idle_;
    wake_.wait(lock, [this] { return closing_ || !jobs_.empty(); });
    --idle_;
    if (jobs_.empty()) return;  // closing, and nothing left to run
    auto job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

// --- GuardedHttpServer ---

GuardedHttpServer::GuardedHttpServer() { set_limits({}); }

void GuardedHttpServer::set_limits(const GuardLimits& limits) {
  limits_ = limits;
  const size_t threads = limits.max_connections + kSpareThreads;
  new_task_queue = [threads] { return new GrowingThreadPool(threads); };
}

void GuardedHttpServer::widen_backlog() {
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, SOMAXCONN);  // listen() again only changes the backlog
}

bool GuardedHttpServer::request_timed_out() { return tl_connection && tl_connection->stream->deadline_passed(); }

void GuardedHttpServer::close_after_response() {
  if (tl_connection) tl_connection->close = true;
}

void GuardedHttpServer::refuse(socket_t sock) {
  write_raw(sock,
            ApiError(503, "The server has too many open connections (" + std::to_string(limits_.max_connections) +
                              "). Retry shortly.", "server_error", {}, "too_many_connections"),
            "Service Unavailable", "Retry-After: 1\r\n");
  close_gently(sock, milliseconds(50));
}

// httplib's own loop, with the deadlines of the header's comment. Keep-alive: the idle wait for the
// next request is httplib's keep-alive timeout; that request's head has head_timeout from its first byte.
bool GuardedHttpServer::process_and_close_socket(socket_t sock) {
  const auto accepted = GuardClock::now();
  if (active_.fetch_add(1) >= limits_.max_connections) {
    refuse(sock);
    --active_;
    return true;
  }
  auto stopping = [this] { return svr_sock_ == INVALID_SOCKET; };
  DeadlineStream strm(sock, to_ms(read_timeout_sec_, read_timeout_usec_), to_ms(write_timeout_sec_, write_timeout_usec_),
                      stopping);
  Connection connection{&strm};
  tl_connection = &connection;
  strm.set_deadline(accepted + limits_.head_timeout);  // the first head is timed from the connection's start
  bool ok = true;
  for (size_t count = keep_alive_max_count_; ok && count > 0 && !stopping(); --count) {
    if (count != keep_alive_max_count_) {
      if (!strm.wait_for_request(milliseconds(keep_alive_timeout_sec_ * 1000))) break;
      strm.set_deadline(GuardClock::now() + limits_.head_timeout);
    }
    bool connection_closed = false;
    const size_t written_before = strm.written();
    // httplib calls setup_request once the head is parsed, before the body is read.
    ok = process_request(strm, count == 1, connection_closed,
                         [&](httplib::Request&) { strm.set_deadline(GuardClock::now() + limits_.body_timeout); });
    if (strm.deadline_passed()) {
      if (strm.written() == written_before)
        write_raw(sock, ApiError(408, "The request was not received in time.", "invalid_request_error", {}, "request_timeout"),
                  "Request Timeout", "");
      break;
    }
    if (connection_closed || connection.close) break;
  }
  tl_connection = nullptr;
  if (strm.deadline_passed() || connection.close) {
    // The client may still be sending (a trickled head, or a body the answer left unread: 403, 413):
    // let the answer reach it.
    close_gently(sock, milliseconds(200));
  } else {
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
  }
  --active_;
  return ok;
}

}  // namespace kiln::server
