// The Hugging Face cache that huggingface_hub, transformers and llama.cpp share:
//   <cache>/models--OWNER--REPO/blobs/<etag>                 the bytes (etag = SHA-256 of LFS files,
//                                                             git blob SHA-1 of small ones)
//   <cache>/models--OWNER--REPO/snapshots/<commit>/<path>    relative symlink to ../../blobs/<etag>
//   <cache>/models--OWNER--REPO/refs/<branch>                the commit the branch named when fetched
// Kiln reads it before downloading (a verified copy is linked into place, never fetched again) and
// can download into it, so the gigabytes are shared with the user's other tools.
#pragma once

#include <stop_token>
#include <string>
#include <vector>

#include "download/hub.h"

namespace kiln {

// Where users keep the cache, in huggingface_hub's order: $HF_HUB_CACHE, $HUGGINGFACE_HUB_CACHE
// (its older name), $HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub.
// Duplicates dropped; folders that do not exist are kept (the first is where downloads go).
std::vector<std::string> hf_hub_cache_dirs();

// Where downloads into the shared layout go: the first of hf_hub_cache_dirs(); throws kiln::Error
// when no folder can be named (no HOME and none of the variables set).
std::string hf_download_cache_dir();

// <cache>/models--OWNER--REPO and its snapshot folder for `commit`.
std::string hf_repo_cache_folder(const std::string& cache_dir, const std::string& repo);
std::string hf_snapshot_dir(const std::string& cache_dir, const std::string& repo, const std::string& commit);

// A copy of `file` in any of hf_hub_cache_dirs() (the snapshot of `commit`, else the blob named by
// its hash) whose size and hash match the listing; "" when there is none. Hashes the candidate.
std::string find_in_hf_cache(const std::string& repo, const std::string& commit, const HubFile& file,
                             const HashProgress& hashed = {});

// download_file() into the cache's layout under cache_dir: the blob through <blob>.incomplete, the
// snapshot link for options.revision (which must be the 40-hex commit, as list_repo() gives), and
// refs/<branch> when branch is not empty. A verified copy in another cache folder is linked.
DownloadResult download_into_hf_cache(const HubOptions& options, const std::string& repo, const HubFile& file,
                                      const std::string& cache_dir, const std::string& branch,
                                      const DownloadCallback& progress = {}, std::stop_token cancel = {});

}  // namespace kiln
