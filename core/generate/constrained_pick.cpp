#include "generate/constrained_pick.h"

#include <array>
#include <limits>

#include "kiln/types.h"

namespace kiln {

namespace {

bool allowed(int32_t id, const grammar::JsonMatcher& matcher, const std::vector<std::string>& pieces,
             const std::function<bool(int32_t)>& is_end) {
  if (id < 0 || static_cast<size_t>(id) >= pieces.size()) return false;
  if (is_end(id)) return matcher.complete();
  const std::string& piece = pieces[static_cast<size_t>(id)];
  return !piece.empty() && matcher.accepts(piece);
}

}  // namespace

void mask_refused(std::span<float> logits, const grammar::JsonMatcher& matcher, const std::vector<std::string>& pieces,
                  const std::function<bool(int32_t)>& is_end) {
  // Most tokens fail on their first byte: which bytes may come next is found once (256 checks),
  // and only tokens that pass it are walked whole.
  std::array<bool, 256> first{};
  for (int b = 0; b < 256; ++b) first[static_cast<size_t>(b)] = matcher.accepts(std::string(1, static_cast<char>(b)));
  const bool end_ok = matcher.complete();
  const size_t n = std::min(logits.size(), pieces.size());
  // One scratch matcher assigned over and over: its frames and strings keep their storage, so a
  // token's walk allocates nothing (a fresh copy each time costs several times more at 262k tokens).
  grammar::JsonMatcher walker = matcher;
  for (size_t id = 0; id < n; ++id) {
    const std::string& piece = pieces[id];
    bool ok;
    if (piece.empty()) {
      ok = end_ok && is_end(static_cast<int32_t>(id));
    } else if (!first[static_cast<unsigned char>(piece[0])]) {
      ok = false;
    } else if (piece.size() == 1) {
      ok = true;
    } else {
      walker = matcher;
      ok = walker.feed(piece);
    }
    if (!ok) logits[id] = -std::numeric_limits<float>::infinity();
  }
  for (size_t id = n; id < logits.size(); ++id) logits[id] = -std::numeric_limits<float>::infinity();
}

int32_t pick_constrained(Sampler& sampler, std::span<const float> logits, std::span<const int32_t> history,
                         const grammar::JsonMatcher& matcher, const std::vector<std::string>& pieces,
                         const std::function<bool(int32_t)>& is_end, std::vector<float>& scratch,
                         ConstrainedPickStats* stats) {
  if (stats) ++stats->steps;
  scratch.assign(logits.begin(), logits.end());
  const int32_t first = sampler.sample(scratch, history);
  if (allowed(first, matcher, pieces, is_end)) return first;
  if (stats) ++stats->full_masks;
  scratch.assign(logits.begin(), logits.end());
  mask_refused(scratch, matcher, pieces, is_end);
  const int32_t next = sampler.sample(scratch, history);
  if (!allowed(next, matcher, pieces, is_end))
    throw Error("constrained output: no token of the vocabulary can continue the JSON document");
  return next;
}

}  // namespace kiln
