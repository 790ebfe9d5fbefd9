// Prefill attention on tensor cores (attention_prefill_khr_*) against the tiles
// (attention_prefill_q4_kv_f16, which test_attention holds to the CPU reference on lavapipe): the
// same queries and fp16 cache, timed and compared. Part of bench_vulkan_kernels --prefill --khr,
// since lavapipe has no cooperative matrices. Returns the number of results off the bound.
#pragma once

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "quant/convert.h"
#include "runtime/vulkan/push_constants.h"
#include "bench_harness.h"

namespace kiln::bench {

inline int prefill_attention(Bench& b) {
  struct Case {
    const char* name;
    uint32_t heads, kv_heads, head_dim, tokens, pos0, window, slots;
  };
  const Case cases[] = {
      {"27B, global, from 0", 32, 16, 128, 512, 0, 0, 4096},
      {"27B, local, across the ring", 32, 16, 128, 512, 1300, 1024, 1536},
      {"4B, global, from 0", 8, 4, 256, 512, 0, 0, 4096},
      {"4B, local, across the ring", 8, 4, 256, 300, 1400, 1024, 1536},
      {"partial block, window inside it", 8, 4, 128, 200, 37, 48, 512},
      {"partial block, heads of 256", 8, 4, 256, 200, 37, 48, 512},
  };
  std::printf("\n== prefill attention, fp16 cache: tiles (q4) vs tensor cores (khr), relative difference (bound 5e-3)\n");
  int bad = 0;
  std::mt19937 rng{5};
  std::uniform_real_distribution<float> u(-1, 1);
  for (const Case& c : cases) {
    const uint32_t stride = (c.heads + 2 * c.kv_heads) * c.head_dim, out_count = c.tokens * c.heads * c.head_dim;
    std::vector<float> q(size_t(c.tokens) * stride);
    for (float& x : q) x = 2 * u(rng);
    std::vector<uint16_t> k(size_t(c.slots) * c.kv_heads * c.head_dim), v(k.size());
    for (size_t i = 0; i < k.size(); ++i) {
      k[i] = float_to_fp16(2 * u(rng));
      v[i] = float_to_fp16(u(rng));
    }
    const vk::BufferSlice qs = b.arena->allocate(q.size() * 4), ks = b.arena->allocate(k.size() * 2),
                          vs = b.arena->allocate(v.size() * 2), tiles = b.arena->allocate(size_t(out_count) * 4),
                          coop = b.arena->allocate(size_t(out_count) * 4);
    b.uploader->write(qs, 0, q.data(), q.size() * 4);
    b.uploader->write(ks, 0, k.data(), k.size() * 2);
    b.uploader->write(vs, 0, v.data(), v.size() * 2);
    b.uploader->finish();
    const vk::AttentionPush ap{c.pos0, c.heads, c.kv_heads, c.head_dim, stride, c.heads * c.head_dim, c.slots, c.window,
                               1.0f / std::sqrt(float(c.head_dim)), 0.0f, c.tokens};
    auto run = [&](const vk::Kernel& kernel, const vk::BufferSlice& out, uint32_t queries) {
      VkDescriptorSet set = b.descriptors->allocate(kernel, std::vector{qs, ks, vs, out});
      const uint32_t groups = (c.tokens + queries - 1) / queries * c.heads;
      return b.time(5, [&] {
        b.seq->dispatch(kernel, set, &ap, sizeof ap, groups, 1, 1, "attention", 0);
        b.seq->barrier();
      });
    };
    const double us_tiles = run(b.pipelines->get("attention_prefill_q4_kv_f16", 4, {64}), tiles, 4);
    const double us_coop =
        run(b.pipelines->get("attention_prefill_khr_d" + std::to_string(c.head_dim) + "_kv_f16", 4), coop, 16);
    const std::vector<float> a = b.read(tiles, out_count), o = b.read(coop, out_count);
    double diff = 0, norm = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      diff += double(o[i] - a[i]) * double(o[i] - a[i]);
      norm += double(a[i]) * double(a[i]);
    }
    const double rel = std::sqrt(diff / norm);
    const bool ok = rel < 5e-3;  // NaN fails too
    bad += !ok;
    std::printf("%-32s %4u tokens  tiles %8.1f us  khr %8.1f us  %9.2e %s\n", c.name, c.tokens, us_tiles, us_coop, rel,
                ok ? "ok" : "FAIL");
  }
  return bad;
}

}  // namespace kiln::bench
