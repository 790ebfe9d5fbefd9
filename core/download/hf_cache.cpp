// Reading and writing the Hugging Face cache's layout (see hf_cache.h); the bytes come from
// hub_download.cpp, this file only decides where they live and links snapshots to blobs.
#include "download/hf_cache.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "download/file_trust.h"
#include "download/hub_internal.h"
#include "kiln/types.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool is_commit(const std::string& s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c); });
}

// The snapshot entry points at the blob relatively, as huggingface_hub makes it, so the cache
// folder can be moved: "../../blobs/<etag>" plus one "../" per folder inside the repository.
std::string relative_blob_link(const std::string& path, const std::string& etag) {
  std::string up = "../../";
  for (char c : path)
    if (c == '/') up += "../";
  return up + "blobs/" + etag;
}

void write_ref(const fs::path& repo_folder, const std::string& branch, const std::string& commit) {
  if (branch.empty() || !detail::safe_relative_path(branch) || is_commit(branch)) return;
  const fs::path ref = repo_folder / "refs" / branch;
  std::error_code ec;
  fs::create_directories(ref.parent_path(), ec);
  std::ofstream(ref, std::ios::trunc) << commit;  // no newline, as huggingface_hub writes it
}

}  // namespace

std::vector<std::string> hf_hub_cache_dirs() {
  std::vector<std::string> dirs;
  auto add = [&](const std::string& d) {
    if (!d.empty() && std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
  };
  add(env("HF_HUB_CACHE"));
  add(env("HUGGINGFACE_HUB_CACHE"));
  if (const std::string h = env("HF_HOME"); !h.empty()) add(h + "/hub");
  if (const std::string x = env("XDG_CACHE_HOME"); !x.empty()) add(x + "/huggingface/hub");
  if (const std::string home = env("HOME"); !home.empty()) add(home + "/.cache/huggingface/hub");
  return dirs;
}

std::string hf_download_cache_dir() {
  const std::vector<std::string> dirs = hf_hub_cache_dirs();
  if (dirs.empty()) throw Error("no Hugging Face cache folder: set HF_HUB_CACHE or HF_HOME");
  return dirs.front();
}

std::string hf_repo_cache_folder(const std::string& cache_dir, const std::string& repo) {
  detail::check_repo(repo);
  const size_t slash = repo.find('/');
  return (fs::path(cache_dir) / ("models--" + repo.substr(0, slash) + "--" + repo.substr(slash + 1))).string();
}

std::string hf_snapshot_dir(const std::string& cache_dir, const std::string& repo, const std::string& commit) {
  return (fs::path(hf_repo_cache_folder(cache_dir, repo)) / "snapshots" / commit).string();
}

std::string find_in_hf_cache(const std::string& repo, const std::string& commit, const HubFile& file,
                             const HashProgress& hashed) {
  const std::string etag = detail::expected_digest(file);
  if (etag.empty() || !detail::safe_relative_path(file.path)) return "";
  for (const std::string& dir : hf_hub_cache_dirs()) {
    const fs::path folder = hf_repo_cache_folder(dir, repo);
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) continue;
    std::vector<fs::path> candidates;
    if (is_commit(commit)) candidates.push_back(folder / "snapshots" / commit / file.path);
    candidates.push_back(folder / "blobs" / etag);
    for (const fs::path& c : candidates)
      if (detail::verified_copy(c.string(), file, false, hashed)) return c.string();  // never writes into their cache
  }
  return "";
}

DownloadResult download_into_hf_cache(const HubOptions& options, const std::string& repo, const HubFile& file,
                                      const std::string& cache_dir, const std::string& branch,
                                      const DownloadCallback& progress, std::stop_token cancel) {
  if (!is_commit(options.revision))
    throw Error(repo + ": the Hugging Face cache files downloads under a commit; list the repository first");
  if (!detail::safe_relative_path(file.path)) throw Error("'" + file.path + "' is not a file path inside a repository");
  const std::string etag = detail::expected_digest(file);
  if (etag.empty())
    throw Error(repo + ":" + file.path + ": the listing gives no hash, which the Hugging Face cache names files by");
  const fs::path folder = hf_repo_cache_folder(cache_dir, repo);
  const fs::path blob = folder / "blobs" / etag;
  const fs::path link = folder / "snapshots" / options.revision / file.path;
  std::error_code ec;
  fs::create_directories(blob.parent_path(), ec);
  fs::create_directories(link.parent_path(), ec);
  if (ec) throw Error(link.parent_path().string() + ": cannot create the folder (" + ec.message() + ")");

  DownloadResult result = DownloadResult::AlreadyPresent;
  const HashProgress hashed = detail::verify_reporter(file, progress);
  if (!detail::verified_copy(blob.string(), file, true, hashed)) {
    HubOptions elsewhere = options;
    elsewhere.use_hf_cache = false;
    const std::string other = options.use_hf_cache ? find_in_hf_cache(repo, options.revision, file, hashed) : "";
    if (!other.empty() && fs::weakly_canonical(other, ec) != fs::weakly_canonical(blob, ec)) {
      detail::link_into_place(other, blob.string());
      remember_verified(blob.string(), etag);
      result = DownloadResult::FromHfCache;
    } else {
      result = detail::transfer(elsewhere, repo, file, blob.string(), blob.string() + ".incomplete", progress, cancel);
    }
  }
  // The snapshot entry, replaced when it points anywhere else.
  const std::string target = relative_blob_link(file.path, etag);
  if (!(fs::is_symlink(link, ec) && fs::read_symlink(link, ec).string() == target)) {
    fs::remove(link, ec);
    fs::create_symlink(target, link, ec);
    if (ec) throw Error(link.string() + ": cannot link the snapshot to its blob (" + ec.message() + ")");
  }
  write_ref(folder, branch, options.revision);
  return result;
}

}  // namespace kiln
