// modsign's own: recompression of a module as the kernel build does it (not a kernel file)
#include "module/compress.hpp"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <stdexcept>
#include <string>

#include "module/codec_handles.hpp"

namespace modsign::module {

namespace {
constexpr std::size_t kChunk = 64 * 1024;  // output steps, as module/decompress.cpp
}  // namespace

Bytes compress(ByteView image, Compression format) {
  switch (format) {
    case Compression::xz: {
      lzma_options_lzma opt;
      if (lzma_lzma_preset(&opt, 6)) throw LibraryError("lzma_lzma_preset failed");
      opt.dict_size = 1u << 20;
      lzma_filter filters[] = {{LZMA_FILTER_LZMA2, &opt}, {LZMA_VLI_UNKNOWN, nullptr}};
      // The streaming encoder, as the xz command uses it single-threaded (the buffer
      // encoder would record sizes in the block header and differ from `xz`).
      XzStream xz;
      lzma_stream& s = *xz.get();
      if (lzma_stream_encoder(&s, filters, LZMA_CHECK_CRC32) != LZMA_OK)
        throw LibraryError("lzma_stream_encoder failed");
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
      if (r != LZMA_STREAM_END) throw LibraryError("xz compression failed");
      return out;
    }
    case Compression::gzip: {
      if (image.size() > 0xffffffffu)
        throw InputError("gzip recompression of images over 4 GiB is not supported (zlib's avail_in is 32 bits)");
      DeflateStream deflater(16 + MAX_WBITS);
      if (!deflater.ok()) throw LibraryError("deflateInit2 failed");
      z_stream& z = *deflater.get();
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
      if (r != Z_STREAM_END) throw LibraryError("gzip compression failed");
      out.resize(n);
      return out;
    }
    case Compression::zstd: {
      // As the zstd command does: level 3, checksum, content size, one worker thread
      // (its default --threads=1 splits large inputs into jobs), streaming.
      const ZstdCCtx owner(ZSTD_createCCtx());
      ZSTD_CCtx* c = owner.get();
      if (!c) throw LibraryError("ZSTD_createCCtx failed");
      ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
      ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
      ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);
      ZSTD_CCtx_setParameter(c, ZSTD_c_nbWorkers, 1);
      ZSTD_CCtx_setPledgedSrcSize(c, image.size());
      Bytes out;
      std::uint8_t buf[kChunk];
      ZSTD_inBuffer ib{image.data(), image.size(), 0};
      std::size_t left;
      do {
        ZSTD_outBuffer ob{buf, sizeof buf, 0};
        left = ZSTD_compressStream2(c, &ob, &ib, ZSTD_e_end);
        if (ZSTD_isError(left)) throw LibraryError(std::string("zstd compression failed: ") + ZSTD_getErrorName(left));
        out.insert(out.end(), buf, buf + ob.pos);
      } while (left != 0);
      return out;
    }
    case Compression::none: break;
  }
  throw std::invalid_argument("compress: no format");
}

}  // namespace modsign::module
