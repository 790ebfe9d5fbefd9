// Opening a Hugging Face model folder: config.json, tokenizer.model and the weights, either one
// model.safetensors or shards listed in model.safetensors.index.json. Weights stay mapped.
#include "model/checkpoint.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>

#include "kiln/types.h"
#include "model/gguf_checkpoint.h"
#include "model/mapped_file.h"
#include "model/safetensors.h"
#include "tokenizer/tokenizer_json.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kConfigName = "config.json";
constexpr const char* kTokenizerName = "tokenizer.model";
constexpr const char* kTokenizerJsonName = "tokenizer.json";  // used when there is no tokenizer.model
constexpr const char* kWeightsName = "model.safetensors";
constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kGenerationConfigName = "generation_config.json";  // optional
constexpr size_t kMaxJsonFileBytes = 64u << 20;  // configs and indexes are kilobytes; refuse junk

// The one place where a .gguf path leaves this file: the GGUF reader (model/gguf_checkpoint.h).
Checkpoint open_gguf(const std::string& path, bool header_only) {
  return open_gguf_checkpoint(path, header_only);
}

bool is_gguf_path(const std::string& path) {
  if (path.size() < 5) return false;
  std::string tail = path.substr(path.size() - 5);
  for (char& c : tail) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return tail == ".gguf";
}

std::string read_text_file(const fs::path& path) {
  const MappedFile file = MappedFile::open(path.string());
  if (file.size() > kMaxJsonFileBytes) {
    throw Error(path.string() + ": " + std::to_string(file.size()) + " bytes, too large for a JSON file");
  }
  return std::string(reinterpret_cast<const char*>(file.data()), file.size());
}

bool is_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

// Hub name -> canonical name (tensor_source.h); nullopt for tensors outside the text model.
std::optional<std::string> canonical_name(std::string_view hub_name) {
  // Longest prefixes first: "language_model.model." is the released multimodal layout,
  // "model.language_model." the one transformers >= 4.52 writes, "model." the text-only one.
  for (std::string_view prefix : {"language_model.model.", "model.language_model.", "model.", "language_model."}) {
    if (hub_name.starts_with(prefix)) {
      hub_name.remove_prefix(prefix.size());
      break;
    }
  }
  // The vision tower and projector are not run; lm_head is the embedding (tied) when present.
  for (std::string_view skipped : {"vision_tower.", "multi_modal_projector.", "lm_head"}) {
    if (hub_name.starts_with(skipped)) return std::nullopt;
  }
  return std::string(hub_name);
}

class SafetensorsSource : public TensorSource {
 public:
  // Takes the shard (its mapping lives as long as this source) and files its tensors by canonical name.
  void add_shard(SafetensorsFile shard) {
    shards_.push_back(std::move(shard));
    for (const TensorView& view : shards_.back().tensors()) {
      std::optional<std::string> name = canonical_name(view.name);
      if (!name) continue;
      auto [it, inserted] = tensors_.try_emplace(*name, view);
      if (!inserted) {
        throw Error(view.file + ": tensor '" + view.name + "' is also stored as '" + hub_names_[*name] +
                    "' in " + it->second.file);
      }
      it->second.name = *name;
      hub_names_[*name] = view.name;
    }
  }

  const TensorView* find(const std::string& canonical) const override {
    auto it = tensors_.find(canonical);
    return it == tensors_.end() ? nullptr : &it->second;
  }

  void release(const TensorView& t, size_t offset, size_t bytes) const override {
    bytes = std::min(bytes, t.bytes - std::min(offset, t.bytes));
    for (const SafetensorsFile& shard : shards_) shard.mapping().release(t.data + offset, bytes);
  }

  std::vector<std::string> names() const override {
    std::vector<std::string> result;
    result.reserve(tensors_.size());
    for (const auto& entry : tensors_) result.push_back(entry.first);
    return result;
  }

 private:
  std::vector<SafetensorsFile> shards_;
  std::map<std::string, TensorView> tensors_;      // canonical name -> view (name rewritten)
  std::map<std::string, std::string> hub_names_;   // canonical name -> name in the file
};

