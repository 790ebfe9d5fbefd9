// Model -> quantized GGUF: metadata first (copied from a GGUF input, built from config and
// tokenizer for a folder), then the tensor directory, then each tensor converted a slice of rows
// at a time, so memory stays near one slice however large the model.
#include "model/gguf_quantize.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "kiln/types.h"
#include "model/checkpoint.h"
#include "model/gguf_checkpoint.h"
#include "model/gguf_file.h"
#include "model/gguf_model_metadata.h"
#include "model/gguf_writer.h"
#include "quant/convert.h"
#include "quant/kquants.h"
#include "runtime/cpu/thread_pool.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr size_t kSliceBytes = 32u << 20;  // float rows converted at a time

GgmlType ggml_type_of(DType t) {
  switch (t) {
    case DType::F32: return GgmlType::F32;
    case DType::F16: return GgmlType::F16;
    case DType::BF16: return GgmlType::BF16;
    case DType::Q8_0: return GgmlType::Q8_0;
    case DType::Q4_0: return GgmlType::Q4_0;
    case DType::Q2_K: return GgmlType::Q2_K;
    case DType::Q3_K: return GgmlType::Q3_K;
    case DType::Q4_K: return GgmlType::Q4_K;
    case DType::Q5_K: return GgmlType::Q5_K;
    case DType::Q6_K: return GgmlType::Q6_K;
    case DType::Q4_1: return GgmlType::Q4_1;
    case DType::Q5_0: return GgmlType::Q5_0;
    case DType::Q5_1: return GgmlType::Q5_1;
    case DType::IQ4_NL: return GgmlType::IQ4_NL;
    case DType::IQ4_XS: return GgmlType::IQ4_XS;
  }
  return GgmlType::F32;
}

struct Fallback {
  int count = 0;
  std::set<int64_t> row_lengths;
};

struct PlannedTensor {
  std::string canonical;
  const TensorView* view = nullptr;
  int64_t rows = 1, cols = 0;  // a vector is 1 x n
  bool vector = false;
  DType type = DType::F32;
};

// The shape the config gives each tensor ([rows, cols], or [n] for a vector).
std::vector<int64_t> expected_shape(const Gemma3Config& c, const std::string& name) {
  const int64_t h = c.hidden_size, q = int64_t(c.num_heads) * c.head_dim, kv = int64_t(c.num_kv_heads) * c.head_dim;
  auto is = [&name](std::string_view tail) { return name.ends_with(tail); };
  if (name == "embed_tokens.weight" || name == "lm_head.weight") return {c.vocab_size, h};
  if (is("q_norm.weight") || is("k_norm.weight")) return {c.head_dim};
  if (is("norm.weight")) return {h};
  if (is("q_proj.weight")) return {q, h};
  if (is("k_proj.weight") || is("v_proj.weight")) return {kv, h};
  if (is("o_proj.weight")) return {h, q};
  if (is("gate_proj.weight") || is("up_proj.weight")) return {c.intermediate_size, h};
  if (is("down_proj.weight")) return {h, c.intermediate_size};
  return {};
}

// Canonical names in the order llama.cpp's files list them: embedding, layer by layer, final norm.
std::vector<std::string> text_model_tensors(int layers) {
  std::vector<std::string> names = {"embed_tokens.weight"};
  const char* per_layer[] = {
      "input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
      "self_attn.q_norm.weight", "self_attn.k_norm.weight", "self_attn.o_proj.weight",
      "post_attention_layernorm.weight", "pre_feedforward_layernorm.weight", "mlp.gate_proj.weight",
      "mlp.up_proj.weight", "mlp.down_proj.weight", "post_feedforward_layernorm.weight"};
  for (int l = 0; l < layers; ++l)
    for (const char* n : per_layer) names.push_back("layers." + std::to_string(l) + "." + n);
  names.push_back("norm.weight");
  return names;
}

void check_output_location(const std::string& output) {
  if (output.empty()) throw Error("no output file given");
  std::error_code error;
  if (fs::is_directory(output, error)) throw Error(output + ": is a folder; give the GGUF file to write");
  const fs::path parent = fs::path(output).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, error))
    throw Error(output + ": the folder " + parent.string() + " does not exist");
}

