// mirrors kernel/module/decompress.c module_decompress (per format: module_gzip_decompress, module_xz_decompress,
// module_zstd_decompress), Linux 7.2.13
#include "module/decompress.hpp"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <sys/stat.h>
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "common/file.hpp"
#include "module/codec_handles.hpp"

namespace modsign::module {

std::optional<Error> module_decompress_refusal(Compression c, const std::string& kernel_format) {
  if (c == Compression::none || kernel_format.empty()) return std::nullopt;
  if (kernel_format == "none")
    return Error{KErr::eopnotsupp,
                 "module_decompress: the kernel has no in-kernel module decompression (CONFIG_MODULE_DECOMPRESS is "
                 "not set)"};
  if (kernel_format == compression_name(c)) return std::nullopt;
  return Error{KErr::einval, "module_decompress: not " + std::string(kernel_format == "xz" ? "an " : "a ") +
                                 kernel_format + " compressed module (the kernel decompresses only " + kernel_format +
                                 ")"};
}

namespace {
constexpr std::size_t kChunk = 64 * 1024;

Error too_big(std::uint64_t max) {
  return make_error(KErr::einval,
                    "decompressed size exceeds the limit of " + std::to_string(max) +
                        " bytes (a compression bomb, or raise --max-size)",
                    Error::Reason::over_own_bound);
}

// Append up to `n` bytes of produced output; false if the bound is crossed.
bool grow(Bytes& out, const std::uint8_t* p, std::size_t n, std::uint64_t max) {
  if (out.size() + n > max) return false;
  out.insert(out.end(), p, p + n);
  return true;
}

// Memory a decoder may reserve for its window (xz dictionary, zstd window): twice the
// bound on the output, at least 64 MiB (xz -9's dictionary), at most 2 GiB.  The kernel
// allocates what the stream header declares (kernel/module/decompress.c: zstd windows up
// to 2 GiB); with the default bound (1 GiB) modsign accepts the same, and a smaller
// --max-size also bounds the window, so a 10-byte header cannot make modsign reserve 2 GiB.
std::uint64_t window_budget(std::uint64_t max) {
  return std::clamp<std::uint64_t>(max > (std::uint64_t{1} << 62) ? max : 2 * max, std::uint64_t{64} << 20,
                                   std::uint64_t{2} << 30);
}

// `reason`: over_own_bound for the zstd window; an xz dictionary beyond the budget is left
// with none (reported, as before, as the kernel-side decompression problem).
Error window_too_big(const char* what, std::uint64_t max, Error::Reason reason) {
  return make_error(KErr::einval,
                    std::string(what) + " needs more than " + std::to_string(window_budget(max)) +
                        " bytes of memory (twice the size limit of " + std::to_string(max) +
                        " bytes, at least 64 MiB; raise --max-size)",
                    reason);
}

bool only_xz_padding(ByteView rest) {
  // xz stream padding: NUL bytes in multiples of four.
  if (rest.size() % 4) return false;
  for (auto b : rest)
    if (b) return false;
  return true;
}

// liblzma's lzma_ret codes in words (no numeric status in messages).
std::string xz_error_text(lzma_ret r) {
  switch (r) {
    case LZMA_DATA_ERROR: return "corrupt xz data";
    case LZMA_FORMAT_ERROR: return "not xz data";
    case LZMA_OPTIONS_ERROR: return "unsupported xz options";
    case LZMA_BUF_ERROR: return "truncated xz data";
    case LZMA_MEM_ERROR: return "out of memory while decompressing xz data";
    case LZMA_MEMLIMIT_ERROR: return "xz data needs more than --max-size memory to decompress";
    case LZMA_UNSUPPORTED_CHECK: return "unsupported xz integrity check";
    default: return "xz decoder error";
  }
}

// libzstd's error codes in words: "not zstd data", "corrupt zstd data", ...
std::string zstd_error_text(std::size_t r) {
  switch (ZSTD_getErrorCode(r)) {
    case ZSTD_error_prefix_unknown: return "not zstd data";
    case ZSTD_error_frameParameter_windowTooLarge: return "zstd window larger than 2 GiB";
    case ZSTD_error_frameParameter_unsupported: return "unsupported zstd frame parameters";
    case ZSTD_error_checksum_wrong: return "corrupt zstd data (checksum mismatch)";
    case ZSTD_error_memory_allocation: return "out of memory while decompressing zstd data";
    case ZSTD_error_corruption_detected: return "corrupt zstd data";
    default: return std::string("corrupt zstd data (") + ZSTD_getErrorName(r) + ")";
  }
}

// `after`: where to count the bytes after the end of the stream instead of refusing them
// (module_decompress() stops at the end of the stream and never reads them).
Result<Bytes> unxz(ByteView in, std::uint64_t max, std::size_t* after) {
  XzStream xz;
  lzma_stream& s = *xz.get();
  // No LZMA_CONCATENATED: one stream, as the kernel's xz_dec decodes.
  // The memory limit covers the dictionary (plus liblzma's own ~ 100 KiB).
  if (lzma_stream_decoder(&s, window_budget(max) + (std::uint64_t{1} << 20), 0) != LZMA_OK)
    throw LibraryError("lzma_stream_decoder failed");
  Bytes out;
  std::uint8_t buf[kChunk];
  s.next_in = in.data();
  s.avail_in = in.size();
  lzma_ret r;
  do {
    s.next_out = buf;
    s.avail_out = sizeof buf;
    r = lzma_code(&s, LZMA_FINISH);
    if (!grow(out, buf, sizeof buf - s.avail_out, max)) return too_big(max);
  } while (r == LZMA_OK);
  const std::size_t rest = s.avail_in;
  if (r == LZMA_MEMLIMIT_ERROR) return window_too_big("xz dictionary", max, Error::Reason::none);
  if (r != LZMA_STREAM_END) return make_error(KErr::einval, xz_error_text(r));
  if (after) *after = rest && !only_xz_padding(in.last(rest)) ? rest : 0;
  else if (rest && !only_xz_padding(in.last(rest)))
    return make_error(KErr::einval, std::to_string(rest) + " bytes of trailing data after the xz stream");
  return out;
}

Result<Bytes> gunzip(ByteView in, std::uint64_t max, std::size_t* after) {
  InflateStream inflater(16 + MAX_WBITS);
  if (!inflater.ok()) throw LibraryError("inflateInit2 failed");
  z_stream& z = *inflater.get();
  Bytes out;
  std::uint8_t buf[kChunk];
  z.next_in = const_cast<Bytef*>(in.data());
  std::size_t left = in.size();
  int r = Z_OK;
  while (r == Z_OK) {
    const uInt step = static_cast<uInt>(std::min<std::size_t>(left, 1u << 30));
    z.avail_in = step;
    do {
      z.next_out = buf;
      z.avail_out = sizeof buf;
      r = inflate(&z, Z_NO_FLUSH);
      if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) break;
      if (!grow(out, buf, sizeof buf - z.avail_out, max)) return too_big(max);
    } while (z.avail_out == 0 && r == Z_OK);
    left -= step - z.avail_in;
    if (r == Z_BUF_ERROR || (r == Z_OK && left == 0 && z.avail_in == 0))
      return make_error(KErr::einval, "truncated gzip data");
    if (r != Z_OK && r != Z_STREAM_END) {
      return make_error(KErr::einval,
                        std::string("corrupt gzip data") + (z.msg ? std::string(" (") + z.msg + ")" : std::string()));
    }
  }
  const std::size_t rest = left;
  if (after) *after = rest;
  else if (rest)
    return make_error(KErr::einval, std::to_string(rest) + " bytes of trailing data after the gzip member");
  return out;
}

Result<Bytes> unzstd(ByteView in, std::uint64_t max, bool all_frames, std::size_t* after) {
  const ZstdDCtx owner(ZSTD_createDCtx());
  ZSTD_DCtx* d = owner.get();
  if (!d) throw LibraryError("ZSTD_createDCtx failed");
  // The kernel accepts windows up to 2 GiB (ZSTD_WINDOWLOG_MAX); modsign up to window_budget().
  int window_log = 10;
  while (window_log < 31 && (std::uint64_t{1} << (window_log + 1)) <= window_budget(max)) ++window_log;
  ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, window_log);
  Bytes out;
  std::uint8_t buf[kChunk];
  ZSTD_inBuffer ib{in.data(), in.size(), 0};
  for (;;) {
    ZSTD_outBuffer ob{buf, sizeof buf, 0};
    const std::size_t r = ZSTD_decompressStream(d, &ob, &ib);
    if (ZSTD_isError(r)) {
      std::string why = zstd_error_text(r);
      if (ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge)
        return window_too_big("zstd window", max, Error::Reason::over_own_bound);
      return make_error(KErr::einval, why);
    }
    if (!grow(out, buf, ob.pos, max)) return too_big(max);
    if (r == 0) {  // frame complete
      if (all_frames && ib.pos < in.size()) continue;
      break;
    }
    if (ib.pos == in.size() && ob.pos < ob.size)  // input used up, frame unfinished
      return make_error(KErr::einval, "truncated zstd data");
  }
  if (after) *after = in.size() - ib.pos;
  else if (ib.pos != in.size())
    return make_error(KErr::einval,
                      std::to_string(in.size() - ib.pos) + " bytes of trailing data after the zstd frame");
  return out;
}
// kernel/module/decompress.c module_gzip_header_len(): 10 bytes, plus a NUL-terminated
// name when FNAME is set; no other optional field is skipped.  Then raw inflate, with no
// check of the CRC32/ISIZE trailer.  Returns the image the kernel would decompress.
Result<Bytes> kernel_gunzip(ByteView in, std::uint64_t max) {
  std::size_t len = 10;
  if (in.size() < len || in[0] != 0x1f || in[1] != 0x8b || in[2] != 0x08)
    return make_error(KErr::einval, "not a gzip compressed module");
  if (in[3] & 0x08) {
    do {
      if (len == in.size()) return make_error(KErr::einval, "gzip file name runs to the end");
    } while (in[len++] != '\0');
  }
  InflateStream inflater(-MAX_WBITS);
  if (!inflater.ok()) throw LibraryError("inflateInit2 failed");
  z_stream& z = *inflater.get();
  Bytes out;
  std::uint8_t buf[kChunk];
  z.next_in = const_cast<Bytef*>(in.data() + len);
  z.avail_in = static_cast<uInt>(std::min<std::size_t>(in.size() - len, 1u << 30));
  int r;
  do {
    z.next_out = buf;
    z.avail_out = sizeof buf;
    r = inflate(&z, Z_NO_FLUSH);
    if (r != Z_OK && r != Z_STREAM_END) break;
    if (!grow(out, buf, sizeof buf - z.avail_out, max)) return too_big(max);
  } while (r == Z_OK && (z.avail_out == 0 || z.avail_in > 0));
  if (r != Z_STREAM_END)
    return make_error(KErr::einval, std::string("raw inflate failed") + (z.msg ? std::string(": ") + z.msg : ""));
  return out;
}

