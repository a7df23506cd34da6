// The digests the kernel's PKCS#7 parser names beyond modsign's signing hashes: SM3 and
// Streebog (pkcs7_sig_note_digest_algo).  Whether the kernel has them is part of its
// profile (KernelModel::absent_hashes, CONFIG_CRYPTO_SM3 / _STREEBOG); where it has them,
// pkcs7_digest() hashes the module and the signature check that follows fails.  Found by
// mutant 20261203:1043 (Debian's RSA signature, digestAlgorithm Streebog-512: Debian's
// kernels load streebog_generic and refuse with EKEYREJECTED, where modsign predicted
// unsupported crypto); the same situations are cases of every Debian kernel's fixed suite
// (tools/conformance/cases_debian.py digest-swapped-*, unknown-rsa-embedded-cert-*).
#include <gtest/gtest.h>

#include "cms/pkcs7_verify.hpp"
#include "cms/public_key.hpp"
#include "kernel_support.hpp"

using namespace modsign;
using namespace modsign::test::kernel_tests;

namespace {

const Bytes kStreebog512Oid = oid_bytes({0x2a, 0x85, 0x03, 0x07, 0x01, 0x01, 0x02, 0x03});  // 1.2.643.7.1.1.2.3
const Bytes kSm3Oid = oid_bytes({0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x83, 0x11});          // 1.2.156.10197.1.401

Bytes bytes_of(std::string_view s) { return Bytes(s.begin(), s.end()); }

Result<cms::Pkcs7Message> message(const Bytes& digest_oid, const KernelModel& p) {
  MsgSpec m = one({.algo = KeyAlgo::rsa, .digest_oid = digest_oid});
  auto msg = cms::pkcs7_parse_message(build(m, content()), p);
  if (msg) msg.value().data = content();
  return msg;
}

}  // namespace

// GB/T 32905-2016 appendix A.1 ("abc") and RFC 6986 §10.1 / §10.2 (message M1).
TEST(Pkcs7DigestHashes, KnownAnswers) {
  const Bytes m1 = bytes_of("012345678901234567890123456789012345678901234567890123456789012");
  EXPECT_EQ(to_hex(*crypto::botan::kernel_only_digest("sm3", bytes_of("abc"))),
            "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0");
  EXPECT_EQ(to_hex(*crypto::botan::kernel_only_digest("streebog256", m1)),
            "9d151eefd8590b89daa6ba6cb74af9275dd051026bb149a452fd84e5e57b5500");
  EXPECT_EQ(to_hex(*crypto::botan::kernel_only_digest("streebog512", m1)),
            "1b54d01a4af5b9d5cc3d86d68d285462b19abc2475222f35c085122be4ba1ffa"
            "00ad30f8767b3a82384c6574f024c311e2a481332b08ef7f41797891c1646f48");
  EXPECT_FALSE(crypto::botan::kernel_only_digest("sha256", m1));
}

TEST(Pkcs7DigestHashes, HashedWhereTheKernelHasThem) {
  for (const auto& [oid, name] : {std::pair{kStreebog512Oid, "streebog512"}, std::pair{kSm3Oid, "sm3"}}) {
    KernelModel has = KernelModel::v7_0();
    auto msg = message(oid, has);
    ASSERT_TRUE(msg) << name;
    ASSERT_TRUE(cms::pkcs7_digest(msg.value(), 0, has)) << name;
    EXPECT_EQ(*msg.value().signed_infos[0].m, *crypto::botan::kernel_only_digest(name, content())) << name;

    KernelModel lacks = KernelModel::v7_0();
    lacks.absent_hashes = {name == std::string("sm3") ? "sm3" : "streebog"};
    auto msg2 = message(oid, lacks);
    ASSERT_TRUE(msg2);
    auto st = cms::pkcs7_digest(msg2.value(), 0, lacks);
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code, KErr::enopkg) << name;
  }
}

// After the digest, RSA has no DigestInfo for these hashes: EINVAL from 6.12 and 7.2's
// template, ENOENT from 6.1's crypto_alloc_akcipher (Debian 12, 13 and unstable confirmed).
TEST(Pkcs7DigestHashes, RsaSchemeRefusesThem) {
  const Signer& sg = signer(KeyAlgo::rsa);
  cms::SignedInfo si;
  si.pkey_algo = "rsa";
  si.hash_algo = "streebog512";
  si.signature = Bytes(256, 1);
  const Bytes m = *crypto::botan::kernel_only_digest("streebog512", content());
  auto errno_on = [&](const KernelModel& p) {
    auto st = cms::public_key_verify_signature(sg.key.public_key(), si, m, crypto::Backend::openssl, nullptr, &p);
    return st ? KErr::none : st.error().code;
  };
  EXPECT_EQ(errno_on(KernelModel::v6_1()), KErr::enoent);
  EXPECT_EQ(errno_on(KernelModel::v6()), KErr::einval);
  EXPECT_EQ(errno_on(KernelModel::v7_0()), KErr::einval);
}

