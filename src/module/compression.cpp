#include "module/compression.hpp"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <stdexcept>

namespace modsign::module {

namespace {
constexpr std::size_t kChunk = 64 * 1024;

Error too_big(std::uint64_t max) {
  return make_error(KErr::einval, "decompressed size exceeds the limit of " + std::to_string(max) +
                                      " bytes (a compression bomb, or raise --max-size)");
}

// Append up to `n` bytes of produced output; false if the bound is crossed.
bool grow(Bytes& out, const std::uint8_t* p, std::size_t n, std::uint64_t max) {
  if (out.size() + n > max) return false;
  out.insert(out.end(), p, p + n);
  return true;
}

bool only_xz_padding(ByteView rest) {
  // xz stream padding: NUL bytes in multiples of four.
  if (rest.size() % 4) return false;
  for (auto b : rest)
    if (b) return false;
  return true;
}

Result<Bytes> unxz(ByteView in, std::uint64_t max) {
  lzma_stream s = LZMA_STREAM_INIT;
  // No LZMA_CONCATENATED: one stream, as the kernel's xz_dec decodes.
  if (lzma_stream_decoder(&s, UINT64_MAX, 0) != LZMA_OK) throw std::runtime_error("lzma_stream_decoder failed");
  Bytes out;
  std::uint8_t buf[kChunk];
  s.next_in = in.data();
  s.avail_in = in.size();
  lzma_ret r;
  do {
    s.next_out = buf;
    s.avail_out = sizeof buf;
    r = lzma_code(&s, LZMA_FINISH);
    if (!grow(out, buf, sizeof buf - s.avail_out, max)) {
      lzma_end(&s);
      return too_big(max);
    }
  } while (r == LZMA_OK);
  const std::size_t rest = s.avail_in;
  lzma_end(&s);
  if (r == LZMA_BUF_ERROR) return make_error(KErr::einval, "truncated xz stream");
  if (r != LZMA_STREAM_END) {
    const char* why = r == LZMA_FORMAT_ERROR    ? "not an xz stream"
                      : r == LZMA_OPTIONS_ERROR ? "unsupported xz options"
                      : r == LZMA_DATA_ERROR    ? "corrupt xz data"
                      : r == LZMA_MEM_ERROR     ? "out of memory"
                                                : "xz decoder error";
    return make_error(KErr::einval, std::string(why) + " (liblzma status " + std::to_string(r) + ")");
  }
  if (rest && !only_xz_padding(in.last(rest)))
    return make_error(KErr::einval, std::to_string(rest) + " bytes of trailing data after the xz stream");
  return out;
}

Result<Bytes> gunzip(ByteView in, std::uint64_t max) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw std::runtime_error("inflateInit2 failed");
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
      if (!grow(out, buf, sizeof buf - z.avail_out, max)) {
        inflateEnd(&z);
        return too_big(max);
      }
    } while (z.avail_out == 0 && r == Z_OK);
    left -= step - z.avail_in;
    if (r == Z_BUF_ERROR || (r == Z_OK && left == 0 && z.avail_in == 0)) {
      inflateEnd(&z);
      return make_error(KErr::einval, "truncated gzip stream");
    }
    if (r != Z_OK && r != Z_STREAM_END) {
      inflateEnd(&z);
      return make_error(KErr::einval, std::string("corrupt gzip stream: ") + (z.msg ? z.msg : "inflate error"));
    }
  }
  const std::size_t rest = left;
  inflateEnd(&z);
  if (rest) return make_error(KErr::einval, std::to_string(rest) + " bytes of trailing data after the gzip member");
  return out;
}

Result<Bytes> unzstd(ByteView in, std::uint64_t max) {
  ZSTD_DCtx* d = ZSTD_createDCtx();
  if (!d) throw std::runtime_error("ZSTD_createDCtx failed");
  Bytes out;
  std::uint8_t buf[kChunk];
  ZSTD_inBuffer ib{in.data(), in.size(), 0};
  for (;;) {
    ZSTD_outBuffer ob{buf, sizeof buf, 0};
    const std::size_t r = ZSTD_decompressStream(d, &ob, &ib);
    if (ZSTD_isError(r)) {
      std::string why = ZSTD_getErrorName(r);
      ZSTD_freeDCtx(d);
      return make_error(KErr::einval, "corrupt zstd stream: " + why);
    }
    if (!grow(out, buf, ob.pos, max)) {
      ZSTD_freeDCtx(d);
      return too_big(max);
    }
    if (r == 0) break;  // frame complete
    if (ib.pos == in.size() && ob.pos < ob.size) {  // input used up, frame unfinished
      ZSTD_freeDCtx(d);
      return make_error(KErr::einval, "truncated zstd stream");
    }
  }
  ZSTD_freeDCtx(d);
  if (ib.pos != in.size())
    return make_error(KErr::einval, std::to_string(in.size() - ib.pos) + " bytes of trailing data after the zstd frame");
  return out;
}
}  // namespace

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

