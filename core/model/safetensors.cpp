#include "model/safetensors.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "kiln/types.h"

namespace kiln {
namespace {

using nlohmann::json;

constexpr size_t kHeaderLengthBytes = 8;
// A safetensors header nests three levels (root, tensor, shape). The limit stops "[[[[..." from
// making the JSON parser build millions of nested values.
constexpr int kMaxHeaderNesting = 16;

uint64_t read_u64_le(const uint8_t* bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

int max_nesting(const uint8_t* text, size_t size) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(text[i]);
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

struct TensorReader {
  const std::string& file;
  const std::string& name;

  [[noreturn]] void fail(const std::string& problem) const {
    throw Error(file + ": tensor '" + name + "' " + problem);
  }

  uint64_t non_negative(const json& value, const char* what) const {
    if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<int64_t>() < 0)) {
      fail(std::string("has a ") + what + " entry that is not a non-negative integer (" + value.dump() + ")");
    }
    return value.get<uint64_t>();
  }

  const json& member(const json& entry, const char* key) const {
    auto it = entry.find(key);
    if (it == entry.end()) fail(std::string("has no ") + key);
    return *it;
  }

  DType dtype(const json& entry, size_t& element_bytes) const {
    const json& value = member(entry, "dtype");
    if (!value.is_string()) fail("has a dtype that is not a string (" + value.dump() + ")");
    const std::string name = value.get<std::string>();
    element_bytes = name == "F32" ? 4 : 2;
    if (name == "BF16") return DType::BF16;
    if (name == "F16") return DType::F16;
    if (name == "F32") return DType::F32;
    fail("has dtype '" + name + "', which Kiln does not read (BF16, F16 or F32 only)");
  }
};

SafetensorsTensor parse_tensor(const std::string& name, const json& entry, uint64_t data_begin,
                               uint64_t data_size, const std::string& file) {
  const TensorReader reader{file, name};
  if (!entry.is_object()) reader.fail("is not a JSON object");

  SafetensorsTensor tensor;
  tensor.name = name;
  size_t element_bytes = 0;
  tensor.dtype = reader.dtype(entry, element_bytes);

  const json& shape = reader.member(entry, "shape");
  if (!shape.is_array()) reader.fail("has a shape that is not a list (" + shape.dump() + ")");
  uint64_t elements = 1;
  for (const json& dim : shape) {
    const uint64_t extent = reader.non_negative(dim, "shape");
    if (extent > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(elements, extent, &elements)) {
      reader.fail("has a shape too large to address (" + shape.dump() + ")");
    }
    tensor.shape.push_back(static_cast<int64_t>(extent));
  }
  uint64_t shape_bytes = 0;
  if (__builtin_mul_overflow(elements, element_bytes, &shape_bytes)) {
    reader.fail("has a shape too large to address (" + shape.dump() + ")");
  }

  const json& offsets = reader.member(entry, "data_offsets");
  if (!offsets.is_array() || offsets.size() != 2) {
    reader.fail("needs data_offsets [begin, end], got " + offsets.dump());
  }
  const uint64_t begin = reader.non_negative(offsets[0], "data_offsets");
  const uint64_t end = reader.non_negative(offsets[1], "data_offsets");
  if (begin > end) reader.fail("has data_offsets " + offsets.dump() + " that end before they begin");
  if (end > data_size) {
    reader.fail("has data_offsets " + offsets.dump() + " past the end of the data (" +
                std::to_string(data_size) + " bytes; is the file truncated?)");
  }
  if (end - begin != shape_bytes) {
    reader.fail("has shape " + shape_text(tensor.shape) + " of " + std::to_string(shape_bytes) +
                " bytes but data_offsets " + offsets.dump() + " span " + std::to_string(end - begin));
  }
  tensor.offset = data_begin + begin;  // cannot overflow: both are within the file size
  tensor.bytes = shape_bytes;
  return tensor;
}

}  // namespace

std::vector<SafetensorsTensor> parse_safetensors(const uint8_t* data, size_t size, const std::string& file) {
  if (size == 0) throw Error(file + ": empty file (not a safetensors file)");
  if (size < kHeaderLengthBytes) {
    throw Error(file + ": " + std::to_string(size) + " bytes, too short for a safetensors header");
  }
  const uint64_t header_bytes = read_u64_le(data);
  if (header_bytes > kMaxSafetensorsHeaderBytes) {
    throw Error(file + ": header size " + std::to_string(header_bytes) +
                " is over the 100 MB limit (not a safetensors file?)");
  }
  if (header_bytes > size - kHeaderLengthBytes) {
    throw Error(file + ": header size " + std::to_string(header_bytes) + " runs past the end of the file (" +
                std::to_string(size) + " bytes)");
  }
  const uint8_t* header = data + kHeaderLengthBytes;
  if (max_nesting(header, header_bytes) > kMaxHeaderNesting) {
    throw Error(file + ": header nests deeper than " + std::to_string(kMaxHeaderNesting) +
                " levels (not a safetensors file?)");
  }
  json root;
  try {
    root = json::parse(header, header + header_bytes);
  } catch (const json::parse_error& error) {
    throw Error(file + ": header is not valid JSON (at byte " + std::to_string(error.byte) + " of " +
                std::to_string(header_bytes) + ")");
  } catch (const json::exception& error) {  // a number past double's range, say
    throw Error(file + ": header is not valid JSON (" + std::string(error.what()) + ")");
  }
  if (!root.is_object()) throw Error(file + ": header is not a JSON object");

  const uint64_t data_begin = kHeaderLengthBytes + header_bytes;
  const uint64_t data_size = size - data_begin;
  std::vector<SafetensorsTensor> tensors;
  tensors.reserve(root.size());
  for (const auto& [name, entry] : root.items()) {
    if (name == "__metadata__") continue;
    if (name.empty()) throw Error(file + ": header names a tensor with an empty name");
    tensors.push_back(parse_tensor(name, entry, data_begin, data_size, file));
  }
  // nlohmann's object is ordered by key already; sorting states the promise rather than relying on it.
  std::sort(tensors.begin(), tensors.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return tensors;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile file;
  file.mapping_ = MappedFile::open(path);
  const std::vector<SafetensorsTensor> parsed =
      parse_safetensors(file.mapping_.data(), file.mapping_.size(), path);
  file.tensors_.reserve(parsed.size());
  for (const SafetensorsTensor& tensor : parsed) {
    TensorView view;
    view.name = tensor.name;
    view.file = path;
    view.dtype = tensor.dtype;
    view.shape = tensor.shape;
    view.data = file.mapping_.data() + tensor.offset;
    view.bytes = static_cast<size_t>(tensor.bytes);
    file.tensors_.push_back(std::move(view));
  }
  return file;
}

const TensorView* SafetensorsFile::find(const std::string& name) const {
  auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name,
                             [](const TensorView& view, const std::string& key) { return view.name < key; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

}  // namespace kiln
