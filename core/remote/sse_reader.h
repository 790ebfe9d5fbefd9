// Server-sent events as OpenAI-style streams use them: "data: <payload>" lines, events separated
// by a blank line, ":" comment lines (keep-alives). Bytes arrive in arbitrary pieces; a line or a
// UTF-8 character may be split anywhere.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace kiln::remote {

class SseReader {
 public:
  // Called with each complete event's data (several data lines joined with '\n'). Returns false
  // to stop reading; feed() then returns false too.
  using OnEvent = std::function<bool(const std::string& data)>;

  explicit SseReader(OnEvent on_event) : on_event_(std::move(on_event)) {}

  bool feed(std::string_view bytes);
  // The stream ended: an event without its closing blank line still counts (servers that close
  // right after the last data line). Returns false when on_event stopped reading.
  bool finish();
  // Bytes seen that were not part of any event line ("data:", "event:", "id:", "retry:", ":"):
  // a peer answering something other than an event stream.
  bool saw_foreign_lines() const { return foreign_lines_ > 0; }
  int events() const { return events_; }

 private:
  bool line(std::string_view text);
  bool dispatch();

  OnEvent on_event_;
  std::string partial_;  // a line not yet ended
  std::string data_;     // the current event's data so far
  bool has_data_ = false;
  int foreign_lines_ = 0;
  int events_ = 0;
};

}  // namespace kiln::remote
