// GGUF parsing with every length, count and offset checked against the mapped bytes first.
#include "model/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "kiln/types.h"
#include "model/mapped_file.h"

namespace kiln {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr int kMaxDims = 4;              // GGML tensors have at most 4 dimensions
constexpr int kMaxArrayDepth = 3;        // arrays of arrays: nobody nests deeper

struct TypeTraits {
  const char* name;
  uint32_t block;  // weights per block
  uint32_t bytes;  // bytes per block
};

// Block geometry of every GGML type a GGUF file may name (nullptr name: number unused).
const TypeTraits* ggml_traits(uint32_t type) {
  static const TypeTraits table[] = {
      {"F32", 1, 4},       {"F16", 1, 2},        {"Q4_0", 32, 18},    {"Q4_1", 32, 20},
      {nullptr, 0, 0},     {nullptr, 0, 0},      {"Q5_0", 32, 22},    {"Q5_1", 32, 24},
      {"Q8_0", 32, 34},    {"Q8_1", 32, 36},     {"Q2_K", 256, 84},   {"Q3_K", 256, 110},
      {"Q4_K", 256, 144},  {"Q5_K", 256, 176},   {"Q6_K", 256, 210},  {"Q8_K", 256, 292},
      {"IQ2_XXS", 256, 66}, {"IQ2_XS", 256, 74}, {"IQ3_XXS", 256, 98}, {"IQ1_S", 256, 50},
      {"IQ4_NL", 32, 18},  {"IQ3_S", 256, 110},  {"IQ2_S", 256, 82},  {"IQ4_XS", 256, 136},
      {"I8", 1, 1},        {"I16", 1, 2},        {"I32", 1, 4},       {"I64", 1, 8},
      {"F64", 1, 8},       {"IQ1_M", 256, 56},   {"BF16", 1, 2},      {nullptr, 0, 0},
      {nullptr, 0, 0},     {nullptr, 0, 0},      {"TQ1_0", 256, 54},  {"TQ2_0", 256, 66},
      {nullptr, 0, 0},     {nullptr, 0, 0},      {nullptr, 0, 0},     {"MXFP4", 32, 17},
  };
  if (type >= sizeof(table) / sizeof(table[0]) || table[type].name == nullptr) return nullptr;
  return &table[type];
}

size_t scalar_size(GgufType t) {
  switch (t) {
    case GgufType::U8: case GgufType::I8: case GgufType::Bool: return 1;
    case GgufType::U16: case GgufType::I16: return 2;
    case GgufType::U32: case GgufType::I32: case GgufType::F32: return 4;
    case GgufType::U64: case GgufType::I64: case GgufType::F64: return 8;
    default: return 0;  // String, Array: variable
  }
}

bool valid_type(uint32_t t) { return t <= static_cast<uint32_t>(GgufType::F64); }

// Reads little-endian fields from the mapped bytes; every read checks that the bytes exist.
class Cursor {
 public:
  Cursor(const uint8_t* base, size_t size, const std::string& file) : base_(base), size_(size), file_(file) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(file_ + ": " + what + " (at byte " + std::to_string(pos_) + ")");
  }
  void need(uint64_t n, const char* what) const {
    if (n > remaining()) fail(std::string("file ends inside ") + what);
  }
  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, base_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string_view read_string(const char* what) {
    uint64_t len = read<uint64_t>(what);
    if (len > remaining()) fail(std::string(what) + " length " + std::to_string(len) + " runs past the end of the file");
    std::string_view s(reinterpret_cast<const char*>(base_ + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return s;
  }
  const uint8_t* here() const { return base_ + pos_; }
  void skip(size_t n) { pos_ += n; }  // callers checked n <= remaining()

 private:
  const uint8_t* base_;
  size_t size_;
  size_t pos_ = 0;
  const std::string& file_;
};

GgufValue read_value(Cursor& in, GgufType type, const std::string& key, int depth);

// Walks an array's items (validating every nested length) and records where they are.
void read_array(Cursor& in, GgufValue& v, const std::string& key, int depth) {
  uint32_t item = in.read<uint32_t>("an array header");
  if (!valid_type(item)) in.fail("key '" + key + "' is an array of unknown type " + std::to_string(item));
  if (depth >= kMaxArrayDepth) in.fail("key '" + key + "' nests arrays too deeply");
  v.item_type = static_cast<GgufType>(item);
  v.count = in.read<uint64_t>("an array header");
  v.items = in.here();
  size_t start = in.pos();
  if (size_t sz = scalar_size(v.item_type); sz > 0) {
    if (v.count > in.remaining() / sz)
      in.fail("key '" + key + "' declares " + std::to_string(v.count) + " items, more than the file holds");
    in.skip(static_cast<size_t>(v.count) * sz);
  } else {
    // A string item takes at least 8 bytes, an array item at least 12: bound the count first.
    size_t min_item = v.item_type == GgufType::String ? 8 : 12;
    if (v.count > in.remaining() / min_item)
      in.fail("key '" + key + "' declares " + std::to_string(v.count) + " items, more than the file holds");
    for (uint64_t k = 0; k < v.count; ++k) read_value(in, v.item_type, key, depth + 1);
  }
  v.items_bytes = in.pos() - start;
}

GgufValue read_value(Cursor& in, GgufType type, const std::string& key, int depth) {
  GgufValue v;
  v.type = type;
  switch (type) {
    case GgufType::U8: v.u = in.read<uint8_t>("a value"); break;
    case GgufType::I8: v.i = in.read<int8_t>("a value"); break;
    case GgufType::U16: v.u = in.read<uint16_t>("a value"); break;
    case GgufType::I16: v.i = in.read<int16_t>("a value"); break;
    case GgufType::U32: v.u = in.read<uint32_t>("a value"); break;
    case GgufType::I32: v.i = in.read<int32_t>("a value"); break;
    case GgufType::U64: v.u = in.read<uint64_t>("a value"); break;
    case GgufType::I64: v.i = in.read<int64_t>("a value"); break;
    case GgufType::F32: v.f = in.read<float>("a value"); break;
    case GgufType::F64: v.f = in.read<double>("a value"); break;
    case GgufType::Bool: v.u = in.read<uint8_t>("a value") != 0; break;
    case GgufType::String: v.str = in.read_string("a string value"); break;
    case GgufType::Array: read_array(in, v, key, depth); break;
  }
  return v;
}

uint32_t byteswap32(uint32_t x) {
  return (x >> 24) | ((x >> 8) & 0xff00) | ((x << 8) & 0xff0000) | (x << 24);
}

template <typename T>
T item_at(const GgufValue& v, uint64_t k) {
  T x;
  std::memcpy(&x, v.items + k * sizeof(T), sizeof(T));
  return x;
}

}  // namespace

const char* to_string(GgufType t) {
  static const char* names[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"};
  auto i = static_cast<uint32_t>(t);
  return i < 13 ? names[i] : "unknown";
}

const char* ggml_type_name(uint32_t type) {
  const TypeTraits* t = ggml_traits(type);
  return t ? t->name : nullptr;
}

std::shared_ptr<const GgufFile> GgufFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": not a regular file");
  }
  if (st.st_size < 24) {
    ::close(fd);
    throw Error(path + ": too short to be a GGUF file (" + std::to_string(st.st_size) + " bytes)");
  }
  size_t size = static_cast<size_t>(st.st_size);
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping keeps the file alive
  if (map == MAP_FAILED) throw Error(path + ": cannot map (" + std::strerror(errno) + ")");
  std::shared_ptr<GgufFile> f(new GgufFile());
  f->path_ = path;
  f->mapping_ = map;
  f->base_ = static_cast<const uint8_t*>(map);
  f->size_ = size;
  f->parse();
  return f;
}

