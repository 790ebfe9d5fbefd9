// The CPU backend on a test fixture's weights, with the NPU routing options a test needs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fixture_reference.h"
#include "model/checkpoint.h"
#include "model/weights.h"
#include "runtime/cpu/cpu_backend.h"

namespace kiln::test {

inline std::shared_ptr<const Gemma3Weights> fixture_weights(const char* fixture) {
  Checkpoint ck = open_checkpoint(fixture_dir(fixture));
  return std::make_shared<Gemma3Weights>(load_weights(ck.config, *ck.tensors, DType::F32, 2, {}));
}

inline std::unique_ptr<Backend> fixture_backend(std::shared_ptr<const Gemma3Weights> w, AttentionPlacement placement,
                                                const AttentionRouting& routing = {}, DType kv = DType::F32) {
  CpuOptions o;
  o.context_length = 128;
  o.threads = 2;
  o.kv_element = kv;
  o.attention = placement;
  o.attention_routing = routing;
  return make_cpu_backend(std::move(w), o);
}

// Every position's logits: the first `prefill` tokens as one batch (all when 0), then one at a time.
inline std::vector<std::vector<float>> backend_logits(Backend& b, const std::vector<int32_t>& ids, int vocab,
                                                      int prefill = 0) {
  const int first = prefill <= 0 || prefill >= int(ids.size()) ? int(ids.size()) : prefill;
  std::vector<float> all(size_t(ids.size()) * vocab);
  b.forward(std::span<const int32_t>(ids.data(), first), 0, true, all.data());
  for (int t = first; t < int(ids.size()); ++t)
    b.forward(std::span<const int32_t>(&ids[t], 1), t, true, all.data() + size_t(t) * vocab);
  std::vector<std::vector<float>> rows;
  for (size_t t = 0; t < ids.size(); ++t) rows.emplace_back(all.begin() + t * vocab, all.begin() + (t + 1) * vocab);
  return rows;
}

}  // namespace kiln::test
