// One .safetensors file: an 8-byte little-endian header length, a JSON header
// {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then the data.
// Every number in the header is checked before use, so a hostile or truncated file gives a
// kiln::Error naming it instead of a crash or an allocation of its choosing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/mapped_file.h"
#include "model/tensor_source.h"
#include "quant/dtype.h"

namespace kiln {

// Headers larger than this are refused: the biggest real ones are a few hundred kilobytes.
constexpr uint64_t kMaxSafetensorsHeaderBytes = 100ull * 1000 * 1000;

struct SafetensorsTensor {
  std::string name;            // as the file names it (hub name, with prefixes)
  DType dtype = DType::F32;    // BF16, F16 or F32
  std::vector<int64_t> shape;  // outermost first
  uint64_t offset = 0;         // from the start of the file
  uint64_t bytes = 0;
};

// Parses and validates the header of a safetensors file held in memory (`size` bytes at `data`).
// `file` names it in errors. __metadata__ is ignored. Sorted by name.
std::vector<SafetensorsTensor> parse_safetensors(const uint8_t* data, size_t size, const std::string& file);

// A mapped safetensors file with views of its tensors. The views point into the mapping and stay
// valid as long as this object lives (moving it keeps them valid). Data may be only 2-byte aligned:
// readers copy values out (memcpy) rather than casting the pointer.
class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::string& path);  // throws kiln::Error

  const std::string& path() const { return mapping_.path(); }
  const MappedFile& mapping() const { return mapping_; }
  const std::vector<TensorView>& tensors() const { return tensors_; }  // names as in the file
  const TensorView* find(const std::string& name) const;               // nullptr when absent

 private:
  MappedFile mapping_;
  std::vector<TensorView> tensors_;
};

}  // namespace kiln
