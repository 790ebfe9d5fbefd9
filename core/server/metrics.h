// GET /metrics: the server's counters in Prometheus' text format (version 0.0.4).
//
// Requests are counted once each, when their answer is settled: HTTP threads count the ones refused
// before admission, the response writers the admitted ones. Tokens, queue and decode rate come from
// the FairQueue's counters, which the inference thread updates before the client is told.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "server/openai_protocol.h"
#include "server/request_queue.h"

namespace kiln::server {

enum class RequestOutcome { Ok, Error, Cancelled };

// Lock-free: every HTTP thread counts into it.
class RequestMetrics {
 public:
  void count(Endpoint endpoint, RequestOutcome outcome) {
    counts_[index(endpoint)][static_cast<int>(outcome)].fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t requests(Endpoint endpoint, RequestOutcome outcome) const {
    return counts_[index(endpoint)][static_cast<int>(outcome)].load(std::memory_order_relaxed);
  }

 private:
  static int index(Endpoint e) { return e == Endpoint::ChatCompletions ? 0 : 1; }
  std::atomic<uint64_t> counts_[2][3]{};
};

// The body of GET /metrics.
std::string prometheus_text(const RequestMetrics& requests, const QueueCounters& queue);

}  // namespace kiln::server
