#include "server/request_policy.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

namespace kiln::server {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

// "::1" -> "[::1]": the form an IPv6 address takes in Host and in URLs.
std::string url_host(const std::string& name) {
  return std::count(name.begin(), name.end(), ':') >= 2 && name.front() != '[' ? "[" + name + "]" : name;
}

// Splits "name:port" / "[v6]:port" / "name"; port -1 when absent.
void split_host(const std::string& host, std::string& name, int& port) {
  port = -1;
  name = host;
  const size_t colon = host.rfind(':');
  const size_t bracket = host.rfind(']');
  if (colon == std::string::npos || (bracket != std::string::npos && colon < bracket)) return;
  if (host.front() != '[' && host.find(':') != colon) return;  // a bare IPv6 address, not name:port
  const std::string digits = host.substr(colon + 1);
  if (digits.empty() || digits.size() > 5 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) {
    port = -2;  // a malformed port: matches nothing
    return;
  }
  name = host.substr(0, colon);
  port = std::stoi(digits);
}

bool is_ip_literal(const std::string& name) {
  unsigned char buf[16];
  if (name.size() > 2 && name.front() == '[' && name.back() == ']')
    return inet_pton(AF_INET6, name.substr(1, name.size() - 2).c_str(), buf) == 1;
  return inet_pton(AF_INET, name.c_str(), buf) == 1;
}

}  // namespace

RequestPolicy::RequestPolicy(const std::string& bound_host, int port, const std::vector<std::string>& allowed_hosts,
                             const std::string& cors_origin)
    : cors_origin_(lower(cors_origin)), port_(port) {
  while (!cors_origin_.empty() && cors_origin_.back() == '/') cors_origin_.pop_back();
  // A client leaves the port out of Host only when it is the scheme's default (RFC 9110 7.2).
  auto add = [&](const std::string& name) {
    hosts_.insert(name + ":" + std::to_string(port));
    if (port == 80) hosts_.insert(name);
  };
  for (const char* name : {"localhost", "127.0.0.1", "[::1]"}) add(name);
  any_ip_literal_ = bound_host == "0.0.0.0" || bound_host == "::" || bound_host.empty();
  if (!any_ip_literal_) add(lower(url_host(bound_host)));
  for (const std::string& given : allowed_hosts) {
    std::string name;
    int given_port;
    split_host(lower(url_host(given)), name, given_port);
    if (name.empty() || given_port == -2) continue;
    if (given_port >= 0) {
      hosts_.insert(name + ":" + std::to_string(given_port));
    } else {
      // A bare name: also what a reverse proxy on 80/443 forwards, which has no port in it.
      hosts_.insert(name);
      add(name);
    }
  }
}

bool RequestPolicy::host_allowed(const std::string& host, bool present) const {
  if (!present) return true;
  const std::string h = lower(host);
  if (hosts_.count(h)) return true;
  if (!any_ip_literal_) return false;
  // Bound to every interface, the machine's addresses are not known in advance; an IP address cannot
  // be rebound, so any one with our port names this server.
  std::string name;
  int port;
  split_host(h, name, port);
  return is_ip_literal(name) && (port == port_ || (port == -1 && port_ == 80));
}

bool RequestPolicy::origin_allowed(const std::string& origin) const {
  std::string o = lower(origin);
  while (!o.empty() && o.back() == '/') o.pop_back();
  if (cors_origin_ == "*" || (!cors_origin_.empty() && o == cors_origin_)) return true;
  // The server's own origins: a page served under a name that Host accepts.
  for (const char* scheme : {"http://", "https://"}) {
    const std::string prefix = scheme;
    if (o.rfind(prefix, 0) == 0 && o.size() > prefix.size()) {
      const std::string rest = o.substr(prefix.size());
      return rest.find('/') == std::string::npos && host_allowed(rest);
    }
  }
  return false;
}

}  // namespace kiln::server
