// CMS SignedData: builder, parser, verifier; round trips for every algorithm and form,
// confirmed by OpenSSL (library and command line) and Botan.
#include <gtest/gtest.h>

#include <map>

#include "asn1/der.hpp"
#include "cms/signed_data.hpp"
#include "crypto/crypto.hpp"
#include "test_support.hpp"

using namespace modsign;
using crypto::Certificate;
using crypto::HashAlgo;
using crypto::KeyAlgo;
using crypto::PrivateKey;

namespace {

struct Signer {
  PrivateKey key;
  Certificate cert;
};

// Keys are generated once per test binary run (RSA-4096 generation takes a second).
const Signer& signer_for(KeyAlgo algo, int rsa_bits = 2048) {
  static std::map<std::pair<KeyAlgo, int>, Signer> cache;
  auto k = std::pair{algo, algo == KeyAlgo::rsa ? rsa_bits : 0};
  auto it = cache.find(k);
  if (it == cache.end()) {
    PrivateKey key = PrivateKey::generate(algo, rsa_bits);
    auto cert = Certificate::self_signed(key, "CN=modsign test key,O=modsign tests", 30);
    it = cache.emplace(k, Signer{key, cert.value()}).first;
  }
  return it->second;
}

HashAlgo default_hash(KeyAlgo a) {
  switch (a) {
    case KeyAlgo::rsa: return HashAlgo::sha256;
    case KeyAlgo::ecdsa_p256: return HashAlgo::sha256;
    case KeyAlgo::ecdsa_p384: return HashAlgo::sha384;
    default: return HashAlgo::sha512;
  }
}

struct Case {
  KeyAlgo algo;
  int rsa_bits;
  bool signed_attrs;
  cms::SignerIdType sid;
};

/// "RSA2048_NoAttrs_Skid": the test's name, and what CTest shows as its parameter (PrintTo;
/// gtest's default was the struct's bytes, which made every line of tools/check 300 columns).
std::string name_of(const Case& c) {
  std::string n(crypto::key_algo_name(c.algo));
  if (c.algo == KeyAlgo::rsa) n += std::to_string(c.rsa_bits);
  for (auto& ch : n)
    if (ch == '-') ch = '_';
  n += c.signed_attrs ? "_SignedAttrs" : "_NoAttrs";
  n += c.sid == cms::SignerIdType::subject_key_id ? "_Skid" : "_IssuerSerial";
  return n;
}
std::string case_name(const testing::TestParamInfo<Case>& i) { return name_of(i.param); }
void PrintTo(const Case& c, std::ostream* os) { *os << name_of(c); }

std::vector<Case> all_cases() {
  std::vector<Case> v;
  for (auto [algo, bits] :
       {std::pair{KeyAlgo::rsa, 2048}, std::pair{KeyAlgo::rsa, 4096}, std::pair{KeyAlgo::ecdsa_p256, 0},
        std::pair{KeyAlgo::ecdsa_p384, 0}, std::pair{KeyAlgo::ml_dsa_44, 0}, std::pair{KeyAlgo::ml_dsa_65, 0},
        std::pair{KeyAlgo::ml_dsa_87, 0}})
    for (bool attrs : {false, true})
      for (auto sid : {cms::SignerIdType::issuer_and_serial, cms::SignerIdType::subject_key_id})
        v.push_back({algo, bits, attrs, sid});
  return v;
}

class RoundTrip : public testing::TestWithParam<Case> {};

}  // namespace

