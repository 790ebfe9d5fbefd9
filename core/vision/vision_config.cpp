// Finding a model's vision tower: a Hugging Face folder's config.json "vision_config" and
// preprocessor_config.json, or llama.cpp's mmproj GGUF (clip.* keys). Only headers are read here.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "kiln/types.h"
#include "model/gguf_file.h"
#include "model/mapped_file.h"
#include "vision/vision_encoder.h"
#include "vision/vision_weights.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kMaxJsonBytes = 16u << 20;
constexpr int kMaxSide = 1 << 14;  // no real tower comes near: bounds the sizes a file can ask for

// llama.cpp pools Gemma 3's 64 x 64 patch grid by 4 unless clip.vision.projector.scale_factor says
// otherwise (tools/mtmd/clip.cpp).
constexpr int kGgufDefaultPooling = 4;
// The converter writes that key only for a factor other than 4 that it could compute from
// preprocessor_config.json's image_seq_length (256 when absent); on a grid smaller than 16
// patches a side the computed factor is 0 and nothing is written. Such test-sized towers (the
// tiny fixtures, 8 x 8 patches for 16 tokens) pool by 2.
constexpr int kGgufSmallGridPooling = 2;
constexpr int kGgufSmallGrid = 16;

json read_json(const fs::path& path) {
  const MappedFile file = MappedFile::open(path.string());
  if (file.size() > kMaxJsonBytes) throw Error(path.string() + ": too large for a JSON file");
  try {
    return json::parse(reinterpret_cast<const char*>(file.data()),
                       reinterpret_cast<const char*>(file.data()) + file.size());
  } catch (const json::exception& e) {
    throw Error(path.string() + ": not valid JSON (" + e.what() + ")");
  }
}

int json_int(const json& object, const char* key, int fallback, const std::string& file, const char* where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < -1 || it->get<int64_t>() > (int64_t(1) << 30))
    throw Error(file + ": " + where + key + " is not a sensible integer");
  return it->get<int>();
}

float json_float(const json& object, const char* key, float fallback, const std::string& file, const char* where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_number()) throw Error(file + ": " + where + key + " is not a number");
  return it->get<float>();
}

std::array<float, 3> json_triple(const json& object, const char* key, std::array<float, 3> fallback,
                                 const std::string& file) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (it->is_number()) return {it->get<float>(), it->get<float>(), it->get<float>()};
  if (!it->is_array() || it->size() != 3 || !std::all_of(it->begin(), it->end(), [](const json& v) { return v.is_number(); }))
    throw Error(file + ": " + key + " is not a list of 3 numbers");
  return {(*it)[0].get<float>(), (*it)[1].get<float>(), (*it)[2].get<float>()};
}

// Every size positive and consistent: patches tile the image, heads the width, tokens the grid.
void check_config(const VisionConfig& c, const std::string& file) {
  auto positive = [&](int v, const char* what) {
    if (v <= 0 || v > (1 << 20)) throw Error(file + ": vision " + what + " " + std::to_string(v) + " is not sensible");
  };
  positive(c.image_size, "image size");
  positive(c.patch_size, "patch size");
  positive(c.hidden, "hidden size");
  positive(c.intermediate, "intermediate size");
  positive(c.layers, "layer count");
  positive(c.heads, "head count");
  positive(c.tokens_per_image, "tokens per image");
  positive(c.text_hidden, "projection width");
  if (c.image_size > kMaxSide || c.image_size % c.patch_size != 0)
    throw Error(file + ": vision image size " + std::to_string(c.image_size) + " is not a whole number of " +
                std::to_string(c.patch_size) + "-pixel patches");
  if (c.hidden % c.heads != 0)
    throw Error(file + ": vision hidden size " + std::to_string(c.hidden) + " does not split into " +
                std::to_string(c.heads) + " heads");
  const int grid = c.image_size / c.patch_size;
  const int side = static_cast<int>(std::lround(std::sqrt(double(c.tokens_per_image))));
  if (side * side != c.tokens_per_image || grid % side != 0)
    throw Error(file + ": " + std::to_string(c.tokens_per_image) + " image tokens do not pool a " +
                std::to_string(grid) + " x " + std::to_string(grid) + " patch grid evenly");
  if (!(c.layer_norm_eps > 0) || !(c.norm.rescale > 0) ||
      std::any_of(c.norm.std.begin(), c.norm.std.end(), [](float s) { return !(s != 0) || !std::isfinite(s); }))
    throw Error(file + ": vision layer-norm epsilon, rescale factor and image_std must be non-zero numbers");
}

