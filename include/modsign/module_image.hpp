// modsign — how a module file is stored and the image the kernel's signature check reads
// (kernel/module/decompress.c module_decompress, Linux 7.2.13).  Plain data, shared by
// module.hpp and verdict.hpp; the library's module layer uses the same definitions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "modsign/export.hpp"
#include "modsign/result.hpp"

namespace modsign {

/// Compression formats, recognised by magic bytes (never by file name): xz FD 37 7A 58 5A
/// 00, zstd 28 B5 2F FD (or a skippable frame 5X 2A 4D 18, as pzstd writes), gzip 1F 8B.
enum class Compression { none, xz, zstd, gzip };
/// "none", "xz", "zstd", "gzip".
MODSIGN_API std::string_view compression_name(Compression c);

/// xz integrity check IDs (xz file format 1.2.1 §2.1.1.2).
enum class XzCheck : int { none = 0, crc32 = 1, crc64 = 4, sha256 = 10, other = -1 };
/// "none", "CRC32", "CRC64", "SHA-256", "other".
MODSIGN_API std::string_view xz_check_name(XzCheck c);

/// Largest module modsign reads, and the default bound on a decompressed module (every
/// `max_size` option, `--max-size`): 1 GiB.  The kernel's own limit for a module image is
/// far smaller; a bigger input is refused before it is read.
inline constexpr std::uint64_t kMaxModuleSize = std::uint64_t{1} << 30;

/// A module file as read: the image the kernel checks, and how it was stored.
struct ModuleImage {
  Bytes image;  ///< decompressed bytes (or the file itself)
  Compression compression = Compression::none;
  std::uint64_t stored_size = 0;    ///< size of the file as stored, bytes
  std::optional<XzCheck> xz_check;  ///< for xz
  /// Non-empty when the kernel's module_decompress() refuses the stream (finit_module
  /// then fails with EINVAL before any signature check): an xz check other than CRC32 or
  /// none, an xz filter the kernel's decoder lacks, gzip header fields it does not skip,
  /// or (OpenOptions::keep_bad_stream) a stream that does not decompress at all, as
  /// "<format>-compressed module: <reason>".  The text says why.
  std::string kernel_decompress_problem;
  /// Bytes after the end of the compressed stream (after the xz stream and its padding,
  /// the first zstd frame, the gzip member), which module_decompress() never reads: the
  /// kernel checks only the decompressed image.  Set with OpenOptions::ignore_after_stream
  /// (a strict reading refuses such a file); 0 otherwise.
  std::uint64_t bytes_after_stream = 0;
  /// Those bytes end with the module signature marker ("~Module signature appended~\n"):
  /// a signature appended to the compressed file, which the kernel never checks.
  bool signature_after_stream = false;
};

}  // namespace modsign
