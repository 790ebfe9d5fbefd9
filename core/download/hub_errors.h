// What the hub's refusals mean, from the status, its X-Error-Code / X-Error-Message headers and
// whether a token was sent: the real hub answers 401 both for a missing repository (without a
// token) and for a bad token, so the status alone misleads. HubError carries the case so the app
// can say it in the user's language; what() is the English sentence the CLI prints.
#pragma once

#include <string>

#include "kiln/types.h"

namespace kiln {

struct HttpResult;

enum class HubErrorKind {
  Other,              // what() says it; nothing more specific is known
  NotFoundOrNoAccess, // missing, or private / gated and no token sent
  InvalidToken,       // the token was refused (401 with a token)
  LicenceNotAccepted, // gated: the licence must be accepted at `page`
  AccessPending,      // gated: the access request awaits the authors' review
  FineGrainedToken,   // a fine-grained token without "access to public gated repositories"
  NotEnoughSpace,     // the listing does not fit the destination's free space
};

class HubError : public Error {
 public:
  HubError(HubErrorKind kind, const std::string& message) : Error(message), kind(kind) {}
  HubErrorKind kind;
  std::string repo;          // OWNER/REPO
  std::string page;          // the repository's page on the hub (licence, access request)
  std::string token_source;  // where the token came from ("" = none was sent)
  long status = 0;           // HTTP status, 0 when not from a response
  uint64_t needed = 0, available = 0;  // NotEnoughSpace: bytes
  std::string folder;                  // NotEnoughSpace: the destination
};

// The error for a non-2xx answer to a request about `what` in `repo` (a listing or a file).
HubError hub_http_error(const HttpResult& r, const std::string& repo, const std::string& what,
                        const std::string& endpoint, const std::string& token_source, bool token_sent);

// 408, 429 and 5xx: the hub or its CDN may answer the same request a moment later.
bool retryable_status(long status);

// Seconds the server asks us to wait (Retry-After as seconds or an HTTP date, else RateLimit's
// t=), or -1 when it says nothing usable.
double server_retry_delay(const HttpResult& r);

}  // namespace kiln