// lib/xz/xz_dec_stream.c dec_block_header(): LZMA2, optionally after one BCJ filter
// (x86, PowerPC, ARM, ARM-Thumb, SPARC, ARM64, RISC-V) without properties.  Checks the
// first block's filter chain.
std::string xz_kernel_filter_problem(ByteView in) {
  if (in.size() < 12 + 8) return "";
  lzma_block block{};
  lzma_filter filters[LZMA_FILTERS_MAX + 1];
  block.version = 1;
  block.check = static_cast<lzma_check>(in[7] & 0x0f);
  block.filters = filters;
  block.header_size = lzma_block_header_size_decode(in[12]);
  if (in[12] == 0x00 || in.size() < 12 + block.header_size) return "";  // empty stream: index follows
  if (lzma_block_header_decode(&block, nullptr, in.data() + 12) != LZMA_OK) return "";
  std::string problem;
  std::size_t n = 0;
  while (filters[n].id != LZMA_VLI_UNKNOWN) ++n;
  auto bcj_ok = [](lzma_vli id) {
    return id == LZMA_FILTER_X86 || id == LZMA_FILTER_POWERPC || id == LZMA_FILTER_ARM || id == LZMA_FILTER_ARMTHUMB ||
           id == LZMA_FILTER_SPARC || id == 0x0a /* ARM64 */ || id == 0x0b /* RISC-V */;
  };
  if (n == 0 || filters[n - 1].id != LZMA_FILTER_LZMA2 || n > 2 || (n == 2 && !bcj_ok(filters[0].id)))
    problem = "xz filter chain other than LZMA2 (optionally after one BCJ filter)";
  else if (n == 2 && filters[0].options) {
    const auto* bcj = static_cast<const lzma_options_bcj*>(filters[0].options);
    if (bcj->start_offset != 0) problem = "xz BCJ filter with a start offset";
  }
  for (std::size_t i = 0; i < n; ++i) free(filters[i].options);
  if (problem.empty()) return "";
  return problem +
         ": the kernel's xz decoder refuses it (XZ_OPTIONS_ERROR), so in-kernel decompression fails with EINVAL";
}
}  // namespace

