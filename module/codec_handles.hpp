// modsign's own: owners of liblzma, zlib and libzstd stream state, released on every path
// (an early return, an exception from a growing buffer) by their destructors.
#pragma once

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <memory>

namespace modsign::module {

/// A liblzma stream (lzma_stream_decoder or _encoder sets it up); lzma_end() when destroyed.
class XzStream {
 public:
  XzStream() = default;
  ~XzStream() { lzma_end(&s_); }
  XzStream(const XzStream&) = delete;
  XzStream& operator=(const XzStream&) = delete;
  lzma_stream* get() noexcept { return &s_; }

 private:
  lzma_stream s_ = LZMA_STREAM_INIT;
};

/// A zlib inflate stream (inflateInit2 with `window_bits`); inflateEnd() when destroyed.
/// ok() is false when inflateInit2 failed.
class InflateStream {
 public:
  explicit InflateStream(int window_bits) : ok_(inflateInit2(&z_, window_bits) == Z_OK) {}
  ~InflateStream() {
    if (ok_) inflateEnd(&z_);
  }
  InflateStream(const InflateStream&) = delete;
  InflateStream& operator=(const InflateStream&) = delete;
  bool ok() const noexcept { return ok_; }
  z_stream* get() noexcept { return &z_; }

 private:
  z_stream z_{};
  bool ok_;
};

/// A zlib deflate stream (deflateInit2, level 6, `window_bits`, memLevel 8, default
/// strategy, as gzip writes); deflateEnd() when destroyed.  ok() is false when deflateInit2
/// failed.
class DeflateStream {
 public:
  explicit DeflateStream(int window_bits)
      : ok_(deflateInit2(&z_, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) == Z_OK) {}
  ~DeflateStream() {
    if (ok_) deflateEnd(&z_);
  }
  DeflateStream(const DeflateStream&) = delete;
  DeflateStream& operator=(const DeflateStream&) = delete;
  bool ok() const noexcept { return ok_; }
  z_stream* get() noexcept { return &z_; }

 private:
  z_stream z_{};
  bool ok_;
};

struct ZstdDCtxFree {
  void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
};
struct ZstdCCtxFree {
  void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
};
/// A zstd decompression context; ZSTD_freeDCtx() when destroyed.
using ZstdDCtx = std::unique_ptr<ZSTD_DCtx, ZstdDCtxFree>;
/// A zstd compression context; ZSTD_freeCCtx() when destroyed.
using ZstdCCtx = std::unique_ptr<ZSTD_CCtx, ZstdCCtxFree>;

}  // namespace modsign::module
