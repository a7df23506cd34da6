// The digests the kernel's PKCS#7 parser names beyond modsign's signing hashes: SM3 and
// Streebog (pkcs7_sig_note_digest_algo).  Whether the kernel has them is part of its
// profile (KernelProfile::absent_hashes, CONFIG_CRYPTO_SM3 / _STREEBOG); where it has them,
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

Result<kernel::Pkcs7Message> message(const Bytes& digest_oid, const KernelProfile& p) {
  MsgSpec m = one({.algo = KeyAlgo::rsa, .digest_oid = digest_oid});
  auto msg = kernel::pkcs7_parse_message(build(m, content()), p);
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
    KernelProfile has = KernelProfile::v7_0();
    auto msg = message(oid, has);
    ASSERT_TRUE(msg) << name;
    ASSERT_TRUE(kernel::pkcs7_digest(msg.value(), 0, has)) << name;
    EXPECT_EQ(*msg.value().signed_infos[0].m, *crypto::botan::kernel_only_digest(name, content())) << name;

    KernelProfile lacks = KernelProfile::v7_0();
    lacks.absent_hashes = {name == std::string("sm3") ? "sm3" : "streebog"};
    auto msg2 = message(oid, lacks);
    ASSERT_TRUE(msg2);
    auto st = kernel::pkcs7_digest(msg2.value(), 0, lacks);
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code, KErr::enopkg) << name;
  }
}

// After the digest, RSA has no DigestInfo for these hashes: EINVAL from 6.12 and 7.2's
// template, ENOENT from 6.1's crypto_alloc_akcipher (Debian 12, 13 and unstable confirmed).
TEST(Pkcs7DigestHashes, RsaSchemeRefusesThem) {
  const Signer& sg = signer(KeyAlgo::rsa);
  kernel::SignedInfo si;
  si.pkey_algo = "rsa";
  si.hash_algo = "streebog512";
  si.signature = Bytes(256, 1);
  const Bytes m = *crypto::botan::kernel_only_digest("streebog512", content());
  auto errno_on = [&](const KernelProfile& p) {
    auto st = kernel::public_key_verify_signature(sg.key.public_key(), si, m, crypto::Backend::openssl, nullptr, &p);
    return st ? KErr::none : st.error().code;
  };
  EXPECT_EQ(errno_on(KernelProfile::v6_1()), KErr::enoent);
  EXPECT_EQ(errno_on(KernelProfile::v6()), KErr::einval);
  EXPECT_EQ(errno_on(KernelProfile::v7_0()), KErr::einval);
}
