// Compressed modules: decompression with bounds, recompression with the kernel build's
// settings, confirmed with the xz, zstd and gzip command-line tools; the CLI on .ko.xz,
// .ko.zst and .ko.gz.
#include <gtest/gtest.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "crypto/crypto.hpp"
#include "module/compression.hpp"
#include "module/module_signature.hpp"
#include "test_support.hpp"

using namespace modsign;
using module::Compression;
using test::q;

namespace {
// A module-like image: ELF magic, then compressible but not trivial content.
Bytes image(std::size_t n = 200000) {
  Bytes b = test::pattern(n);
  b[0] = 0x7f, b[1] = 'E', b[2] = 'L', b[3] = 'F';
  for (std::size_t i = 4; i < n; i += 97) b[i] = static_cast<std::uint8_t>(i * 2654435761u >> 24);
  return b;
}

struct Format {
  Compression c;
  const char* ext;
  const char* decompress_cmd;  // reads stdin, writes stdout
  const char* kernel_cmd;      // scripts/Makefile.modinst's compressor, on a file
};
const Format kFormats[] = {
    {Compression::xz, "xz", "xz -dc", "xz --check=crc32 --lzma2=dict=1MiB -f"},
    {Compression::zstd, "zst", "zstd -dcq", "zstd --rm -f -q"},
    {Compression::gzip, "gz", "gzip -dc", "gzip -n -f"},
};
}  // namespace

/// `xz --version` is 5.6 or later: multi-threaded by default (XZ Utils NEWS, 5.6.0).
bool xz_multithreaded_by_default() {
  const std::string v = test::run("xz --version").out;  // "xz (XZ Utils) 5.8.4"
  const auto p = v.find("XZ Utils) ");
  if (p == std::string::npos) return false;
  const int major = std::atoi(v.c_str() + p + 10), minor = std::atoi(v.c_str() + v.find('.', p) + 1);
  return major > 5 || (major == 5 && minor >= 6);
}

TEST(Compression, RoundTripAndCommandLineTools) {
  const Bytes img = image();
  test::TempDir d;
  for (const auto& f : kFormats) {
    const Bytes packed = module::compress(img, f.c);
    EXPECT_EQ(module::detect_compression(packed), f.c) << f.ext;
    auto back = module::decompress(packed, f.c);
    ASSERT_TRUE(back.ok()) << f.ext << ": " << back.error().message;
    EXPECT_EQ(*back, img) << f.ext;
    // The command-line tool decompresses our output to exactly the image.
    test::spit(d / "m.ko.pack", packed);
    auto r = test::run(std::string(f.decompress_cmd) + " < " + q(d / "m.ko.pack") + " > " + q(d / "out"));
    ASSERT_EQ(r.status, 0) << f.ext << ": " << r.err;
    EXPECT_EQ(test::slurp(d / "out"), img) << f.ext;
    // And we decompress what the kernel build's compressor writes.
    test::spit(d / "m.ko", img);
    r = test::run(std::string("cd ") + q(d.path()) + " && " + f.kernel_cmd + " m.ko");
    ASSERT_EQ(r.status, 0) << r.err;
    const Bytes theirs = test::slurp(d / ("m.ko." + std::string(f.ext)));
    auto mine = module::decompress(theirs, f.c);
    ASSERT_TRUE(mine.ok()) << f.ext;
    EXPECT_EQ(*mine, img);
    // Byte identity with the kernel build's compressor: xz and zstd are, gzip is not
    // (GNU gzip has its own deflate; zlib chooses other matches), only equal after
    // decompression, which is checked above.
    if (f.c == Compression::xz && xz_multithreaded_by_default()) {
      // xz >= 5.6 compresses multi-threaded by default, which records the block sizes in
      // the block header (Debian unstable's 5.8.4); single-threaded (-T1) it writes
      // modsign's bytes.  What the kernel reads is equal either way: the image (above) and
      // the stream's check type, CRC32 (stream flags, byte 7).
      EXPECT_NE(theirs, packed);
      EXPECT_EQ(theirs.at(7), 0x01);
      EXPECT_EQ(packed.at(7), 0x01);
      test::spit(d / "m.ko", img);
      r = test::run(std::string("cd ") + q(d.path()) + " && xz -T1 --check=crc32 --lzma2=dict=1MiB -f m.ko");
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_EQ(to_hex(crypto::digest(crypto::HashAlgo::sha256, test::slurp(d / "m.ko.xz"))),
                to_hex(crypto::digest(crypto::HashAlgo::sha256, packed)));
    } else if (f.c == Compression::gzip) {
      EXPECT_NE(theirs, packed) << "GNU gzip and zlib now agree byte for byte: tighten this test";
      EXPECT_EQ(Bytes(theirs.begin(), theirs.begin() + 10), Bytes(packed.begin(), packed.begin() + 10))
          << "gzip header (mtime 0, OS 3) differs";
    } else {
      EXPECT_EQ(to_hex(crypto::digest(crypto::HashAlgo::sha256, theirs)),
                to_hex(crypto::digest(crypto::HashAlgo::sha256, packed)))
          << f.ext << " output differs from `" << f.kernel_cmd << "`";
    }
    std::remove((d / ("m.ko." + std::string(f.ext))).c_str());
  }
}