std::shared_ptr<const GgufFile> GgufFile::from_bytes(std::string bytes, const std::string& name) {
  std::shared_ptr<GgufFile> f(new GgufFile());
  f->path_ = name;
  f->owned_ = std::move(bytes);
  f->base_ = reinterpret_cast<const uint8_t*>(f->owned_.data());
  f->size_ = f->owned_.size();
  f->parse();
  return f;
}

void GgufFile::release(const uint8_t* begin, size_t bytes) const {
  if (mapping_ == nullptr || begin < base_ || begin >= base_ + size_) return;
  release_mapped_pages(begin, std::min(bytes, size_t(base_ + size_ - begin)));
}

GgufFile::~GgufFile() {
  if (mapping_) munmap(mapping_, size_);
}

void GgufFile::parse() {
  Cursor in(base_, size_, path_);
  if (size_ < 4 || in.read<uint32_t>("the magic") != kMagic) throw Error(path_ + ": not a GGUF file (bad magic)");
  version_ = in.read<uint32_t>("the header");
  if (version_ == 1) throw Error(path_ + ": GGUF version 1 is not supported (re-convert it with a current llama.cpp)");
  if (version_ != 2 && version_ != 3) {
    uint32_t swapped = byteswap32(version_);
    if (swapped == 2 || swapped == 3) throw Error(path_ + ": big-endian GGUF files are not supported");
    throw Error(path_ + ": unsupported GGUF version " + std::to_string(version_));
  }
  uint64_t tensor_count = in.read<uint64_t>("the header");
  uint64_t kv_count = in.read<uint64_t>("the header");
  // Smallest possible entries (key length + type + 1 byte; name length + dims + type + offset):
  // a count the remaining bytes cannot hold is corrupt, and is refused before anything is reserved.
  if (kv_count > in.remaining() / 13)
    throw Error(path_ + ": corrupt header: " + std::to_string(kv_count) + " metadata entries cannot fit in the file");
  if (tensor_count > in.remaining() / 32)
    throw Error(path_ + ": corrupt header: " + std::to_string(tensor_count) + " tensors cannot fit in the file");

  for (uint64_t k = 0; k < kv_count; ++k) {
    std::string key(in.read_string("a metadata key"));
    uint32_t type = in.read<uint32_t>("a metadata type");
    if (!valid_type(type)) in.fail("key '" + key + "' has unknown value type " + std::to_string(type));
    GgufValue v = read_value(in, static_cast<GgufType>(type), key, 0);
    if (!metadata_.emplace(key, v).second) in.fail("metadata key '" + key + "' appears twice");
  }

  if (const GgufValue* a = find("general.alignment")) {
    bool is_int = a->type == GgufType::U32 || a->type == GgufType::U64 || a->type == GgufType::I32 ||
                  a->type == GgufType::U16 || a->type == GgufType::I64;
    uint64_t value = (a->type == GgufType::I32 || a->type == GgufType::I64) ? static_cast<uint64_t>(a->i) : a->u;
    if (!is_int || value == 0 || (value & (value - 1)) != 0 || value > (1u << 30))
      throw Error(path_ + ": general.alignment must be a power of two, got " + std::to_string(value));
    alignment_ = value;
  }

  tensors_.reserve(static_cast<size_t>(tensor_count));
  for (uint64_t t = 0; t < tensor_count; ++t) {
    GgufTensorInfo info;
    info.name = std::string(in.read_string("a tensor name"));
    uint32_t n_dims = in.read<uint32_t>("a tensor entry");
    if (n_dims == 0 || n_dims > kMaxDims)
      in.fail("tensor '" + info.name + "' has " + std::to_string(n_dims) + " dimensions (1 to 4 allowed)");
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t dim = in.read<uint64_t>("a tensor entry");
      if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        in.fail("tensor '" + info.name + "' has an impossible dimension " + std::to_string(dim));
      info.dims.push_back(dim);
    }
    info.type = in.read<uint32_t>("a tensor entry");
    info.offset = in.read<uint64_t>("a tensor entry");
    if (!tensor_index_.emplace(info.name, tensors_.size()).second) in.fail("tensor '" + info.name + "' appears twice");
    tensors_.push_back(std::move(info));
  }

  // The data section starts at the next multiple of the alignment after the header.
  uint64_t header_end = in.pos();
  data_offset_ = (header_end + alignment_ - 1) / alignment_ * alignment_;

  for (GgufTensorInfo& info : tensors_) {
    const std::string where = path_ + ": tensor '" + info.name + "'";
    const TypeTraits* traits = ggml_traits(info.type);
    if (!traits) throw Error(where + " has unknown type " + std::to_string(info.type));
    if (info.dims[0] % traits->block != 0)
      throw Error(where + ": " + std::to_string(info.dims[0]) + " columns is not a whole number of " +
                  traits->name + " blocks");
    uint64_t bytes = info.dims[0] / traits->block;
    bool overflow = __builtin_mul_overflow(bytes, static_cast<uint64_t>(traits->bytes), &bytes);
    for (size_t d = 1; d < info.dims.size(); ++d) overflow |= __builtin_mul_overflow(bytes, info.dims[d], &bytes);
    if (overflow) throw Error(where + " is impossibly large");
    if (info.offset % alignment_ != 0)
      throw Error(where + " offset " + std::to_string(info.offset) + " is not aligned to " + std::to_string(alignment_));
    uint64_t end = 0;
    if (data_offset_ > size_ || __builtin_add_overflow(info.offset, bytes, &end) || end > size_ - data_offset_)
      throw Error(where + " (" + std::to_string(bytes) + " bytes at offset " + std::to_string(info.offset) +
                  ") runs past the end of the file");
    info.data = base_ + data_offset_ + info.offset;
    info.bytes = static_cast<size_t>(bytes);
  }
}

