// Which browsers' requests the server answers: the Host and Origin checks.
//
// With no API key, any web page the user visits could otherwise use the server: a "simple" cross-site
// POST (text/plain) needs no preflight and makes the model generate, and DNS rebinding (a name of the
// attacker's that starts resolving to 127.0.0.1) lets the page read the answers as same-origin.
//  * Host: rebinding always carries the attacker's name in Host, so only the names the server is known
//    by are served: the bound address, localhost, 127.0.0.1 and [::1] with the port, and --allowed-host.
//  * Origin: browsers send it on cross-site requests; only --cors and the server's own origins pass.
// Clients that send no Origin (curl, SDKs) are not browsers and pass.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace kiln::server {

class RequestPolicy {
 public:
  // `bound_host` as given to listen ("127.0.0.1", "::1", "0.0.0.0"); `allowed_hosts` as the user wrote
  // them, with or without a port; `cors_origin` empty, "*" or an origin.
  RequestPolicy(const std::string& bound_host, int port, const std::vector<std::string>& allowed_hosts,
                const std::string& cors_origin);

  // The Host header's value; `present` false when the request has none (not a browser: browsers always
  // send it, so it cannot be a rebinding attack).
  bool host_allowed(const std::string& host, bool present = true) const;
  // The Origin header's value, when there is one.
  bool origin_allowed(const std::string& origin) const;

 private:
  std::set<std::string> hosts_;  // lower case, "name:port" and, where allowed, "name"
  std::string cors_origin_;
  bool any_ip_literal_ = false;  // bound to every interface: any IP address (with the port) names us
  int port_ = 0;
};

}  // namespace kiln::server
