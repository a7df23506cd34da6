// cms_dump(), cms_dump_file(), cms_oid_name() and cms_verify_file() (include/modsign/cms.hpp)
// with exact values on the public vectors.
#include <gtest/gtest.h>

#include <string>

#include "crypto/crypto.hpp"
#include "modsign/modsign.hpp"
#include "test_support.hpp"

namespace modsign::test {
namespace {

const std::string kGen = "openssl-3.5.7-generated/";

TEST(ApiCms, OidNames) {
  EXPECT_EQ(cms_oid_name("2.16.840.1.101.3.4.3.18"), "id-ml-dsa-65");
  EXPECT_EQ(cms_oid_name("2.16.840.1.101.3.4.3.33"), "HashML-DSA-65-with-SHA512");
  EXPECT_EQ(cms_oid_name("1.3.6.1.5.5.7.6.37"), "composite ML-DSA");
  EXPECT_EQ(cms_oid_name("1.3.6.1.5.5.7.6.36"), "");
  EXPECT_EQ(cms_oid_name("2.16.840.1.101.3.4.2.12"), "shake256");
  EXPECT_EQ(cms_oid_name("1.2.3.4"), "");
}

TEST(ApiCms, DumpDerAndPemAgree) {
  const CmsDump a = cms_dump_file(vector_path("rfc9882-cms-ml-dsa/mldsa87-no-signed-attrs.pem"));
  EXPECT_TRUE(a.pem);
  EXPECT_EQ(a.version, 1);
  ASSERT_EQ(a.signers.size(), 1u);
  EXPECT_FALSE(a.signers[0].signed_attrs_at.has_value());
  EXPECT_EQ(a.signers[0].signature_length, 4627u);
  EXPECT_EQ(a.signers[0].signature_algorithm.oid, "2.16.840.1.101.3.4.3.19");
  EXPECT_FALSE(a.signers[0].signature_algorithm.parameters);
  const CmsDump b = cms_dump_file(vector_path(kGen + "mldsa65.detached.min-attrs.issuer-serial.p7s"));
  EXPECT_FALSE(b.pem);
  EXPECT_FALSE(b.econtent);
  EXPECT_EQ(b.certificates.size(), 0u);
  ASSERT_EQ(b.signers.size(), 1u);
  EXPECT_EQ(b.signers[0].sid_issuer, "CN=Test module signing key");
  EXPECT_EQ(to_hex(b.signers[0].sid_serial), "1001");
  ASSERT_EQ(b.signers[0].signed_attrs.size(), 2u);  // contentType, messageDigest
  EXPECT_EQ(to_hex(*b.signers[0].content_type), "2a864886f70d010701");
  EXPECT_EQ(b.signers[0].message_digest->size(), 64u);
  EXPECT_FALSE(b.signers[0].signing_time.has_value());
}

// The RFC 9882 examples without signedAttrs, confirmed by Botan from the dump's offsets
// (OpenSSL 3.5.7's cms -verify cannot check them), and by cms_verify_file().
TEST(ApiCms, Rfc9882WithoutSignedAttrsBotanAgrees) {
  const crypto::KeyAlgo levels[] = {crypto::KeyAlgo::ml_dsa_44, crypto::KeyAlgo::ml_dsa_65, crypto::KeyAlgo::ml_dsa_87};
  int i = 0;
  for (const std::string n : {"44", "65", "87"}) {
    const std::string f = vector_path("rfc9882-cms-ml-dsa/mldsa" + n + "-no-signed-attrs.pem");
    const std::string cert = vector_path("rfc9881-dilithium-certificates/ML-DSA-" + n + ".crt");
    const CmsDump d = cms_dump_file(f);
    // The DER again, independently of the dump: openssl's base64 decoding.
    TempDir t;
    ASSERT_EQ(run("grep -v -- ----- " + q(f) + " | " + openssl() + " base64 -d -out " + q(t / "der")).status, 0);
    const Bytes der = slurp(t / "der");
    ASSERT_EQ(der.size(), d.der_size);
    const auto& s = d.signers.at(0);
    ASSERT_LT(d.econtent_length, 128u);  // a short-form OCTET STRING header: 2 bytes
    const ByteView content = ByteView(der).subspan(d.econtent_at->offset + 2, d.econtent_length);
    const ByteView sig =
        ByteView(der).subspan(s.signature_at.offset + s.signature_at.length - s.signature_length, s.signature_length);
    auto c = crypto::Certificate::load_all(cert);
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(crypto::botan::ml_dsa_verify(levels[i], c.value()[0].public_key().raw(), content, sig)) << f;
    CmsVerifyOptions o;
    o.certificates = {cert};
    EXPECT_TRUE(cms_verify_file(f, o).verified) << f;
    ++i;
  }
}

// A SignerInfo naming HashML-DSA-65-with-SHA512 (id-ml-dsa-65's last OID arc 18 made 33):
// named by the dump, refused as unsupported by verify.
TEST(ApiCms, HashMlDsaNamedAndRefused) {
  const std::string f = vector_path(kGen + "mldsa65.detached.min-attrs.issuer-serial.p7s");
  const CmsDump d = cms_dump_file(f);
  Bytes der = slurp(f);
  const std::size_t last = d.signers[0].signature_algorithm.at.offset + 2 + 2 + 8;  // SEQUENCE, OID headers; 9th octet
  ASSERT_EQ(der[last], 0x12);
  der[last] = 0x21;
  TempDir t;
  spit(t / "hash.p7s", der);
  EXPECT_EQ(cms_dump_file(t / "hash.p7s").signers[0].signature_algorithm.name, "HashML-DSA-65-with-SHA512");
  CmsVerifyOptions o;
  o.certificates = {vector_path(kGen + "mldsa65.cert.der")};
  o.content = vector_path(kGen + "content.bin");
  const CmsVerification v = cms_verify_file(t / "hash.p7s", o);
  EXPECT_FALSE(v.verified);
  EXPECT_EQ(v.signers.at(0).reason,
            "unsupported signature algorithm HashML-DSA-65-with-SHA512 (2.16.840.1.101.3.4.3.33)");
  EXPECT_TRUE(cms_verify_file(f, o).verified);
}

TEST(ApiCms, DumpRefusesOtherInput) {
  const Bytes junk = {0x30, 0x03, 0x02, 0x01, 0x01};
  try {
    (void)cms_dump(junk, "junk.der");
    FAIL() << "no InputError";
  } catch (const InputError& e) { EXPECT_EQ(std::string(e.what()).rfind("junk.der: ", 0), 0u) << e.what(); }
  const std::string pem = "-----BEGIN PKCS7-----\nMII*\n-----END PKCS7-----\n";
  EXPECT_THROW((void)cms_dump(ByteView(reinterpret_cast<const std::uint8_t*>(pem.data()), pem.size()), "x.pem"),
               InputError);
}

TEST(ApiCms, VerifyReasons) {
  CmsVerifyOptions o;
  o.certificates = {vector_path(kGen + "mldsa44.cert.der")};
  EXPECT_THROW((void)cms_verify_file(vector_path(kGen + "mldsa44.detached.min-attrs.skid.p7s"), o), UsageError);
  o.content = vector_path(kGen + "content.bin");
  CmsVerification v = cms_verify_file(vector_path(kGen + "mldsa44.detached.min-attrs.skid.p7s"), o);
  EXPECT_TRUE(v.verified);
  EXPECT_TRUE(v.detached);
  ASSERT_EQ(v.signers.size(), 1u);
  EXPECT_EQ(v.signers[0].algorithm, "ML-DSA-44");
  EXPECT_TRUE(v.signers[0].signed_attrs);
  EXPECT_EQ(v.signers[0].reason, "");
  // Other content: messageDigest no longer matches.
  o.content = vector_path("rfc9881-dilithium-certificates/ML-DSA-44.pub");
  v = cms_verify_file(vector_path(kGen + "mldsa44.detached.min-attrs.skid.p7s"), o);
  EXPECT_FALSE(v.verified);
  EXPECT_EQ(v.signers[0].reason, "messageDigest differs from the content's sha512");
  // A certificate that is not the signer's.
  o.content = vector_path(kGen + "content.bin");
  o.certificates = {vector_path(kGen + "mldsa65.cert.der")};
  v = cms_verify_file(vector_path(kGen + "mldsa44.detached.min-attrs.skid.p7s"), o);
  EXPECT_FALSE(v.verified);
  EXPECT_EQ(v.signers[0].reason, "no trusted certificate matches the signer's sid");
  // With a kernel profile: 7.0 refuses ML-DSA with signedAttrs (no waiver).
  o.certificates = {vector_path(kGen + "mldsa44.cert.der")};
  o.kernel = KernelProfile::parse("v7.0");
  v = cms_verify_file(vector_path(kGen + "mldsa44.detached.min-attrs.skid.p7s"), o);
  EXPECT_TRUE(v.verified);
  ASSERT_TRUE(v.kernel_errno.has_value());
  EXPECT_EQ(*v.kernel_errno, KErr::ekeyrejected);
}

}  // namespace
}  // namespace modsign::test