Result<Bytes> decompress(ByteView in, Compression format, std::uint64_t max_size) {
  switch (format) {
    case Compression::xz: return unxz(in, max_size);
    case Compression::gzip: return gunzip(in, max_size);
    case Compression::zstd: return unzstd(in, max_size);
    case Compression::none: break;
  }
  return make_error(KErr::einval, "not a compressed module");
}

Result<ModuleImage> open_module(ByteView file, std::uint64_t max_size) {
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
    m.xz_check = id == 0 ? XzCheck::none : id == 1 ? XzCheck::crc32 : id == 4 ? XzCheck::crc64 : id == 10 ? XzCheck::sha256 : XzCheck::other;
    if (*m.xz_check != XzCheck::none && *m.xz_check != XzCheck::crc32)
      m.kernel_decompress_problem = "xz stream uses a " + std::string(xz_check_name(*m.xz_check)) +
                                    " check; the kernel's xz decoder accepts only CRC32 or none, so in-kernel "
                                    "decompression (module_decompress) fails with EINVAL: recompress with "
                                    "`xz --check=crc32`";
  }
  auto d = decompress(file, m.compression, max_size);
  if (!d) return d.error();
  m.image = std::move(d.value());
  return m;
}

Bytes compress(ByteView image, Compression format) {
  switch (format) {
    case Compression::xz: {
      lzma_options_lzma opt;
      if (lzma_lzma_preset(&opt, 6)) throw std::runtime_error("lzma_lzma_preset failed");
      opt.dict_size = 1u << 20;
      lzma_filter filters[] = {{LZMA_FILTER_LZMA2, &opt}, {LZMA_VLI_UNKNOWN, nullptr}};
      // The streaming encoder, as the xz command uses it single-threaded (the buffer
      // encoder would record sizes in the block header and differ from `xz`).
      lzma_stream s = LZMA_STREAM_INIT;
      if (lzma_stream_encoder(&s, filters, LZMA_CHECK_CRC32) != LZMA_OK) throw std::runtime_error("lzma_stream_encoder failed");
      Bytes out;
      std::uint8_t buf[kChunk];
      s.next_in = image.data();
      s.avail_in = image.size();
      lzma_ret r;
      do {
        s.next_out = buf;
        s.avail_out = sizeof buf;
        r = lzma_code(&s, LZMA_FINISH);
        out.insert(out.end(), buf, buf + (sizeof buf - s.avail_out));
      } while (r == LZMA_OK);
      lzma_end(&s);
      if (r != LZMA_STREAM_END) throw std::runtime_error("xz compression failed");
      return out;
    }
    case Compression::gzip: {
      z_stream z{};
      if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2 failed");
      gz_header h{};
      h.os = 3;  // Unix, as gzip writes
      deflateSetHeader(&z, &h);
      Bytes out(deflateBound(&z, image.size()) + 32);
      z.next_in = const_cast<Bytef*>(image.data());
      z.avail_in = static_cast<uInt>(image.size());
      z.next_out = out.data();
      z.avail_out = static_cast<uInt>(out.size());
      const int r = deflate(&z, Z_FINISH);
      const std::size_t n = out.size() - z.avail_out;
      deflateEnd(&z);
      if (r != Z_STREAM_END) throw std::runtime_error("gzip compression failed");
      out.resize(n);
      return out;
    }
    case Compression::zstd: {
      ZSTD_CCtx* c = ZSTD_createCCtx();
      ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
      ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
      ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);
      Bytes out(ZSTD_compressBound(image.size()));
      const std::size_t n = ZSTD_compress2(c, out.data(), out.size(), image.data(), image.size());
      ZSTD_freeCCtx(c);
      if (ZSTD_isError(n)) throw std::runtime_error(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
      out.resize(n);
      return out;
    }
    case Compression::none: break;
  }
  throw std::invalid_argument("compress: no format");
}

}  // namespace modsign::module