struct ModelFolder {
  fs::path folder;
  fs::path config;
  fs::path tokenizer;
  fs::path weights;  // model.safetensors, or the index when sharded
  bool sharded = false;
};

ModelFolder locate_model_folder(const std::string& path) {
  if (path.empty()) throw Error("no model path given");
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!fs::exists(status)) throw Error(path + ": no such file or folder");

  ModelFolder model;
  // A file inside the folder (config.json, a shard) means its folder.
  model.folder = fs::is_directory(status) ? fs::path(path) : fs::path(path).parent_path();
  if (model.folder.empty()) model.folder = ".";
  const std::string folder = model.folder.string();

  model.config = model.folder / kConfigName;
  if (!is_file(model.config)) throw Error(folder + ": no " + kConfigName);
  // A single file wins over an index, as in transformers.
  model.weights = model.folder / kWeightsName;
  if (!is_file(model.weights)) {
    model.weights = model.folder / kIndexName;
    model.sharded = true;
    if (!is_file(model.weights)) {
      throw Error(folder + ": no " + kWeightsName + " or " + kIndexName + " (no weights)");
    }
  }
  model.tokenizer = model.folder / kTokenizerName;
  if (!is_file(model.tokenizer)) model.tokenizer = model.folder / kTokenizerJsonName;
  if (!is_file(model.tokenizer))
    throw Error(folder + ": no " + kTokenizerName + " or " + kTokenizerJsonName + " (no tokenizer)");
  return model;
}

// weight_map: tensor name -> shard file name. Each shard is mapped once; every tensor the index
// promises must be in the shard it names.
void add_sharded_weights(const ModelFolder& model, SafetensorsSource& source) {
  const std::string index_path = model.weights.string();
  json index;
  try {
    index = json::parse(read_text_file(model.weights));
  } catch (const json::parse_error& error) {
    throw Error(index_path + ": not valid JSON (at byte " + std::to_string(error.byte) + ")");
  } catch (const json::exception& error) {  // a number past double's range, say
    throw Error(index_path + ": not valid JSON (" + std::string(error.what()) + ")");
  }
  auto weight_map = index.is_object() ? index.find("weight_map") : index.end();
  if (!index.is_object() || weight_map == index.end() || !weight_map->is_object()) {
    throw Error(index_path + ": no weight_map object");
  }
  std::map<std::string, std::vector<std::string>> tensors_by_shard;
  for (const auto& [tensor, shard] : weight_map->items()) {
    const std::string shard_name = shard.is_string() ? shard.get<std::string>() : shard.dump();
    const fs::path shard_path(shard_name);
    // Only plain file names: an index must not reach outside its folder.
    if (!shard.is_string() || shard_name.empty() || shard_path.filename() != shard_path ||
        shard_name == "." || shard_name == "..") {
      throw Error(index_path + ": weight_map gives tensor '" + tensor + "' the shard " + shard_name +
                  ", not a file name in the model folder");
    }
    tensors_by_shard[shard_name].push_back(tensor);
  }
  if (tensors_by_shard.empty()) throw Error(index_path + ": weight_map is empty");

  for (const auto& [shard_name, tensors] : tensors_by_shard) {
    const fs::path shard_path = model.folder / shard_name;
    if (!is_file(shard_path)) {
      throw Error(shard_path.string() + ": missing (listed in " + std::string(kIndexName) + ")");
    }
    SafetensorsFile shard = SafetensorsFile::open(shard_path.string());
    for (const std::string& tensor : tensors) {
      if (shard.find(tensor) == nullptr) {
        throw Error(shard_path.string() + ": no tensor '" + tensor + "' (" + kIndexName + " places it here)");
      }
    }
    source.add_shard(std::move(shard));
  }
}