TEST(Compression, XzCheckTypes) {
  test::TempDir d;
  test::spit(d / "m.ko", image(5000));
  ASSERT_EQ(test::run("xz -k -f --check=crc64 " + q(d / "m.ko")).status, 0);
  auto m = module::open_module(test::slurp(d / "m.ko.xz"));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->xz_check, module::XzCheck::crc64);
  EXPECT_EQ(m->kernel_decompress_problem,
            "xz stream uses a CRC64 check; the kernel's xz decoder accepts only CRC32 or none, so in-kernel "
            "decompression (module_decompress) fails with EINVAL: recompress with `xz --check=crc32`");
  EXPECT_EQ(m->image, image(5000));
  ASSERT_EQ(test::run("xz -k -f --check=crc32 " + q(d / "m.ko")).status, 0);
  auto ok = module::open_module(test::slurp(d / "m.ko.xz"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->xz_check, module::XzCheck::crc32);
  EXPECT_EQ(ok->kernel_decompress_problem, "");
}

TEST(Compression, BadStreams) {
  const Bytes img = image();
  for (const auto& f : kFormats) {
    const Bytes packed = module::compress(img, f.c);
    // Truncated.
    auto t = module::decompress(ByteView(packed).first(packed.size() - 7), f.c);
    ASSERT_FALSE(t.ok()) << f.ext;
    EXPECT_EQ(t.error().code, KErr::einval);
    // Trailing garbage.
    Bytes trailing = packed;
    trailing.insert(trailing.end(), {'J', 'U', 'N', 'K'});
    auto g = module::decompress(trailing, f.c);
    ASSERT_FALSE(g.ok()) << f.ext;
    EXPECT_NE(g.error().message.find("bytes of trailing data"), std::string::npos) << g.error().message;
    // Bomb: a bound below the image size.
    auto b = module::decompress(packed, f.c, 100000);
    ASSERT_FALSE(b.ok()) << f.ext;
    EXPECT_EQ(b.error().message,
              "decompressed size exceeds the limit of 100000 bytes (a compression bomb, or raise --max-size)");
    EXPECT_EQ(b.error().reason, Error::Reason::over_own_bound);  // what callers branch on
    EXPECT_EQ(t.error().reason, Error::Reason::none);
    // Corrupt in the middle.
    Bytes corrupt = packed;
    corrupt[corrupt.size() / 2] ^= 0x55;
    EXPECT_FALSE(module::decompress(corrupt, f.c).ok()) << f.ext;
  }
  // A real bomb: 64 MiB of zeros compresses to a few KiB and is refused at 1 MiB.
  const Bytes zeros(64u << 20, 0);
  const Bytes bomb = module::compress(zeros, Compression::zstd);
  EXPECT_LT(bomb.size(), 10000u);
  EXPECT_FALSE(module::decompress(bomb, Compression::zstd, 1u << 20).ok());
}

// ---------------------------------------------------------------------------------- CLI

class CompressedCli : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    ASSERT_EQ(
        test::run(test::modsign_cli() + " keygen --out " + q(*dir_ / "k.pem") + " --cert-out " + q(*dir_ / "c.pem"))
            .status,
        0);
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string M() { return test::modsign_cli(); }
  static std::string k() { return q(*dir_ / "k.pem"); }
  static std::string c() { return q(*dir_ / "c.pem"); }
  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

