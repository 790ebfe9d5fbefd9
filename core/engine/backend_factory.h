// Backend choice shared by Engine::load and the benchmark (which builds weights itself).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/types.h"
#include "model/checkpoint.h"
#include "model/weights.h"
#include "runtime/backend.h"

namespace kiln {

// The storage format of the API's precision (Auto: Q8_0, for what stores no types of its own).
DType dtype_of(Precision p);

// The checkpoint's weights as `precision` asks: Auto keeps a GGUF's tensors as stored.
Gemma3Weights load_checkpoint_weights(const Checkpoint& ck, Precision precision, int threads,
                                      const std::function<void(int done, int total)>& progress,
                                      std::stop_token cancel = {});

// Throws kiln::Error for options no backend can take (an unknown Vulkan tuning key, a bad value),
// so that a caller can say so before reading any weights.
void check_backend_options(const LoadOptions& options);

// Vulkan when asked for (or Auto and a real GPU is there), else the CPU. Why a GPU was not used
// goes into notes. With reload, the Vulkan upload frees each host matrix as it goes (the model is
// never held twice); when Vulkan then fails, reload() gives the weights again for the CPU.
std::unique_ptr<Backend> create_backend(std::shared_ptr<Gemma3Weights> weights, const LoadOptions& options,
                                        int context, DType kv_element, std::vector<std::string>& notes,
                                        const std::function<Gemma3Weights()>& reload = {});

}  // namespace kiln
