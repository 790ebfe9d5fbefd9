// kiln bench --image: the time to encode one image with the vision tower.
#pragma once

#include "cli/common.h"

namespace kiln::cli {

// Gemma 3 4B's tower (896 x 896 pixels in 14-pixel patches, 27 layers of width 1152, 256 tokens
// of width 2560) with random weights, matrices in F16 (F32 with --precision f32), on the CPU or, with
// --backend vulkan, on the Vulkan device --device names (the best one by default).
// profile_ops: with --backend vulkan, the GPU time of each op (summed over layers) an image.
void run_image_bench(const ModelFlags& model, bool json, bool profile_ops);

}  // namespace kiln::cli
