// Shared by every Kiln compute shader: workgroup reductions and small math helpers.
// Reductions go through subgroup operations first, then one shared slot per subgroup.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

const uint MAX_SUBGROUPS = 64;  // workgroup size / smallest subgroup size (lavapipe: 8)
shared float red_buf[MAX_SUBGROUPS];

// Sum of v over the workgroup; every invocation gets the result. Must be reached by all.
float wg_sum(float v) {
  v = subgroupAdd(v);
  if (subgroupElect()) red_buf[gl_SubgroupID] = v;
  barrier();
  float total = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; ++i) total += red_buf[i];
  barrier();
  return total;
}

float wg_max(float v) {
  v = subgroupMax(v);
  if (subgroupElect()) red_buf[gl_SubgroupID] = v;
  barrier();
  float m = red_buf[0];
  for (uint i = 1; i < gl_NumSubgroups; ++i) m = max(m, red_buf[i]);
  barrier();
  return m;
}

// Dispatches wider than maxComputeWorkGroupCount[0] are folded into y; groups_x is the x size.
uint flat_group_index(uint groups_x) { return gl_WorkGroupID.y * groups_x + gl_WorkGroupID.x; }

// GELU, tanh approximation (gelu_pytorch_tanh). The clamp keeps tanh finite on every driver.
float gelu_tanh(float g) {
  const float u = 0.7978845608028654 * (g + 0.044715 * g * g * g);
  return 0.5 * g * (1.0 + tanh(clamp(u, -15.0, 15.0)));
}

const float NEG_BIG = -1.0e30;  // "minus infinity" that keeps exp() and subtraction finite

// Adding 1.5 * 2^23 rounds a float in (-2^22, 2^22) to the nearest integer and leaves it, two's
// complement, in the low mantissa bits: no float-to-int conversion (a slow instruction on GPUs).
const float ROUND_MAGIC = 12582912.0;
