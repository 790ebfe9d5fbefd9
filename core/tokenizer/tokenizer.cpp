// SentencePiece behind kiln::Tokenizer. The library embeds its own protobuf-lite, so we only ever
// hand it bytes (LoadFromSerializedProto) and never link the system libprotobuf.
#include "tokenizer/tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <bitset>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <unordered_map>

#include "kiln/types.h"

namespace kiln {

namespace {

// Gemma 3's tokenizer.model is about 4.5 MiB and its tokenizer.json 33 MiB; anything far larger is not a tokenizer and reading
// it whole would be a pointless huge allocation.
constexpr std::uintmax_t kMaxTokenizerFileBytes = 256ull << 20;


// Length of the UTF-8 character starting with `lead` (1 for anything that is not a lead byte).
size_t utf8_char_length(unsigned char lead) {
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  if (lead >= 0xE0) return lead <= 0xEF ? 3 : 1;
  if (lead >= 0xC2) return 2;
  return 1;
}

// "<0xAB>" -> 0xAB; -1 when the piece is not in that form.
int parse_byte_piece(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece.back() != '>') return -1;
  int value = 0;
  for (char c : piece.substr(3, 2)) {
    int digit = (c >= '0' && c <= '9') ? c - '0'
                : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                                         : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

std::string read_tokenizer_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw Error(path + ": tokenizer file not found");
  if (!fs::is_regular_file(status)) throw Error(path + ": tokenizer path is not a file");
  const auto size = fs::file_size(path, ec);
  if (ec) throw Error(path + ": cannot read tokenizer file: " + ec.message());
  if (size > kMaxTokenizerFileBytes)
    throw Error(path + ": not a tokenizer (file is " + std::to_string(size >> 20) +
                " MiB, far larger than any tokenizer)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open tokenizer file");
  std::string bytes(static_cast<size_t>(size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) throw Error(path + ": cannot read tokenizer file");
  return bytes;
}

}  // namespace

struct Tokenizer::Impl {
  std::string origin;
  sentencepiece::SentencePieceProcessor processor;
  int32_t start_of_turn = -1;
  int32_t end_of_turn = -1;
  std::string unknown_surface;           // what decode() shows for <unk>
  std::vector<PieceType> piece_types;    // from the proto: the processor does not tell user-defined pieces
  // Text of special pieces that SentencePiece would match inside plain text (user-defined turn
  // markers). encode() keeps such text literal so user input cannot open or close a turn.
  std::vector<std::string> guarded_markers;
  // Text -> id of every special token that SpecialText::Parse turns into its id.
  std::unordered_map<std::string, int32_t> special_texts;
  std::vector<size_t> special_lengths;   // distinct lengths of special_texts' keys, longest first
  std::bitset<256> special_first_bytes;  // first bytes of special_texts' keys

  void add_special_text(const std::string& text, int32_t id) {
    if (text.empty() || !special_texts.emplace(text, id).second) return;
    special_first_bytes.set(static_cast<unsigned char>(text[0]));
    if (std::find(special_lengths.begin(), special_lengths.end(), text.size()) == special_lengths.end()) {
      special_lengths.push_back(text.size());
      std::sort(special_lengths.rbegin(), special_lengths.rend());
    }
  }

  // The longest special token whose text starts at `at`; {0, -1} when none.
  std::pair<size_t, int32_t> special_at(std::string_view text, size_t at) const {
    if (!special_first_bytes.test(static_cast<unsigned char>(text[at]))) return {0, -1};
    for (size_t length : special_lengths) {
      if (length > text.size() - at) continue;
      auto it = special_texts.find(std::string(text.substr(at, length)));
      if (it != special_texts.end()) return {length, it->second};
    }
    return {0, -1};
  }

  int32_t lookup(std::string_view piece) const {
    const int id = processor.PieceToId(piece);
    if (id < 0 || id >= processor.GetPieceSize()) return -1;
    // PieceToId answers unk_id for any unknown piece: only the real "<unk>" piece maps to it.
    if (id == processor.unk_id() && processor.IdToPiece(id) != piece) return -1;
    return id;
  }