TEST_P(RoundTrip, BuildParseVerify) {
  const Case& c = GetParam();
  const Signer& s = signer_for(c.algo, c.rsa_bits);
  const Bytes content = test::pattern(5000);
  cms::BuildOptions opt;
  opt.digest = default_hash(c.algo);
  opt.signed_attrs = c.signed_attrs;
  opt.sid = c.sid;
  auto der = cms::build_detached(s.key, s.cert, content, opt);
  ASSERT_TRUE(der.ok()) << der.error().message;

  auto sd = cms::parse(der.value());
  ASSERT_TRUE(sd.ok()) << sd.error().message;
  const int version = c.sid == cms::SignerIdType::subject_key_id ? 3 : 1;
  EXPECT_EQ(sd->version, version);
  ASSERT_EQ(sd->signers.size(), 1u);
  const auto& si = sd->signers[0];
  EXPECT_EQ(si.version, version);
  EXPECT_EQ(si.sid_type, c.sid);
  EXPECT_EQ(si.digest_algorithm, opt.digest);
  EXPECT_FALSE(sd->econtent.has_value());
  EXPECT_TRUE(sd->certificates.empty());
  EXPECT_EQ(si.signed_attrs.has_value(), c.signed_attrs);
  EXPECT_EQ(si.signature_key_algo.has_value(), true);
  EXPECT_EQ(si.signature_algorithm_params_null, c.algo == KeyAlgo::rsa);
  if (c.sid == cms::SignerIdType::subject_key_id) {
    EXPECT_EQ(si.skid, *s.cert.skid());
  } else {
    EXPECT_EQ(si.serial, Bytes(s.cert.serial().begin(), s.cert.serial().end()));
    EXPECT_EQ(si.kernel_key_id(), s.cert.kernel_id());
  }
  if (crypto::is_ml_dsa(c.algo)) {
    EXPECT_EQ(si.signature.size(), crypto::ml_dsa_signature_size(c.algo));
  } else if (c.algo == KeyAlgo::rsa) {
    EXPECT_EQ(si.signature.size(), static_cast<std::size_t>(c.rsa_bits / 8));
  }
  if (c.signed_attrs) {
    EXPECT_EQ(*si.message_digest_attr, crypto::digest(opt.digest, content));
    EXPECT_EQ(*si.content_type_attr, Bytes(crypto::oid::data.begin(), crypto::oid::data.end()));
    EXPECT_FALSE(si.has_signing_time);
    EXPECT_FALSE(si.has_smime_capabilities);
  }

  for (auto backend : {crypto::Backend::openssl, crypto::Backend::botan}) {
    auto v = cms::verify(*sd, content, {s.cert}, backend);
    ASSERT_TRUE(v.ok()) << v.error().message;
    EXPECT_EQ(v->key_algo, c.algo == KeyAlgo::rsa ? KeyAlgo::rsa : c.algo);
    Bytes altered = content;
    altered[4321] ^= 0x01;
    auto bad = cms::verify(*sd, altered, {s.cert}, backend);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, KErr::ekeyrejected);
    EXPECT_EQ(bad.error().message, c.signed_attrs ? "Message digest doesn't match" : "signature does not verify");
  }
  // Another key's certificate with the same issuer/serial would be rejected, and an
  // unrelated certificate does not match at all: ENOKEY.
  const Signer& other = signer_for(c.algo == KeyAlgo::ml_dsa_65 ? KeyAlgo::ml_dsa_44 : KeyAlgo::ml_dsa_65);
  auto none = cms::verify(*sd, content, {other.cert});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, KErr::enokey);
}

INSTANTIATE_TEST_SUITE_P(Cms, RoundTrip, testing::ValuesIn(all_cases()), case_name);

