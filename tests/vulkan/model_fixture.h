// Helpers of the whole-model Vulkan tests: fixture weights, a backend on any device (lavapipe in
// CI), and every position's logits through the prefill and decode paths.
#pragma once

#include <QtTest>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fixture_reference.h"
#include "model/checkpoint.h"
#include "model/weights.h"
#include "runtime/vulkan_backend.h"

namespace kiln::test {

inline std::shared_ptr<const Gemma3Weights> load_fixture(const std::string& name, DType precision) {
  const Checkpoint ck = open_checkpoint(fixture_dir(name.c_str()));
  return std::make_shared<Gemma3Weights>(load_weights(ck.config, *ck.tensors, precision, 2, nullptr));
}

// tuning: over the device's plan (on lavapipe: barriers, fp32 decode), e.g. {{"stage_flags", "1"}}.
inline std::unique_ptr<Backend> vulkan(std::shared_ptr<const Gemma3Weights> w, const VulkanTuning& tuning = {},
                                       int context = 64) {
  VulkanOptions o;
  o.allow_cpu_device = true;  // lavapipe in CI
  o.context_length = context;
  o.tuning = tuning;
  return make_vulkan_backend(std::move(w), o);
}

// Every position's logits: the first `prefill` tokens as one batch (all when 0), the rest one at a
// time through the KV cache, as Engine::logits does.
inline std::vector<std::vector<float>> run(Backend& b, const std::vector<int32_t>& ids, int prefill, int vocab) {
  const int n = int(ids.size());
  const int first = prefill <= 0 || prefill >= n ? n : prefill;
  std::vector<float> buf(size_t(first) * vocab);
  b.forward(std::span(ids).first(first), 0, true, buf.data());
  std::vector<std::vector<float>> rows;
  for (int p = 0; p < first; ++p) rows.emplace_back(buf.begin() + size_t(p) * vocab, buf.begin() + size_t(p + 1) * vocab);
  for (int p = first; p < n; ++p) {
    std::vector<float> row(vocab);
    b.forward(std::span(ids).subspan(p, 1), p, false, row.data());
    rows.push_back(std::move(row));
  }
  return rows;
}

inline double counter(const Backend& b, const std::string& name) {
  for (const auto& [k, v] : b.counters())
    if (k == name) return v;
  qFatal("no counter %s", name.c_str());
}

}  // namespace kiln::test
