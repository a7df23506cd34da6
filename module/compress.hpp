// modsign's own: recompression of a module as the kernel build does it (not a kernel file)
// The settings are scripts/Makefile.modinst's: `xz --check=crc32 --lzma2=dict=1MiB`,
// `gzip -n`, `zstd` (Linux 7.2.13).
#pragma once

#include "common/result.hpp"
#include "module/decompress.hpp"

namespace modsign::module {

/// Compress `image` as the kernel build does: xz = LZMA2 preset 6 with a 1 MiB
/// dictionary and a CRC32 check (single-threaded, as `xz --check=crc32 --lzma2=dict=1MiB`);
/// gzip = deflate level 6, no name, mtime 0, OS 3 (as `gzip -n`); zstd = level 3 with
/// content size and XXH64 checksum (as `zstd`).  Throws LibraryError on library
/// failure; `format` must not be none.
Bytes compress(ByteView image, Compression format);

}  // namespace modsign::module
