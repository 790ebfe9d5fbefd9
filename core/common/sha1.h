// SHA-1 (FIPS 180-4), streamed, for one purpose: the hub lists a small (non-LFS) file with its git
// blob id, SHA-1 of "blob <size>\0" + the bytes, so those files are checked by content too.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln {

class Sha1 {
 public:
  Sha1();
  void update(const void* data, size_t bytes);
  std::string hex_digest();  // lower-case hex; finishes the hash (call once)

 private:
  void compress(const uint8_t* block);
  std::array<uint32_t, 5> state_;
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// A git blob hash started: the "blob <size>\0" header is fed, the content follows with update().
Sha1 git_blob_hasher(uint64_t size);

}  // namespace kiln
