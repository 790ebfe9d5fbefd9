#include "profile/op_profile.h"

namespace kiln {

void OpProfile::add(const char* op, int layer, double micros) {
  auto& slot = sums_[{op, layer}];
  slot.first += micros;
  slot.second += 1;
}

std::vector<OpTiming> OpProfile::take(const std::string& device) {
  std::vector<OpTiming> out;
  out.reserve(sums_.size());
  for (const auto& [key, value] : sums_) out.push_back({key.first, key.second, value.first, value.second, device});
  sums_.clear();
  return out;
}

}  // namespace kiln
