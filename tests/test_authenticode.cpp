// Authenticode image hashes and signatures (include/modsign/authenticode.hpp, pe/): Debian's
// signed EFI binaries and mutated copies against pesign, osslsigncode and sbverify; a
// minimal PE32+/PE32 image built here; hostile headers with their exact errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <functional>

#include "crypto/crypto.hpp"
#include "modsign/authenticode.hpp"
#include "test_support.hpp"

namespace modsign {
namespace {

using test::q;

// ----------------------------------------------------------------------- a minimal image
// PE32+ (or PE32) with 16 data directories and two sections of 512 bytes:
//   0x000 MS-DOS header (e_lfanew 0x40)   0x040 "PE\0\0"   0x044 COFF File Header
//   0x058 Optional Header (240 bytes PE32+, 224 PE32)       then the Section Table
//   0x200 .text (512 bytes)   0x400 .data (512 bytes)       [0x600 Certificate Table]
constexpr std::size_t kOpt = 0x58;

void put16(Bytes& b, std::size_t off, std::uint32_t v) {
  b[off] = v & 0xff;
  b[off + 1] = (v >> 8) & 0xff;
}
void put32(Bytes& b, std::size_t off, std::uint32_t v) {
  put16(b, off, v & 0xffff);
  put16(b, off + 2, v >> 16);
}

struct Mini {
  bool plus = true;
  std::size_t fixed() const { return plus ? 112 : 96; }
  std::size_t opt_size() const { return fixed() + 16 * 8; }
  std::size_t dirs() const { return kOpt + fixed(); }
  std::size_t cert_dir() const { return dirs() + 4 * 8; }
  std::size_t sections() const { return kOpt + opt_size(); }
};

/// The image; with `cert_len` > 0 a Certificate Table of one WIN_CERTIFICATE (dwLength
/// cert_len, 8-byte aligned) follows at 0x600.
Bytes minimal_pe(const Mini& m = {}, std::uint32_t cert_len = 0) {
  Bytes b(0x600, 0);
  b[0] = 'M';
  b[1] = 'Z';
  put32(b, 0x3c, 0x40);
  b[0x40] = 'P';
  b[0x41] = 'E';
  put16(b, 0x44, m.plus ? 0x8664 : 0x14c);
  put16(b, 0x46, 2);
  put16(b, 0x54, static_cast<std::uint32_t>(m.opt_size()));
  put16(b, 0x56, 0x2022);
  put16(b, kOpt, m.plus ? 0x20b : 0x10b);
  put32(b, kOpt + 16, 0x1000);      // AddressOfEntryPoint
  put32(b, kOpt + 32, 0x1000);      // SectionAlignment
  put32(b, kOpt + 36, 0x200);       // FileAlignment
  put32(b, kOpt + 56, 0x3000);      // SizeOfImage
  put32(b, kOpt + 60, 0x200);       // SizeOfHeaders
  put32(b, kOpt + 64, 0x12345678);  // CheckSum
  put16(b, kOpt + 68, 10);          // EFI application
  put32(b, m.dirs() - 4, 16);       // NumberOfRvaAndSizes
  const char* names[] = {".text", ".data"};
  for (std::uint32_t i = 0; i < 2; ++i) {
    const std::size_t h = m.sections() + 40 * i;
    std::copy(names[i], names[i] + 5, b.begin() + static_cast<std::ptrdiff_t>(h));
    put32(b, h + 8, 0x200);
    put32(b, h + 12, 0x1000 * (i + 1));
    put32(b, h + 16, 0x200);
    put32(b, h + 20, 0x200 * (i + 1));
  }
  for (std::size_t i = 0x200; i < 0x600; ++i) b[i] = static_cast<std::uint8_t>(i * 7 + 3);
  if (cert_len) {
    const std::uint32_t padded = (cert_len + 7) & ~7u;
    put32(b, m.cert_dir(), 0x600);
    put32(b, m.cert_dir() + 4, padded);
    b.resize(0x600 + padded, 0);
    put32(b, 0x600, cert_len);
    put16(b, 0x604, 0x0200);
    put16(b, 0x606, 0x0002);
  }
  return b;
}

Bytes sha256_of_ranges(ByteView f, std::initializer_list<std::pair<std::size_t, std::size_t>> ranges) {
  crypto::Hasher h(crypto::HashAlgo::sha256);
  for (auto [from, to] : ranges) h.update(f.subspan(from, to - from));
  return h.final();
}

std::string error_of(const Bytes& image) {
  auto r = authenticode_image(image);
  if (r.ok()) return "(no error)";
  EXPECT_EQ(r.error().code, KErr::ebadmsg);
  return r.error().message;
}

TEST(Authenticode, MinimalPe32PlusDigestIsTheSpecifiedRanges) {
  const Mini m;
  const Bytes img = minimal_pe(m);
  auto r = authenticode_image(img);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->machine, 0x8664);
  EXPECT_EQ(r->machine_name, "x86-64");
  EXPECT_TRUE(r->pe32_plus);
  EXPECT_EQ(r->subsystem, 10);
  EXPECT_EQ(r->checksum, 0x12345678u);
  ASSERT_EQ(r->sections.size(), 2u);
  EXPECT_EQ(r->sections[1].name, ".data");
  EXPECT_EQ(r->sections[1].pointer_to_raw_data, 0x400u);
  EXPECT_EQ(r->certificate_table_size, 0u);
  EXPECT_TRUE(r->signatures.empty());
  // CheckSum at 0x98..0x9c, directory entry 4 at 0xe8..0xf0.
  EXPECT_EQ(m.cert_dir(), 0xe8u);
  EXPECT_EQ(r->sha256, sha256_of_ranges(img, {{0, 0x98}, {0x9c, 0xe8}, {0xf0, 0x600}}));
  EXPECT_EQ(r->sha1.size(), 20u);
  EXPECT_EQ(r->sha384.size(), 48u);
  EXPECT_EQ(r->sha512.size(), 64u);
  // Neither CheckSum nor the certificate directory entry is hashed; one header byte is.
  Bytes other = img;
  put32(other, 0x98, 0);
  put32(other, 0xe8, 0x600);
  put32(other, 0xec, 0);
  EXPECT_EQ(authenticode_image(other)->sha256, r->sha256);
  other[0x9c] ^= 1;
  EXPECT_NE(authenticode_image(other)->sha256, r->sha256);
}

TEST(Authenticode, MinimalPe32AndSectionOrder) {
  const Mini m{false};
  Bytes img = minimal_pe(m);
  auto r = authenticode_image(img);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->machine_name, "IA-32");
  EXPECT_FALSE(r->pe32_plus);
  EXPECT_EQ(m.cert_dir(), 0xd8u);
  EXPECT_EQ(r->sha256, sha256_of_ranges(img, {{0, 0x98}, {0x9c, 0xd8}, {0xe0, 0x600}}));
  // Sections are hashed in file order, whatever the Section Table order.
  Bytes swapped = img;
  std::swap_ranges(swapped.begin() + static_cast<std::ptrdiff_t>(m.sections()),
                   swapped.begin() + static_cast<std::ptrdiff_t>(m.sections() + 40),
                   swapped.begin() + static_cast<std::ptrdiff_t>(m.sections() + 40));
  auto s = authenticode_image(swapped);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->sections[0].name, ".data");
  EXPECT_EQ(s->sha256, sha256_of_ranges(swapped, {{0, 0x98}, {0x9c, 0xd8}, {0xe0, 0x600}}));
  put16(img, 0x44, 0x5064);
  EXPECT_EQ(authenticode_image(img)->machine_name, "unknown (0x5064)");
}

