// mirrors kernel/module/decompress.c module_decompress (per format: module_gzip_decompress, module_xz_decompress,
// module_zstd_decompress), Linux 7.2.13 Compressed modules (.ko.xz, .ko.zst, .ko.gz): streaming decompression with a
// size bound. The signature sits inside the compressed stream and covers the decompressed image (kernel-semantics.md
// §5.4); kernel/module/decompress.c decompresses before module_sig_check.  Recompression is in module/compress.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "modsign/module_image.hpp"

namespace modsign {
class FileReader;  // common/file.hpp
}

namespace modsign::module {

// Compression, XzCheck and ModuleImage are public data (include/modsign/module.hpp).
using modsign::Compression;
using modsign::compression_name;
using modsign::ModuleImage;
using modsign::xz_check_name;
using modsign::XzCheck;

/// The format whose magic starts `file`: xz FD 37 7A 58 5A 00, zstd 28 B5 2F FD (or a
/// skippable frame 5X 2A 4D 18, as pzstd writes), gzip 1F 8B.
Compression detect_compression(ByteView file);

/// Why a kernel whose decompressor is `kernel_format` (cms::KernelModel::module_decompress:
/// "" the module's own format, "none", "gzip", "xz", "zstd") refuses a module compressed as
/// `c` before reading it: EOPNOTSUPP "module_decompress: the kernel has no in-kernel
/// module decompression (CONFIG_MODULE_DECOMPRESS is not set)" (the stub in
/// kernel/module/internal.h), EINVAL "module_decompress: not a(n) <fmt> compressed module
/// (the kernel decompresses only <fmt>)" (the magic check of the one MODULE_DECOMPRESS_FN
/// built in).  nullopt when it decompresses `c`, or for an uncompressed module.
std::optional<Error> module_decompress_refusal(Compression c, const std::string& kernel_format);

/// Default bound on a decompressed module (1 GiB); `--max-size` changes it.
inline constexpr std::uint64_t kDefaultMaxDecompressed = modsign::kMaxModuleSize;

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

/// How open_module() treats a stream the strict reading refuses.
struct OpenFlags {
  /// A compressed stream that does not decompress (corrupt, truncated) is not an error but
  /// a module the kernel's module_decompress() refuses too: an empty image with the
  /// message in kernel_decompress_problem.  modsign's own bounds ("decompressed size
  /// exceeds", "zstd window needs") stay errors.
  bool keep_bad_stream = false;
  /// Bytes after the end of the stream (after the xz stream and its padding, the first
  /// zstd frame, the gzip member) are not an error: module_decompress() stops at the end
  /// of the stream and never reads them.  They are counted in bytes_after_stream.
  bool ignore_after_stream = false;
};

/// open_module() with the error worded "<format>-compressed module: <reason>", reading the
/// stream as `flags` say.
Result<ModuleImage> open_module(ByteView file, std::uint64_t max_size, const OpenFlags& flags);

/// True for an uncompressed regular file larger than `threshold` bytes, which sign and
/// verify read in one streaming pass.  One stat() decides for the common small module; a
/// file that cannot be read is not streamable (the normal path reports the problem).
bool streamable_file(const std::string& path, std::uint64_t threshold);
/// The same, of a file already open (an InputLock's: the file checked, not its path).
bool streamable_file(const FileReader& in, std::uint64_t threshold);

/// Compress `image` as the kernel build does: xz = LZMA2 preset 6 with a 1 MiB
/// dictionary and a CRC32 check (single-threaded, as `xz --check=crc32 --lzma2=dict=1MiB`);
/// gzip = deflate level 6, no name, mtime 0, OS 3 (as `gzip -n`); zstd = level 3 with
/// content size and XXH64 checksum (as `zstd`).  Throws LibraryError on library
/// failure; `format` must not be none.
}  // namespace modsign::module