  bool in_range(int32_t id) const { return id >= 0 && id < processor.GetPieceSize(); }

  void encode_plain(std::string_view text, std::vector<int32_t>& out) const {
    if (text.empty()) return;
    std::vector<int> ids;
    const auto status = processor.Encode(text, &ids);
    if (!status.ok()) throw Error(origin + ": cannot tokenize text: " + status.ToString());
    out.insert(out.end(), ids.begin(), ids.end());
  }
};

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::from_file(const std::string& tokenizer_model_path) {
  return from_serialized_proto(read_tokenizer_file(tokenizer_model_path), tokenizer_model_path);
}

Tokenizer Tokenizer::from_serialized_proto(const std::string& bytes, const std::string& origin) {
  auto impl = std::make_unique<Impl>();
  impl->origin = origin;
  if (bytes.empty()) throw Error(origin + ": not a SentencePiece model (empty)");
  const auto status = impl->processor.LoadFromSerializedProto(bytes);
  if (status.ok()) impl->piece_types = sentencepiece_piece_types(bytes);
  if (!status.ok())
    throw Error(origin + ": not a SentencePiece model (" + std::string(status.message()) + ")");
  auto& sp = impl->processor;
  if (sp.GetPieceSize() <= 0) throw Error(origin + ": SentencePiece model has no pieces");
  if (!impl->in_range(sp.unk_id()))
    throw Error(origin + ": SentencePiece model has no <unk> piece");

  impl->start_of_turn = impl->lookup("<start_of_turn>");
  impl->end_of_turn = impl->lookup("<end_of_turn>");
  for (int32_t id : {impl->start_of_turn, impl->end_of_turn}) {
    // Control pieces are never matched in text; user-defined ones are, so those need guarding.
    if (id < 0 || sp.IsControl(id)) continue;
    const std::string& piece = sp.IdToPiece(id);
    if (piece.size() > utf8_char_length(static_cast<unsigned char>(piece[0])))
      impl->guarded_markers.push_back(piece);
  }
  for (int id = 0; id < sp.GetPieceSize(); ++id)
    if (sp.IsControl(id) || sp.IsUnknown(id)) impl->add_special_text(sp.IdToPiece(id), id);
  for (int32_t id : {impl->start_of_turn, impl->end_of_turn})
    if (id >= 0) impl->add_special_text(sp.IdToPiece(id), id);
  std::string unknown;
  if (sp.Decode(std::vector<int>{sp.unk_id()}, &unknown).ok()) impl->unknown_surface = unknown;
  return Tokenizer(std::move(impl));
}

Tokenizer Tokenizer::from_vocabulary(const SentencePieceVocabulary& vocabulary, const std::string& origin) {
  return from_serialized_proto(serialize_sentencepiece_model(vocabulary, origin), origin);
}

Tokenizer Tokenizer::from_tokenizer_json(const std::string& path, const SpecialTokenIds& ids) {
  return from_vocabulary(read_tokenizer_json(read_tokenizer_file(path), path, ids), path);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, SpecialText special) const {
  std::vector<int32_t> ids;
  if (special == SpecialText::Parse) {
    size_t start = 0;
    for (size_t at = 0; at < text.size();) {
      const auto [length, id] = impl_->special_at(text, at);
      if (length == 0) {
        ++at;
        continue;
      }
      impl_->encode_plain(text.substr(start, at - start), ids);
      ids.push_back(id);
      at += length;
      start = at;
    }
    impl_->encode_plain(text.substr(start), ids);
    return ids;
  }
  size_t start = 0;
  while (start < text.size()) {
    // The earliest guarded marker in the rest of the text.
    size_t hit = std::string_view::npos;
    const std::string* marker = nullptr;
    for (const auto& m : impl_->guarded_markers) {
      const size_t at = text.find(m, start);
      if (at < hit) hit = at, marker = &m;
    }
    if (!marker) {
      impl_->encode_plain(text.substr(start), ids);
      break;
    }
    impl_->encode_plain(text.substr(start, hit - start), ids);
    // Split the marker after its first character so SentencePiece sees two plain strings.
    const size_t first = utf8_char_length(static_cast<unsigned char>((*marker)[0]));
    impl_->encode_plain(std::string_view(*marker).substr(0, first), ids);
    impl_->encode_plain(std::string_view(*marker).substr(first), ids);
    start = hit + marker->size();
  }
  return ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
  std::vector<int> checked(ids.begin(), ids.end());
  for (int id : checked)
    if (!impl_->in_range(id))
      throw Error(impl_->origin + ": cannot decode token id " + std::to_string(id) +
                  " (vocabulary has " + std::to_string(vocab_size()) + " pieces)");
  std::string text;
  const auto status = impl_->processor.Decode(checked, &text);
  if (!status.ok()) throw Error(impl_->origin + ": cannot decode tokens: " + status.ToString());
  return text;
}

// Mirrors SentencePiece's decoder piece by piece. (A model with add_dummy_prefix would also drop
// the space of the very first piece in decode(); Gemma's tokenizers have no dummy prefix.)
std::string Tokenizer::piece_bytes(int32_t id) const {
  const auto& sp = impl_->processor;
  if (!impl_->in_range(id))
    throw Error(impl_->origin + ": token id " + std::to_string(id) + " is outside the vocabulary");
  if (sp.IsControl(id)) return {};
  if (sp.IsUnknown(id)) return impl_->unknown_surface;
  const std::string& piece = sp.IdToPiece(id);
  if (sp.IsByte(id)) {
    const int byte = parse_byte_piece(piece);
    if (byte >= 0) return std::string(1, static_cast<char>(byte));
  }
  std::string out;
  out.reserve(piece.size());
  for (size_t i = 0; i < piece.size();) {
    if (std::string_view(piece).substr(i, kSpaceMarker.size()) == kSpaceMarker) {
      out.push_back(' ');
      i += kSpaceMarker.size();
    } else {
      out.push_back(piece[i++]);
    }
  }
  return out;
}

int Tokenizer::vocab_size() const { return impl_->processor.GetPieceSize(); }
int32_t Tokenizer::bos_id() const { return impl_->processor.bos_id(); }
int32_t Tokenizer::eos_id() const { return impl_->processor.eos_id(); }
int32_t Tokenizer::pad_id() const { return impl_->processor.pad_id(); }
int32_t Tokenizer::start_of_turn_id() const { return impl_->start_of_turn; }
int32_t Tokenizer::end_of_turn_id() const { return impl_->end_of_turn; }

bool Tokenizer::is_control(int32_t id) const {
  return impl_->in_range(id) && impl_->processor.IsControl(id);
}

int32_t Tokenizer::piece_to_id(std::string_view piece) const { return impl_->lookup(piece); }

const std::string& Tokenizer::origin() const { return impl_->origin; }

SentencePieceVocabulary Tokenizer::vocabulary() const {
  const auto& sp = impl_->processor;
  SentencePieceVocabulary v;
  v.unk_id = sp.unk_id();
  v.bos_id = sp.bos_id();
  v.eos_id = sp.eos_id();
  v.pad_id = sp.pad_id();
  v.pieces.reserve(static_cast<size_t>(sp.GetPieceSize()));
  for (int id = 0; id < sp.GetPieceSize(); ++id) {
    PieceType type = size_t(id) < impl_->piece_types.size() ? impl_->piece_types[size_t(id)] : PieceType::Normal;
    if (sp.IsUnknown(id)) type = PieceType::Unknown;
    else if (sp.IsControl(id)) type = PieceType::Control;
    else if (sp.IsByte(id)) type = PieceType::Byte;
    else if (sp.IsUnused(id)) type = PieceType::Unused;
    v.pieces.push_back({sp.IdToPiece(id), sp.GetScore(id), type});
  }
  return v;
}

}  // namespace kiln