TEST(Authenticode, TrailingDataAndCertificateTableFollowTheFormula) {
  Bytes img = minimal_pe({}, 16);
  for (std::size_t i = 0x608; i < 0x610; ++i) img[i] = 0xee;
  auto r = authenticode_image(img);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->certificate_table_offset, 0x600u);
  EXPECT_EQ(r->bytes_after_certificate_table, 0u);
  ASSERT_EQ(r->signatures.size(), 1u);
  EXPECT_EQ(r->signatures[0].offset, 0x600u);
  EXPECT_EQ(r->signatures[0].length, 16u);
  EXPECT_EQ(r->signatures[0].error, "malformed Authenticode PKCS#7: ContentInfo: expected tag 0x30, found 0xee");
  EXPECT_FALSE(r->signatures[0].matches);
  // The table is not hashed: the same digest as without it.
  EXPECT_EQ(r->sha256, authenticode_image(minimal_pe())->sha256);
  // Data appended after the table: FILE_SIZE - (table + SUM) = 3 bytes at SUM (0x600).
  img.insert(img.end(), {1, 2, 3});
  r = authenticode_image(img);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->bytes_after_certificate_table, 3u);
  EXPECT_EQ(r->sha256, sha256_of_ranges(img, {{0, 0x98}, {0x9c, 0xe8}, {0xf0, 0x603}}));
  // Other revisions and types are listed, not read.
  put16(img, 0x604, 0x0100);
  EXPECT_EQ(authenticode_image(img)->signatures[0].error, "wRevision 0x0100 is not 0x0200");
  put16(img, 0x604, 0x0200);
  put16(img, 0x606, 0x0001);
  EXPECT_EQ(authenticode_image(img)->signatures[0].error,
            "wCertificateType 0x0001 is not WIN_CERT_TYPE_PKCS_SIGNED_DATA (0x0002)");
}

