// A model's eyes while it is loaded: the vision tower, read on the first image (text-only use
// costs nothing for it), and the embeddings of recent images, so an image is encoded once per
// conversation however many turns repeat it.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/types.h"
#include "quant/dtype.h"
#include "runtime/cpu/thread_pool.h"
#include "tokenizer/tokenizer.h"
#include "vision/vision_encoder.h"

namespace kiln {

// One image's place in a prompt: a run of image tokens and what fills it.
struct ImageRun {
  int pos = 0;        // the run's first position
  int count = 0;      // VisionConfig::tokens_per_image
  int image = 0;      // which of the prompt's images
  int view = 0;       // 0: the whole image; k > 0: its k-th pan-and-scan crop
  std::string key;    // the view's identity (a hash of the file, the view): equal keys, equal embeddings
  std::shared_ptr<const std::vector<float>> rows;  // [count][text_hidden]; null until encoded
};

// Where the tower runs: on the CPU, or on the Vulkan device the text model runs on (chosen again
// from the same request: vk::choose_device picks the same device for the same arguments).
struct VisionPlacement {
  bool vulkan = false;
  int vulkan_device = -1;          // LoadOptions::vulkan_device
  bool allow_cpu_device = false;   // lavapipe, as the text model was allowed it
};

class VisionSession {
 public:
  VisionSession(VisionSource source, const ImageOptions& options, DType matrices, int threads,
                VisionPlacement placement = {});
  ~VisionSession();

  const VisionConfig& config() const { return source_.config; }
  const VisionSource& source() const { return source_; }

  // How many runs an image takes: 1, or with pan-and-scan 1 + its crops (decodes the image).
  int views(const Image& image) const;
  int views(const Image& image, const std::string& key) const;  // key: image_key(image), already worked out

  // The runs of the image token in `prompt`, one per view of each image in order (a run of
  // k * tokens_per_image tokens holds k). Throws Error when runs and images do not match.
  std::vector<ImageRun> runs_of(const Prompt& prompt) const;

  // Fills run.rows for `image` (decoding, resizing and running the tower unless the image is cached).
  // Throws Error naming the image for a file that is not a usable image.
  struct Spent {
    int encoded = 0;
    double ms = 0;
    std::vector<std::string> notes;  // the tower was meant for the GPU and runs on the CPU: why
  };
  void embed(ImageRun& run, const Image& image, Spent& spent);

 private:
  VisionSource source_;
  ImageOptions options_;
  DType matrices_;
  int threads_;
  VisionPlacement placement_;
  std::unique_ptr<VisionEncoder> encoder_;  // null until the first image
  std::unique_ptr<VisionEncoder> make_encoder(std::vector<std::string>& notes) const;
  std::unique_ptr<ThreadPool> pool_;
  // Recently encoded images, most recent first.
  struct Cached {
    std::string key;
    std::shared_ptr<const std::vector<float>> rows;
  };
  std::list<Cached> cache_;
  static constexpr size_t kCachedImages = 16;
  // Pan-and-scan: the last image decoded, by key, and its crops (views() and embed() both need them).
  mutable std::string decoded_key_;
  mutable RgbImage decoded_;
  mutable std::vector<RgbImage> crops_;
  const RgbImage& decoded(const Image& image, const std::string& key) const;
};

// The model's tower (vision/vision_encoder.h find_vision) with the chat format's token ids filled in
// from the tokenizer where the files do not give them (GGUF): <start_of_image>, <end_of_image>, and
// for the image token <image_soft_token>, else Gemma 3's rule that it is the first id past the
// SentencePiece pieces (the first "[PAD…]" of a padded GGUF vocabulary). nullopt: text only.
std::optional<VisionSource> vision_for(const Checkpoint& model, const Tokenizer& tokenizer, const std::string& mmproj);

// ModelInfo's vision fields (vision, image_tokens, image_size, vision_source) for a tower or none.
void describe_vision(ModelInfo& info, const std::optional<VisionSource>& vision);

// The identity ImageRun::key holds for an image's bytes.
std::string image_key(const Image& image);

}  // namespace kiln
