// What makes a finished download trustworthy after a crash or power loss: data synced before the
// rename, and a file's SHA-256 checked once and remembered with its size and mtime (a change to
// either forgets it), so an existing file is never trusted by its size alone.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace kiln {

// The hidden file beside `file` that remembers its verified SHA-256: DIR/.NAME.kiln-sha256
std::string verified_marker_path(const std::string& file);
// True when the marker names `sha256` and still matches the file's size and mtime.
bool verified_before(const std::string& file, const std::string& sha256);
// Records that `file` (as it is now) has this SHA-256; failures only cost a re-check next time.
void remember_verified(const std::string& file, const std::string& sha256);

// fsync; throws kiln::Error naming `what` on failure.
void sync_file(std::FILE* f, const std::string& what);
void sync_folder(const std::string& folder);

// Free bytes for an unprivileged user on the file system holding `path` (or its nearest existing
// parent); UINT64_MAX when unknown.
uint64_t free_space_at(const std::string& path);

}  // namespace kiln