// generation_config.json's end-of-sequence ids join config.json's (transformers stops at either);
// its sampling settings become the model's defaults.
void read_generation_config(const fs::path& path, Checkpoint& checkpoint) {
  if (!is_file(path)) return;
  checkpoint.generation = parse_generation_config(read_text_file(path), path.string());
  Gemma3Config& c = checkpoint.config;
  bool added = false;
  for (int id : checkpoint.generation.eos_token_ids) {
    if (id >= c.vocab_size)
      throw Error(path.string() + ": eos_token_id " + std::to_string(id) + " is outside the vocabulary of " +
                  std::to_string(c.vocab_size));
    if (std::find(c.eos_token_ids.begin(), c.eos_token_ids.end(), id) == c.eos_token_ids.end()) {
      c.eos_token_ids.push_back(id);
      added = true;
    }
  }
  if (added) c.origins["eos_token_ids"] += std::string(c.origins.count("eos_token_ids") ? " and " : "") +
                                          kGenerationConfigName + ": eos_token_id";
}

Checkpoint open_folder(const std::string& path, bool header_only) {
  const ModelFolder model = locate_model_folder(path);
  Checkpoint checkpoint;
  checkpoint.path = path;
  checkpoint.format = "safetensors";
  checkpoint.config = parse_gemma3_config(read_text_file(model.config), model.config.string());
  checkpoint.tokenizer_path = model.tokenizer.string();
  read_generation_config(model.folder / kGenerationConfigName, checkpoint);
  if (header_only) return checkpoint;

  auto source = std::make_unique<SafetensorsSource>();
  if (model.sharded) {
    add_sharded_weights(model, *source);
  } else {
    source->add_shard(SafetensorsFile::open(model.weights.string()));
  }
  // Shapes are load_weights' business; without the embedding nothing can run, so say so here.
  if (source->find("embed_tokens.weight") == nullptr) {
    throw Error(model.weights.string() + ": no embed_tokens.weight tensor (the token embedding)");
  }
  checkpoint.tensors = std::move(source);
  return checkpoint;
}

}  // namespace

Checkpoint open_checkpoint(const std::string& path) {
  if (is_gguf_path(path)) return open_gguf(path, /*header_only=*/false);
  return open_folder(path, /*header_only=*/false);
}

Checkpoint open_checkpoint_header(const std::string& path) {
  if (is_gguf_path(path)) return open_gguf(path, /*header_only=*/true);
  return open_folder(path, /*header_only=*/true);
}

Tokenizer open_tokenizer(const Checkpoint& checkpoint) {
  if (!checkpoint.tokenizer_proto.empty()) return Tokenizer::from_serialized_proto(checkpoint.tokenizer_proto, checkpoint.path);
  if (fs::path(checkpoint.tokenizer_path).filename() == kTokenizerJsonName) {
    // tokenizer.json carries no BOS/EOS of its own that the model agrees with; config.json does.
    const Gemma3Config& c = checkpoint.config;
    const std::string& path = checkpoint.tokenizer_path;
    SentencePieceVocabulary vocabulary =
        read_tokenizer_json(read_text_file(path), path, {c.bos_token_id, c.eos_token_ids.front(), c.pad_token_id});
    // Added tokens past the embedding (transformers adds "<bos>", "<eos>", "<mask>" to vocabularies
    // that name them otherwise) could never be fed to the model: such text stays text.
    if (vocabulary.pieces.size() > static_cast<size_t>(c.vocab_size)) {
      for (size_t id = c.vocab_size; id < vocabulary.pieces.size(); ++id)
        if (vocabulary.pieces[id].type != PieceType::Control && vocabulary.pieces[id].type != PieceType::UserDefined &&
            vocabulary.pieces[id].type != PieceType::Unused)
          throw Error(path + ": token " + std::to_string(id) + " '" + vocabulary.pieces[id].text +
                      "' is past the model's vocabulary of " + std::to_string(c.vocab_size));
      vocabulary.pieces.resize(c.vocab_size);
    }
    return Tokenizer::from_vocabulary(vocabulary, path);
  }
  return Tokenizer::from_file(checkpoint.tokenizer_path);
}

}  // namespace kiln