// Hostile review: the streaming paths (verify of a large module, digest, ima template)
// hand pkcs7_digest precomputed digests of the content and no content; SM3 and Streebog
// are not among them.  An empty content was hashed; now it is "not predicted".
TEST(Pkcs7DigestHashes, StreamedContentIsNotHashedAsEmpty) {
  KernelModel has = KernelModel::v7_0();
  MsgSpec m = one({.algo = KeyAlgo::rsa, .digest_oid = kSm3Oid});
  auto msg = cms::pkcs7_parse_message(build(m, content()), has);
  ASSERT_TRUE(msg);
  msg.value().data_digests.emplace_back("sha256", crypto::digest(crypto::HashAlgo::sha256, content()));
  auto st = cms::pkcs7_digest(msg.value(), 0, has);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, KErr::enopkg);
  EXPECT_EQ(st.error().reason, Error::Reason::unpredictable);
}

// Hostile review: a certificate whose signature BIT STRING has no octet at all (03 00) is
// read, marked as the kernel's x509_note_signature refuses it (EBADMSG), not a reason to
// stop reading a keyring.
TEST(Pkcs7DigestHashes, CertificateWithAnEmptySignatureBitStringIsRead) {
  const Signer& sg = signer(KeyAlgo::ecdsa_p256);
  asn1::Reader top(sg.cert.der());
  asn1::Reader c = top.enter(asn1::kSequence, "Certificate");
  asn1::Element tbs = c.next(), alg = c.next();
  const Bytes der =
      tlv(asn1::kSequence,
          cat({Bytes(tbs.tlv.begin(), tbs.tlv.end()), Bytes(alg.tlv.begin(), alg.tlv.end()), {0x03, 0x00}}));
  auto cert = crypto::Certificate::from_der(der);
  ASSERT_TRUE(cert) << cert.error().message;
  EXPECT_TRUE(cert.value().signature_has_unused_bits());
  EXPECT_TRUE(cert.value().signature_value().empty());
}

// Hostile review: `modsign digest` (and ima template) read the module as a stream and had
// hashed an SM3 module's empty content; verify read as a stream (--stream-above 0) gave
// another answer than in memory.  Both now hash the content with Botan as they read it.
TEST(Pkcs7DigestHashes, StreamedModulesAreHashedToo) {
  test::TempDir d;
  const Signer& sg = signer(KeyAlgo::ecdsa_p256);
  MsgSpec m = one({.algo = KeyAlgo::ecdsa_p256, .digest_oid = kSm3Oid});
  m.certs.push_back(to_bytes(sg.cert.der()));
  const Bytes p7 = build(m, content());
  Bytes trailer(12, 0);
  trailer[2] = 2;  // PKEY_ID_PKCS7
  for (int i = 0; i < 4; ++i) trailer[8 + i] = static_cast<std::uint8_t>(p7.size() >> (8 * (3 - i)));
  const std::string marker = "~Module signature appended~\n";
  const std::string ko = d / "sm3.ko";
  test::spit(ko, cat({content(), p7, trailer, Bytes(marker.begin(), marker.end())}));
  const std::string want = to_hex(*crypto::botan::kernel_only_digest("sm3", content()));
  auto r = test::run(test::modsign_cli() + " digest --kernel v7.0 " + test::q(ko));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("kernel_digest: sm3:" + want), std::string::npos) << r.out;
  // ECDSA takes no SM3 (software_key_determine_akcipher): EINVAL, streamed or not.
  auto mem = test::run(test::modsign_cli() + " verify --kernel v7.0 " + test::q(ko));
  auto streamed = test::run(test::modsign_cli() + " verify --kernel v7.0 --stream-above 0 " + test::q(ko));
  EXPECT_EQ(mem.status, 1) << mem.out << mem.err;
  EXPECT_EQ(mem.out.rfind(ko + ": refused (EINVAL): ", 0), 0u) << mem.out;
  EXPECT_EQ(streamed.out, mem.out);
  EXPECT_EQ(streamed.status, mem.status);
}
