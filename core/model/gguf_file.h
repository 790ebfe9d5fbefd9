// A GGUF file (versions 2 and 3) read in place: header, metadata and tensor directory.
//
// The file is memory-mapped and every field is checked against the bytes that are really there
// before it is used (counts, string and array lengths, offsets, alignment, tensor extents,
// arithmetic overflow), so a truncated, corrupt or hostile file ends in a one-line kiln::Error
// naming the file, never in a crash, a hang or an allocation larger than the file itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

// GGUF metadata value types, numbered as the format numbers them.
enum class GgufType : uint32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
  String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12,
};
const char* to_string(GgufType t);

// One metadata value. Scalars are decoded; strings and arrays point into the mapped bytes.
struct GgufValue {
  GgufType type = GgufType::U8;
  uint64_t u = 0;           // unsigned integers and Bool (0 / 1)
  int64_t i = 0;            // signed integers
  double f = 0;             // F32 / F64
  std::string_view str;     // String
  GgufType item_type = GgufType::U8;  // Array: type of its items
  uint64_t count = 0;                 // Array: number of items
  const uint8_t* items = nullptr;     // Array: first item's bytes (already bounds-checked)
  size_t items_bytes = 0;             // Array: bytes of all items
};

// GGML tensor storage types (the numbers GGUF files use).
enum class GgmlType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22,
  IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
  TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
};
// Name ("Q4_K") of a type number, or nullptr when GGUF knows no such type.
const char* ggml_type_name(uint32_t type);

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;   // GGUF order: dims[0] is the innermost (contiguous) dimension
  uint32_t type = 0;            // GgmlType number
  uint64_t offset = 0;          // from the start of the data section
  const uint8_t* data = nullptr;  // into the mapping
  size_t bytes = 0;
};

class GgufFile {
 public:
  // Maps and parses `path`. Throws kiln::Error "<path>: <problem>".
  static std::shared_ptr<const GgufFile> open(const std::string& path);
  // Parses bytes already in memory (tests, fuzzing). `name` stands for the file in errors.
  static std::shared_ptr<const GgufFile> from_bytes(std::string bytes, const std::string& name);

  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // start of the tensor data section
  size_t size() const { return size_; }

  const std::map<std::string, GgufValue, std::less<>>& metadata() const { return metadata_; }
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufValue* find(std::string_view key) const;
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  // Drops the mapped pages of [begin, begin + bytes) once a reader copied them (MappedFile::release);
  // does nothing for bytes held in memory (from_bytes).
  void release(const uint8_t* begin, size_t bytes) const;

  // Typed look-ups: nullopt when the key is absent; kiln::Error when it has an incompatible type
  // or an integer out of range. Integers of any width convert; floats accept F32 and F64.
  std::optional<uint64_t> get_uint(std::string_view key) const;
  std::optional<double> get_float(std::string_view key) const;
  std::optional<bool> get_bool(std::string_view key) const;
  std::optional<std::string_view> get_string(std::string_view key) const;
  // Arrays: empty optional when absent; kiln::Error when the key is not an array of that kind.
  std::optional<std::vector<std::string_view>> get_string_array(std::string_view key) const;
  std::optional<std::vector<float>> get_float_array(std::string_view key) const;
  std::optional<std::vector<int64_t>> get_int_array(std::string_view key) const;  // any integer or bool items

 private:
  GgufFile() = default;
  void parse();

  std::string path_;
  const uint8_t* base_ = nullptr;
  size_t size_ = 0;
  void* mapping_ = nullptr;      // mmap'd region, or nullptr when the bytes live in owned_
  std::string owned_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::map<std::string, GgufValue, std::less<>> metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace kiln
