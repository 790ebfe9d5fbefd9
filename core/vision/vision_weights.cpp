// Loading the tower: both layouts are first put under one set of names (Hugging Face's, without
// prefixes), then read by one loader that checks every shape against the config.
#include "vision/vision_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "kiln/types.h"
#include "model/gguf_checkpoint.h"
#include "model/gguf_file.h"
#include "model/mapped_file.h"
#include "model/safetensors.h"
#include "quant/convert.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// Tensors by canonical name: "embeddings.patch_embedding.weight", "encoder.layers.3.mlp.fc1.bias",
// "post_layernorm.weight", "mm_input_projection_weight", "mm_soft_emb_norm.weight".
struct VisionTensors {
  std::map<std::string, TensorView> views;          // names rewritten to canonical ones
  std::map<std::string, std::string> unreadable;    // canonical name -> "FILE: tensor NAME: stored as T"
  std::vector<SafetensorsFile> shards;              // keep the mappings alive
  std::shared_ptr<const GgufFile> gguf;
  bool soft_norm_includes_one = false;              // llama.cpp's converter adds the 1
};

// Hub name -> canonical name, "" for tensors that are not the tower's (the released layout and
// transformers >= 4.52's).
std::string hub_canonical(std::string_view name) {
  for (std::string_view prefix : {"vision_tower.vision_model.", "model.vision_tower.vision_model."})
    if (name.starts_with(prefix)) return std::string(name.substr(prefix.size()));
  for (std::string_view prefix : {"multi_modal_projector.", "model.multi_modal_projector."})
    if (name.starts_with(prefix)) return std::string(name.substr(prefix.size()));
  return "";
}

void add_shard(VisionTensors& tensors, SafetensorsFile shard) {
  tensors.shards.push_back(std::move(shard));
  for (const TensorView& view : tensors.shards.back().tensors()) {
    std::string name = hub_canonical(view.name);
    if (name.empty()) continue;
    // The view keeps the file's name for the tensor: errors name it as the file does.
    if (!tensors.views.emplace(name, view).second)
      throw Error(view.file + ": tensor " + view.name + ": stored twice under two prefixes");
  }
}

// The safetensors files of a folder that hold tower tensors: model.safetensors, or the shards its
// index names for them. Empty when no file holds any.
std::vector<fs::path> tower_files(const fs::path& folder) {
  std::error_code error;
  const fs::path single = folder / "model.safetensors";
  if (fs::is_regular_file(single, error)) {
    const SafetensorsFile file = SafetensorsFile::open(single.string());
    for (const TensorView& view : file.tensors())
      if (!hub_canonical(view.name).empty()) return {single};
    return {};
  }
  const fs::path index_path = folder / "model.safetensors.index.json";
  if (!fs::is_regular_file(index_path, error)) return {};
  const MappedFile index_file = MappedFile::open(index_path.string());
  nlohmann::json index;
  try {
    index = nlohmann::json::parse(reinterpret_cast<const char*>(index_file.data()),
                                  reinterpret_cast<const char*>(index_file.data()) + index_file.size());
  } catch (const nlohmann::json::exception& e) {
    throw Error(index_path.string() + ": not valid JSON (" + e.what() + ")");
  }
  auto map = index.is_object() ? index.find("weight_map") : index.end();
  if (map == index.end() || !map->is_object()) throw Error(index_path.string() + ": no weight_map object");
  std::vector<fs::path> shards;
  for (const auto& [tensor, shard] : map->items()) {
    if (hub_canonical(tensor).empty()) continue;
    const std::string name = shard.is_string() ? shard.get<std::string>() : "";
    // Only plain file names: an index must not reach outside its folder.
    if (name.empty() || fs::path(name).filename() != fs::path(name) || name == "..")
      throw Error(index_path.string() + ": tensor " + tensor + " has no plain shard file name");
    if (std::find(shards.begin(), shards.end(), folder / name) == shards.end()) shards.push_back(folder / name);
  }
  return shards;
}

VisionTensors hugging_face_tensors(const std::string& folder) {
  VisionTensors tensors;
  const std::vector<fs::path> files = tower_files(fs::path(folder));
  if (files.empty()) throw Error(folder + ": no vision tower tensors (vision_tower.*) in the model's safetensors");
  for (const fs::path& file : files) add_shard(tensors, SafetensorsFile::open(file.string()));
  return tensors;
}