std::string model_name(const std::string& input) {
  fs::path p(input);
  if (p.filename().empty()) p = p.parent_path();  // "folder/"
  return p.stem().string();
}

// Drops the source's pages of a tensor already written from this process's memory (they are the
// mapped file's pages: the kernel reads them again if they are ever touched), so memory stays near
// one slice instead of growing to the model's size. Partial pages at either end are kept.
void release_source_pages(const uint8_t* data, size_t bytes) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// One tensor's first t.rows rows (the embedding may lose padding rows) converted slice by slice.
void write_tensor(GgufWriter& writer, const PlannedTensor& t, bool add_one, ThreadPool& pool) {
  const TensorView& v = *t.view;
  const size_t src_row = row_bytes(v.dtype, t.cols), dst_row = row_bytes(t.type, t.cols);
  if (t.vector) {
    std::vector<float> x(static_cast<size_t>(t.cols));
    dequantize_row(v.dtype, v.data, t.cols, x.data());
    if (add_one)
      for (float& f : x) f += 1.0f;
    std::vector<uint8_t> out(dst_row);
    quantize_row(t.type, x.data(), t.cols, out.data());
    writer.write_tensor_data(out.data(), out.size());
    return;
  }
  if (v.dtype == t.type) {  // already in the wanted type (a GGUF input): rounding again could only lose
    writer.write_tensor_data(v.data, size_t(t.rows) * src_row);
    return;
  }
  const int64_t slice = std::max<int64_t>(1, int64_t(kSliceBytes / (size_t(t.cols) * sizeof(float))));
  std::vector<uint8_t> out;
  for (int64_t first = 0; first < t.rows; first += slice) {
    const int64_t n = std::min(slice, t.rows - first);
    out.resize(size_t(n) * dst_row);
    pool.parallel_for(
        n,
        [&](int64_t begin, int64_t end) {
          std::vector<float> x(static_cast<size_t>(t.cols));
          for (int64_t r = begin; r < end; ++r) {
            dequantize_row(v.dtype, v.data + (first + r) * src_row, t.cols, x.data());
            quantize_row(t.type, x.data(), t.cols, out.data() + r * dst_row);
          }
        },
        4);
    writer.write_tensor_data(out.data(), out.size());
  }
}

}  // namespace

