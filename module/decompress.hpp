// mirrors kernel/module/decompress.c module_decompress (per format: module_gzip_decompress, module_xz_decompress, module_zstd_decompress), Linux 7.2.13
// Compressed modules (.ko.xz, .ko.zst, .ko.gz): streaming decompression with a size bound.
// The signature sits inside the compressed stream and covers the decompressed image
// (kernel-semantics.md §5.4); kernel/module/decompress.c decompresses before
// module_sig_check.  Recompression is in module/compress.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace modsign::module {

/// Compression formats recognised by magic bytes (never by file name).
enum class Compression { none, xz, zstd, gzip };
/// The format whose magic starts `file`: xz FD 37 7A 58 5A 00, zstd 28 B5 2F FD (or a
/// skippable frame 5X 2A 4D 18, as pzstd writes), gzip 1F 8B.
Compression detect_compression(ByteView file);
std::string_view compression_name(Compression c);

/// Default bound on a decompressed module (1 GiB); `--max-size` changes it.
inline constexpr std::uint64_t kDefaultMaxDecompressed = std::uint64_t{1} << 30;

/// xz integrity check IDs (xz file format §2.1.1.2).
enum class XzCheck : int { none = 0, crc32 = 1, crc64 = 4, sha256 = 10, other = -1 };
std::string_view xz_check_name(XzCheck c);

/// A module file as read: the image the kernel checks, and how it was stored.
struct ModuleImage {
  Bytes image;                                   ///< decompressed bytes (or the file itself)
  Compression compression = Compression::none;
  std::uint64_t stored_size = 0;                 ///< size of the file as stored
  std::optional<XzCheck> xz_check;               ///< for xz
  /// Non-empty when the kernel's in-kernel decompressor (module_decompress) would refuse
  /// this stream although userspace tools accept it: e.g. an xz check other than CRC32 or
  /// none (lib/xz/xz_dec_stream.c: XZ_OPTIONS_ERROR, so EINVAL).
  std::string kernel_decompress_problem;
};

/// Decompress `in`, whose format detect_compression() gives, streaming in 64 KiB steps.
/// Errors (all EINVAL, as module_decompress reports a failed decompression): corrupt or
/// truncated stream, data after the end of the (single) stream, output larger than
/// `max_size` ("decompressed size exceeds ..."), unsupported format, an xz dictionary or
/// zstd window needing more memory than twice `max_size` (at least 64 MiB, at most 2 GiB:
/// with the default bound every window the kernel accepts) — "zstd window needs more
/// than N bytes of memory ...", so a stream header cannot make modsign reserve more.
Result<Bytes> decompress(ByteView in, Compression format, std::uint64_t max_size = kDefaultMaxDecompressed);

/// Read a module stored plain or compressed.  Errors as decompress(); the xz check type
/// and the kernel decompressor's view are filled in.
Result<ModuleImage> open_module(ByteView file, std::uint64_t max_size = kDefaultMaxDecompressed);

/// Compress `image` as the kernel build does: xz = LZMA2 preset 6 with a 1 MiB
/// dictionary and a CRC32 check (single-threaded, as `xz --check=crc32 --lzma2=dict=1MiB`);
/// gzip = deflate level 6, no name, mtime 0, OS 3 (as `gzip -n`); zstd = level 3 with
/// content size and XXH64 checksum (as `zstd`).  Throws std::runtime_error on library
/// failure; `format` must not be none.
}  // namespace modsign::module
