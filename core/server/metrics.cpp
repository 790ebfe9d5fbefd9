// Prometheus text exposition of the server's counters.
#include "server/metrics.h"

#include <algorithm>
#include <cstdio>

namespace kiln::server {

namespace {

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void sample(std::string& out, const std::string& name, double value) {
  char number[64];
  std::snprintf(number, sizeof number, "%.17g", value);
  out += name + " " + number + "\n";
}

}  // namespace

std::string prometheus_text(const RequestMetrics& requests, const QueueCounters& q) {
  std::string out;
  header(out, "kiln_requests_total", "counter", "Generation requests answered, by endpoint and outcome.");
  for (const auto& [endpoint, label] : {std::pair{Endpoint::ChatCompletions, "chat"}, {Endpoint::Completions, "completions"}})
    for (const auto& [outcome, name] : {std::pair{RequestOutcome::Ok, "ok"},
                                        {RequestOutcome::Error, "error"},
                                        {RequestOutcome::Cancelled, "cancelled"}})
      sample(out, std::string("kiln_requests_total{endpoint=\"") + label + "\",outcome=\"" + name + "\"}",
             static_cast<double>(requests.requests(endpoint, outcome)));
  header(out, "kiln_prompt_tokens_total", "counter", "Prompt tokens of the generations run.");
  sample(out, "kiln_prompt_tokens_total", static_cast<double>(q.prompt_tokens));
  header(out, "kiln_generated_tokens_total", "counter", "Tokens generated, cancelled generations included.");
  sample(out, "kiln_generated_tokens_total", static_cast<double>(q.generated_tokens));
  header(out, "kiln_requests_waiting", "gauge", "Requests queued behind the running ones.");
  sample(out, "kiln_requests_waiting", static_cast<double>(q.waiting));
  header(out, "kiln_requests_running", "gauge", "Requests generating now (slots in use).");
  sample(out, "kiln_requests_running", static_cast<double>(q.running));
  header(out, "kiln_slots", "gauge", "Slots (sequences decoded together, each with its own KV cache); 0 before the first request.");
  sample(out, "kiln_slots", static_cast<double>(q.slot_count));
  header(out, "kiln_slots_idle", "gauge", "Slots free for the next request.");
  sample(out, "kiln_slots_idle", static_cast<double>(q.slot_count - std::min(q.slot_count, q.running)));
  header(out, "kiln_decode_tokens_per_second", "gauge", "Decode rate of the last generation that finished.");
  sample(out, "kiln_decode_tokens_per_second", q.last_decode_tokens_per_s);
  return out;
}

}  // namespace kiln::server
