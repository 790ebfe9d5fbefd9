// The engine API: the one seam the CLI, the desktop app and the server use.
//
// An Engine owns one loaded model, its KV cache and its backend. It is not shared between
// threads: one thread (the app's worker, the server's inference thread) calls it, and any
// thread may cancel through the std::stop_token in the options it passed.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kiln/types.h"

namespace kiln {

class Engine {
 public:
  // Loads a model; throws kiln::Error with a one-line message on any problem.
  static std::unique_ptr<Engine> load(const LoadOptions& options);
  // Facts about a model without loading its weights (reads config and headers only).
  static ModelInfo inspect(const std::string& path);
  // What a load would refuse, found without reading a weight: config, tokenizer, and every tensor
  // present with its shape and size (a truncated file included). Throws kiln::Error as load does;
  // the app runs it before letting go of the model in use.
  static ModelInfo check(const std::string& path);

  virtual ~Engine() = default;

  virtual const ModelInfo& info() const = 0;

  // Text generation from a raw prompt (BOS is added). Text arrives through on_text.
  virtual GenerationStats generate(const std::string& prompt, const GenerateOptions& options,
                                   const TokenCallback& on_text) = 0;
  // Chat: the messages are rendered with Gemma's turn format; generation stops at the end of turn.
  // The KV cache is reused for the longest common prefix with the previous call.
  virtual GenerationStats chat(const std::vector<ChatMessage>& messages, const GenerateOptions& options,
                               const TokenCallback& on_text) = 0;

  // Tokens in, logits out: one row of vocab floats per position from `first_row` on (a 262k
  // vocabulary makes every row 1 MB, so callers that score a window's second half ask for that
  // half only). The first `prefill` tokens go in as one batch (all of them when prefill <= 0 or
  // >= size), the rest one at a time.
  // With images, the prompt's image-token runs take their embeddings, and attention within each
  // image is bidirectional (as transformers runs Gemma 3). An image the model cannot see, or a
  // count of images that does not match the runs, is an Error naming the image.
  virtual std::vector<std::vector<float>> logits(const Prompt& prompt, int prefill = 0, int first_row = 0) = 0;
  std::vector<std::vector<float>> logits(std::span<const int32_t> tokens, int prefill = 0, int first_row = 0) {
    return logits(Prompt{{tokens.begin(), tokens.end()}, {}}, prefill, first_row);
  }

  // parse_special: special-token text becomes the token (raw prompts); false keeps it as text.
  // BOS is not added twice when the text starts with one.
  virtual std::vector<int32_t> tokenize(const std::string& text, bool add_bos, bool parse_special = true) const = 0;
  virtual std::string detokenize(std::span<const int32_t> ids) const = 0;
  // Chat messages as the prompt the model sees (with BOS and the open model turn; images expanded
  // to their image-token runs). Messages with images on a model without vision: an Error that says so.
  virtual Prompt chat_prompt(const std::vector<ChatMessage>& messages) const = 0;
  std::vector<int32_t> chat_tokens(const std::vector<ChatMessage>& messages) const {
    return chat_prompt(messages).tokens;
  }

  // ---- Parallel generation: slots (the server's --parallel) ----
  // A slot is a sequence with its own KV cache and position. step_slots() decodes every busy slot
  // together: one forward pass over one token of each, so each weight is read once a step. Slot 0
  // shares its cache with generate(), chat() and logits(), which refuse to run while it is busy.
  // Callbacks of a slot's generation run inside slot_start() and step_slots(), on this thread.
  //
  // Makes `count` slots (at least 1) and returns how many there are: fewer where the backend decodes
  // one sequence at a time (then requests take turns in slot 0). Throws Error when memory lacks.
  // Slots beyond `count` are dropped, so none may be busy then.
  virtual int open_slots(int count) = 0;
  virtual int slot_count() const = 0;
  virtual bool slot_busy(int slot) const = 0;
  // How many leading tokens of `prompt` the slot would take from its cache (0 when none): the
  // caller gives a request the free slot that reuses the most.
  // An image run counts as reused only where the cache holds the same image.
  virtual int slot_reuse(int slot, const Prompt& prompt) const = 0;
  int slot_reuse(int slot, std::span<const int32_t> tokens) const {
    return slot_reuse(slot, Prompt{{tokens.begin(), tokens.end()}, {}});
  }
  // Tokens the slot's cache holds (what a request that reuses little of it would throw away).
  virtual int slot_cached_tokens(int slot) const = 0;
  // Starts a generation in a free slot from a prompt (chat_prompt(), or tokenize()'s tokens).
  // step_slots() prefills what the slot's cache lacks, a chunk a step, then decodes; its text and
  // stats come out of step_slots(). Throws Error (a prompt that does not fit, a bad schema) with
  // the slot left free.
  virtual void slot_start(int slot, const Prompt& prompt, const GenerateOptions& options, TokenCallback on_text) = 0;
  void slot_start(int slot, const std::vector<int32_t>& tokens, const GenerateOptions& options, TokenCallback on_text) {
    slot_start(slot, Prompt{tokens, {}}, options, std::move(on_text));
  }
  // One step of every busy slot: a chunk of a starting slot's prompt goes in (so a long prompt does
  // not stall the others for its whole prefill), each decoding slot samples its next token and shows
  // its text, then those tokens go through one batched forward pass. Returns the generations that ended (their slots are free again);
  // a cancelled one (GenerateOptions::cancel) ends at its slot's next step.
  struct SlotResult {
    int slot = 0;
    GenerationStats stats;
    std::string error;  // non-empty: the generation failed (stats hold what it did before)
  };
  virtual std::vector<SlotResult> step_slots() = 0;

  // Per-op timing of following generations (CPU timers; GPU timestamps on Vulkan).
  virtual void set_profiling(bool enabled) = 0;
  // The per-op timings gathered since the last call while profiling (what step_slots() ran; a
  // generate() or chat() hands its own in GenerationStats::profile).
  virtual std::vector<OpTiming> take_profile() = 0;
  // Forget the KV cache (the next call prefills from scratch).
  virtual void reset() = 0;
};

// The released Gemma 3 text-model shapes ("gemma3-270m" ... "gemma3-27b") and what each takes:
// its shape and bytes at each precision, as inspect gives them for files (no path; for catalogues).
std::vector<std::string> released_models();
ModelInfo released_model_info(const std::string& name);  // throws kiln::Error for an unknown name

// The version string of this build ("0.1.0").
std::string version();

// The bundled default model's folder (installed, or in the source tree for a developer build),
// or "" when there is none. Used whenever the user names no model.
std::string default_model_path();

// Where downloaded and user models live: $XDG_DATA_HOME/kiln/models (~/.local/share/kiln/models).
std::string user_models_dir();

}  // namespace kiln
