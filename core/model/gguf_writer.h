// Writing a GGUF v3 file: metadata, tensor directory, then tensor data streamed one tensor at a
// time (so a whole model never sits in memory).
//
// The file is written as "<path>.partial" next to the target and renamed over it only after every
// byte is written and fsync'd: a crash, a full disk or an exception leaves no file at `path` (and
// the partial file is removed). Errors are kiln::Error naming the file.
//
// Usage: set metadata and add_tensor() every tensor, then begin(); write_tensor() each tensor in
// the order added; finish().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/gguf_file.h"

namespace kiln {

class GgufWriter {
 public:
  // alignment: of the data section and of every tensor in it (general.alignment, a power of 2).
  explicit GgufWriter(std::string path, uint64_t alignment = 32);
  ~GgufWriter();  // removes the partial file unless finish() ran
  GgufWriter(const GgufWriter&) = delete;
  GgufWriter& operator=(const GgufWriter&) = delete;

  // Metadata in the order first set; setting a key again replaces its value in place.
  void set_string(std::string_view key, std::string_view value);
  void set_u32(std::string_view key, uint32_t value);
  void set_i32(std::string_view key, int32_t value);
  void set_u64(std::string_view key, uint64_t value);
  void set_f32(std::string_view key, float value);
  void set_bool(std::string_view key, bool value);
  void set_string_array(std::string_view key, const std::vector<std::string>& values);
  void set_f32_array(std::string_view key, const std::vector<float>& values);
  void set_i32_array(std::string_view key, const std::vector<int32_t>& values);
  void set_bool_array(std::string_view key, const std::vector<bool>& values);
  // A value read from another GGUF file, re-encoded as is (copying metadata between files).
  void set_value(std::string_view key, const GgufValue& value);
  void remove(std::string_view key);
  bool has(std::string_view key) const;

  // dims in GGUF order (dims[0] innermost: a [rows, cols] matrix is {cols, rows}); bytes is the
  // size of its data, which write_tensor() must then supply exactly.
  void add_tensor(std::string name, std::vector<uint64_t> dims, GgmlType type, uint64_t bytes);

  // Creates the partial file and writes header, metadata and tensor directory.
  void begin();
  // The next tensor's data, in add_tensor() order; may come in pieces (call until its bytes are in).
  void write_tensor_data(const void* data, size_t bytes);
  // Checks every tensor was written, fsyncs, renames into place. Throws kiln::Error.
  void finish();

  const std::string& path() const { return path_; }
  uint64_t bytes_written() const { return written_; }

 private:
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;
    GgmlType type;
    uint64_t bytes;
    uint64_t offset;  // from the start of the data section
  };
  void set_encoded(std::string_view key, std::string encoded);
  void write_bytes(const void* data, size_t bytes);
  void pad_to_alignment();
  [[noreturn]] void fail(const std::string& what, int error);

  std::string path_;
  std::string partial_;
  uint64_t alignment_;
  std::vector<std::pair<std::string, std::string>> metadata_;  // key, type + value bytes
  std::vector<Tensor> tensors_;
  uint64_t data_bytes_ = 0;  // the data section's size, padding included
  int fd_ = -1;
  uint64_t written_ = 0;
  size_t current_ = 0;          // tensor being written
  uint64_t current_done_ = 0;   // its bytes written so far
  bool finished_ = false;
};

}  // namespace kiln
