// What a GPU benchmark needs beyond GpuContext (bench_vulkan_kernels,
// bench_decode_skeleton), and timing by GPU timestamps. Not a test harness: no Qt.
#pragma once

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "gpu_context.h"

namespace kiln::bench {

struct Bench : test::GpuContext {
  explicit Bench(int index) : GpuContext(index, {1u << 30, 256u << 20, 64u << 20, 4096}) {}
  vk::BufferSlice floats(size_t n, uint64_t seed) {
    std::mt19937 rng{uint32_t(seed)};
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    vk::BufferSlice s = arena->allocate(n * 4);
    uploader->write(s, 0, v.data(), n * 4);
    uploader->finish();
    return s;
  }
  vk::BufferSlice host;  // readback buffer, grown as needed
  std::vector<float> read(const vk::BufferSlice& s, size_t count) {
    if (host.size < count * 4) host = readback->allocate(count * 4);
    seq->begin(false);
    seq->copy_to_host(s, 0, host, 0, count * 4);
    seq->submit_and_wait();
    std::vector<float> out(count);
    std::memcpy(out.data(), host.mapped, count * 4);
    return out;
  }
  // Mean GPU microseconds of one call of `record`, repeated `reps` times in one submission.
  template <typename F>
  double time(int reps, F&& record) {
    for (int pass = 0; pass < 2; ++pass) {  // the first warms up
      seq->begin(true);
      for (int i = 0; i < reps; ++i) record();
      seq->submit_and_wait();
      const auto prof = seq->take_profile();
      if (pass == 1) {
        double us = 0, calls = 0;
        for (const auto& t : prof) {
          us += t.micros;
          calls += double(t.calls);
        }
        return us / reps;
      }
    }
    return 0;
  }
};

}  // namespace kiln::bench
