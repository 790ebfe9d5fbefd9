// SHA-256 (FIPS 180-4), streamed: the hub publishes it for every LFS file (lfs.oid), and the
// engine keys the images it has encoded by it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t bytes);
  std::string hex_digest();  // lower-case hex; finishes the hash (call once)

 private:
  void compress(const uint8_t* block);
  std::array<uint32_t, 8> state_;
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// Hash of a whole file; throws kiln::Error when it cannot be read.
std::string sha256_of_file(const std::string& path);

}  // namespace kiln
