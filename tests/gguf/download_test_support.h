// What the hub download tests share: random "weights", options pointing at a stand-in with
// retries in milliseconds, and small helpers that read errors and listings.
#pragma once

#include <QtTest>
#include <fstream>
#include <functional>
#include <random>

#include "download/hub.h"
#include "download/hub_errors.h"
#include "hub_stand_in.h"
#include "kiln/types.h"

namespace kiln::test {

inline std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (char& c : s) c = char(gen() & 0xff);
  return s;
}

// Retries wait milliseconds here, so a test of five attempts still takes well under a second.
inline HubOptions options_for(const HubStandIn& hub, const std::string& token = "") {
  HubOptions o;
  o.endpoint = hub.base();
  o.token = token;
  o.token_source = "--token";
  o.backoff_base_s = 0.01;
  o.backoff_max_s = 0.05;
  return o;
}

inline HubErrorKind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const HubError& e) {
    return e.kind;
  } catch (const Error&) {
  }
  return HubErrorKind::Other;
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

inline HubFile listed(const HubStandIn& hub, const std::string& repo, const std::string& path, const std::string& token = "") {
  for (const HubFile& f : list_repo_files(options_for(hub, token), repo))
    if (f.path == path) return f;
  qFatal("%s not listed", path.c_str());
  return {};
}

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace kiln::test
