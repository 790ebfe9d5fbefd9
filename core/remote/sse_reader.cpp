#include "remote/sse_reader.h"

namespace kiln::remote {

bool SseReader::feed(std::string_view bytes) {
  size_t start = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] != '\n') continue;
    partial_.append(bytes.substr(start, i - start));
    start = i + 1;
    std::string text = std::move(partial_);
    partial_.clear();
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (!line(text)) return false;
  }
  partial_.append(bytes.substr(start));
  return true;
}

bool SseReader::finish() {
  if (!partial_.empty()) {
    std::string text = std::move(partial_);
    partial_.clear();
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (!line(text)) return false;
  }
  return dispatch();
}

bool SseReader::line(std::string_view text) {
  if (text.empty()) return dispatch();
  if (text.front() == ':') return true;  // comment / keep-alive
  const size_t colon = text.find(':');
  const std::string_view field = text.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "data") {
    if (has_data_) data_ += '\n';
    data_.append(value);
    has_data_ = true;
  } else if (field != "event" && field != "id" && field != "retry") {
    ++foreign_lines_;
  }
  return true;
}

bool SseReader::dispatch() {
  if (!has_data_) return true;
  std::string data = std::move(data_);
  data_.clear();
  has_data_ = false;
  ++events_;
  return on_event_(data);
}

}  // namespace kiln::remote