QuantizeReport quantize_model(const QuantizeOptions& o) {
  check_output_location(o.output);  // before reading gigabytes
  Checkpoint ck = open_checkpoint(o.input);
  Gemma3Config config = ck.config;
  const TensorSource& source = *ck.tensors;
  QuantizeReport report;
  GgufWriter writer(o.output);

  std::shared_ptr<const GgufFile> gguf;
  SentencePieceVocabulary vocabulary;
  if (ck.format == "gguf") {
    gguf = GgufFile::open(o.input);  // its metadata is the file's own: copied as is
    for (const auto& [key, value] : gguf->metadata())
      if (key != "general.alignment" && key != "general.file_type" && key != "general.quantization_version")
        writer.set_value(key, value);
  } else {
    writer.set_string("general.architecture", "gemma3");
    writer.set_string("general.type", "model");
    writer.set_string("general.name", model_name(o.input));
    vocabulary = open_tokenizer(ck).vocabulary();
    // llama.cpp's converter drops embedding rows past the tokenizer's pieces (padding rows);
    // GGUF readers take the vocabulary size from the token list.
    if (static_cast<int>(vocabulary.pieces.size()) < config.vocab_size) {
      report.notes.push_back("token_embd.weight: " + std::to_string(config.vocab_size - int(vocabulary.pieces.size())) +
                             " rows past the tokenizer's " + std::to_string(vocabulary.pieces.size()) +
                             " pieces are left out, as llama.cpp's converter does");
    } else if (static_cast<int>(vocabulary.pieces.size()) > config.vocab_size) {
      throw Error(o.input + ": the tokenizer has " + std::to_string(vocabulary.pieces.size()) +
                  " pieces but the embedding only " + std::to_string(config.vocab_size) + " rows");
    }
    set_gemma3_metadata(writer, config, report.notes);
    set_sentencepiece_tokenizer(writer, vocabulary, config);
    const fs::path folder = fs::is_directory(o.input) ? fs::path(o.input) : fs::path(o.input).parent_path();
    if (auto chat = read_chat_template(folder.string())) writer.set_string("tokenizer.chat_template", *chat);
  }
  writer.set_u32("general.quantization_version", 2);
  writer.set_u32("general.file_type", llama_file_type(o.mix));

  // The directory: every tensor's type and size before any data.
  std::vector<std::string> names = text_model_tensors(config.num_layers);
  if (source.find("lm_head.weight")) names.push_back("lm_head.weight");  // an untied output projection
  std::vector<PlannedTensor> plan;
  std::map<std::pair<DType, DType>, Fallback> fallbacks;  // (wanted, stored) -> which tensors
  for (const std::string& name : names) {
    PlannedTensor t;
    t.canonical = name;
    t.view = source.find(name);
    if (!t.view) throw Error(o.input + ": tensor '" + name + "' is missing");
    const std::vector<int64_t> shape = expected_shape(config, name);
    if (t.view->shape != shape)
      throw Error(t.view->file + ": tensor '" + name + "' does not have the shape the model's config gives it");
    t.vector = shape.size() == 1;
    t.cols = shape.back();
    t.rows = t.vector ? 1 : shape[0];
    if (t.view->bytes != size_t(t.rows) * row_bytes(t.view->dtype, t.cols))
      throw Error(t.view->file + ": tensor '" + name + "' holds " + std::to_string(t.view->bytes) +
                  " bytes, not what its shape needs");
    if (name == "embed_tokens.weight" && !gguf) t.rows = std::min<int64_t>(t.rows, int64_t(vocabulary.pieces.size()));
    TensorTypeChoice choice = quant_type_for(o.mix, name, t.vector ? std::vector<int64_t>{t.cols} : std::vector<int64_t>{t.rows, t.cols},
                                             config.num_layers);
    t.type = choice.type;
    if (choice.type != choice.wanted) {
      Fallback& f = fallbacks[{choice.wanted, choice.type}];
      ++f.count;
      f.row_lengths.insert(t.cols);
    }
    const std::string gguf_name = gguf_tensor_name(name);
    writer.add_tensor(gguf_name, t.vector ? std::vector<uint64_t>{uint64_t(t.cols)} : std::vector<uint64_t>{uint64_t(t.cols), uint64_t(t.rows)},
                      ggml_type_of(t.type), uint64_t(t.rows) * row_bytes(t.type, t.cols));
    auto it = std::find_if(report.types.begin(), report.types.end(), [&](const auto& p) { return p.first == to_string(t.type); });
    if (it == report.types.end()) report.types.push_back({to_string(t.type), 1});
    else ++it->second;
    plan.push_back(t);
  }
  for (const auto& [types, f] : fallbacks) {
    std::string lengths;
    for (int64_t n : f.row_lengths) lengths += (lengths.empty() ? "" : ", ") + std::to_string(n);
    report.notes.push_back(std::to_string(f.count) + " tensors stored as " + to_string(types.second) + " instead of " +
                           to_string(types.first) + ": their rows (" + lengths + " weights) are not whole " +
                           std::to_string(is_kquant(types.first) ? kSuperBlockSize : kBlockSize) + "-weight blocks" +
                           (types.first == DType::Q5_K ? " (llama.cpp would use Q5_1, which Kiln does not write)"
                                                       : ""));
  }
  const std::set<std::string> written(names.begin(), names.end());
  int dropped = 0;
  for (const std::string& name : source.names()) dropped += written.count(name) ? 0 : 1;
  if (dropped > 0) report.notes.push_back(std::to_string(dropped) + " tensors outside Gemma 3's text model are not written");

  writer.begin();
  ThreadPool pool(o.threads);
  const bool add_one = !source.norms_include_one();
  for (size_t i = 0; i < plan.size(); ++i) {
    write_tensor(writer, plan[i], add_one && plan[i].vector, pool);
    release_source_pages(plan[i].view->data, plan[i].view->bytes);
    if (o.progress) o.progress(int(i + 1), int(plan.size()));
  }
  writer.finish();
  report.tensors = int(plan.size());
  report.bytes = writer.bytes_written();
  return report;
}

}  // namespace kiln