const GgufValue* GgufFile::find(std::string_view key) const {
  auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::optional<uint64_t> GgufFile::get_uint(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  switch (v->type) {
    case GgufType::U8: case GgufType::U16: case GgufType::U32: case GgufType::U64: return v->u;
    case GgufType::I8: case GgufType::I16: case GgufType::I32: case GgufType::I64:
      if (v->i < 0) throw Error(path_ + ": key '" + std::string(key) + "' is negative (" + std::to_string(v->i) + ")");
      return static_cast<uint64_t>(v->i);
    default:
      throw Error(path_ + ": key '" + std::string(key) + "' should be an integer, not " + to_string(v->type));
  }
}

std::optional<double> GgufFile::get_float(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type == GgufType::F32 || v->type == GgufType::F64) return v->f;
  throw Error(path_ + ": key '" + std::string(key) + "' should be a float, not " + to_string(v->type));
}

std::optional<bool> GgufFile::get_bool(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type == GgufType::Bool) return v->u != 0;
  throw Error(path_ + ": key '" + std::string(key) + "' should be a bool, not " + to_string(v->type));
}

std::optional<std::string_view> GgufFile::get_string(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type == GgufType::String) return v->str;
  throw Error(path_ + ": key '" + std::string(key) + "' should be a string, not " + to_string(v->type));
}

