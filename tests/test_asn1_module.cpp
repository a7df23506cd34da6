// DER writer/reader and the appended module signature trailer.
#include <gtest/gtest.h>

#include "asn1/der.hpp"
#include "module/module_signature.hpp"
#include "test_support.hpp"

using namespace modsign;

TEST(Asn1, HeaderShortAndLongForms) {
  EXPECT_EQ(asn1::header(0x30, 0), (Bytes{0x30, 0x00}));
  EXPECT_EQ(asn1::header(0x30, 127), (Bytes{0x30, 0x7f}));
  EXPECT_EQ(asn1::header(0x30, 128), (Bytes{0x30, 0x81, 0x80}));
  EXPECT_EQ(asn1::header(0x04, 3309), (Bytes{0x04, 0x82, 0x0c, 0xed}));
  EXPECT_EQ(asn1::header(0x04, 0x1000000), (Bytes{0x04, 0x84, 0x01, 0x00, 0x00, 0x00}));
}

TEST(Asn1, IntegerMinimalTwosComplement) {
  auto enc = [](std::uint64_t v) { return asn1::Writer().integer(v).take(); };
  EXPECT_EQ(enc(0), (Bytes{0x02, 0x01, 0x00}));
  EXPECT_EQ(enc(1), (Bytes{0x02, 0x01, 0x01}));
  EXPECT_EQ(enc(127), (Bytes{0x02, 0x01, 0x7f}));
  EXPECT_EQ(enc(128), (Bytes{0x02, 0x02, 0x00, 0x80}));
  EXPECT_EQ(enc(0x1001), (Bytes{0x02, 0x02, 0x10, 0x01}));
}

TEST(Asn1, SetOfIsSortedByEncoding) {
  // X.690 11.6: 0x30 0x18 ... (contentType attribute) sorts before 0x30 0x4f ... (messageDigest).
  Bytes longer{0x30, 0x4f, 0x01};
  Bytes shorter{0x30, 0x18, 0x02};
  Bytes prefix{0x04, 0x01};
  Bytes prefix_longer{0x04, 0x01, 0x05};  // {04 01} pads to {04 01 00}: sorts first
  auto out = asn1::Writer().set_of({longer, shorter, prefix_longer, prefix}).take();
  EXPECT_EQ(out, (Bytes{0x31, 0x0b, 0x04, 0x01, 0x04, 0x01, 0x05, 0x30, 0x18, 0x02, 0x30, 0x4f, 0x01}));
}

TEST(Asn1, OidToString) {
  const Bytes mldsa65{0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x12};
  EXPECT_EQ(asn1::oid_to_string(mldsa65), "2.16.840.1.101.3.4.3.18");
  EXPECT_EQ(asn1::oid_to_string(Bytes{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02}), "1.2.840.113549.1.7.2");
  EXPECT_EQ(asn1::oid_to_string(Bytes{0x2a, 0x86}), "(invalid OID)");
}

TEST(Asn1, ReaderRejectsBadLengths) {
  auto err = [](Bytes b) -> std::string {
    try {
      asn1::Reader(b).next();
    } catch (const asn1::DecodeError& e) { return e.what(); }
    return "accepted";
  };
  EXPECT_EQ(err({0x30}), "truncated element header");
  EXPECT_EQ(err({0x30, 0x80, 0x00, 0x00}), "indefinite length is not DER");
  EXPECT_EQ(err({0x30, 0x05, 0x01}), "element length exceeds the input");
  EXPECT_EQ(err({0x30, 0x81, 0x05, 1, 2, 3, 4, 5}), "non-minimal length encoding");
  EXPECT_EQ(err({0x30, 0x85, 0, 0, 0, 0, 1}), "length field longer than 4 octets");
  EXPECT_EQ(err({0x30, 0x84, 0xff, 0xff, 0xff, 0xff}), "element length exceeds the input");
  EXPECT_EQ(err({0x1f, 0x01, 0x00}), "high tag numbers are not supported");
  EXPECT_EQ(err({0x04, 0x02, 0xaa, 0xbb}), "accepted");
}

TEST(Asn1, ReaderElementViews) {
  const Bytes b{0x30, 0x06, 0x02, 0x01, 0x03, 0x04, 0x01, 0xaa, 0x05, 0x00};
  asn1::Reader r(b);
  auto seq = r.expect(asn1::kSequence, "seq");
  EXPECT_EQ(seq.header_len(), 2u);
  EXPECT_EQ(seq.content.size(), 6u);
  asn1::Reader in(seq.content);
  EXPECT_EQ(in.read_small_uint("v"), 3u);
  EXPECT_EQ(in.expect(asn1::kOctetString, "o").content[0], 0xaa);
  in.finish("seq");
  EXPECT_TRUE(r.peek(asn1::kNull));
  EXPECT_THROW(r.expect(asn1::kSequence, "x"), asn1::DecodeError);
}

// --------------------------------------------------------------------------- trailer

