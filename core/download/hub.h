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
  std::string token_source;                         // where `token` came from, for messages (never the token)
  // A branch, tag or commit. list_repo() resolves it to a commit, and callers download from that
  // commit (HubOptions::revision = RepoListing::commit), so a push in between cannot mix versions.
  std::string revision = "main";
  // Network errors, 408, 429 and 5xx are retried: up to max_attempts requests per listing page or
  // file, waiting backoff_base_s * 2^(n-1) (at most backoff_max_s) unless the server names a wait.
  int max_attempts = 5;
  double backoff_base_s = 1.0;
  double backoff_max_s = 30.0;
  // The hub's CDN refuses a single GET of a file above ~50 GB: larger files are fetched in ranged
  // requests of at most this many bytes (tests make it small).
  uint64_t max_request_bytes = 50'000'000'000ull;
  // Look for a file in the Hugging Face cache (hf_cache.h) before downloading it.
  bool use_hf_cache = true;
};

struct HubToken {
  std::string token;   // trimmed; "" = none found
  std::string source;  // "--token", "HF_TOKEN", a token file's path, ...
};
// The token files huggingface_hub reads, in order: $HF_TOKEN_PATH, $HF_HOME/token,
// $XDG_CACHE_HOME/huggingface/token, ~/.cache/huggingface/token.
std::vector<std::string> hub_token_files();
// `given` (a --token option or the app's setting, named by given_source) when not blank, else
// HF_TOKEN, HUGGING_FACE_HUB_TOKEN, then the first token file that holds one. All trimmed.
HubToken find_hub_token(const std::string& given = "", const std::string& given_source = "--token");

// The endpoint from KILN_HF_ENDPOINT, else HF_ENDPOINT (default https://huggingface.co), the
// token from find_hub_token(token, token_source); the rest HubOptions' defaults.
HubOptions hub_options_from_env(const std::string& token = "", const std::string& token_source = "--token");

struct HubFile {
  std::string path;    // inside the repository, '/'-separated
  uint64_t size = 0;
  std::string sha256;  // lower-case hex of an LFS file (lfs.oid); "" for small git files
  std::string git_oid; // a small git file's blob id (SHA-1 of "blob <size>\0" + bytes); "" for LFS files
};

struct RepoListing {
  std::string commit;          // the 40-hex commit `options.revision` named when listed
  std::vector<HubFile> files;  // sorted by path
};

// "OWNER/REPO[:FILE]" split and checked (names of letters, digits, '.', '_', '-').
struct HubReference {
  std::string repo;  // OWNER/REPO
  std::string file;  // "" when none was named
};
HubReference parse_hub_reference(const std::string& text);

// Where a repository's files go: user_models_dir()/OWNER/REPO, the folder the app's Models page scans.
std::string local_repo_dir(const std::string& repo);

// The commit `options.revision` names now (/api/models/OWNER/REPO/revision/REV's "sha").
std::string resolve_commit(const HubOptions& options, const std::string& repo, std::stop_token cancel = {});

// The repository's files (recursively) at the commit options.revision names now, every page of
// the listing (relative next links followed; a next link to another host is refused with an
// error, never a silently short listing). Refusals throw HubError saying which case it is (see
// hub_errors.h); transient failures are retried like downloads.
RepoListing list_repo(const HubOptions& options, const std::string& repo, std::stop_token cancel = {});
// list_repo(...).files
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
  int attempt = 1;         // this file's request number, 1..max_attempts
  int max_attempts = 1;
  bool retrying = false;   // this report announces attempt `attempt`, starting after retry_in_s
  double retry_in_s = 0;
  std::string retry_reason;  // why the last attempt failed ("HTTP 503", curl's message), "" on the first
  bool verifying = false;    // `done` counts bytes of a copy already on disk (or in the HF cache) being hashed
};
// Bytes hashed so far of a file being verified.
using HashProgress = std::function<void(uint64_t done)>;
using DownloadCallback = std::function<void(const DownloadProgress&)>;

enum class DownloadResult {
  Downloaded,
  Resumed,
  AlreadyPresent,
  FromHfCache,  // found (and verified) in the Hugging Face cache, linked into place: no bytes fetched
};

// Bytes still to fetch for `files` into dest_dir (parts, files already there and, when `repo` is
// given, blobs of the right size in the Hugging Face cache count as had); throws
// HubError(NotEnoughSpace) when the file system holding dest_dir has less free space than that.
uint64_t check_free_space(const std::vector<HubFile>& files, const std::string& dest_dir, const std::string& repo = "");

// Downloads `file` to dest_dir/file.path through dest_dir/file.path.part: a .part left by an
// interrupted or cancelled run is resumed with an HTTP Range request, and so is a transfer that
// fails with a network error, 408, 429 or 5xx (up to options.max_attempts, with backoff). Before
// any transfer, the Hugging Face cache is searched (options.use_hf_cache); a verified copy there is
// hard-linked (else symlinked) into place. Files above options.max_request_bytes are fetched in
// ranges. The size, and the SHA-256 of LFS files or the git SHA-1 of small ones, are checked, the part and its folder synced to disk, then
// it is renamed into place; a mismatch removes the part. An existing file's SHA-256 is checked
// before it is trusted (remembered with its size and mtime in a hidden file beside it, so the
// next run is quick); a wrong one is downloaded again. A stop request ends the transfer with
// kiln::Error("... cancelled") and keeps the part (an empty part is removed).
DownloadResult download_file(const HubOptions& options, const std::string& repo, const HubFile& file,
                             const std::string& dest_dir, const DownloadCallback& progress = {},
                             std::stop_token cancel = {});

}  // namespace kiln
