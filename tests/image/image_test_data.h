// The files tests/tools/image_reference.py wrote into tests/data/images, read for the image tests.
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace image_test {

inline const std::string kImages = KILN_TEST_DATA "/images/";

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path + " (run tests/tools/image_reference.py)");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline nlohmann::json reference() { return nlohmann::json::parse(read_file(kImages + "reference.json")); }

// FNV-1a, 64 bits: the script's hash of outputs too large to store.
inline uint64_t fnv1a64(const uint8_t* data, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ data[i]) * 0x100000001b3ull;
  return h;
}

// The message of what `f` throws, or "" when it returns.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

}  // namespace image_test
