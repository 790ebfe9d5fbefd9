#version 450
// LayerNorm of the vision tower, one row a workgroup:
//   y[r][i] = (x[r][i] - mean_r) / sqrt(variance_r + eps) * weight[i] + bias[i]
// The mean first, then the variance as the mean of squared deviations (two passes over the row,
// as the CPU tower computes it). Grid: (rows).
//
// Push constants (VisionNormPush in vision_tower_gpu.cpp): 0 cols (uint), 1 eps (float)
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;

#include "common.glsl"

layout(std430, binding = 0) readonly buffer Inputs { float x[]; };   // [rows][cols]
layout(std430, binding = 1) readonly buffer Weight { float weight[]; };  // [cols]
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };      // [cols]
layout(std430, binding = 3) writeonly buffer Outputs { float y[]; };  // [rows][cols]

layout(push_constant) uniform Push {
  uint cols;
  float eps;
} pc;

void main() {
  const uint tid = gl_LocalInvocationID.x, base = gl_WorkGroupID.x * pc.cols;
  float s = 0.0;
  for (uint i = tid; i < pc.cols; i += 256u) s += x[base + i];
  const float mean = wg_sum(s) / float(pc.cols);
  float sq = 0.0;
  for (uint i = tid; i < pc.cols; i += 256u) {
    const float d = x[base + i] - mean;
    sq += d * d;
  }
  const float inv = 1.0 / sqrt(wg_sum(sq) / float(pc.cols) + pc.eps);
  for (uint i = tid; i < pc.cols; i += 256u) y[base + i] = (x[base + i] - mean) * inv * weight[i] + bias[i];
}
