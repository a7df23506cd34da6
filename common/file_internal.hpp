// modsign — what common/file.cpp (reads, CommitBatch) and common/atomic_file.cpp
// (AtomicFile, commit_together) share; not installed.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/file.hpp"

namespace modsign::file_detail {

/// Every temporary file of AtomicFile / CommitBatch that exists now (see
/// remove_temporary_files_and_freeze()), guarded by tmp_mu().
std::mutex& tmp_mu();
std::set<std::string>& tmp_names();
/// Forgets `tmp` (renamed into place or removed); takes tmp_mu().
void forget_tmp(const std::string& tmp);

/// "<path>: <what>: <strerror(errno)>".
std::string sys_error(const std::string& path, const char* what);
/// open() failed (errno): "<path>: <strerror>", with a hint for a blacklist hash entry
/// ("tbs:<hex>", "bin:<hex>") given where a file name belongs.
std::string open_error(const std::string& path);
/// "is a directory", "is a FIFO, not a regular file", ...
const char* kind(mode_t m);

/// Renames each part's temporary file over its target, all or none: with more than one
/// part, each existing target is first kept under a hard link in its directory, and a
/// failed rename puts back every target already replaced.  Before any rename, every
/// part's required identities are checked.  Holds tmp_mu() throughout, so that a signal's
/// cleanup (remove_temporary_files_and_freeze) waits for the group.  On failure the
/// temporary files are removed and the message names the file; returns "" on success.
std::string rename_group(const std::vector<CommitPart>& parts);

}  // namespace modsign::file_detail