namespace {
Result<Bytes> decompress_stream(ByteView in, Compression format, std::uint64_t max_size, std::size_t* after) {
  switch (format) {
    case Compression::xz: return unxz(in, max_size, after);
    case Compression::gzip: return gunzip(in, max_size, after);
    case Compression::zstd: return unzstd(in, max_size, in.size() >= 4 && in[0] != 0x28, after);
    case Compression::none: break;
  }
  return make_error(KErr::einval, "not a compressed module");
}
}  // namespace

Result<Bytes> decompress(ByteView in, Compression format, std::uint64_t max_size) {
  return decompress_stream(in, format, max_size, nullptr);
}

namespace {
Result<ModuleImage> open_stream(ByteView file, std::uint64_t max_size, const OpenFlags& flags) {
  ModuleImage m;
  m.compression = detect_compression(file);
  m.stored_size = file.size();
  if (m.compression == Compression::none) {
    m.image.assign(file.begin(), file.end());
    return m;
  }
  if (m.compression == Compression::xz && file.size() >= 8) {
    // Stream header: magic (6) + stream flags (2); the check ID is the low nibble of byte 7.
    const int id = file[7] & 0x0f;
    m.xz_check = id == 0    ? XzCheck::none
                 : id == 1  ? XzCheck::crc32
                 : id == 4  ? XzCheck::crc64
                 : id == 10 ? XzCheck::sha256
                            : XzCheck::other;
    if (*m.xz_check != XzCheck::none && *m.xz_check != XzCheck::crc32)
      m.kernel_decompress_problem = "xz stream uses a " + std::string(xz_check_name(*m.xz_check)) +
                                    " check; the kernel's xz decoder accepts only CRC32 or none, so in-kernel "
                                    "decompression (module_decompress) fails with EINVAL: recompress with "
                                    "`xz --check=crc32`";
  }
  if (m.compression == Compression::xz && m.kernel_decompress_problem.empty())
    m.kernel_decompress_problem = xz_kernel_filter_problem(file);
  if (m.compression == Compression::zstd && file.size() >= 4 && file[0] != 0x28)
    m.kernel_decompress_problem =
        "zstd file starts with a skippable frame (pzstd): the kernel's zstd decoder refuses it (\"not a zstd "
        "compressed module\", EINVAL)";
  std::size_t after = 0;
  auto d = decompress_stream(file, m.compression, max_size, flags.ignore_after_stream ? &after : nullptr);
  if (!d) return d.error();
  m.image = std::move(d.value());
  if (after) {
    // module_decompress() stops at the end of the stream (xz_dec_run's XZ_STREAM_END, the
    // zstd frame's end, zlib_inflate's Z_STREAM_END): the bytes after it are never read,
    // and module_sig_check() sees only the decompressed image.
    m.bytes_after_stream = after;
    static constexpr std::string_view kMagic = "~Module signature appended~\n";
    const ByteView rest = file.last(after);
    m.signature_after_stream =
        rest.size() >= kMagic.size() && std::equal(kMagic.begin(), kMagic.end(), rest.end() - kMagic.size());
  }
  if (m.compression == Compression::gzip) {
    // The kernel skips only FNAME: with FEXTRA, FCOMMENT or FHCRC it reads another image.
    auto k = kernel_gunzip(file, max_size);
    if (!k)
      m.kernel_decompress_problem =
          "gzip header fields the kernel does not skip (FEXTRA, FCOMMENT or FHCRC): "
          "module_gzip_header_len() then fails to inflate (" +
          k.error().message + "), EINVAL";
    else if (*k != m.image)
      m.kernel_decompress_problem =
          "the kernel's gzip decoder (module_gzip_header_len) reads a different image "
          "than gzip does from this file: refused as ambiguous";
  }
  return m;
}

}  // namespace