TEST_F(CompressedCli, SignVerifyStripExtractEachFormat) {
  const Bytes img = image();
  for (const auto& f : kFormats) {
    const std::string path = d_ / ("m.ko." + std::string(f.ext));
    test::spit(path, module::compress(img, f.c));
    auto r = test::run(M() + " sign --recompress --key " + k() + " --cert " + c() + " " + q(path));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, path + ": signed (ML-DSA-65, no signedAttrs, sha512, CMS " + std::to_string(3467) +
                         " bytes, recompressed " + std::string(module::compression_name(f.c)) + ")\n")
        << r.out;
    // The command-line decompressor gives exactly the signed image: content ‖ CMS ‖ trailer.
    r = test::run(std::string(f.decompress_cmd) + " < " + q(path) + " > " + q(d_ / "signed.ko"));
    ASSERT_EQ(r.status, 0) << r.err;
    const Bytes signed_img = test::slurp(d_ / "signed.ko");
    auto split = module::split(signed_img);
    ASSERT_TRUE(split.ok());
    EXPECT_EQ(Bytes(split->content.begin(), split->content.end()), img);
    // verify reads it transparently and says how it was stored.
    r = test::run(M() + " verify --cert " + c() + " " + q(path));
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find(": loads (OK): signature verified: mldsa65 signature"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("[" + std::string(module::compression_name(f.c))), std::string::npos) << r.out;
    // finit_module(MODULE_INIT_COMPRESSED_FILE) on a kernel without CONFIG_MODULE_DECOMPRESS
    // (Debian 12's 6.1: EOPNOTSUPP, seen by tools/kernel-conformance), and on one whose
    // decompressor is built for another format (EINVAL before the signature is read).
    r = test::run(M() + " verify --module-decompress none --cert " + c() + " " + q(path));
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out.substr(0, r.out.find(" [")),
              path +
                  ": refused (EOPNOTSUPP): module_decompress: the kernel has no in-kernel module decompression "
                  "(CONFIG_MODULE_DECOMPRESS is not set)");
    const std::string other = f.c == Compression::xz ? "zstd" : "xz";
    r = test::run(M() + " verify --module-decompress " + other + " --cert " + c() + " " + q(path));
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out.substr(0, r.out.find(" [")), path + ": refused (EINVAL): module_decompress: not " +
                                                     (other == "xz" ? "an " : "a ") + other +
                                                     " compressed module (the kernel decompresses only " + other + ")");
    r = test::run(M() + " verify --module-decompress " + std::string(module::compression_name(f.c)) + " --cert " + c() +
                  " " + q(path));
    EXPECT_EQ(r.status, 0) << r.out;
    r = test::run(M() + " verify --module-decompress lz4 --cert " + c() + " " + q(path));
    EXPECT_EQ(r.status, 2);
    r = test::run(M() + " info --json " + q(path));
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["compressed"]["format"], module::compression_name(f.c));
    EXPECT_EQ(j["compressed"]["kernel_can_decompress"], true);
    EXPECT_EQ(j["signed"], true);
    EXPECT_EQ(j["content_length"], img.size());
    // extract writes the same CMS the image carries.
    r = test::run(M() + " extract " + q(path));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(test::slurp(path + ".p7s"), Bytes(split->cms.begin(), split->cms.end()));
    // strip --recompress restores the unsigned image, still compressed.
    r = test::run(M() + " strip --recompress " + q(path));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(module::detect_compression(test::slurp(path)), f.c);
    EXPECT_EQ(*module::decompress(test::slurp(path), f.c), img);
  }
}

