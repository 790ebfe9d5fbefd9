// Content parts: text joined, images decoded from data URLs or (when allowed) fetched.
#include "server/content_parts.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "common/base64.h"
#include "image/image.h"
#include "server/openai_protocol.h"

namespace kiln::server {

using nlohmann::json;

namespace {

ApiError invalid(const std::string& param, const std::string& message) {
  return ApiError(400, message, "invalid_request_error", param);
}

ApiError too_large(const std::string& param, uint64_t limit) {
  return ApiError(413, "The image at " + param + " is larger than the server's limit of " + std::to_string(limit) +
                           " bytes.",
                  "invalid_request_error", param, "image_too_large");
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return out;
}

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && lower(s.substr(0, prefix.size())) == prefix;
}

// "data:image/png;base64,…" → the image's bytes.
std::string data_url_bytes(std::string_view url, const std::string& where, const ImageIntake& intake) {
  const size_t comma = url.find(',');
  if (comma == std::string_view::npos) throw invalid(where, "The data URL at " + where + " has no ',' before its data.");
  const std::string header = lower(url.substr(5, comma - 5));  // after "data:"
  const std::string mime = header.substr(0, header.find(';'));
  if (mime != "image/png" && mime != "image/jpeg" && mime != "image/jpg" && mime != "image/webp")
    throw invalid(where, "The data URL at " + where + " is '" + (mime.empty() ? "text/plain" : mime) +
                             "'; images must be image/png, image/jpeg or image/webp.");
  if (header.size() < 7 || header.compare(header.size() - 7, 7, ";base64") != 0)
    throw invalid(where, "The data URL at " + where + " must carry its image as base64 (';base64,').");
  const std::string_view data = url.substr(comma + 1);
  if (data.size() / 4 * 3 > intake.max_bytes + 3) throw too_large(where, intake.max_bytes);  // before allocating
  std::string bytes;
  if (!decode_base64(data, bytes)) throw invalid(where, "The data URL at " + where + " is not valid base64.");
  if (bytes.empty()) throw invalid(where, "The image at " + where + " is empty.");
  if (bytes.size() > intake.max_bytes) throw too_large(where, intake.max_bytes);
  return bytes;
}

Image image_part(const json& part, const std::string& where, const ImageIntake& intake) {
  // OpenAI sends {"image_url": {"url": …, "detail": …}}; some clients send the URL as a plain string.
  auto it = part.find("image_url");
  const json* url = nullptr;
  if (it != part.end() && it->is_object()) {
    auto u = it->find("url");
    if (u != it->end()) url = &*u;
  } else if (it != part.end()) {
    url = &*it;
  }
  if (!url || !url->is_string() || url->get_ref<const std::string&>().empty())
    throw invalid(where + ".image_url", "An image_url part needs {\"url\": \"data:image/png;base64,…\"}.");
  const std::string& u = url->get_ref<const std::string&>();
  Image image;
  image.name = where;
  if (starts_with_nocase(u, "data:")) {
    image.bytes = data_url_bytes(u, where, intake);
  } else if (starts_with_nocase(u, "http://") || starts_with_nocase(u, "https://")) {
    if (!intake.fetch_remote)
      throw invalid(where, "Remote image URLs are off; start the server with --allow-remote-images, or send the "
                           "image as a data URL (data:image/png;base64,…).");
    image.bytes = intake.fetch_remote(u, intake.max_bytes);
    if (image.bytes.size() > intake.max_bytes) throw too_large(where, intake.max_bytes);
  } else {
    throw invalid(where, "The image URL at " + where + " must be a data: URL (or http(s) with --allow-remote-images).");
  }
  return image;
}

}  // namespace

void check_images(const std::vector<ChatMessage>& messages, const ModelInfo& model, const std::string& model_id,
                  const ImageOptions& limits) {
  for (const ChatMessage& m : messages)
    for (const Image& image : m.images) {
      if (!model.vision)
        throw ApiError(400,
                       "The model '" + model_id + "' cannot see images: it has no vision tower. For a GGUF model, "
                       "start the server with --mmproj FILE (the model's mmproj-*.gguf from llama.cpp's converter).",
                       "invalid_request_error", image.name, "model_without_vision");
      try {
        decode_image(image.bytes, image.name, limits);
      } catch (const Error& e) {
        throw ApiError(400, std::string("The image cannot be used: ") + e.what(), "invalid_request_error", image.name,
                       "invalid_image");
      }
    }
}

MessageContent parse_message_content(const json& content, const std::string& where, const ImageIntake& intake) {
  MessageContent out;
  if (content.is_null()) return out;
  if (content.is_string()) {
    out.text = content.get<std::string>();
    return out;
  }
  if (!content.is_array())
    throw invalid(where + ".content", "'content' must be a string or an array of text and image_url parts.");
  for (size_t i = 0; i < content.size(); ++i) {
    const json& part = content[i];
    const std::string part_where = where + ".content[" + std::to_string(i) + "]";
    if (!part.is_object()) throw invalid(part_where, "Each content part must be an object.");
    auto type = part.find("type");
    const std::string kind = type != part.end() && type->is_string() ? type->get<std::string>() : "";
    if (kind == "text") {
      auto t = part.find("text");
      if (t == part.end() || !t->is_string()) throw invalid(part_where + ".text", "A text part needs a 'text' string.");
      out.text += t->get<std::string>();
    } else if (kind == "image_url") {
      out.images.push_back(image_part(part, part_where, intake));
    } else {
      throw invalid(part_where + ".type", "Content parts must be of type 'text' or 'image_url'.");
    }
  }
  return out;
}

}  // namespace kiln::server