TEST(Cms, SignedAttrsBlockIsExactDer) {
  const Signer& s = signer_for(KeyAlgo::ml_dsa_65);
  const Bytes content = test::slurp(test::vector_path("openssl-3.5.7-generated/content.bin"));
  cms::BuildOptions opt;
  opt.signed_attrs = true;
  auto der = cms::build_detached(s.key, s.cert, content, opt);
  ASSERT_TRUE(der.ok());
  auto sd = cms::parse(der.value());
  ASSERT_TRUE(sd.ok());
  // [0] { SEQ { contentType, SET { id-data } }, SEQ { messageDigest, SET { OCTET STRING(64) } } }
  const std::string expected =
      "a06b"
      "3018"
      "06092a864886f70d010903"
      "310b"
      "06092a864886f70d010701"
      "304f"
      "06092a864886f70d010904"
      "3142"
      "0440"
      "ed3ea71e2627334fc7fe8443d74b5851007086fefe73543a4423718cd9e0eb24"
      "e5fc80675e02cef94055944f65e1df45a8f69f776f59a4c3e32031ca7ef07387";
  EXPECT_EQ(to_hex(*sd->signers[0].signed_attrs), expected);
  EXPECT_EQ(to_hex(sd->signers[0].signed_attrs_as_set()), "31" + expected.substr(2));
}

TEST(Cms, NoAttrsMlDsaLayoutAndSizes) {
  // ML-DSA-65, issuer+serial, the vectors' certificate: sizes match the expected layout.
  const Signer& s = signer_for(KeyAlgo::ml_dsa_65);
  auto der = cms::build_detached(s.key, s.cert, test::pattern(100), {});
  ASSERT_TRUE(der.ok());
  // ContentInfo header 4 + OID 11 + [0] header 4 + SignedData header 4 + version 3 +
  // digestAlgorithms 15 + encapContentInfo 13 + signerInfos set header 4 + SignerInfo
  // header 4 + version 3 + sid (issuer+serial) + digestAlgorithm 13 + sigAlg 13 + sig 4+3309.
  const std::size_t sid = 2 + s.cert.issuer().size() + 2 + s.cert.serial().size();
  EXPECT_EQ(der->size(), 4 + 11 + 4 + 4 + 3 + 15 + 13 + 4 + 4 + 3 + sid + 13 + 13 + 4 + 3309);
  const std::string hex = to_hex(*der);
  // digestAlgorithm: SHA-512 with parameters absent (RFC 9882 §3.1).
  EXPECT_NE(hex.find("300b0609608648016503040203"), std::string::npos);
  // signatureAlgorithm: id-ml-dsa-65, parameters absent.
  EXPECT_NE(hex.find("300b0609608648016503040312"), std::string::npos);
  // detached: encapContentInfo is SEQUENCE { id-data } only.
  EXPECT_NE(hex.find("300b06092a864886f70d010701"), std::string::npos);
}

TEST(Cms, RsaIsByteIdenticalToOpenSslCmsCommand) {
  // RSA PKCS#1 v1.5 is deterministic, so our SignedData must equal, byte for byte, what
  // `openssl cms -sign -binary -nocerts` writes: without attributes (-noattr, what
  // sign-file does for RSA) and with the two minimal attributes (-nosmimecap -no_signing_time).
  test::TempDir d;
  const Signer& s = signer_for(KeyAlgo::rsa, 2048);
  const Bytes content = test::pattern(3000);
  test::spit(d / "content.bin", content);
  test::spit(d / "key.pem", s.key.pkcs8_pem()->value());
  test::spit(d / "cert.pem", s.cert.pem());
  for (bool attrs : {false, true})
    for (bool keyid : {false, true}) {
      const std::string flags =
          std::string(attrs ? "-nosmimecap -no_signing_time" : "-noattr") + (keyid ? " -keyid" : "");
      auto r = test::run(test::openssl() + " cms -sign -binary -nocerts -md sha256 " + flags + " -in " +
                         test::q(d / "content.bin") + " -signer " + test::q(d / "cert.pem") + " -inkey " +
                         test::q(d / "key.pem") + " -outform DER -out " + test::q(d / "ref.p7s"));
      ASSERT_EQ(r.status, 0) << r.err;
      cms::BuildOptions opt;
      opt.digest = HashAlgo::sha256;
      opt.signed_attrs = attrs;
      opt.sid = keyid ? cms::SignerIdType::subject_key_id : cms::SignerIdType::issuer_and_serial;
      auto der = cms::build_detached(s.key, s.cert, content, opt);
      ASSERT_TRUE(der.ok());
      EXPECT_EQ(to_hex(*der), to_hex(test::slurp(d / "ref.p7s"))) << flags;
    }
}

