// A whole file mapped read-only into memory. Weights stay in the page cache and are paged in
// on first touch, so opening a 50 GB checkpoint costs nothing until its tensors are read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln {

class MappedFile {
 public:
  // Maps `path` read-only. Throws kiln::Error naming the file when it is missing, not a regular
  // file, or cannot be mapped. An empty file maps to size() == 0 and data() == nullptr.
  static MappedFile open(const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // The mapping's address does not change when the object moves: views into it stay valid.
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Drops the pages of [begin, begin + bytes) from this process once their contents were copied:
  // a later read maps them again from the file, so the bytes never change, but resident memory no
  // longer counts the mapping and the copy both. Ranges outside the mapping are ignored.
  void release(const uint8_t* begin, size_t bytes) const;

 private:
  void unmap() noexcept;

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// MappedFile::release for any read-only private file mapping (GGUF files map themselves): only the
// whole pages inside the range are dropped, so neighbouring tensors are never touched.
void release_mapped_pages(const uint8_t* begin, size_t bytes);

}  // namespace kiln