TEST(ModuleTrailer, ByteLayout) {
  EXPECT_EQ(module::kMarker.size(), 28u);
  EXPECT_EQ(module::encode_module_signature(0x0d8f), (Bytes{0, 0, 2, 0, 0, 0, 0, 0, 0x00, 0x00, 0x0d, 0x8f}));
  const Bytes content{'E', 'L', 'F', 1};
  const Bytes cms{0x30, 0x03, 0x02, 0x01, 0x01};
  Bytes signed_mod = module::append_signature(content, cms);
  ASSERT_EQ(signed_mod.size(), 4u + 5u + 12u + 28u);
  EXPECT_EQ(to_hex(signed_mod),
            "454c4601"
            "3003020101"
            "000002000000000000000005" +
                to_hex(ByteView(reinterpret_cast<const std::uint8_t*>(module::kMarker.data()), 28)));
  auto split = module::split(signed_mod);
  ASSERT_TRUE(split.ok()) << split.error().message;
  EXPECT_EQ(Bytes(split->content.begin(), split->content.end()), content);
  EXPECT_EQ(Bytes(split->cms.begin(), split->cms.end()), cms);
  EXPECT_EQ(split->trailer.sig_len, 5u);
}

TEST(ModuleTrailer, MatchesOpenSslVectorLayout) {
  // content.bin ‖ p7s ‖ module_signature ‖ marker, made with the openssl CLI and printf.
  const Bytes file = test::slurp(test::vector_path("openssl-3.5.7-generated/mldsa65.module-appended.bin"));
  const Bytes p7s =
      test::slurp(test::vector_path("openssl-3.5.7-generated/mldsa65.detached.min-attrs.issuer-serial.p7s"));
  const Bytes content = test::slurp(test::vector_path("openssl-3.5.7-generated/content.bin"));
  EXPECT_EQ(module::append_signature(content, p7s), file);
  auto split = module::split(file);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->content.size(), 4096u);
  EXPECT_EQ(split->cms.size(), 3555u);
}

namespace {
Bytes with_trailer_byte(std::size_t offset, std::uint8_t value) {
  Bytes m = module::append_signature(test::pattern(100), Bytes{0x30, 0x00});
  m[m.size() - 28 - 12 + offset] = value;
  return m;
}
}  // namespace

TEST(ModuleTrailer, KernelErrnoForMalformedTrailers) {
  // No marker at all: ENODATA (module_sig_check: "unsigned module").
  auto r = module::split(test::pattern(100));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, KErr::enodata);
  // Exactly the marker: not longer than it, so unsigned.
  Bytes just_marker(module::kMarker.begin(), module::kMarker.end());
  EXPECT_EQ(module::split(just_marker).error().code, KErr::enodata);
  // 12 bytes or fewer before the marker: EBADMSG.
  Bytes short_mod(12, 0);
  short_mod.insert(short_mod.end(), module::kMarker.begin(), module::kMarker.end());
  EXPECT_EQ(module::split(short_mod).error().code, KErr::ebadmsg);
  // id_type 1 (PGP): ENOPKG.
  EXPECT_EQ(module::split(with_trailer_byte(2, 1)).error().code, KErr::enopkg);
  // Non-zero legacy fields: EBADMSG, each of algo, hash, signer_len, key_id_len, pad.
  for (std::size_t off : {0u, 1u, 3u, 4u, 5u, 6u, 7u}) {
    auto e = module::split(with_trailer_byte(off, 1));
    ASSERT_FALSE(e.ok()) << off;
    EXPECT_EQ(e.error().code, KErr::ebadmsg) << off;
    EXPECT_EQ(e.error().message, "PKCS#7 signature info has unexpected non-zero params");
  }
  // sig_len >= file length - 12 (the check comes before id_type): EBADMSG.
  Bytes m = module::append_signature(test::pattern(100), Bytes{0x30, 0x00});
  const std::size_t ms = m.size() - 28 - 12;
  m[ms + 2] = 1;  // wrong id_type too: length is checked first
  m[ms + 10] = 0;
  m[ms + 11] = 102;  // 100 content + 2 cms = 102 = modlen - 12
  EXPECT_EQ(module::split(m).error().code, KErr::ebadmsg);
  m[ms + 11] = 101;  // fits: now the id_type check fires
  EXPECT_EQ(module::split(m).error().code, KErr::enopkg);
  // 4 GiB - 1 sig_len.
  Bytes huge = module::append_signature(test::pattern(100), Bytes{0x30, 0x00});
  for (std::size_t i = 8; i < 12; ++i) huge[huge.size() - 28 - 12 + i] = 0xff;
  EXPECT_EQ(module::split(huge).error().code, KErr::ebadmsg);
}

TEST(ModuleTrailer, CompressionByMagic) {
  EXPECT_EQ(module::detect_compression(Bytes{0xfd, '7', 'z', 'X', 'Z', 0x00, 0x00}), module::Compression::xz);
  EXPECT_EQ(module::detect_compression(Bytes{0x28, 0xb5, 0x2f, 0xfd, 0x00}), module::Compression::zstd);
  EXPECT_EQ(module::detect_compression(Bytes{0x1f, 0x8b, 0x08}), module::Compression::gzip);
  EXPECT_EQ(module::detect_compression(Bytes{0x7f, 'E', 'L', 'F'}), module::Compression::none);
  EXPECT_EQ(module::detect_compression(Bytes{0xfd, '7', 'z'}), module::Compression::none);
}
