#version 450
// Gemma 3's projector before its matrix: average pooling of the tower's patch grid (row-major,
// grid x grid) to side x side cells of kernel x kernel patches, then RMSNorm with the multiplier
// given as is (the checkpoint's 1 + w):
//   p[t][i] = mean of x[patch][i] over cell t's patches;  y[t][i] = p[t][i] / sqrt(mean_i p^2 + eps) * w[i]
// One output token a workgroup. Grid: (side * side).
//
// Push constants (VisionPoolPush in vision_tower_gpu.cpp): 0 hidden, 1 grid, 2 side, 3 kernel (uint), 4 eps (float)
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;

#include "common.glsl"

layout(std430, binding = 0) readonly buffer Inputs { float x[]; };       // [grid * grid][hidden]
layout(std430, binding = 1) readonly buffer Weight { float weight[]; };  // [hidden]
layout(std430, binding = 2) buffer Outputs { float y[]; };               // [side * side][hidden]

layout(push_constant) uniform Push {
  uint hidden, grid, side, kernel;
  float eps;
} pc;

void main() {
  const uint tid = gl_LocalInvocationID.x, t = gl_WorkGroupID.x;
  const uint row0 = (t / pc.side) * pc.kernel, col0 = (t % pc.side) * pc.kernel;
  const float inv_area = 1.0 / float(pc.kernel * pc.kernel);
  float sq = 0.0;
  for (uint i = tid; i < pc.hidden; i += 256u) {
    float s = 0.0;
    for (uint dy = 0; dy < pc.kernel; ++dy)
      for (uint dx = 0; dx < pc.kernel; ++dx) s += x[((row0 + dy) * pc.grid + col0 + dx) * pc.hidden + i];
    s *= inv_area;
    y[t * pc.hidden + i] = s;  // read back below by this same invocation
    sq += s * s;
  }
  const float inv = 1.0 / sqrt(wg_sum(sq) / float(pc.hidden) + pc.eps);
  for (uint i = tid; i < pc.hidden; i += 256u) y[t * pc.hidden + i] = y[t * pc.hidden + i] * inv * weight[i];
}
