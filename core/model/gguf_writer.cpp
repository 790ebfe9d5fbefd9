// GGUF v3 writer. Layout: "GGUF", version, tensor count, metadata count, metadata (key string,
// type, value), tensor infos (name, dims, type, offset), padding to the alignment, tensor data
// with each tensor starting at a multiple of the alignment. All integers little-endian.
#include "model/gguf_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

#include "kiln/types.h"

namespace kiln {
namespace {

void put(std::string& out, const void* p, size_t n) { out.append(static_cast<const char*>(p), n); }
void put_u32(std::string& out, uint32_t v) { put(out, &v, 4); }
void put_u64(std::string& out, uint64_t v) { put(out, &v, 8); }
void put_string(std::string& out, std::string_view s) {
  put_u64(out, s.size());
  out.append(s);
}

// Bytes of one item of a scalar type (arrays of arrays or strings are copied whole instead).
size_t scalar_bytes(GgufType t) {
  switch (t) {
    case GgufType::U8: case GgufType::I8: case GgufType::Bool: return 1;
    case GgufType::U16: case GgufType::I16: return 2;
    case GgufType::U32: case GgufType::I32: case GgufType::F32: return 4;
    case GgufType::U64: case GgufType::I64: case GgufType::F64: return 8;
    default: return 0;
  }
}

}  // namespace

GgufWriter::GgufWriter(std::string path, uint64_t alignment)
    : path_(std::move(path)), partial_(path_ + ".partial"), alignment_(alignment) {
  if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0)
    throw Error(path_ + ": GGUF alignment " + std::to_string(alignment_) + " is not a power of 2");
  if (alignment_ != 32) set_u32("general.alignment", static_cast<uint32_t>(alignment_));
}

GgufWriter::~GgufWriter() {
  if (fd_ >= 0) {  // begun, not finished: an error or an exception on the way
    ::close(fd_);
    ::unlink(partial_.c_str());
  }
}

void GgufWriter::set_encoded(std::string_view key, std::string encoded) {
  for (auto& [k, v] : metadata_) {
    if (k == key) {
      v = std::move(encoded);
      return;
    }
  }
  metadata_.emplace_back(std::string(key), std::move(encoded));
}

void GgufWriter::set_string(std::string_view key, std::string_view value) {
  std::string e;
  put_u32(e, uint32_t(GgufType::String));
  put_string(e, value);
  set_encoded(key, std::move(e));
}

void GgufWriter::set_u32(std::string_view key, uint32_t value) {
  std::string e;
  put_u32(e, uint32_t(GgufType::U32));
  put_u32(e, value);
  set_encoded(key, std::move(e));
}

void GgufWriter::set_i32(std::string_view key, int32_t value) {
  std::string e;
  put_u32(e, uint32_t(GgufType::I32));
  put(e, &value, 4);
  set_encoded(key, std::move(e));
}

void GgufWriter::set_u64(std::string_view key, uint64_t value) {
  std::string e;
  put_u32(e, uint32_t(GgufType::U64));
  put_u64(e, value);
  set_encoded(key, std::move(e));
}

void GgufWriter::set_f32(std::string_view key, float value) {
  std::string e;
  put_u32(e, uint32_t(GgufType::F32));
  put(e, &value, 4);
  set_encoded(key, std::move(e));
}

void GgufWriter::set_bool(std::string_view key, bool value) {
  std::string e;
  put_u32(e, uint32_t(GgufType::Bool));
  e.push_back(value ? 1 : 0);
  set_encoded(key, std::move(e));
}

void GgufWriter::set_string_array(std::string_view key, const std::vector<std::string>& values) {
  std::string e;
  put_u32(e, uint32_t(GgufType::Array));
  put_u32(e, uint32_t(GgufType::String));
  put_u64(e, values.size());
  for (const auto& s : values) put_string(e, s);
  set_encoded(key, std::move(e));
}

void GgufWriter::set_f32_array(std::string_view key, const std::vector<float>& values) {
  std::string e;
  put_u32(e, uint32_t(GgufType::Array));
  put_u32(e, uint32_t(GgufType::F32));
  put_u64(e, values.size());
  put(e, values.data(), values.size() * 4);
  set_encoded(key, std::move(e));
}

void GgufWriter::set_i32_array(std::string_view key, const std::vector<int32_t>& values) {
  std::string e;
  put_u32(e, uint32_t(GgufType::Array));
  put_u32(e, uint32_t(GgufType::I32));
  put_u64(e, values.size());
  put(e, values.data(), values.size() * 4);
  set_encoded(key, std::move(e));
}

void GgufWriter::set_bool_array(std::string_view key, const std::vector<bool>& values) {
  std::string e;
  put_u32(e, uint32_t(GgufType::Array));
  put_u32(e, uint32_t(GgufType::Bool));
  put_u64(e, values.size());
  for (bool b : values) e.push_back(b ? 1 : 0);
  set_encoded(key, std::move(e));
}