TEST_F(CompressedCli, RecursiveTreeWithMixedFormats) {
  const Bytes img = image(30000);
  ASSERT_EQ(test::run("mkdir -p " + q(d_ / "tree/a/b")).status, 0);
  test::spit(d_ / "tree/a/plain.ko", img);
  test::spit(d_ / "tree/a/b/x.ko.xz", module::compress(img, Compression::xz));
  test::spit(d_ / "tree/a/b/z.ko.zst", module::compress(img, Compression::zstd));
  test::spit(d_ / "tree/g.ko.gz", module::compress(img, Compression::gzip));
  test::spit(d_ / "tree/notes.txt", std::string("not a module"));
  auto r = test::run(M() + " sign --recompress --key " + k() + " --cert " + c() + " -r " + q(d_ / "tree"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4);
  r = test::run(M() + " verify --json --cert " + c() + " -r " + q(d_ / "tree"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4);
  EXPECT_EQ(test::slurp(d_ / "tree/notes.txt"), Bytes({'n', 'o', 't', ' ', 'a', ' ', 'm', 'o', 'd', 'u', 'l', 'e'}));
}

TEST_F(CompressedCli, Crc64IsReportedAsRefusedByTheKernel) {
  const std::string path = d_ / "m.ko";
  test::spit(path, image(5000));
  ASSERT_EQ(test::run(M() + " sign --key " + k() + " --cert " + c() + " " + q(path)).status, 0);
  ASSERT_EQ(test::run("xz -f --check=crc64 " + q(path)).status, 0);
  auto r = test::run(M() + " verify --cert " + c() + " " + q(path + ".xz"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.rfind(path + ".xz: refused (EINVAL): xz stream uses a CRC64 check; the kernel's xz decoder accepts "
                               "only CRC32 or none",
                        0),
            0u)
      << r.out;
  r = test::run(M() + " info " + q(path + ".xz"));
  EXPECT_NE(r.out.find("compressed:          xz (CRC64 check)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernel_decompress:   xz stream uses a CRC64 check"), std::string::npos) << r.out;
  // --recompress writes CRC32, which the kernel accepts.
  r = test::run(M() + " sign --recompress --replace --key " + k() + " --cert " + c() + " " + q(path + ".xz"));
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run("xz --robot --list " + q(path + ".xz") + " | grep -c CRC32");
  EXPECT_NE(r.out, "0\n") << r.out;
  EXPECT_EQ(test::run(M() + " verify --cert " + c() + " " + q(path + ".xz")).status, 0);
}

TEST_F(CompressedCli, BadStreamsExit3AndWriteNothing) {
  const Bytes img = image();
  const Bytes packed = module::compress(img, Compression::xz);
  struct Bad {
    std::string name;
    Bytes data;
    std::string why;
  };
  Bytes trailing = packed;
  trailing.insert(trailing.end(), {1, 2, 3, 4, 5});
  const std::vector<Bad> bad = {
      {"trunc.ko.xz", Bytes(packed.begin(), packed.end() - 9), "xz-compressed module: "},
      {"trail.ko.xz", trailing, "xz-compressed module: 5 bytes of trailing data after the xz stream"},
      {"bomb.ko.zst", module::compress(Bytes(8u << 20, 0), Compression::zstd),
       "zstd-compressed module: decompressed size exceeds the limit of 1000000 bytes"},
  };
  for (const auto& b : bad) {
    const std::string path = d_ / b.name;
    test::spit(path, b.data);
    for (const std::string& cmd : {" sign --recompress --key " + k() + " --cert " + c(), std::string(" verify"),
                                   std::string(" info"), std::string(" strip --recompress"), std::string(" extract")}) {
      // verify predicts the kernel, which ignores bytes after the stream (BytesAfterTheStream).
      if (b.name == "trail.ko.xz" && cmd == " verify") continue;
      auto r = test::run(M() + cmd + " --max-size 1000000 " + q(path));
      EXPECT_EQ(r.status, 3) << b.name << cmd << ": " << r.out << r.err;
      EXPECT_EQ(r.err.rfind("modsign: " + path + ": " + b.why, 0), 0u) << r.err;
      EXPECT_EQ(test::slurp(path), b.data) << b.name << cmd;
    }
  }
  EXPECT_EQ(test::run("ls -A " + q(d_.path()) + " | grep -c modsign").out, "0\n");
}

TEST(Compression, LargeZstdMatchesTheCommandLine) {
  // Above ~8 MiB the zstd command (one worker thread by default) splits the input into
  // jobs; the recompression does the same.
  test::TempDir d;
  Bytes img(12u << 20);
  for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 13 ^ (i >> 9));
  test::spit(d / "m.ko", img);
  ASSERT_EQ(test::run("cd " + q(d.path()) + " && zstd --rm -f -q m.ko").status, 0);
  EXPECT_EQ(to_hex(crypto::digest(crypto::HashAlgo::sha256, module::compress(img, Compression::zstd))),
            to_hex(crypto::digest(crypto::HashAlgo::sha256, test::slurp(d / "m.ko.zst"))));
}

TEST(Compression, StreamsTheKernelDecompressorRefuses) {
  // What lib/xz, module_gzip_header_len() and the kernel's zstd path refuse although the
  // command-line tools read them: each is reported, and verify predicts EINVAL.
  test::TempDir d;
  const Bytes img = image(50000);
  test::spit(d / "m.ko", img);
  struct Case {
    std::string file, cmd, problem_start;
  };
  const std::vector<Case> cases = {
      {"delta.ko.xz", "xz --delta=dist=4 --lzma2 --check=crc32 -c m.ko > delta.ko.xz",
       "xz filter chain other than LZMA2"},
      {"x86off.ko.xz", "xz --x86=start=16 --lzma2 --check=crc32 -c m.ko > x86off.ko.xz",
       "xz BCJ filter with a start offset"},
      {"pz.ko.zst", "pzstd -q -c m.ko > pz.ko.zst", "zstd file starts with a skippable frame"},
      {"comment.ko.gz",
       "python3 -c \"import zlib,sys; d=open('m.ko','rb').read(); c=zlib.compressobj(6,zlib.DEFLATED,-15); "
       "b=c.compress(d)+c.flush(); h=bytes([0x1f,0x8b,8,0x10,0,0,0,0,0,3])+b'a comment\\0'; "
       "sys.stdout.buffer.write(h+b+zlib.crc32(d).to_bytes(4,'little')+len(d).to_bytes(4,'little'))\" > comment.ko.gz",
       "gzip header fields the kernel does not skip"},
  };
  for (const auto& c : cases) {
    auto r = test::run("cd " + q(d.path()) + " && " + c.cmd);
    ASSERT_EQ(r.status, 0) << c.cmd << r.err;
    auto m = module::open_module(test::slurp(d / c.file));
    ASSERT_TRUE(m.ok()) << c.file << ": " << m.error().message;
    EXPECT_EQ(m->image, img) << c.file;  // userspace tools read the right image
    EXPECT_EQ(m->kernel_decompress_problem.rfind(c.problem_start, 0), 0u)
        << c.file << ": " << m->kernel_decompress_problem;
    r = test::run(test::modsign_cli() + " verify " + q(d / c.file));
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(r.out.find(": refused (EINVAL): " + c.problem_start), std::string::npos) << r.out;
  }
  // Plain CLI outputs are fine for the kernel.
  ASSERT_EQ(test::run("cd " + q(d.path()) +
                      " && xz --x86 --lzma2 --check=crc32 -c m.ko > bcj.ko.xz && gzip -n -c m.ko > n.ko.gz")
                .status,
            0);
  EXPECT_EQ(module::open_module(test::slurp(d / "bcj.ko.xz"))->kernel_decompress_problem, "");
  EXPECT_EQ(module::open_module(test::slurp(d / "n.ko.gz"))->kernel_decompress_problem, "");
}

// Decoder failures are worded, never a library status number (user trial: "corrupt xz
// data (liblzma status 9)").
TEST(Compression, DecoderErrorsAreWorded) {
  const Bytes img = image();
  const std::vector<std::pair<Compression, std::string>> trunc = {{Compression::xz, "truncated xz data"},
                                                                  {Compression::zstd, "truncated zstd data"},
                                                                  {Compression::gzip, "truncated gzip data"}};
  for (const auto& [c, want] : trunc) {
    const Bytes packed = module::compress(img, c);
    auto t = module::decompress(ByteView(packed).first(packed.size() / 2), c);
    ASSERT_FALSE(t.ok()) << want;
    EXPECT_EQ(t.error().code, KErr::einval);
    EXPECT_EQ(t.error().message, want);
  }
  // LZMA_DATA_ERROR: a damaged byte inside the LZMA2 data (the block's CRC32 no longer matches).
  Bytes xz = module::compress(img, Compression::xz);
  xz[xz.size() / 2] ^= 0x55;
  auto x = module::decompress(xz, Compression::xz);
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.error().message, "corrupt xz data");
  // LZMA_OPTIONS_ERROR: a reserved bit set in the stream flags (stream header CRC fixed up).
  Bytes opt = module::compress(img, Compression::xz);
  opt[6] = 0x01;                    // the first stream-flag byte must be zero
  std::uint32_t crc = 0xffffffffu;  // CRC-32 (IEEE, reflected) of the two stream-flag bytes
  for (int i = 6; i < 8; ++i) {
    crc ^= opt[i];
    for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  crc ^= 0xffffffffu;
  for (int i = 0; i < 4; ++i) opt[8 + i] = static_cast<std::uint8_t>(crc >> (8 * i));
  auto o = module::decompress(opt, Compression::xz);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().message, "unsupported xz options");
  // gzip: zlib's own words in parentheses.
  Bytes gz = module::compress(img, Compression::gzip);
  gz[3] = 0xe0;  // reserved FLG bits
  auto g = module::decompress(gz, Compression::gzip);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().message, "corrupt gzip data (unknown header flags set)");
}

