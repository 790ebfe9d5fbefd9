// Per-op timing of the forward pass, summed by op and layer. Off by default: when disabled a
// scope costs one branch.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kiln/types.h"

namespace kiln {

class OpProfile {
 public:
  void set_enabled(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }
  void add(const char* op, int layer, double micros);
  std::vector<OpTiming> take(const std::string& device);

  // Times the enclosing scope as one call of `op` in `layer`.
  class Scope {
   public:
    Scope(OpProfile& p, const char* op, int layer) : p_(p.enabled_ ? &p : nullptr), op_(op), layer_(layer) {
      if (p_) start_ = std::chrono::steady_clock::now();
    }
    ~Scope() {
      if (p_)
        p_->add(op_, layer_,
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count());
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    OpProfile* p_;
    const char* op_;
    int layer_;
    std::chrono::steady_clock::time_point start_;
  };

 private:
  bool enabled_ = false;
  std::map<std::pair<std::string, int>, std::pair<double, uint64_t>> sums_;  // (op, layer) -> (micros, calls)
};

}  // namespace kiln