TEST(Cms, SignedAttrsFormVerifiesWithOpenSslCmsCommand) {
  test::TempDir d;
  const Bytes content = test::pattern(7777);
  test::spit(d / "content.bin", content);
  for (auto algo : {KeyAlgo::ml_dsa_44, KeyAlgo::ml_dsa_65, KeyAlgo::ml_dsa_87, KeyAlgo::ecdsa_p384, KeyAlgo::rsa})
    for (auto sid : {cms::SignerIdType::issuer_and_serial, cms::SignerIdType::subject_key_id}) {
      const Signer& s = signer_for(algo);
      test::spit(d / "cert.pem", s.cert.pem());
      cms::BuildOptions opt;
      opt.digest = default_hash(algo);
      opt.signed_attrs = true;
      opt.sid = sid;
      for (auto backend : {crypto::Backend::openssl, crypto::Backend::botan}) {
        if (backend == crypto::Backend::botan && !crypto::is_ml_dsa(algo)) continue;
        opt.backend = backend;
        auto der = cms::build_detached(s.key, s.cert, content, opt);
        ASSERT_TRUE(der.ok());
        test::spit(d / "sig.p7s", *der);
        auto r = test::run(test::openssl() + " cms -verify -binary -inform DER -in " + test::q(d / "sig.p7s") +
                           " -content " + test::q(d / "content.bin") + " -certfile " + test::q(d / "cert.pem") +
                           " -nointern -noverify -out /dev/null");
        EXPECT_EQ(r.status, 0) << crypto::key_algo_name(algo) << ": " << r.err;
        EXPECT_NE(r.err.find("Verification successful"), std::string::npos) << r.err;
      }
    }
}

TEST(Cms, NoAttrsMlDsaSignatureVerifiesWithPkeyutlRawin) {
  // Without signedAttrs, SignerInfo.signature is pure ML-DSA over the module bytes:
  // `openssl pkeyutl -verify -rawin` on the raw signature and the content must agree.
  test::TempDir d;
  const Bytes content = test::pattern(10000);
  test::spit(d / "content.bin", content);
  for (auto algo : {KeyAlgo::ml_dsa_44, KeyAlgo::ml_dsa_65, KeyAlgo::ml_dsa_87})
    for (auto backend : {crypto::Backend::openssl, crypto::Backend::botan}) {
      const Signer& s = signer_for(algo);
      test::spit(d / "cert.pem", s.cert.pem());
      cms::BuildOptions opt;
      opt.backend = backend;
      auto der = cms::build_detached(s.key, s.cert, content, opt);
      ASSERT_TRUE(der.ok());
      auto sd = cms::parse(*der);
      ASSERT_TRUE(sd.ok());
      test::spit(d / "sig.bin", sd->signers[0].signature);
      const std::string cmd = test::openssl() + " pkeyutl -verify -rawin -certin -inkey " + test::q(d / "cert.pem") +
                              " -in " + test::q(d / "content.bin") + " -sigfile " + test::q(d / "sig.bin");
      auto r = test::run(cmd);
      EXPECT_EQ(r.status, 0) << r.err;
      EXPECT_NE(r.out.find("Signature Verified Successfully"), std::string::npos) << r.out;
      // And a one-byte change of the content is refused.
      Bytes altered = content;
      altered[0] ^= 0x80;
      test::spit(d / "content.bin", altered);
      EXPECT_EQ(test::run(cmd).status, 1);
      test::spit(d / "content.bin", content);
    }
}