fs::path folder_of(const std::string& path) {
  std::error_code error;
  fs::path folder = fs::is_directory(path, error) ? fs::path(path) : fs::path(path).parent_path();
  return folder.empty() ? fs::path(".") : folder;
}

// config.json's vision_config (absent: a text-only model) with transformers' defaults for what it
// leaves out (SiglipVisionConfig, Gemma3Config), and preprocessor_config.json's normalization.
std::optional<VisionSource> hugging_face_vision(const Checkpoint& model) {
  const fs::path folder = folder_of(model.path);
  const fs::path config_path = folder / "config.json";
  const std::string file = config_path.string();
  const json config = read_json(config_path);
  auto vision = config.is_object() ? config.find("vision_config") : config.end();
  if (vision == config.end() || vision->is_null()) return std::nullopt;
  if (!vision->is_object()) throw Error(file + ": vision_config is not an object");
  // Text-only copies of a multimodal checkpoint keep its config but drop the tower's tensors.
  if (!folder_has_vision_tensors(folder.string())) return std::nullopt;

  VisionSource source;
  source.path = folder.string();
  VisionConfig& c = source.config;
  const char* in = "vision_config.";
  c.hidden = json_int(*vision, "hidden_size", 768, file, in);
  c.intermediate = json_int(*vision, "intermediate_size", 3072, file, in);
  c.layers = json_int(*vision, "num_hidden_layers", 12, file, in);
  c.heads = json_int(*vision, "num_attention_heads", 12, file, in);
  c.image_size = json_int(*vision, "image_size", 224, file, in);
  c.patch_size = json_int(*vision, "patch_size", 16, file, in);
  c.layer_norm_eps = json_float(*vision, "layer_norm_eps", 1e-6f, file, in);
  c.tokens_per_image = json_int(config, "mm_tokens_per_image", 256, file, "");
  c.boi_token = json_int(config, "boi_token_index", 255999, file, "");
  c.eoi_token = json_int(config, "eoi_token_index", 256000, file, "");
  c.image_token = json_int(config, "image_token_index", 262144, file, "");
  c.text_hidden = model.config.hidden_size;

  const fs::path preprocessor = folder / "preprocessor_config.json";
  std::error_code error;
  if (fs::is_regular_file(preprocessor, error)) {
    const std::string pfile = preprocessor.string();
    const json p = read_json(preprocessor);
    if (!p.is_object()) throw Error(pfile + ": not a JSON object");
    c.norm.mean = json_triple(p, "image_mean", c.norm.mean, pfile);
    c.norm.std = json_triple(p, "image_std", c.norm.std, pfile);
    c.norm.rescale = json_float(p, "rescale_factor", c.norm.rescale, pfile, "");
    // Switched off only by an explicit false (null means the processor's default, true).
    auto off = [&](const char* key) { auto it = p.find(key); return it != p.end() && it->is_boolean() && !it->get<bool>(); };
    if (off("do_rescale")) c.norm.rescale = 1.0f;
    if (off("do_normalize")) c.norm = PixelNorm{{0, 0, 0}, {1, 1, 1}, c.norm.rescale};
  }
  check_config(c, file);
  return source;
}

int gguf_int(const GgufFile& f, const char* key) {
  std::optional<uint64_t> v = f.get_uint(key);
  if (!v) throw Error(f.path() + ": no " + key + " (not a complete mmproj file)");
  if (*v > (1u << 30)) throw Error(f.path() + ": " + key + " is " + std::to_string(*v) + ", not sensible");
  return static_cast<int>(*v);
}

std::array<float, 3> gguf_triple(const GgufFile& f, const char* key, std::array<float, 3> fallback) {
  std::optional<std::vector<float>> v = f.get_float_array(key);
  if (!v) return fallback;
  if (v->size() != 3) throw Error(f.path() + ": " + key + " holds " + std::to_string(v->size()) + " values, not 3");
  return {(*v)[0], (*v)[1], (*v)[2]};
}