struct Hostile {
  const char* name;
  std::function<Bytes()> make;
  std::string error;
};

Bytes truncated(std::size_t n, std::uint32_t cert_len = 0) {
  Bytes b = minimal_pe({}, cert_len);
  b.resize(n);
  return b;
}
Bytes with(std::function<void(Bytes&)> f, std::uint32_t cert_len = 0) {
  Bytes b = minimal_pe({}, cert_len);
  f(b);
  return b;
}

TEST(Authenticode, HostileHeadersAreRefusedWithExactErrors) {
  const Mini m;
  const std::vector<Hostile> cases = {
      {"empty", [] { return Bytes{}; }, "truncated MS-DOS header: the file is 0 bytes, the header needs 64"},
      {"in DOS header", [] { return truncated(63); },
       "truncated MS-DOS header: the file is 63 bytes, the header needs 64"},
      {"no MZ", [] { return with([](Bytes& b) { b[0] = 'Z'; }); },
       "no MS-DOS header: the file does not start with \"MZ\""},
      {"at e_lfanew", [] { return truncated(64); },
       "e_lfanew 0x40 (at offset 0x3c) leaves no room for the PE signature and the COFF File Header (24 bytes) in a "
       "file of 64 bytes"},
      {"in COFF header", [] { return truncated(0x57); },
       "e_lfanew 0x40 (at offset 0x3c) leaves no room for the PE signature and the COFF File Header (24 bytes) in a "
       "file of 87 bytes"},
      {"e_lfanew beyond the file", [] { return with([](Bytes& b) { put32(b, 0x3c, 0x10000); }); },
       "e_lfanew 0x10000 (at offset 0x3c) leaves no room for the PE signature and the COFF File Header (24 bytes) in "
       "a file of 1536 bytes"},
      {"e_lfanew 0xffffffff", [] { return with([](Bytes& b) { put32(b, 0x3c, 0xffffffff); }); },
       "e_lfanew 0xffffffff (at offset 0x3c) leaves no room for the PE signature and the COFF File Header (24 bytes) "
       "in a file of 1536 bytes"},
      {"no PE signature", [] { return with([](Bytes& b) { b[0x41] = 'X'; }); },
       "no PE signature \"PE\\0\\0\" at offset 0x40 (e_lfanew)"},
      {"in Optional Header", [] { return truncated(0x58 + 239); },
       "Optional Header (offset 0x58, SizeOfOptionalHeader 240) runs past the end of the file (327 bytes)"},
      {"SizeOfOptionalHeader 0", [] { return with([](Bytes& b) { put16(b, 0x54, 0); }); },
       "SizeOfOptionalHeader 0 (at offset 0x54) leaves no room for the Optional Header magic"},
      {"bad magic", [] { return with([](Bytes& b) { put16(b, 0x58, 0x107); }); },
       "Optional Header magic 0x107 at offset 0x58 is neither PE32 (0x10b) nor PE32+ (0x20b)"},
      {"short Optional Header", [] { return with([](Bytes& b) { put16(b, 0x54, 100); }); },
       "SizeOfOptionalHeader 100 (at offset 0x54) is smaller than the PE32+ Optional Header's fixed part (112 bytes)"},
      {"NumberOfRvaAndSizes huge", [m] { return with([m](Bytes& b) { put32(b, m.dirs() - 4, 0xffffffff); }); },
       "NumberOfRvaAndSizes 4294967295 (at offset 0xc4) needs 34359738360 bytes of data directories, "
       "SizeOfOptionalHeader leaves 128"},
      {"NumberOfSections huge", [] { return with([](Bytes& b) { put16(b, 0x46, 0xffff); }); },
       "NumberOfSections 65535 (at offset 0x46) exceeds 96"},
      {"NumberOfSections 96", [] { return with([](Bytes& b) { put16(b, 0x46, 96); }); },
       "Section Table (offset 0x148, 96 entries of 40 bytes) runs past the end of the file (1536 bytes)"},
      {"SizeOfHeaders inside the Section Table", [] { return with([](Bytes& b) { put32(b, kOpt + 60, 0x180); }); },
       "SizeOfHeaders 384 (at offset 0x94) ends before the end of the Section Table (offset 0x198)"},
      {"in Section Table", [] { return truncated(0x148 + 79); },
       "Section Table (offset 0x148, 2 entries of 40 bytes) runs past the end of the file (407 bytes)"},
      {"before SizeOfHeaders", [] { return truncated(0x1ff); },
       "SizeOfHeaders 512 (at offset 0x94) exceeds the file size (511 bytes)"},
      {"in the last section", [] { return truncated(0x5ff); },
       "section 2 \".data\" (Section Table entry at offset 0x170): PointerToRawData 0x400 + SizeOfRawData 512 runs "
       "past the end of the file (1535 bytes)"},
      {"PointerToRawData past EOF", [m] { return with([m](Bytes& b) { put32(b, m.sections() + 20, 0xfffffe00); }); },
       "section 1 \".text\" (Section Table entry at offset 0x148): PointerToRawData 0xfffffe00 + SizeOfRawData 512 "
       "runs past the end of the file (1536 bytes)"},
      {"SizeOfRawData 0xffffffff", [m] { return with([m](Bytes& b) { put32(b, m.sections() + 16, 0xffffffff); }); },
       "section 1 \".text\" (Section Table entry at offset 0x148): PointerToRawData 0x200 + SizeOfRawData 4294967295 "
       "runs past the end of the file (1536 bytes)"},
      {"in the Certificate Table", [] { return truncated(0x60f, 16); },
       "Certificate Table (directory entry 4 at offset 0xe8: file offset 0x600, 16 bytes) runs past the end of the "
       "file (1551 bytes)"},
      {"Certificate Table size huge",
       [m] { return with([m](Bytes& b) { put32(b, m.cert_dir() + 4, 0xffffffff); }, 16); },
       "Certificate Table (directory entry 4 at offset 0xe8: file offset 0x600, 4294967295 bytes) runs past the end "
       "of the file (1552 bytes)"},
      {"Certificate Table at 0", [m] { return with([m](Bytes& b) { put32(b, m.cert_dir(), 0); }, 16); },
       "Certificate Table (directory entry 4 at offset 0xe8: file offset 0x0, 16 bytes) has file offset 0"},
      {"Certificate Table over the headers", [m] { return with([m](Bytes& b) { put32(b, m.cert_dir(), 0x100); }, 16); },
       "Certificate Table (directory entry 4 at offset 0xe8: file offset 0x100, 16 bytes) overlaps the headers "
       "(SizeOfHeaders 512)"},
      {"Certificate Table over a section", [m] { return with([m](Bytes& b) { put32(b, m.cert_dir(), 0x5f8); }, 16); },
       "Certificate Table (directory entry 4 at offset 0xe8: file offset 0x5f8, 16 bytes) overlaps section 2 "
       "\".data\" (file offset 0x400, 512 bytes)"},
      {"dwLength 0", [] { return with([](Bytes& b) { put32(b, 0x600, 0); }, 16); },
       "WIN_CERTIFICATE at offset 0x600: dwLength 0 is smaller than its 8-byte header"},
      {"dwLength 7", [] { return with([](Bytes& b) { put32(b, 0x600, 7); }, 16); },
       "WIN_CERTIFICATE at offset 0x600: dwLength 7 is smaller than its 8-byte header"},
      {"dwLength 0xffffffff", [] { return with([](Bytes& b) { put32(b, 0x600, 0xffffffff); }, 16); },
       "WIN_CERTIFICATE at offset 0x600: dwLength 4294967295 runs past the end of the Certificate Table (offset "
       "0x610)"},
      {"remainder of the table",
       [m] {
         return with(
             [m](Bytes& b) {
               put32(b, m.cert_dir() + 4, 20);
               b.resize(0x614, 0);
             },
             16);
       },
       "Certificate Table: the 4 bytes at offset 0x610 are too few for a WIN_CERTIFICATE header (8 bytes)"},
      {"65 entries",
       [m] {
         return with(
             [m](Bytes& b) {
               put32(b, m.cert_dir() + 4, 65 * 8);
               b.resize(0x600 + 65 * 8, 0);
               for (std::size_t i = 0; i < 65; ++i) put32(b, 0x600 + 8 * i, 8);
             },
             16);
       },
       "Certificate Table holds more than 64 WIN_CERTIFICATE entries"},
      {"sections and table exceed the file",
       [m] {
         // .data duplicates .text's raw data, the table sits where .data would be: the
         // file (0x610) is more than SUM_OF_BYTES_HASHED (0x600) and less than SUM + table.
         return with(
             [m](Bytes& b) {
               put32(b, m.sections() + 40 + 20, 0x200);
               put32(b, m.cert_dir(), 0x400);
               put32(b, m.cert_dir() + 4, 0x200);
               put32(b, 0x400, 0x200);
               put16(b, 0x404, 0x200);
               put16(b, 0x406, 2);
             },
             16);
       },
       "headers and sections (SUM_OF_BYTES_HASHED 1536) and the Certificate Table (512 bytes) exceed the file size "
       "(1552 bytes)"},
  };
  for (const auto& c : cases) EXPECT_EQ(error_of(c.make()), c.error) << c.name;
  // Every prefix of a signed-looking image is refused or read, never read out of bounds.
  const Bytes full = minimal_pe({}, 16);
  for (std::size_t n = 0; n < full.size(); ++n) {
    Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_FALSE(authenticode_image(cut).ok()) << n;
  }
}

}  // namespace
}  // namespace modsign
