#include "model/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <utility>

#include "kiln/types.h"

namespace kiln {
namespace {

std::string system_error_text(int error_number) { return std::strerror(error_number); }

// Closes the descriptor on every path out of open(); the mapping outlives it.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

MappedFile MappedFile::open(const std::string& path) {
  FileDescriptor file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) {
    const int error_number = errno;
    if (error_number == ENOENT) throw Error(path + ": no such file");
    throw Error(path + ": cannot open (" + system_error_text(error_number) + ")");
  }
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) {
    throw Error(path + ": cannot read file size (" + system_error_text(errno) + ")");
  }
  if (S_ISDIR(info.st_mode)) throw Error(path + ": is a folder, not a file");
  if (!S_ISREG(info.st_mode)) throw Error(path + ": not a regular file");

  MappedFile mapped;
  mapped.path_ = path;
  if (info.st_size == 0) return mapped;  // mmap refuses length 0; an empty view is honest

  const auto length = static_cast<size_t>(info.st_size);
  void* address = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (address == MAP_FAILED) {
    throw Error(path + ": cannot map into memory (" + system_error_text(errno) + ")");
  }
  mapped.data_ = static_cast<const uint8_t*>(address);
  mapped.size_ = length;
  return mapped;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { unmap(); }

void MappedFile::release(const uint8_t* begin, size_t bytes) const {
  if (data_ == nullptr || begin < data_ || begin >= data_ + size_) return;
  release_mapped_pages(begin, std::min(bytes, size_t(data_ + size_ - begin)));
}

void release_mapped_pages(const uint8_t* begin, size_t bytes) {
  static const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = (uintptr_t(begin) + page - 1) & ~(page - 1);
  const uintptr_t last = (uintptr_t(begin) + bytes) & ~(page - 1);
  // MADV_DONTNEED on a private read-only file mapping only forgets pages: no data can be lost.
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

void MappedFile::unmap() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace kiln
