#version 450
// Split-K's last step (matmul_coop.comp with split_blocks): y[i] += y[i + slice z] for z = 1 ..
// splits - 1, in that order (the same sums every run), for i < count. Binding 3 is the matrix's
// output, so the matrix call's own descriptor set serves (every 4-binding kernel shares a layout).
layout(local_size_x = 256) in;
layout(std430, binding = 3) buffer Outputs { float y[]; };
layout(push_constant) uniform Push {
  uint count;   // floats of one slice: n_tokens y_stride
  uint splits;  // slices, the first in place
} pc;
void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) {
    float sum = y[i];
    for (uint z = 1; z < pc.splits; ++z) sum += y[i + z * pc.count];
    y[i] = sum;
  }
}
