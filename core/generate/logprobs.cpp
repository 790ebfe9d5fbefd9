#include "generate/logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln {

LogSoftmax::LogSoftmax(std::span<const float> logits) : logits_(logits) {
  float best = -std::numeric_limits<float>::infinity();
  for (float x : logits) best = x > best ? x : best;  // NaN never compares larger
  if (!std::isfinite(best)) {
    log_total_ = best;  // all -inf (nothing possible) or a +inf that takes all the mass
    return;
  }
  double total = 0.0;  // in double: 262k terms of very different sizes
  for (float x : logits)
    if (x > -std::numeric_limits<float>::infinity()) total += std::exp(static_cast<double>(x) - best);
  log_total_ = best + std::log(total);
}

float LogSoftmax::of(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= logits_.size()) return -std::numeric_limits<float>::infinity();
  const float x = logits_[static_cast<size_t>(id)];
  if (std::isnan(x)) return -std::numeric_limits<float>::infinity();
  if (std::isinf(log_total_) && log_total_ > 0) return std::isinf(x) && x > 0 ? 0.0f : -std::numeric_limits<float>::infinity();
  return static_cast<float>(static_cast<double>(x) - log_total_);
}

std::vector<std::pair<int32_t, float>> LogSoftmax::top(int count) const {
  using Entry = std::pair<float, int32_t>;
  const auto better = [](const Entry& a, const Entry& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
  const size_t k = std::min(static_cast<size_t>(std::max(count, 0)), logits_.size());
  std::vector<Entry> heap;  // front: the worst kept
  heap.reserve(k + 1);
  if (k > 0)
    for (size_t i = 0; i < logits_.size(); ++i) {
      const Entry e{logits_[i], static_cast<int32_t>(i)};
      if (std::isnan(e.first)) continue;
      if (heap.size() < k) {
        heap.push_back(e);
        std::push_heap(heap.begin(), heap.end(), better);
      } else if (better(e, heap.front())) {
        std::pop_heap(heap.begin(), heap.end(), better);
        heap.back() = e;
        std::push_heap(heap.begin(), heap.end(), better);
      }
    }
  std::sort(heap.begin(), heap.end(), better);
  std::vector<std::pair<int32_t, float>> out;
  out.reserve(heap.size());
  for (const Entry& e : heap) out.emplace_back(e.second, of(e.second));
  return out;
}

}  // namespace kiln
