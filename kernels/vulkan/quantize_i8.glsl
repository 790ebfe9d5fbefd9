// The int8 form of a batch's activations that quantize_i8.comp writes and matmul_i8.comp reads:
// a 32-element block in GROUPS groups of 32 / GROUPS elements, each with its own fp32 scale
// max|x| / 127 (q = round(x / scale)). Groups of 16, as dot_i8.glsl's: one scale a block put the
// tiny fixtures' Q4_0 logits past their bound (tests/vulkan/test_model_int_dot.cpp). Groups of 8
// cost each output two more float operations a block; on the K-quant GGUFs (held as Q8_0) they
// took the logits from 5.28e-2 to 5.07e-2 away from llama.cpp's, 4.66e-2 unrounded (lavapipe).
// GROUPS must match kQuantizeGroups (core/runtime/vulkan/push_constants.h).
#ifndef GROUPS
#define GROUPS 2u
#endif
const uint GROUP_WORDS = 8u / GROUPS;  // words of 4 int8 a group
