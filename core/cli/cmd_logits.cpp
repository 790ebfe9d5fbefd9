// kiln logits / kiln tokenize: the two commands scripts rely on, with exact output formats.
#include <cstdio>
#include <sstream>

#include "cli/common.h"
#include "model/checkpoint.h"
#include "tokenizer/tokenizer.h"

namespace kiln::cli {
namespace {

std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      long v = std::stol(item, &used);
      if (used != item.size() || v < 0 || v > INT32_MAX) throw std::invalid_argument(item);
      ids.push_back(int32_t(v));
    } catch (const std::exception&) {
      throw Error("--tokens: '" + item + "' is not a token id");
    }
  }
  if (ids.empty()) throw Error("--tokens: no token ids given");
  return ids;
}

}  // namespace

void add_logits_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("logits", "Print {\"logits\": [[...], ...]}, one row per input position");
  auto model = std::make_shared<ModelFlags>();
  auto tokens = std::make_shared<std::string>();
  auto prefill = std::make_shared<int>(0);
  auto images = std::make_shared<std::vector<std::string>>();
  add_model_flags(*cmd, *model, "f32");
  cmd->add_option("--tokens", *tokens, "Comma-separated token ids, e.g. 2,17,9")->required();
  cmd->add_option("--image", *images,
                  "Image file (repeatable): fills the next run of the model's image token in --tokens, in order");
  cmd->add_option("--prefill", *prefill, "Feed the first K tokens as one batch, the rest one at a time (default all)");
  cmd->callback([=] {
    Prompt prompt{parse_ids(*tokens), {}};
    for (const std::string& path : *images) prompt.images.push_back(read_image_file(path));
    auto engine = load_engine(*model, true);
    const size_t known_notes = engine->info().notes.size();
    const auto rows = engine->logits(prompt, *prefill);
    // What loading the vision tower had to say (it stayed on the CPU, and why): stderr, as load's.
    for (size_t i = known_notes; i < engine->info().notes.size(); ++i)
      std::fprintf(stderr, "note: %s\n", engine->info().notes[i].c_str());
    std::string out = "{\"logits\": [";
    char buf[32];
    for (size_t r = 0; r < rows.size(); ++r) {
      out += r ? ", [" : "[";
      for (size_t v = 0; v < rows[r].size(); ++v) {
        std::snprintf(buf, sizeof buf, v ? ", %.7g" : "%.7g", rows[r][v]);
        out += buf;
      }
      out += "]";
    }
    out += "]}\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  });
}

void add_tokenize_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("tokenize", "Print {\"ids\": [...]} for a text (no BOS added)");
  auto model = std::make_shared<ModelFlags>();
  auto text = std::make_shared<std::string>();
  auto literal = std::make_shared<bool>(false);
  cmd->add_option("-m,--model", model->model, "Model folder or .gguf file");
  cmd->add_option("--text", *text, "The text")->required();
  cmd->add_flag("--no-parse-special", *literal, "Take special-token text (<start_of_turn>, <bos>) as plain text");
  cmd->callback([=] {
    // Only the tokenizer is needed: no weights are read.
    const std::string path = model->model.empty() ? default_model_path() : model->model;
    if (path.empty()) throw Error("no model given and no bundled default model is installed");
    Checkpoint ck = open_checkpoint_header(path);
    const Tokenizer tokenizer = open_tokenizer(ck);
    const auto ids = tokenizer.encode(*text, *literal ? SpecialText::Literal : SpecialText::Parse);
    std::string out = "{\"ids\": [";
    for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
    out += "]}\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  });
}

}  // namespace kiln::cli