// llama.cpp's mmproj names of the tower's tensors (v.blk.N.<part>.weight / .bias per layer).
constexpr std::pair<std::string_view, std::string_view> kGgufWholeNames[] = {
    {"v.patch_embd.weight", "embeddings.patch_embedding.weight"},
    {"v.patch_embd.bias", "embeddings.patch_embedding.bias"},
    {"v.position_embd.weight", "embeddings.position_embedding.weight"},
    {"v.post_ln.weight", "post_layernorm.weight"},
    {"v.post_ln.bias", "post_layernorm.bias"},
    {"mm.input_projection.weight", "mm_input_projection_weight"},
    {"mm.soft_emb_norm.weight", "mm_soft_emb_norm.weight"},
};
constexpr std::pair<std::string_view, std::string_view> kGgufLayerParts[] = {
    {"ln1", "layer_norm1"},         {"ln2", "layer_norm2"},         {"attn_q", "self_attn.q_proj"},
    {"attn_k", "self_attn.k_proj"}, {"attn_v", "self_attn.v_proj"}, {"attn_out", "self_attn.out_proj"},
    {"ffn_up", "mlp.fc1"},          {"ffn_down", "mlp.fc2"},
};

// "N.<part>.<suffix>" split at its first two dots; false when it has fewer or N is no number.
bool split_layer_name(std::string_view name, std::string_view& layer, std::string_view& part, std::string_view& suffix) {
  const size_t dot1 = name.find('.');
  if (dot1 == std::string_view::npos) return false;
  const size_t dot2 = name.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos) return false;
  layer = name.substr(0, dot1);
  part = name.substr(dot1 + 1, dot2 - dot1 - 1);
  suffix = name.substr(dot2);
  return !layer.empty() && layer.size() <= 6 &&
         std::all_of(layer.begin(), layer.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// mmproj name -> canonical name, "" for tensors the tower does not use.
std::string gguf_canonical(std::string_view name) {
  for (const auto& [gguf, canonical] : kGgufWholeNames)
    if (name == gguf) return std::string(canonical);
  std::string_view layer, part, suffix;
  if (!name.starts_with("v.blk.") || !split_layer_name(name.substr(6), layer, part, suffix)) return "";
  for (const auto& [gguf, canonical] : kGgufLayerParts)
    if (part == gguf) return "encoder.layers." + std::string(layer) + "." + std::string(canonical) + std::string(suffix);
  return "";
}

// canonical name -> mmproj name, for errors about a tensor the file lacks.
std::string gguf_name(std::string_view canonical) {
  for (const auto& [gguf, name] : kGgufWholeNames)
    if (canonical == name) return std::string(gguf);
  std::string_view layer, rest, suffix;
  if (canonical.starts_with("encoder.layers.") && split_layer_name(canonical.substr(15), layer, rest, suffix)) {
    rest = canonical.substr(15 + layer.size() + 1);  // "<part>.<weight|bias>", the part may hold a dot
    for (const auto& [gguf, part] : kGgufLayerParts)
      if (rest.starts_with(part) && rest.size() > part.size() && rest[part.size()] == '.')
        return "v.blk." + std::string(layer) + "." + std::string(gguf) + std::string(rest.substr(part.size()));
  }
  return std::string(canonical);
}

VisionTensors mmproj_tensors(const std::string& path) {
  VisionTensors tensors;
  tensors.gguf = GgufFile::open(path);
  tensors.soft_norm_includes_one = true;
  for (const GgufTensorInfo& info : tensors.gguf->tensors()) {
    const std::string name = gguf_canonical(info.name);
    if (name.empty()) continue;
    const std::optional<DType> dtype = ggml_dtype(info.type);
    if (!dtype) {
      const char* type = ggml_type_name(info.type);
      tensors.unreadable[name] = path + ": tensor " + info.name + ": stored as " + (type ? type : "an unknown type") +
                                 ", which Kiln cannot read";
      continue;
    }
    TensorView view;
    view.name = info.name;
    view.file = path;
    view.dtype = *dtype;
    for (auto d = info.dims.rbegin(); d != info.dims.rend(); ++d) view.shape.push_back(static_cast<int64_t>(*d));
    view.data = info.data;
    view.bytes = info.bytes;
    tensors.views.emplace(name, view);
  }
  return tensors;
}

class Reader {
 public:
  explicit Reader(const VisionTensors& tensors) : tensors_(tensors) {}

  // The tensor's values as floats, its shape checked (outermost first).
  std::vector<float> floats(const std::string& name, const std::vector<int64_t>& shape) const {
    const TensorView& t = find(name, shape);
    const int64_t cols = shape.back();
    const int64_t rows = count(shape) / cols;
    std::vector<float> out(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) row(t, r, cols, out.data() + r * cols);
    return out;
  }

  // A [rows][cols] tensor (or one whose inner dimensions flatten to cols) held in `type`.
  Matrix matrix(const std::string& name, const std::vector<int64_t>& shape, DType type) const {
    const TensorView& t = find(name, shape);
    Matrix m = empty_matrix(type, shape.front(), count(shape) / shape.front());
    std::vector<float> values(static_cast<size_t>(m.cols));
    for (int64_t r = 0; r < m.rows; ++r) {
      row(t, r, m.cols, values.data());
      quantize_row(type, values.data(), m.cols, m.row(r));
    }
    return m;
  }

  // A [cols][rows] tensor held transposed, as [rows][cols].
  Matrix transposed(const std::string& name, int64_t rows, int64_t cols, DType type) const {
    const std::vector<float> values = floats(name, {cols, rows});
    Matrix m = empty_matrix(type, rows, cols);
    std::vector<float> line(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) line[c] = values[c * rows + r];
      quantize_row(type, line.data(), cols, m.row(r));
    }
    return m;
  }

  static Matrix empty_matrix(DType type, int64_t rows, int64_t cols) {
    Matrix m;
    m.type = type;
    m.rows = rows;
    m.cols = cols;
    m.storage = allocate_aligned(m.bytes());
    return m;
  }

 private:
  static int64_t count(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }

  static std::string shape_text(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
  }

  const TensorView& find(const std::string& name, const std::vector<int64_t>& shape) const {
    if (auto bad = tensors_.unreadable.find(name); bad != tensors_.unreadable.end()) throw Error(bad->second);
    auto it = tensors_.views.find(name);
    if (it == tensors_.views.end())
      throw Error(source_name() + ": tensor " + file_name(name) + ": missing (the vision tower needs it)");
    const TensorView& t = it->second;
    if (t.shape != shape)
      throw Error(t.file + ": tensor " + t.name + ": shape " + shape_text(t.shape) + ", the vision config needs " +
                  shape_text(shape));
    const int64_t cols = shape.back();
    if (is_block_quantized(t.dtype) && cols % kBlockSize != 0)
      throw Error(t.file + ": tensor " + t.name + ": rows of " + std::to_string(cols) + " are not whole blocks");
    if (t.bytes != row_bytes(t.dtype, cols) * static_cast<size_t>(count(shape) / cols))
      throw Error(t.file + ": tensor " + t.name + ": " + std::to_string(t.bytes) + " bytes do not fit its shape");
    return t;
  }

  // Row r of a tensor whose rows hold `cols` values. The bytes are copied out first: safetensors
  // data may be only 2-byte aligned.
  void row(const TensorView& t, int64_t r, int64_t cols, float* out) const {
    const size_t bytes = row_bytes(t.dtype, cols);
    if (scratch_.size() < bytes) scratch_.assign(bytes, 0);
    std::memcpy(scratch_.data(), t.data + r * bytes, bytes);
    dequantize_row(t.dtype, scratch_.data(), cols, out);
  }

  // The tensor's name as the file would spell it.
  std::string file_name(const std::string& canonical) const {
    if (tensors_.gguf) return gguf_name(canonical);
    return (canonical.starts_with("mm_") ? "multi_modal_projector." : "vision_tower.vision_model.") + canonical;
  }

  std::string source_name() const {
    if (tensors_.gguf) return tensors_.gguf->path();
    return tensors_.shards.empty() ? std::string("the model") : tensors_.shards.front().path();
  }

  const VisionTensors& tensors_;
  mutable std::vector<uint8_t> scratch_;
};

