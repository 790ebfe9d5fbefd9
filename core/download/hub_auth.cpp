// Tokens and the endpoint from where Hugging Face users already keep them, in huggingface_hub's
// order, so a desktop-launched app (which never sees a shell's HF_TOKEN) finds `hf auth login`'s file.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "download/hub.h"

namespace kiln {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Pasted tokens often carry a newline or spaces; the hub refuses them as invalid.
std::string trimmed(const std::string& s) {
  const char* ws = " \t\r\n\v\f";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::string text(4096, '\0');  // a token is ~40 characters; never read a stray big file whole
  in.read(text.data(), std::streamsize(text.size()));
  text.resize(size_t(in.gcount()));
  return text;
}

}  // namespace

std::vector<std::string> hub_token_files() {
  std::vector<std::string> paths;
  if (const std::string p = env("HF_TOKEN_PATH"); !p.empty()) paths.push_back(p);
  if (const std::string h = env("HF_HOME"); !h.empty()) paths.push_back(h + "/token");
  if (const std::string x = env("XDG_CACHE_HOME"); !x.empty()) paths.push_back(x + "/huggingface/token");
  if (const std::string home = env("HOME"); !home.empty()) paths.push_back(home + "/.cache/huggingface/token");
  return paths;
}

HubToken find_hub_token(const std::string& given, const std::string& given_source) {
  if (std::string t = trimmed(given); !t.empty()) return {t, given_source};
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"})
    if (std::string t = trimmed(env(name)); !t.empty()) return {t, name};
  for (const std::string& path : hub_token_files())
    if (std::string t = trimmed(read_small_file(path)); !t.empty()) return {t, path};
  return {};
}

HubOptions hub_options_from_env(const std::string& token, const std::string& token_source) {
  HubOptions o;
  // Kiln's own variable wins over the one mirrors set for every Hugging Face tool.
  if (std::string e = trimmed(env("KILN_HF_ENDPOINT")); !e.empty()) o.endpoint = e;
  else if (std::string e2 = trimmed(env("HF_ENDPOINT")); !e2.empty()) o.endpoint = e2;
  while (!o.endpoint.empty() && o.endpoint.back() == '/') o.endpoint.pop_back();
  const HubToken t = find_hub_token(token, token_source);
  o.token = t.token;
  o.token_source = t.source;
  return o;
}

}  // namespace kiln
