// kiln pull OWNER/REPO[:FILE]: fetch a model from the Hugging Face hub into the folder the app's
// Models page scans (or, with --hf-cache, into the Hugging Face cache's layout), pinned to one
// commit, with a progress line, retries, resume and checksum verification; files the Hugging Face
// cache already holds are verified and linked instead of fetched.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli/common.h"
#include "download/hf_cache.h"
#include "download/hub.h"

namespace {

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1000 && u < 4) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

void print_listing(const std::vector<kiln::HubFile>& files) {
  for (const auto& f : files)
    std::printf("%10s  %s%s\n", human_bytes(f.size).c_str(), f.path.c_str(), f.sha256.empty() ? "" : "  (LFS)");
}

}  // namespace

void add_pull_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("pull", "Download a model from the Hugging Face hub (OWNER/REPO or OWNER/REPO:FILE)");
  auto reference = std::make_shared<std::string>();
  auto token = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>();
  auto list_only = std::make_shared<bool>(false);
  auto hf_cache = std::make_shared<bool>(false);
  auto revision = std::make_shared<std::string>("main");
  auto retry_wait = std::make_shared<double>(kiln::HubOptions{}.backoff_base_s);
  cmd->add_option("model", *reference, "OWNER/REPO, or OWNER/REPO:FILE for one file (a GGUF name or quant tag)")->required();
  cmd->add_option("--token", *token,
                  "Hugging Face access token (default: $HF_TOKEN, $HUGGING_FACE_HUB_TOKEN, then the token file of "
                  "`hf auth login`)");
  cmd->add_option("--dir", *dir, "Destination folder (default: the user models folder/OWNER/REPO)");
  cmd->add_flag("--list", *list_only, "Only list the repository's files with their sizes");
  cmd->add_flag("--hf-cache", *hf_cache,
                "Download into the Hugging Face cache ($HF_HUB_CACHE, $HF_HOME/hub or ~/.cache/huggingface/hub), "
                "shared with Python tools and llama.cpp, instead of Kiln's models folder");
  cmd->add_option("--revision", *revision, "Branch, tag or commit to download")->capture_default_str();
  cmd->add_option("--retry-wait", *retry_wait, "Seconds before the first retry of a failed request; doubles each time")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->callback([=] {
    kiln::HubOptions options = kiln::hub_options_from_env(*token, "--token");
    options.backoff_base_s = *retry_wait;
    options.revision = *revision;
    const kiln::HubReference ref = kiln::parse_hub_reference(*reference);
    // Which token is used, never the token itself: a stale one in a forgotten file is a common surprise.
    std::fprintf(stderr, "%s\n", options.token.empty() ? "token: none (anonymous)"
                                                      : ("token: from " + options.token_source).c_str());
    kiln::cli::InterruptScope interrupt;
    const kiln::RepoListing pinned = kiln::list_repo(options, ref.repo, interrupt.token());
    const std::vector<kiln::HubFile>& listing = pinned.files;
    // Every file comes from this commit, even if the branch moves while the pull runs.
    std::fprintf(stderr, "revision: %s = commit %s\n", options.revision.c_str(), pinned.commit.c_str());
    const std::string branch = options.revision == pinned.commit ? "" : options.revision;
    options.revision = pinned.commit;
    if (*list_only) {
      print_listing(listing);
      return;
    }
    const std::vector<kiln::HubFile> files =
        ref.file.empty() ? kiln::files_to_pull(listing, ref.repo)
                         : std::vector<kiln::HubFile>{kiln::select_file(listing, ref.repo, ref.file)};
    const std::string cache_dir = *hf_cache ? kiln::hf_download_cache_dir() : "";
    const std::string dest = *hf_cache     ? kiln::hf_snapshot_dir(cache_dir, ref.repo, pinned.commit)
                             : dir->empty() ? kiln::local_repo_dir(ref.repo)
                                            : *dir;
    if (*hf_cache && !dir->empty()) throw kiln::Error("--hf-cache and --dir name two destinations; pass one");
    kiln::check_free_space(files, dest, ref.repo);  // before the first byte, not when the disk is full
    const bool tty = isatty(STDERR_FILENO);
    for (const kiln::HubFile& f : files) {
      auto show = [&](const kiln::DownloadProgress& p) {
        if (p.retrying) {  // a line of its own, on a terminal or not: it explains a pause
          std::fprintf(stderr, "%s%s: %s; retrying in %.0f s (attempt %d of %d)\n", tty ? "\r\033[K" : "",
                       p.file.c_str(), p.retry_reason.c_str(), std::ceil(p.retry_in_s), p.attempt,
                       p.max_attempts);
          return;
        }
        if (!tty) return;
        if (p.verifying) {  // hashing a copy already here or in the Hugging Face cache
          std::fprintf(stderr, "\r\033[K%s  checking the copy on disk  %3d%%", p.file.c_str(),
                       p.total ? int(100.0 * double(p.done) / double(p.total)) : 100);
          return;
        }
        const int percent = p.total ? int(100.0 * double(p.done) / double(p.total)) : 100;
        std::fprintf(stderr, "\r\033[K%s  %3d%%  %s / %s  %s/s", p.file.c_str(), percent, human_bytes(p.done).c_str(),
                     human_bytes(p.total).c_str(), human_bytes(uint64_t(p.bytes_per_s)).c_str());
        if (p.attempt > 1) std::fprintf(stderr, "  (attempt %d of %d)", p.attempt, p.max_attempts);
      };
      const kiln::DownloadResult r =
          *hf_cache ? kiln::download_into_hf_cache(options, ref.repo, f, cache_dir, branch, show, interrupt.token())
                    : kiln::download_file(options, ref.repo, f, dest, show, interrupt.token());
      if (tty) std::fprintf(stderr, "\r\033[K");
      const char* how = r == kiln::DownloadResult::AlreadyPresent ? "already here, verified"
                        : r == kiln::DownloadResult::FromHfCache ? "found in the Hugging Face cache, verified, linked"
                        : r == kiln::DownloadResult::Resumed     ? "resumed, verified"
                                                                 : "downloaded, verified";
      std::fprintf(stderr, "%s  %s  (%s)\n", f.path.c_str(), human_bytes(f.size).c_str(), how);
    }
    // The path the user can pass to --model: the folder, or the GGUF file itself.
    const bool one_gguf = files.size() == 1 && files[0].path.size() > 5 &&
                          files[0].path.compare(files[0].path.size() - 5, 5, ".gguf") == 0;
    std::printf("%s\n", (one_gguf ? dest + "/" + files[0].path : dest).c_str());
  });
}