// module_decompress() (kernel/module/decompress.c) stops at the end of the stream: xz_dec_run
// returns XZ_STREAM_END after the stream footer, zstd_decompress_stream returns 0 at the end
// of the first frame, zlib_inflate Z_STREAM_END after the deflate data.  What follows is never
// read, and module_sig_check() checks the decompressed image only (init_module_from_file with
// MODULE_INIT_COMPRESSED_FILE in kernel/module/main.c).  verify predicts that; sign refuses.
TEST_F(CompressedCli, BytesAfterTheStreamAreIgnoredAsTheKernelDoes) {
  const Bytes img = image(20000);
  test::spit(d_ / "plain.ko", img);
  ASSERT_EQ(test::run(M() + " sign --key " + k() + " --cert " + c() + " --dest " + q(d_ / "signed.ko") + " " +
                      q(d_ / "plain.ko"))
                .status,
            0);
  const Bytes signed_img = test::slurp(d_ / "signed.ko");
  const Bytes appended(signed_img.begin() + static_cast<std::ptrdiff_t>(img.size()), signed_img.end());
  for (const auto& f : kFormats) {
    const std::string fmt(module::compression_name(f.c));
    // A signed image, then junk (for zstd: a second frame; for gzip: a second member).
    Bytes junk = module::compress(signed_img, f.c);
    const Bytes extra = f.c == Compression::xz ? Bytes{1, 2, 3, 4, 5} : module::compress(img, f.c);
    junk.insert(junk.end(), extra.begin(), extra.end());
    const std::string p1 = d_ / ("junk.ko." + std::string(f.ext));
    test::spit(p1, junk);
    auto r = test::run(M() + " verify --cert " + c() + " " + q(p1));
    EXPECT_EQ(r.status, 0) << fmt << r.out << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find(p1 + ": loads (OK): signature verified: mldsa65 signature"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" bytes stored, " + std::to_string(extra.size()) + " bytes after the " + fmt +
                         " stream ignored]" + test::kLoadScope + "\n"),
              std::string::npos)
        << r.out;
    r = test::run(M() + " verify --json --cert " + c() + " " + q(p1));
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["outcome"], "loads") << fmt;
    EXPECT_EQ(j["compressed"]["bytes_after_stream"], extra.size()) << fmt;
    EXPECT_EQ(j["compressed"]["signature_after_stream"], false) << fmt;
    EXPECT_EQ(j["compressed"]["stored_size"], junk.size()) << fmt;
    // An unsigned image compressed, with a signature appended to the compressed file: the
    // kernel never sees that signature (unsigned: tainted, or EKEYREJECTED when enforced).
    Bytes outside = module::compress(img, f.c);
    outside.insert(outside.end(), appended.begin(), appended.end());
    const std::string p2 = d_ / ("outside.ko." + std::string(f.ext));
    test::spit(p2, outside);
    r = test::run(M() + " verify --json --cert " + c() + " " + q(p2));
    EXPECT_EQ(r.status, 1) << fmt << r.out << r.err;
    j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["outcome"], "loads-tainted") << fmt;
    EXPECT_EQ(j["errno"], "ENODATA") << fmt;
    EXPECT_EQ(j["compressed"]["bytes_after_stream"], appended.size()) << fmt;
    EXPECT_EQ(j["compressed"]["signature_after_stream"], true) << fmt;
    r = test::run(M() + " verify --enforce --cert " + c() + " " + q(p2));
    EXPECT_EQ(r.status, 1) << fmt;
    EXPECT_EQ(r.out.rfind(p2 + ": refused (EKEYREJECTED): Loading of unsigned module is rejected", 0), 0u) << r.out;
    EXPECT_NE(r.out.find(std::to_string(appended.size()) + " bytes after the " + fmt +
                         " stream ignored (a module signature there is never checked)] [kernel v7.0+enforce]\n"),
              std::string::npos)
        << r.out;
    // sign keeps refusing to write such a file; the file is unchanged.
    r = test::run(M() + " sign --recompress --replace --key " + k() + " --cert " + c() + " " + q(p1));
    EXPECT_EQ(r.status, 3) << fmt;
    EXPECT_NE(r.err.find("bytes of trailing data after the"), std::string::npos) << r.err;
    EXPECT_EQ(test::slurp(p1), junk);
  }
}
