// OpenAI's message content: a string, or an array of parts ({"type": "text"} and
// {"type": "image_url", "image_url": {"url": …}}), turned into a ChatMessage's text and images.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/types.h"

namespace kiln::server {

// How a request's images are taken in.
struct ImageIntake {
  uint64_t max_bytes = ImageOptions{}.max_bytes;  // a larger image (decoded from base64, or fetched) gets 413
  // Fetches a remote http(s) image (at most max_bytes; throws ApiError when it cannot). Null:
  // remote URLs are refused with a 400 (the server's default, --allow-remote-images turns it on).
  std::function<std::string(const std::string& url, uint64_t max_bytes)> fetch_remote;
};

struct MessageContent {
  std::string text;           // the text parts, joined
  std::vector<Image> images;  // in order; each named by its JSON path ("messages[0].content[1]")
};

// `content`: the message's "content" value (null: empty). `where`: "messages[i]", for errors.
// Throws ApiError: 400 for a malformed part, a data URL that is not base64 PNG/JPEG/WebP, or a
// refused remote URL; 413 for an image over max_bytes.
MessageContent parse_message_content(const nlohmann::json& content, const std::string& where,
                                     const ImageIntake& intake);

// Before a request with images is queued (HTTP thread): a model without vision gets a 400 that
// says so, and so does an image that does not decode (corrupt, truncated, empty, too many pixels:
// the decoder's message, which names the image). The engine decodes it again when it runs; this
// check keeps a bad image from being answered with a 200 whose stream then fails.
void check_images(const std::vector<ChatMessage>& messages, const ModelInfo& model, const std::string& model_id,
                  const ImageOptions& limits);

}  // namespace kiln::server
