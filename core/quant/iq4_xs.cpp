// Dequantization of IQ4_XS (quant/iq4_xs.h): the reference of the kernels and the path of embedding
// rows and conversions.
#include "quant/iq4_xs.h"

#include <cstring>
#include <string>

#include "kiln/types.h"
#include "quant/block32_formats.h"
#include "quant/convert.h"

namespace kiln {

void dequantize_row_iq4_xs(const void* src, int64_t n, float* dst) {
  if (n < 0 || n % kSuperBlockSize != 0)
    throw Error("dequantize_row: " + std::to_string(n) + " weights is not a whole number of 256-weight IQ4_XS super-blocks");
  const auto* bytes = static_cast<const uint8_t*>(src);
  for (int64_t k = 0; k < n / kSuperBlockSize; ++k) {
    BlockIQ4_XS b;  // copied: GGUF rows need not be aligned
    std::memcpy(&b, bytes + k * sizeof b, sizeof b);
    const float d = fp16_to_float(b.d);
    float* y = dst + k * kSuperBlockSize;
    for (int s = 0; s < kSuperBlockSize / kBlockSize; ++s) {
      const float scale = d * float(iq4xs_scale(b, s));
      const uint8_t* qs = b.qs + 16 * s;
      for (int j = 0; j < 16; ++j) {
        y[32 * s + j] = scale * float(kIq4nlValues[qs[j] & 15]);
        y[32 * s + j + 16] = scale * float(kIq4nlValues[qs[j] >> 4]);
      }
    }
  }
}

}  // namespace kiln