Result<ModuleImage> open_module(ByteView file, std::uint64_t max_size) { return open_stream(file, max_size, {}); }

Compression detect_compression(ByteView f) {
  static constexpr std::uint8_t xz[] = {0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00};
  static constexpr std::uint8_t zstd[] = {0x28, 0xb5, 0x2f, 0xfd};
  auto starts = [&](ByteView m) { return f.size() >= m.size() && std::equal(m.begin(), m.end(), f.begin()); };
  if (starts(xz)) return Compression::xz;
  if (starts(zstd)) return Compression::zstd;
  // zstd skippable frame (magic 0x184D2A50..5F, little-endian), as pzstd writes first.
  if (f.size() >= 4 && (f[0] & 0xf0) == 0x50 && f[1] == 0x2a && f[2] == 0x4d && f[3] == 0x18) return Compression::zstd;
  if (f.size() >= 2 && f[0] == 0x1f && f[1] == 0x8b) return Compression::gzip;
  return Compression::none;
}

Result<ModuleImage> open_module(ByteView file, std::uint64_t max_size, const OpenFlags& flags) {
  const bool keep_bad_stream = flags.keep_bad_stream;
  auto img = open_stream(file, max_size, flags);
  if (img) return img;
  const auto c = detect_compression(file);
  const std::string msg = std::string(compression_name(c)) + "-compressed module: " + img.error().message;
  const bool own_bound = img.error().reason == Error::Reason::over_own_bound;
  if (!keep_bad_stream || c == Compression::none || own_bound) return make_error(img.error().code, msg);
  ModuleImage m;
  m.compression = c;
  m.stored_size = file.size();
  m.kernel_decompress_problem = msg;
  return m;
}

