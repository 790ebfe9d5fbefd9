#include "engine/vision_session.h"

#include <chrono>

#include "common/sha256.h"
#include "image/image.h"

namespace kiln {

std::string image_key(const Image& image) {
  Sha256 hash;
  hash.update(image.bytes.data(), image.bytes.size());
  return hash.hex_digest();
}

std::optional<VisionSource> vision_for(const Checkpoint& model, const Tokenizer& tokenizer, const std::string& mmproj) {
  std::optional<VisionSource> found = find_vision(model, mmproj);
  if (!found) return found;
  VisionConfig& c = found->config;
  if (c.boi_token < 0) c.boi_token = tokenizer.piece_to_id("<start_of_image>");
  if (c.eoi_token < 0) c.eoi_token = tokenizer.piece_to_id("<end_of_image>");
  if (c.image_token < 0) c.image_token = tokenizer.piece_to_id("<image_soft_token>");
  for (int32_t id = 0; c.image_token < 0 && id < tokenizer.vocab_size(); ++id)
    if (tokenizer.piece_bytes(id).starts_with("[PAD")) c.image_token = id;
  // The image token is never looked up (its positions take the tower's rows), so it may lie past
  // the embedding's rows.
  if (c.image_token < 0) throw Error(found->path + ": the model's vocabulary has no image token for its vision tower");
  return found;
}

void describe_vision(ModelInfo& info, const std::optional<VisionSource>& vision) {
  info.vision = vision.has_value();
  info.image_tokens = vision ? vision->config.tokens_per_image : 0;
  info.image_size = vision ? vision->config.image_size : 0;
  info.vision_source = vision ? vision->path : "";
}

VisionSession::VisionSession(VisionSource source, const ImageOptions& options, DType matrices, int threads)
    : source_(std::move(source)), options_(options), matrices_(matrices), threads_(threads) {}

VisionSession::~VisionSession() = default;

std::vector<ImageRun> VisionSession::runs_of(const Prompt& prompt) const {
  const int token = source_.config.image_token, per_image = source_.config.tokens_per_image;
  std::vector<ImageRun> runs;
  const std::vector<int32_t>& ids = prompt.tokens;
  for (size_t i = 0; i < ids.size();) {
    if (ids[i] != token) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < ids.size() && ids[end] == token) ++end;
    if ((end - i) % size_t(per_image) != 0)
      throw Error("the prompt has a run of " + std::to_string(end - i) + " image tokens at position " +
                  std::to_string(i) + "; each image takes " + std::to_string(per_image));
    for (; i < end; i += size_t(per_image)) runs.push_back({int(i), per_image, {}, nullptr});
  }
  if (runs.size() != prompt.images.size())
    throw Error("the prompt has room for " + std::to_string(runs.size()) + " image(s) but " +
                std::to_string(prompt.images.size()) + " came with it");
  for (size_t i = 0; i < runs.size(); ++i) runs[i].key = image_key(prompt.images[i]);
  return runs;
}

void VisionSession::embed(ImageRun& run, const Image& image, Spent& spent) {
  for (auto it = cache_.begin(); it != cache_.end(); ++it)
    if (it->key == run.key) {
      run.rows = it->rows;
      cache_.splice(cache_.begin(), cache_, it);
      return;
    }
  const auto start = std::chrono::steady_clock::now();
  const RgbImage decoded = decode_image(image.bytes, image.name, options_);
  if (!encoder_) {
    encoder_ = VisionEncoder::load(source_, matrices_);
    pool_ = std::make_unique<ThreadPool>(threads_);
  }
  const VisionConfig& c = encoder_->config();
  const std::vector<float> pixels = tower_input(decoded, c.image_size, c.norm);
  auto rows = std::make_shared<const std::vector<float>>(encoder_->encode(pixels, *pool_));
  run.rows = rows;
  cache_.push_front({run.key, std::move(rows)});
  if (cache_.size() > kCachedImages) cache_.pop_back();
  ++spent.encoded;
  spent.ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kiln