TEST(Cms, CrossBackendMlDsa) {
  // OpenSSL-made signatures verify with Botan and Botan-made with OpenSSL.
  const Bytes msg = test::pattern(2048);
  for (auto algo : {KeyAlgo::ml_dsa_44, KeyAlgo::ml_dsa_65, KeyAlgo::ml_dsa_87}) {
    const Signer& s = signer_for(algo);
    auto by_openssl = crypto::sign_message(s.key, HashAlgo::sha512, msg, crypto::Backend::openssl);
    auto by_botan = crypto::sign_message(s.key, HashAlgo::sha512, msg, crypto::Backend::botan);
    ASSERT_TRUE(by_openssl.ok() && by_botan.ok());
    EXPECT_EQ(by_openssl->size(), crypto::ml_dsa_signature_size(algo));
    EXPECT_EQ(by_botan->size(), crypto::ml_dsa_signature_size(algo));
    EXPECT_TRUE(
        crypto::verify_message(s.cert.public_key(), HashAlgo::sha512, msg, *by_openssl, crypto::Backend::botan).ok());
    EXPECT_TRUE(
        crypto::verify_message(s.cert.public_key(), HashAlgo::sha512, msg, *by_botan, crypto::Backend::openssl).ok());
    // Same key from the seed through Botan: identical public key.
    auto seed = s.key.ml_dsa_seed();
    ASSERT_TRUE(seed.has_value());
    EXPECT_EQ(crypto::botan::ml_dsa_public_from_seed(algo, seed->value()), s.cert.public_key().raw());
    // Wrong-length signature: EBADMSG (crypto/mldsa.c), both backends.
    Bytes short_sig(by_openssl->begin(), by_openssl->end() - 1);
    EXPECT_EQ(crypto::verify_message(s.cert.public_key(), HashAlgo::sha512, msg, short_sig).error().code,
              KErr::ebadmsg);
    EXPECT_EQ(crypto::verify_message(s.cert.public_key(), HashAlgo::sha512, msg, short_sig, crypto::Backend::botan)
                  .error()
                  .code,
              KErr::ebadmsg);
  }
}

TEST(Cms, KeyCertificateMismatchIsRefused) {
  const Signer& a = signer_for(KeyAlgo::ml_dsa_65);
  const Signer& b = signer_for(KeyAlgo::ml_dsa_44);
  auto der = cms::build_detached(a.key, b.cert, test::pattern(10), {});
  ASSERT_FALSE(der.ok());
  EXPECT_EQ(der.error().code, KErr::ekeyrejected);
  EXPECT_EQ(der.error().message, "private key does not match the certificate's public key");
}

TEST(Cms, SignatureAlgorithmMustMatchKey) {
  // A SignerInfo naming ML-DSA-44 verified against the ML-DSA-65 certificate it names:
  // EKEYREJECTED (public_key_verify_signature: pkey_algo differs from the key's).
  const Signer& s = signer_for(KeyAlgo::ml_dsa_65);
  auto der = cms::build_detached(s.key, s.cert, test::pattern(10), {});
  ASSERT_TRUE(der.ok());
  Bytes b = *der;
  const std::string hex = to_hex(b);
  const auto pos = hex.find("0609608648016503040312");  // id-ml-dsa-65
  ASSERT_NE(pos, std::string::npos);
  b[pos / 2 + 10] = 0x11;  // -> id-ml-dsa-44
  auto sd = cms::parse(b);
  ASSERT_TRUE(sd.ok());
  auto v = cms::verify(*sd, test::pattern(10), {s.cert});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, KErr::ekeyrejected);
}

