// The hub's refusals as huggingface_hub reads them (hf_raise_for_status): X-Error-Code first,
// then the message, then the status with whether a token was sent.
#include "download/hub_errors.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>

#include "download/http_client.h"

namespace kiln {
namespace {

constexpr const char* kHubWebsite = "https://huggingface.co";
constexpr const char* kSignIn = "set HF_TOKEN, pass --token or run `hf auth login`";

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

HubError make(HubErrorKind kind, const std::string& message, const std::string& repo, const std::string& token_source,
              long status) {
  HubError e(kind, message);
  e.repo = repo;
  e.page = std::string(kHubWebsite) + "/" + repo;
  e.token_source = token_source;
  e.status = status;
  return e;
}

}  // namespace

HubError hub_http_error(const HttpResult& r, const std::string& repo, const std::string& what,
                        const std::string& endpoint, const std::string& token_source, bool token_sent) {
  const std::string& code = r.error_code;
  const std::string& msg = r.error_message;
  const std::string page = std::string(kHubWebsite) + "/" + repo;
  const std::string from = token_sent && !token_source.empty() ? " (from " + token_source + ")" : "";
  const std::string src = token_sent ? token_source : "";
  const long s = r.status;
  if (s == 401 || s == 403 || s == 404) {
    // The hub's own words decide first: they separate cases that share a status.
    if (has(msg, "fine-grained"))
      return make(HubErrorKind::FineGrainedToken,
                  repo + ": this fine-grained token" + from +
                      " lacks access to gated repositories; enable \"public gated repositories\" in its settings at "
                      "https://huggingface.co/settings/tokens",
                  repo, src, s);
    if (has(msg, "awaiting a review") || has(msg, "pending"))
      return make(HubErrorKind::AccessPending,
                  repo + ": your access request is pending; the authors have not reviewed it yet (" + page + ")", repo,
                  src, s);
    if (code == "GatedRepo")
      return make(HubErrorKind::LicenceNotAccepted,
                  token_sent ? repo + " is gated: accept the licence at " + page + " with the account of your token" + from
                             : repo + " is gated: accept the licence at " + page + ", then sign in (" + kSignIn + ")",
                  repo, src, s);
    if (s == 401 && token_sent && code != "RepoNotFound")
      return make(HubErrorKind::InvalidToken,
                  repo + ": your token" + from + " is invalid or expired; create a new one at "
                         "https://huggingface.co/settings/tokens",
                  repo, src, s);
    if (code == "RepoNotFound" || s == 401 || (s == 404 && code.empty() && what.rfind("repository", 0) == 0))
      return make(HubErrorKind::NotFoundOrNoAccess,
                  token_sent ? repo + " was not found, or it is private or gated for your token's account" + from +
                                   ": check the name"
                             : repo + " was not found, or it is private or gated: check the name, or sign in (" + kSignIn +
                                   ")",
                  repo, src, s);
    if (code == "RevisionNotFound")  // a --revision that names no branch, tag or commit
      return make(HubErrorKind::Other, repo + " has no such revision (" + (msg.empty() ? "HTTP 404" : msg) + ")", repo, src, s);
    if (s == 404) return make(HubErrorKind::Other, what + " not found on " + endpoint + " (HTTP 404)", repo, src, s);
    return make(HubErrorKind::Other,
                what + ": access refused (HTTP 403" + (msg.empty() ? "" : ": " + msg) + "); check your token's permissions",
                repo, src, s);
  }
  return make(HubErrorKind::Other,
              what + ": HTTP " + std::to_string(s) + " from " + endpoint + (msg.empty() ? "" : " (" + msg + ")"), repo, src,
              s);
}

bool retryable_status(long status) { return status == 408 || status == 429 || (status >= 500 && status < 600); }

double server_retry_delay(const HttpResult& r) {
  if (!r.retry_after.empty()) {
    char* end = nullptr;
    const double seconds = std::strtod(r.retry_after.c_str(), &end);
    if (end && *end == '\0' && seconds >= 0) return seconds;
    const time_t when = curl_getdate(r.retry_after.c_str(), nullptr);  // an HTTP date
    if (when > 0) return std::max(0.0, double(when - std::time(nullptr)));
  }
  // RateLimit: "api";r=0;t=58 (IETF draft, as the hub sends it): t = seconds until the window resets.
  if (const size_t t = r.rate_limit.find("t="); t != std::string::npos) {
    char* end = nullptr;
    const double seconds = std::strtod(r.rate_limit.c_str() + t + 2, &end);
    if (end != r.rate_limit.c_str() + t + 2 && seconds >= 0) return seconds;
  }
  return -1;
}

}  // namespace kiln
