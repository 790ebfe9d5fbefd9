// Shared by attention.comp (prefill) and attention_decode.comp: the KV cache bindings (1 and 2),
// the query in shared memory and an online softmax over tiles of WG keys: each invocation scores
// one key of the tile, then owns a pair of output dimensions while the tile's values are summed.
// The including kernel declares its push block `pc` first (with head_dim, n_kv_heads, slots and
// softcap). The bindings are read-only even where a kernel writes the cache (through separate
// bindings of the same buffers): read-only loads take the GPU's faster, reorderable path.

#ifdef KV_F16
layout(std430, binding = 1) readonly buffer KeyCache { uvec4 k8[]; };   // 8 fp16 a uvec4
layout(std430, binding = 2) readonly buffer ValueCache { uint v2[]; };  // 2 fp16 a uint
#else
layout(std430, binding = 1) readonly buffer KeyCache { vec4 k8[]; };    // 4 floats a vec4
layout(std430, binding = 2) readonly buffer ValueCache { vec2 v2[]; };
#endif

const uint MAX_HEAD_DIM = 256;
shared vec4 q_s[MAX_HEAD_DIM / 4];  // the query, already scaled
shared float p_s[gl_WorkGroupSize.x];

// Running state of the online softmax; acc0 / acc1 are output pairs tid and tid + WG.
struct Softmax {
  float m, l;
  vec2 acc0, acc1;
};

// q (in shared memory, scaled) times 8 elements i*8 .. i*8+7 of a cached key row.
float key_dot(uint row, uint i) {
  const uint D8 = pc.head_dim / 8u;
#ifdef KV_F16
  const uvec4 k = k8[row * D8 + i];
  return dot(q_s[2u * i], vec4(unpackHalf2x16(k.x), unpackHalf2x16(k.y))) +
         dot(q_s[2u * i + 1u], vec4(unpackHalf2x16(k.z), unpackHalf2x16(k.w)));
#else
  return dot(q_s[2u * i], k8[row * 2u * D8 + 2u * i]) + dot(q_s[2u * i + 1u], k8[row * 2u * D8 + 2u * i + 1u]);
#endif
}

// Value elements (2 pair, 2 pair + 1) of a cached row; value_raw / value_of load and unpack apart.
#ifdef KV_F16
#define ValueRaw uint
vec2 value_of(uint raw) { return unpackHalf2x16(raw); }
#else
#define ValueRaw vec2
vec2 value_of(vec2 raw) { return raw; }
#endif
ValueRaw value_raw(uint row, uint pair) { return v2[row * (pc.head_dim / 2u) + pair]; }
vec2 load_value(uint row, uint pair) { return value_of(value_raw(row, pair)); }

// Values of a tile's first PRE_VALUES keys are requested with its keys, so their latency overlaps
// the keys' instead of following the softmax (decode splits are 32 keys: on an H100 the values'
// four rounds of loads were most of the split's 5-7 us).
const uint PRE_VALUES = 32u;

float apply_softcap(float s) { return pc.softcap > 0.0 ? pc.softcap * tanh(s / pc.softcap) : s; }

// Folds cached keys [k_begin, k_end) of kv_head (ring slot = position % slots) into st. Must be
// reached by the whole workgroup.
void attend_tiles(inout Softmax st, uint k_begin, uint k_end, uint kv_head) {
  const uint tid = gl_LocalInvocationID.x;
  const uint WG = gl_WorkGroupSize.x;
  const uint pairs = pc.head_dim / 2u;
  const uint k_row = pc.head_dim / 8u;  // uvec4 (f16) or vec4-pair (f32) loads a key row
  for (uint tile = k_begin; tile < k_end; tile += WG) {
    const uint j = tile + tid;
    const uint count = min(WG, k_end - tile);
    ValueRaw pre[PRE_VALUES];  // pair tid of the tile's first keys
    uint slot = tile % pc.slots;
    for (uint u = 0; u < PRE_VALUES; ++u) {
      pre[u] = u < count && tid < pairs ? value_raw(slot * pc.n_kv_heads + kv_head, tid) : ValueRaw(0);
      slot = slot + 1u == pc.slots ? 0u : slot + 1u;
    }
    float s = NEG_BIG;
    if (j < k_end) {
      const uint row = (j % pc.slots) * pc.n_kv_heads + kv_head;
      // Two independent accumulators: the loads of one overlap the math of the other.
      float d0 = 0.0, d1 = 0.0;
      for (uint i = 0; i < k_row; i += 2u) {
        d0 += key_dot(row, i);
        if (i + 1u < k_row) d1 += key_dot(row, i + 1u);
      }
      s = apply_softcap(d0 + d1);
    }
    const float m_new = max(st.m, wg_max(s));
    const float correction = exp(st.m - m_new);
    const float p = j < k_end ? exp(s - m_new) : 0.0;
    p_s[tid] = p;
    st.l = st.l * correction + wg_sum(p);  // its barriers also publish p_s
    st.m = m_new;
    st.acc0 *= correction;
    st.acc1 *= correction;
    for (uint u = 0; u < PRE_VALUES; ++u)
      if (u < count) st.acc0 += p_s[u] * value_of(pre[u]);
    // The other values: eight keys' loads in flight before their products (the ring slot advances
    // by one); from the tile's start for an invocation that also owns pair tid + WG (head_dim > 2 WG).
    uint jj = tid + WG < pairs ? 0u : min(count, PRE_VALUES);
    slot = (tile + jj) % pc.slots;
    for (; jj + 8u <= count; jj += 8u) {
      vec2 v0[8], v1[8];
      for (uint u = 0; u < 8u; ++u) {
        const uint su = slot + u >= pc.slots ? slot + u - pc.slots : slot + u;
        const uint row = su * pc.n_kv_heads + kv_head;
        v0[u] = tid < pairs && jj + u >= PRE_VALUES ? load_value(row, tid) : vec2(0.0);
        v1[u] = tid + WG < pairs ? load_value(row, tid + WG) : vec2(0.0);
      }
      for (uint u = 0; u < 8u; ++u) {
        st.acc0 += p_s[jj + u] * v0[u];
        st.acc1 += p_s[jj + u] * v1[u];
      }
      slot = slot + 8u >= pc.slots ? slot + 8u - pc.slots : slot + 8u;
    }
    for (; jj < count; ++jj) {
      const uint row = slot * pc.n_kv_heads + kv_head;
      if (tid < pairs && jj >= PRE_VALUES) st.acc0 += p_s[jj] * load_value(row, tid);
      if (tid + WG < pairs) st.acc1 += p_s[jj] * load_value(row, tid + WG);
      slot = slot + 1u == pc.slots ? 0u : slot + 1u;
    }
    barrier();  // p_s is rewritten by the next tile
  }
}