TEST(Cms, ParserErrnos) {
  const Signer& s = signer_for(KeyAlgo::ml_dsa_44);
  auto der = cms::build_detached(s.key, s.cert, test::pattern(10), {});
  ASSERT_TRUE(der.ok());
  // Truncated anywhere: EBADMSG.
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{20}, der->size() / 2, der->size() - 1}) {
    auto r = cms::parse(ByteView(*der).first(n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.error().code, KErr::ebadmsg) << n;
  }
  // Outer content type id-data instead of id-signedData: EINVAL.
  Bytes b = *der;
  ASSERT_EQ(b[14], 0x02);  // last byte of the id-signedData OID
  b[14] = 0x01;
  auto r = cms::parse(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, KErr::einval);
  EXPECT_EQ(r.error().message, "Only support pkcs7_signedData type (content type is 1.2.840.113549.1.7.1)");
  // SignedData version 2: EINVAL.
  b = *der;
  ASSERT_EQ(b[23], 0x02);
  ASSERT_EQ(b[25], 0x01);
  b[25] = 0x02;
  r = cms::parse(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, KErr::einval);
  // SignedData version 3 with a version 1 SignerInfo: EBADMSG.
  b[25] = 0x03;
  r = cms::parse(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, KErr::ebadmsg);
  // Trailing garbage after the ContentInfo: EBADMSG.
  b = *der;
  b.push_back(0);
  EXPECT_EQ(cms::parse(b).error().code, KErr::ebadmsg);
}

TEST(Cms, PublicKeyAlgorithmErrnos) {
  // SPKI with an algorithm modsign does not support (Ed25519, 1.3.101.112): ENOPKG.
  const Bytes ed25519 = from_hex("302a300506032b6570032100" + std::string(64, 'a'));
  auto k = crypto::PublicKey::from_spki(ed25519);
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.error().code, KErr::enopkg);
  EXPECT_EQ(k.error().message, "unsupported public key algorithm 1.3.101.112");
  // Truncated SPKI: EBADMSG.
  auto t = crypto::PublicKey::from_spki(ByteView(ed25519).first(20));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, KErr::ebadmsg);
  // ML-DSA-65 OID with a 10-byte key: EBADMSG.
  const Bytes short_key = from_hex("301a300b0609608648016503040312030b00" + std::string(20, 'b'));
  auto s = crypto::PublicKey::from_spki(short_key);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, KErr::ebadmsg);
}

TEST(Cms, ExternalMuSignaturesArePureMlDsa) {
  // μ computed in pieces, signed through OpenSSL's "mu" parameter: an ordinary pure
  // ML-DSA signature that one-shot verification (OpenSSL and Botan) accepts.
  const Bytes msg = test::pattern(1 << 20);
  for (auto algo : {KeyAlgo::ml_dsa_44, KeyAlgo::ml_dsa_65, KeyAlgo::ml_dsa_87}) {
    const Signer& s = signer_for(algo);
    crypto::MlDsaMu mu(s.cert.public_key().raw());
    for (std::size_t off = 0; off < msg.size(); off += 65536) mu.update(ByteView(msg).subspan(off, 65536));
    const Bytes m = mu.final();
    ASSERT_EQ(m.size(), 64u);
    auto sig = crypto::ml_dsa_sign_mu(s.key, m);
    ASSERT_TRUE(sig.ok()) << sig.error().message;
    EXPECT_EQ(sig->size(), crypto::ml_dsa_signature_size(algo));
    for (auto b : {crypto::Backend::openssl, crypto::Backend::botan})
      EXPECT_TRUE(crypto::verify_message(s.cert.public_key(), HashAlgo::sha512, msg, *sig, b).ok());
    EXPECT_TRUE(crypto::ml_dsa_verify_mu(s.cert.public_key(), m, *sig).ok());
    // A one-bit change of the message changes μ, and verification fails.
    Bytes altered = msg;
    altered[777777] ^= 0x10;
    crypto::MlDsaMu mu2(s.cert.public_key().raw());
    mu2.update(altered);
    auto bad = crypto::ml_dsa_verify_mu(s.cert.public_key(), mu2.final(), *sig);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, KErr::ekeyrejected);
    // And a one-shot signature verifies through μ.
    auto oneshot = crypto::sign_message(s.key, HashAlgo::sha512, msg);
    EXPECT_TRUE(crypto::ml_dsa_verify_mu(s.cert.public_key(), m, *oneshot).ok());
  }
}