void GgufWriter::set_value(std::string_view key, const GgufValue& value) {
  std::string e;
  put_u32(e, uint32_t(value.type));
  switch (value.type) {
    case GgufType::String: put_string(e, value.str); break;
    case GgufType::Array:
      // The reader checked the items' bytes; strings and nested arrays are in file encoding already.
      put_u32(e, uint32_t(value.item_type));
      put_u64(e, value.count);
      put(e, value.items, value.items_bytes);
      break;
    case GgufType::F32: {
      const float f = static_cast<float>(value.f);
      put(e, &f, 4);
      break;
    }
    case GgufType::F64: put(e, &value.f, 8); break;
    case GgufType::I8: case GgufType::I16: case GgufType::I32: case GgufType::I64:
      put(e, &value.i, scalar_bytes(value.type));  // little-endian: the low bytes come first
      break;
    default: put(e, &value.u, scalar_bytes(value.type)); break;
  }
  set_encoded(key, std::move(e));
}

void GgufWriter::remove(std::string_view key) {
  std::erase_if(metadata_, [key](const auto& kv) { return kv.first == key; });
}

bool GgufWriter::has(std::string_view key) const {
  for (const auto& kv : metadata_)
    if (kv.first == key) return true;
  return false;
}

void GgufWriter::add_tensor(std::string name, std::vector<uint64_t> dims, GgmlType type, uint64_t bytes) {
  if (fd_ != -1) throw Error(path_ + ": tensor '" + name + "' added after the directory was written");
  for (const Tensor& t : tensors_)
    if (t.name == name) throw Error(path_ + ": tensor '" + name + "' added twice");
  tensors_.push_back({std::move(name), std::move(dims), type, bytes, data_bytes_});
  data_bytes_ += (bytes + alignment_ - 1) / alignment_ * alignment_;
}

[[noreturn]] void GgufWriter::fail(const std::string& what, int error) {
  std::string reason = std::strerror(error);
  if (error == ENOSPC || error == EDQUOT) reason = "the disk is full";
  throw Error(path_ + ": " + what + ": " + reason + " (nothing was written to " + path_ + ")");
}

void GgufWriter::write_bytes(const void* data, size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd_, p, bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write " + partial_, errno);
    }
    p += n;
    bytes -= static_cast<size_t>(n);
    written_ += static_cast<uint64_t>(n);
  }
}

void GgufWriter::pad_to_alignment() {
  static const char zeros[256] = {};
  uint64_t pad = (alignment_ - written_ % alignment_) % alignment_;
  while (pad > 0) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(pad, sizeof(zeros)));
    write_bytes(zeros, n);
    pad -= n;
  }
}

void GgufWriter::begin() {
  if (fd_ != -1) throw Error(path_ + ": begin() called twice");
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
    throw Error(path_ + ": the folder " + parent.string() + " does not exist");
  fd_ = ::open(partial_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int error = errno;
    fd_ = -2;  // nothing to remove
    fail("cannot create " + partial_, error);
  }
  std::string head;
  head += "GGUF";
  put_u32(head, 3);
  put_u64(head, tensors_.size());
  put_u64(head, metadata_.size());
  for (const auto& [key, value] : metadata_) {
    put_string(head, key);
    head += value;
  }
  for (const Tensor& t : tensors_) {
    put_string(head, t.name);
    put_u32(head, static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) put_u64(head, d);
    put_u32(head, static_cast<uint32_t>(t.type));
    put_u64(head, t.offset);
  }
  write_bytes(head.data(), head.size());
  pad_to_alignment();
}

void GgufWriter::write_tensor_data(const void* data, size_t bytes) {
  if (fd_ < 0) throw Error(path_ + ": tensor data written before begin()");
  if (current_ >= tensors_.size()) throw Error(path_ + ": more tensor data than the directory lists");
  const Tensor& t = tensors_[current_];
  if (current_done_ + bytes > t.bytes)
    throw Error(path_ + ": tensor '" + t.name + "' is given more than its " + std::to_string(t.bytes) + " bytes");
  write_bytes(data, bytes);
  current_done_ += bytes;
  if (current_done_ == t.bytes) {
    pad_to_alignment();
    ++current_;
    current_done_ = 0;
  }
}

void GgufWriter::finish() {
  if (fd_ < 0) throw Error(path_ + ": finish() before begin()");
  if (current_ != tensors_.size())
    throw Error(path_ + ": tensor '" + tensors_[current_].name + "' was not written");
  if (::fsync(fd_) != 0) fail("cannot flush " + partial_, errno);
  const int fd = fd_;
  fd_ = -2;
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(partial_.c_str());
    fail("cannot close " + partial_, error);
  }
  if (::rename(partial_.c_str(), path_.c_str()) != 0) {
    const int error = errno;
    ::unlink(partial_.c_str());
    fail("cannot rename " + partial_ + " to " + path_, error);
  }
  finished_ = true;
  // The rename itself reaches the disk when the folder's entry does.
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  const int dir = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace kiln
