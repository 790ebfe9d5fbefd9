#include "download/file_trust.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kiln/types.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// "sha256 size mtime-ns" of the file as it is now, or "" when it cannot be stat'ed.
std::string stamp(const std::string& file, const std::string& sha256) {
  std::error_code ec;
  const uint64_t size = fs::file_size(file, ec);
  if (ec) return "";
  const auto mtime = fs::last_write_time(file, ec);
  if (ec) return "";
  return sha256 + " " + std::to_string(size) + " " + std::to_string(mtime.time_since_epoch().count());
}

}  // namespace

std::string verified_marker_path(const std::string& file) {
  const fs::path p(file);
  std::string name = ".";  // built by appending: GCC 12 warns falsely on "." + string (-Wrestrict)
  name += p.filename().string();
  name += ".kiln-sha256";
  return (p.parent_path() / name).string();
}

bool verified_before(const std::string& file, const std::string& sha256) {
  std::ifstream in(verified_marker_path(file));
  std::string line;
  if (!in || !std::getline(in, line)) return false;
  const std::string now = stamp(file, sha256);
  return !now.empty() && line == now;
}

void remember_verified(const std::string& file, const std::string& sha256) {
  const std::string now = stamp(file, sha256);
  if (now.empty()) return;
  std::ofstream(verified_marker_path(file), std::ios::trunc) << now << "\n";
}

void sync_file(std::FILE* f, const std::string& what) {
  if (std::fflush(f) != 0 || ::fsync(fileno(f)) != 0)
    throw Error(what + ": cannot write the download to disk (" + std::strerror(errno) + ")");
}

void sync_folder(const std::string& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;  // nothing to sync through; the rename itself still happens
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL) throw Error(folder + ": cannot sync the folder (" + std::strerror(err) + ")");
}

uint64_t free_space_at(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
  if (p.empty()) p = ".";
  const fs::space_info s = fs::space(p, ec);
  return ec ? UINT64_MAX : uint64_t(s.available);
}

}  // namespace kiln
