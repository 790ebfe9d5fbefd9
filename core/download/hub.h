// Models from the Hugging Face hub (or any server that answers like it): list a repository's
// files, download them with progress, resume from a .part file, verify LFS SHA-256, cancel.
// libcurl underneath; no Qt. Every failure is a one-line kiln::Error.
#pragma once

#include <cstdint>
#include <functional>
#include <stop_token>
#include <string>
#include <vector>

namespace kiln {

struct HubOptions {
  std::string endpoint = "https://huggingface.co";  // no trailing slash
  std::string token;                                // "" = anonymous
  std::string revision = "main";
};

// KILN_HF_ENDPOINT (default https://huggingface.co) and HF_TOKEN from the environment.
HubOptions hub_options_from_env();

struct HubFile {
  std::string path;    // inside the repository, '/'-separated
  uint64_t size = 0;
  std::string sha256;  // lower-case hex of an LFS file (lfs.oid); "" for small git files
};

// "OWNER/REPO[:FILE]" split and checked (names of letters, digits, '.', '_', '-').
struct HubReference {
  std::string repo;  // OWNER/REPO
  std::string file;  // "" when none was named
};
HubReference parse_hub_reference(const std::string& text);

// Where a repository's files go: user_models_dir()/OWNER/REPO, the folder the app's Models page scans.
std::string local_repo_dir(const std::string& repo);

// The repository's files (recursively). A gated or private repository without access gives an
// error that tells the user to accept the licence at https://huggingface.co/OWNER/REPO.
std::vector<HubFile> list_repo_files(const HubOptions& options, const std::string& repo, std::stop_token cancel = {});

// The files `kiln pull OWNER/REPO` takes when no file is named: a Hugging Face model folder
// (config, tokenizer, safetensors weights), or the only .gguf file. Throws kiln::Error listing
// the choices when the repository holds several GGUF files, or nothing Kiln can run.
std::vector<HubFile> files_to_pull(const std::vector<HubFile>& listing, const std::string& repo);

// The file named after the colon: the exact path, or else the one GGUF file whose name contains
// it, case-insensitive ("OWNER/REPO:Q4_K_M"). Throws kiln::Error listing the choices otherwise.
HubFile select_file(const std::vector<HubFile>& listing, const std::string& repo, const std::string& name);

struct DownloadProgress {
  std::string file;      // path inside the repository
  uint64_t done = 0;     // bytes on disk so far, including a resumed part
  uint64_t total = 0;    // the file's size
  double bytes_per_s = 0;
};
using DownloadCallback = std::function<void(const DownloadProgress&)>;

enum class DownloadResult { Downloaded, Resumed, AlreadyPresent };

// Downloads `file` to dest_dir/file.path through dest_dir/file.path.part: a .part left by an
// interrupted or cancelled run is resumed with an HTTP Range request. The size, and the SHA-256
// of LFS files, are checked before the file is renamed into place; a mismatch removes the part.
// A stop request ends the transfer with kiln::Error("... cancelled") and keeps the part.
DownloadResult download_file(const HubOptions& options, const std::string& repo, const HubFile& file,
                             const std::string& dest_dir, const DownloadCallback& progress = {},
                             std::stop_token cancel = {});

}  // namespace kiln
