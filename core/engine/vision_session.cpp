#include "engine/vision_session.h"

#include <chrono>

#include "common/sha256.h"
#include "image/image.h"
#include "vision/vision_weights.h"
#ifdef KILN_HAVE_VULKAN
#include "runtime/vulkan/vision_tower_gpu.h"
#endif

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

VisionSession::VisionSession(VisionSource source, const ImageOptions& options, DType matrices, int threads,
                             VisionPlacement placement)
    : source_(std::move(source)), options_(options), matrices_(matrices), threads_(threads), placement_(placement) {}

// On Vulkan when the text model is there; a tower the device cannot take (no memory, ...) runs on
// the CPU instead, with a note saying why.
std::unique_ptr<VisionEncoder> VisionSession::make_encoder(std::vector<std::string>& notes) const {
#ifdef KILN_HAVE_VULKAN
  if (placement_.vulkan) {
    SiglipWeights weights = load_siglip_weights(source_, matrices_);  // a bad file is an error anywhere
    try {
      return make_vulkan_vision_encoder(std::move(weights), {placement_.vulkan_device, placement_.allow_cpu_device});
    } catch (const Error& e) {  // the upload freed the host copies as it went: the CPU reads them again
      notes.push_back(std::string("the vision tower runs on the CPU: ") + e.what());
    }
  }
#else
  (void)notes;
#endif
  return VisionEncoder::load(source_, matrices_);
}

VisionSession::~VisionSession() = default;

const RgbImage& VisionSession::decoded(const Image& image, const std::string& key) const {
  if (decoded_key_ != key) {
    decoded_key_.clear();
    decoded_ = decode_image(image.bytes, image.name, options_);
    crops_ = options_.pan_and_scan ? pan_and_scan_crops(decoded_) : std::vector<RgbImage>{};
    decoded_key_ = key;
  }
  return decoded_;
}

int VisionSession::views(const Image& image) const { return views(image, image_key(image)); }

int VisionSession::views(const Image& image, const std::string& key) const {
  if (!options_.pan_and_scan) return 1;
  decoded(image, key);
  return 1 + int(crops_.size());
}

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
    for (; i < end; i += size_t(per_image)) runs.push_back({int(i), per_image, 0, 0, {}, nullptr});
  }
  // Each image's key (a hash of its file) and view count, worked out once.
  std::vector<std::string> keys;
  std::vector<int> counts;
  size_t wanted = 0;
  for (const Image& image : prompt.images) {
    keys.push_back(image_key(image));
    counts.push_back(views(image, keys.back()));
    wanted += size_t(counts.back());
  }
  if (runs.size() != wanted)
    throw Error("the prompt has room for " + std::to_string(runs.size()) + " image(s) but " +
                std::to_string(prompt.images.size()) + " came with it" +
                (wanted != prompt.images.size() ? " (" + std::to_string(wanted) + " with pan-and-scan crops)" : ""));
  size_t r = 0;
  for (size_t i = 0; i < prompt.images.size(); ++i) {
    for (int v = 0; v < counts[i]; ++v, ++r) {
      runs[r].image = int(i);
      runs[r].view = v;
      runs[r].key = v == 0 ? keys[i] : keys[i] + "/crop" + std::to_string(v);
    }
  }
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
  const RgbImage& whole = decoded(image, run.key.substr(0, run.key.find('/')));  // the file's key
  if (run.view > int(crops_.size())) throw Error(image.name + ": has no crop " + std::to_string(run.view));
  const RgbImage& view = run.view == 0 ? whole : crops_[size_t(run.view - 1)];
  if (!encoder_) {
    encoder_ = make_encoder(spent.notes);
    pool_ = std::make_unique<ThreadPool>(threads_);
  }
  const VisionConfig& c = encoder_->config();
  const std::vector<float> pixels = tower_input(view, c.image_size, c.norm);
  auto rows = std::make_shared<const std::vector<float>>(encoder_->encode(pixels, *pool_));
  run.rows = rows;
  cache_.push_front({run.key, std::move(rows)});
  if (cache_.size() > kCachedImages) cache_.pop_back();
  ++spent.encoded;
  spent.ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kiln