std::optional<std::vector<std::string_view>> GgufFile::get_string_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufType::Array || v->item_type != GgufType::String)
    throw Error(path_ + ": key '" + std::string(key) + "' should be an array of strings");
  // The lengths were validated while parsing; walk them again without re-checking the file end.
  std::vector<std::string_view> out;
  out.reserve(static_cast<size_t>(v->count));
  const uint8_t* p = v->items;
  for (uint64_t k = 0; k < v->count; ++k) {
    uint64_t len;
    std::memcpy(&len, p, 8);
    out.emplace_back(reinterpret_cast<const char*>(p + 8), static_cast<size_t>(len));
    p += 8 + len;
  }
  return out;
}

std::optional<std::vector<float>> GgufFile::get_float_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufType::Array || (v->item_type != GgufType::F32 && v->item_type != GgufType::F64))
    throw Error(path_ + ": key '" + std::string(key) + "' should be an array of floats");
  std::vector<float> out(static_cast<size_t>(v->count));
  for (uint64_t k = 0; k < v->count; ++k)
    out[k] = v->item_type == GgufType::F32 ? item_at<float>(*v, k) : static_cast<float>(item_at<double>(*v, k));
  return out;
}

std::optional<std::vector<int64_t>> GgufFile::get_int_array(std::string_view key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufType::Array)
    throw Error(path_ + ": key '" + std::string(key) + "' should be an array of integers");
  std::vector<int64_t> out(static_cast<size_t>(v->count));
  for (uint64_t k = 0; k < v->count; ++k) {
    switch (v->item_type) {
      case GgufType::U8: case GgufType::Bool: out[k] = item_at<uint8_t>(*v, k); break;
      case GgufType::I8: out[k] = item_at<int8_t>(*v, k); break;
      case GgufType::U16: out[k] = item_at<uint16_t>(*v, k); break;
      case GgufType::I16: out[k] = item_at<int16_t>(*v, k); break;
      case GgufType::U32: out[k] = item_at<uint32_t>(*v, k); break;
      case GgufType::I32: out[k] = item_at<int32_t>(*v, k); break;
      case GgufType::I64: out[k] = item_at<int64_t>(*v, k); break;
      case GgufType::U64: {
        uint64_t x = item_at<uint64_t>(*v, k);
        if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          throw Error(path_ + ": key '" + std::string(key) + "' holds an integer out of range");
        out[k] = static_cast<int64_t>(x);
        break;
      }
      default:
        throw Error(path_ + ": key '" + std::string(key) + "' should be an array of integers, not of " +
                    to_string(v->item_type));
    }
  }
  return out;
}

}  // namespace kiln