uint64_t float_bytes(const std::vector<float>& v) { return v.size() * sizeof(float); }

}  // namespace

void check_vision_matrix_type(DType matrices) {
  if (matrices != DType::F32 && matrices != DType::F16)
    throw Error(std::string("vision tower: matrices are held in F32 or F16, not ") + to_string(matrices));
}

bool folder_has_vision_tensors(const std::string& folder) { return !tower_files(fs::path(folder)).empty(); }

uint64_t SiglipWeights::bytes() const {
  uint64_t total = patch.bytes() + projection.bytes() + float_bytes(patch_bias) + float_bytes(position) +
                   float_bytes(post_norm_weight) + float_bytes(post_norm_bias) + float_bytes(soft_norm);
  for (const SiglipLayer& l : layers) {
    total += l.q.bytes() + l.k.bytes() + l.v.bytes() + l.out.bytes() + l.fc1.bytes() + l.fc2.bytes();
    for (const auto* v : {&l.norm1_weight, &l.norm1_bias, &l.q_bias, &l.k_bias, &l.v_bias, &l.out_bias,
                          &l.norm2_weight, &l.norm2_bias, &l.fc1_bias, &l.fc2_bias})
      total += float_bytes(*v);
  }
  return total;
}

SiglipWeights load_siglip_weights(const VisionSource& source, DType matrices) {
  check_vision_matrix_type(matrices);
  const VisionTensors tensors = source.gguf ? mmproj_tensors(source.path) : hugging_face_tensors(source.path);
  const Reader read(tensors);
  const VisionConfig& c = source.config;
  const int64_t h = c.hidden, p = c.patch_size, grid = c.image_size / c.patch_size;

  SiglipWeights w;
  w.config = c;
  w.patch = read.matrix("embeddings.patch_embedding.weight", {h, 3, p, p}, DType::F32);
  w.patch_bias = read.floats("embeddings.patch_embedding.bias", {h});
  w.position = read.floats("embeddings.position_embedding.weight", {grid * grid, h});
  for (int l = 0; l < c.layers; ++l) {
    const std::string at = "encoder.layers." + std::to_string(l) + ".";
    SiglipLayer layer;
    layer.norm1_weight = read.floats(at + "layer_norm1.weight", {h});
    layer.norm1_bias = read.floats(at + "layer_norm1.bias", {h});
    layer.norm2_weight = read.floats(at + "layer_norm2.weight", {h});
    layer.norm2_bias = read.floats(at + "layer_norm2.bias", {h});
    layer.q = read.matrix(at + "self_attn.q_proj.weight", {h, h}, matrices);
    layer.k = read.matrix(at + "self_attn.k_proj.weight", {h, h}, matrices);
    layer.v = read.matrix(at + "self_attn.v_proj.weight", {h, h}, matrices);
    layer.out = read.matrix(at + "self_attn.out_proj.weight", {h, h}, matrices);
    layer.q_bias = read.floats(at + "self_attn.q_proj.bias", {h});
    layer.k_bias = read.floats(at + "self_attn.k_proj.bias", {h});
    layer.v_bias = read.floats(at + "self_attn.v_proj.bias", {h});
    layer.out_bias = read.floats(at + "self_attn.out_proj.bias", {h});
    layer.fc1 = read.matrix(at + "mlp.fc1.weight", {c.intermediate, h}, matrices);
    layer.fc1_bias = read.floats(at + "mlp.fc1.bias", {c.intermediate});
    layer.fc2 = read.matrix(at + "mlp.fc2.weight", {h, c.intermediate}, matrices);
    layer.fc2_bias = read.floats(at + "mlp.fc2.bias", {h});
    w.layers.push_back(std::move(layer));
  }
  w.post_norm_weight = read.floats("post_layernorm.weight", {h});
  w.post_norm_bias = read.floats("post_layernorm.bias", {h});
  w.soft_norm = read.floats("mm_soft_emb_norm.weight", {h});
  if (!tensors.soft_norm_includes_one)
    for (float& x : w.soft_norm) x += 1.0f;
  w.projection = read.transposed("mm_input_projection_weight", c.text_hidden, h, matrices);
  return w;
}

}  // namespace kiln