bool streamable_file(const std::string& path, std::uint64_t threshold) {
  // One stat() decides for the common small module (no open, no read: a batch reads each
  // module once, on the whole-file path).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) <= threshold)
    return false;
  try {
    return streamable_file(FileReader(path), threshold);
  } catch (const IoError&) {
    return false;  // the whole-file path reports the problem
  }
}

bool streamable_file(const FileReader& in, std::uint64_t threshold) {
  if (in.size() <= threshold || in.size() < 8) return false;
  try {
    return detect_compression(in.read_at(0, 8)) == Compression::none;
  } catch (const IoError&) {
    return false;  // the whole-file path reports the problem
  }
}

}  // namespace modsign::module

// The public names (include/modsign/module.hpp).
namespace modsign {

std::string_view xz_check_name(XzCheck c) {
  switch (c) {
    case XzCheck::none: return "none";
    case XzCheck::crc32: return "CRC32";
    case XzCheck::crc64: return "CRC64";
    case XzCheck::sha256: return "SHA-256";
    case XzCheck::other: return "other";
  }
  return "?";
}

std::string_view compression_name(Compression c) {
  switch (c) {
    case Compression::none: return "none";
    case Compression::xz: return "xz";
    case Compression::zstd: return "zstd";
    case Compression::gzip: return "gzip";
  }
  return "?";
}

}  // namespace modsign
