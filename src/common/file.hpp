// modsign — whole-file reads and atomic writes.
#pragma once

#include <string>

#include "common/result.hpp"

namespace modsign {

/// Read a whole file.  Throws IoError("<path>: <strerror>") on failure.
Bytes read_file(const std::string& path);

/// Write `data` to `path` atomically: a temporary file in the same directory
/// (mode `mode`, or the mode of an existing `path` when `keep_mode`), fsync, rename.
/// On any failure the temporary file is removed and `path` is untouched.
/// Throws IoError naming the file.
void write_file_atomic(const std::string& path, ByteView data, unsigned mode = 0644,
                       bool keep_mode = true);

}  // namespace modsign