VisionSource mmproj_vision(const Checkpoint& model, const std::string& path) {
  const std::shared_ptr<const GgufFile> f = GgufFile::open(path);
  if (f->get_string("general.architecture").value_or("") != "clip")
    throw Error(path + ": not an mmproj file (general.architecture is not \"clip\")");
  if (!f->get_bool("clip.has_vision_encoder").value_or(false)) throw Error(path + ": the mmproj file has no vision encoder");
  std::string_view projector = f->get_string("clip.vision.projector_type").value_or(f->get_string("clip.projector_type").value_or(""));
  if (projector != "gemma3")
    throw Error(path + ": projector type \"" + std::string(projector) + "\", not Gemma 3's (\"gemma3\")");

  VisionSource source;
  source.path = path;
  source.gguf = true;
  VisionConfig& c = source.config;
  c.image_size = gguf_int(*f, "clip.vision.image_size");
  c.patch_size = gguf_int(*f, "clip.vision.patch_size");
  c.hidden = gguf_int(*f, "clip.vision.embedding_length");
  c.intermediate = gguf_int(*f, "clip.vision.feed_forward_length");
  c.layers = gguf_int(*f, "clip.vision.block_count");
  c.heads = gguf_int(*f, "clip.vision.attention.head_count");
  c.layer_norm_eps = static_cast<float>(f->get_float("clip.vision.attention.layer_norm_epsilon").value_or(1e-6));
  c.norm.mean = gguf_triple(*f, "clip.vision.image_mean", c.norm.mean);
  c.norm.std = gguf_triple(*f, "clip.vision.image_std", c.norm.std);
  // The projection's width: the tensor says it (GGUF dims [text_hidden, hidden]), the key may.
  if (const GgufTensorInfo* projection = f->find_tensor("mm.input_projection.weight"); projection && projection->dims.size() == 2)
    c.text_hidden = static_cast<int>(std::min<uint64_t>(projection->dims[0], 1u << 30));
  else
    c.text_hidden = gguf_int(*f, "clip.vision.projection_dim");

  const int grid = c.patch_size > 0 ? c.image_size / c.patch_size : 0;
  int pooling = grid < kGgufSmallGrid ? kGgufSmallGridPooling : kGgufDefaultPooling;
  if (f->find("clip.vision.projector.scale_factor")) pooling = gguf_int(*f, "clip.vision.projector.scale_factor");
  if (pooling <= 0 || grid % std::max(pooling, 1) != 0)
    throw Error(path + ": pooling by " + std::to_string(pooling) + " does not divide the " + std::to_string(grid) +
                "-patch grid");
  c.tokens_per_image = (grid / pooling) * (grid / pooling);
  check_config(c, path);

  if (c.text_hidden != model.config.hidden_size)
    throw Error(path + ": its projector makes " + std::to_string(c.text_hidden) + "-wide embeddings, but the model " +
                model.path + " has hidden size " + std::to_string(model.config.hidden_size) +
                " (an mmproj file of another model)");
  return source;
}

bool is_mmproj_name(const fs::path& file) {
  std::string name = file.filename().string();
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return name.starts_with("mmproj") && name.ends_with(".gguf");
}

// The one mmproj*.gguf beside a GGUF model, as LM Studio keeps them; "" for none or several.
std::string mmproj_beside(const std::string& model_path) {
  const fs::path folder = folder_of(model_path);
  std::error_code error;
  std::string found;
  int count = 0;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    if (!is_mmproj_name(it->path()) || !it->is_regular_file(error)) continue;
    if (fs::path(model_path).filename() == it->path().filename()) continue;
    found = it->path().string();
    ++count;
  }
  return count == 1 ? found : "";
}

}  // namespace

std::optional<VisionSource> find_vision(const Checkpoint& model, const std::string& mmproj) {
  if (!mmproj.empty()) return mmproj_vision(model, mmproj);
  if (model.format != "gguf") return hugging_face_vision(model);
  const std::string beside = mmproj_beside(model.path);
  if (beside.empty()) return std::nullopt;
  return mmproj_vision(model, beside);
}

}  // namespace kiln
