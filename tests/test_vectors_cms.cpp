// Interop tests against the published ML-DSA keys, certificates and CMS examples in
// tests/vectors (provenance and licences: tests/vectors/PROVENANCE.md), read at run time
// through test::vector_path().
//
//   VectorsRfc9881      RFC 9881 Appendix C keys and certificates
//   VectorsRfc9882      RFC 9882 CMS examples (attached content)
//   VectorsOpenSsl357   signatures made by the OpenSSL 3.5.7 CLI (sign-file style)
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cms/signed_data.hpp"
#include "vectors_support.hpp"

using namespace modsign;
using namespace modsign::test::vectors_tests;

namespace {

/// RFC 4648 base64 (whitespace ignored, decoding stops at '=').
Bytes base64_decode(std::string_view in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  Bytes out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    if (c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
    const int v = val(c);
    if (v < 0) throw std::runtime_error(std::string("bad base64 character '") + c + "'");
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::uint8_t>((acc >> bits) & 0xff));
    }
  }
  return out;
}

/// DER contents of the first "-----BEGIN <label>-----" block of a PEM file.
Bytes pem_file_der(const std::string& rel, const std::string& label) {
  const Bytes raw = test::slurp(test::vector_path(rel));
  const std::string text(raw.begin(), raw.end());
  const std::string begin = "-----BEGIN " + label + "-----", end = "-----END " + label + "-----";
  const auto b = text.find(begin);
  const auto e = text.find(end, b == std::string::npos ? 0 : b);
  if (b == std::string::npos || e == std::string::npos) throw std::runtime_error(rel + ": no " + label + " block");
  return base64_decode(std::string_view(text).substr(b + begin.size(), e - b - begin.size()));
}

const Bytes kSha512Oid = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03};    // 2.16.840.1.101.3.4.2.3
const Bytes kShake256Oid = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x0c};  // 2.16.840.1.101.3.4.2.12

/// The RFC 9881 Appendix C seed: 00 01 02 .. 1f.
Bytes rfc_seed() {
  Bytes s(32);
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<std::uint8_t>(i);
  return s;
}

Bytes flip_bit(Bytes b, std::size_t byte, int bit = 0) {
  b.at(byte) ^= static_cast<std::uint8_t>(1u << bit);
  return b;
}

crypto::Certificate one_cert(const std::string& rel) {
  auto certs = crypto::Certificate::load_all(test::vector_path(rel));
  if (!certs) throw std::runtime_error(rel + ": " + describe(certs));
  if (certs->size() != 1) throw std::runtime_error(rel + ": expected exactly one certificate");
  return certs->front();
}

cms::SignedData parse_or_throw(ByteView der, const std::string& what) {
  auto sd = cms::parse(der);
  if (!sd) throw std::runtime_error(what + ": " + describe(sd));
  return std::move(sd.value());
}

std::string rfc9881(const std::string& name) { return "rfc9881-dilithium-certificates/" + name; }
std::string gen(const std::string& name) { return "openssl-3.5.7-generated/" + name; }

}  // namespace

// ============================================================================ RFC 9881

// The nine good private keys (seed / expandedKey / both, three levels) against the .pub files.
TEST(VectorsRfc9881, PrivateKeysInAllThreeForms) {
  // PKCS#8 DER sizes: seed / expanded / both (cms-ml-dsa.md §1).
  const std::array<std::array<std::size_t, 3>, 3> der_size = {{{54, 2588, 2626}, {54, 4060, 4098}, {54, 4924, 4962}}};
  const std::array<const char*, 3> forms = {"seed", "expanded", "both"};
  const std::array<std::size_t, 3> spki_size = {1334, 1974, 2614};
  int loaded = 0;
  for (std::size_t li = 0; li < kLevels.size(); ++li) {
    const Level& lv = kLevels[li];
    const std::string base = "ML-DSA-" + std::to_string(lv.n);
    const Bytes spki = pem_file_der(rfc9881(base + ".pub"), "PUBLIC KEY");
    ASSERT_EQ(spki.size(), spki_size[li]) << base;
    // The raw key is the BIT STRING payload at the end of the SPKI.
    const Bytes pk_raw(spki.end() - static_cast<std::ptrdiff_t>(lv.pk_size), spki.end());
    auto pub = crypto::PublicKey::from_spki(spki);
    ASSERT_TRUE(pub.ok()) << base << ": " << describe(pub);
    EXPECT_EQ(pub->algo(), lv.algo);
    EXPECT_EQ(pub->raw(), pk_raw) << base;
    EXPECT_EQ(crypto::botan::ml_dsa_public_from_seed(lv.algo, rfc_seed()), pk_raw) << base;
    const Bytes seed_der = pem_file_der(rfc9881(base + "-seed.priv"), "PRIVATE KEY");
    EXPECT_EQ(seed_der, seed_pkcs8(lv, rfc_seed())) << base;

    for (std::size_t fi = 0; fi < forms.size(); ++fi) {
      const std::string name = base + "-" + forms[fi] + ".priv";
      EXPECT_EQ(pem_file_der(rfc9881(name), "PRIVATE KEY").size(), der_size[li][fi]) << name;
      auto k = crypto::PrivateKey::load(test::vector_path(rfc9881(name)), std::nullopt);
      ASSERT_TRUE(k.ok()) << name << ": " << describe(k);
      ++loaded;
      EXPECT_EQ(k->algo(), lv.algo) << name;
      EXPECT_EQ(k->public_key().raw(), pk_raw) << name;
      EXPECT_TRUE(k->public_key() == *pub) << name;
      const bool has_seed = fi != 1;
      EXPECT_EQ(seed_of(*k), has_seed ? std::optional<Bytes>(rfc_seed()) : std::nullopt) << name;
      auto der = k->pkcs8_der();
      if (has_seed) {
        // Both the seed form and the both form are written back in seed form.
        ASSERT_TRUE(der.ok()) << name << ": " << describe(der);
        EXPECT_EQ(der->value(), seed_der) << name;
      } else {
        EXPECT_EQ(code_of(der), KErr::enokey) << name << ": " << describe(der);
      }
    }
  }
  EXPECT_EQ(loaded, 9);
}

// Appendix C.4: inconsistent ML-DSA-44 keys must be refused.
TEST(VectorsRfc9881, BadPrivateKeysRejected) {
  int rejected = 0;
  for (int i = 1; i <= 3; ++i) {
    const std::string name = "bad-ML-DSA-44-" + std::to_string(i) + ".priv";
    auto k = crypto::PrivateKey::load(test::vector_path(rfc9881(name)), std::nullopt);
    EXPECT_FALSE(k.ok()) << name << " was accepted (public key "
                         << (k.ok() ? to_hex(k->public_key().raw()).substr(0, 16) : "") << "...)";
    if (k.ok()) continue;
    EXPECT_EQ(code_of(k), KErr::ebadmsg) << name << ": " << describe(k);
    EXPECT_EQ(k.error().message.rfind("invalid private key (inconsistent key material): ", 0), 0u) << k.error().message;
    std::printf("[ vectors  ] %s: %s\n", name.c_str(), describe(k).c_str());
    ++rejected;
  }
  EXPECT_EQ(rejected, 3);
}

TEST(VectorsRfc9881, CertificatesShareIssuerAndSerial) {
  std::vector<crypto::Certificate> certs;
  for (const Level& lv : kLevels) {
    const std::string base = "ML-DSA-" + std::to_string(lv.n);
    auto list = crypto::Certificate::load_all(test::vector_path(rfc9881(base + ".crt")));
    ASSERT_TRUE(list.ok()) << base << ": " << describe(list);
    ASSERT_EQ(list->size(), 1u) << base;
    const auto& c = list->front();
    EXPECT_EQ(c.public_key().algo(), lv.algo) << base;
    const Bytes spki = pem_file_der(rfc9881(base + ".pub"), "PUBLIC KEY");
    EXPECT_EQ(c.public_key().spki(), spki) << base;
    EXPECT_EQ(c.issuer_cn(), "LAMPS WG") << base;
    EXPECT_EQ(c.subject_cn(), "LAMPS WG") << base;
    EXPECT_TRUE(std::equal(c.issuer().begin(), c.issuer().end(), c.subject().begin(), c.subject().end())) << base;
    EXPECT_EQ(to_hex(c.serial()).substr(0, 8), "159ffe6f") << base;
    EXPECT_EQ(c.serial().size(), 20u) << base;
    certs.push_back(c);
  }
  ASSERT_EQ(certs.size(), 3u);
  for (std::size_t i = 1; i < certs.size(); ++i) {
    EXPECT_EQ(Bytes(certs[i].issuer().begin(), certs[i].issuer().end()),
              Bytes(certs[0].issuer().begin(), certs[0].issuer().end()));
    EXPECT_EQ(Bytes(certs[i].serial().begin(), certs[i].serial().end()),
              Bytes(certs[0].serial().begin(), certs[0].serial().end()));
    EXPECT_EQ(certs[i].kernel_id(), certs[0].kernel_id());
    EXPECT_NE(certs[i].der(), certs[0].der());
  }
}

// ============================================================================ RFC 9882

namespace {
struct Rfc9882Example {
  const Level* lv;
  bool signed_attrs;
  std::string file;  // relative to the vectors folder
  std::string cert;  // matching RFC 9881 certificate
};
std::vector<Rfc9882Example> rfc9882_examples() {
  std::vector<Rfc9882Example> v;
  for (const Level& lv : kLevels)
    for (bool sa : {true, false})
      v.push_back(
          {&lv, sa,
           "rfc9882-cms-ml-dsa/mldsa" + std::to_string(lv.n) + (sa ? "-signed-attrs.pem" : "-no-signed-attrs.pem"),
           rfc9881("ML-DSA-" + std::to_string(lv.n) + ".crt")});
  return v;
}
}  // namespace

TEST(VectorsRfc9882, ParseStructure) {
  int parsed = 0;
  for (const auto& ex : rfc9882_examples()) {
    const auto sd = parse_or_throw(pem_file_der(ex.file, "CMS"), ex.file);
    const auto cert = one_cert(ex.cert);
    const std::string text = "ML-DSA-" + std::to_string(ex.lv->n) + " signed-data example with" +
                             (ex.signed_attrs ? "" : "out") + " signed attributes";
    EXPECT_EQ(sd.version, 1) << ex.file;
    EXPECT_EQ(sd.digest_algorithm_oids, std::vector<Bytes>{kSha512Oid}) << ex.file;
    EXPECT_EQ(sd.econtent_type, (Bytes{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01})) << ex.file;
    ASSERT_TRUE(sd.econtent.has_value()) << ex.file;
    EXPECT_EQ(std::string(sd.econtent->begin(), sd.econtent->end()), text) << ex.file;
    EXPECT_TRUE(sd.certificates.empty()) << ex.file;
    EXPECT_FALSE(sd.has_crls) << ex.file;
    ASSERT_EQ(sd.signers.size(), 1u) << ex.file;
    const auto& si = sd.signers[0];
    EXPECT_EQ(si.version, 1) << ex.file;
    EXPECT_EQ(si.sid_type, cms::SignerIdType::issuer_and_serial) << ex.file;
    EXPECT_EQ(si.issuer, Bytes(cert.issuer().begin(), cert.issuer().end())) << ex.file;
    EXPECT_EQ(si.serial, Bytes(cert.serial().begin(), cert.serial().end())) << ex.file;
    EXPECT_EQ(si.digest_algorithm_oid, kSha512Oid) << ex.file;
    EXPECT_EQ(si.digest_algorithm, std::optional<HashAlgo>(HashAlgo::sha512)) << ex.file;
    EXPECT_EQ(si.signature_key_algo, std::optional<KeyAlgo>(ex.lv->algo)) << ex.file;
    EXPECT_FALSE(si.signature_algorithm_params_null) << ex.file;
    EXPECT_EQ(si.signature.size(), ex.lv->sig_size) << ex.file;
    EXPECT_EQ(si.signed_attrs.has_value(), ex.signed_attrs) << ex.file;
    if (ex.signed_attrs) {
      EXPECT_EQ(si.signed_attrs->at(0), 0xa0) << ex.file;
      EXPECT_EQ(si.signed_attrs_as_set().at(0), 0x31) << ex.file;
      ASSERT_TRUE(si.message_digest_attr.has_value()) << ex.file;
      EXPECT_EQ(*si.message_digest_attr, crypto::digest(HashAlgo::sha512, *sd.econtent)) << ex.file;
      EXPECT_TRUE(si.content_type_attr.has_value()) << ex.file;
    } else {
      EXPECT_FALSE(si.message_digest_attr.has_value()) << ex.file;
      EXPECT_TRUE(si.signed_attrs_as_set().empty()) << ex.file;
    }
    ++parsed;
  }
  EXPECT_EQ(parsed, 6);
}

TEST(VectorsRfc9882, VerifyWithRfc9881Certificates) {
  int verified = 0;
  for (const auto& ex : rfc9882_examples()) {
    const auto sd = parse_or_throw(pem_file_der(ex.file, "CMS"), ex.file);
    const auto cert = one_cert(ex.cert);
    cms::SignedData tampered = sd;
    tampered.econtent = flip_bit(*sd.econtent, sd.econtent->size() / 2, 3);
    for (Backend b : kBackends) {
      const std::string where = ex.file + " (" + backend_name(b) + ")";
      auto v = cms::verify(sd, std::nullopt, {cert}, b);
      ASSERT_TRUE(v.ok()) << where << ": " << describe(v);
      EXPECT_EQ(v->certificate_index, 0u) << where;
      EXPECT_EQ(v->key_algo, ex.lv->algo) << where;
      ++verified;
      auto t = cms::verify(tampered, std::nullopt, {cert}, b);
      EXPECT_EQ(code_of(t), KErr::ekeyrejected) << where << " tampered: " << describe(t);
      // The other two certificates have the same issuer and serial but another key type.
      for (const Level& other : kLevels) {
        if (&other == ex.lv) continue;
        const auto wrong = one_cert(rfc9881("ML-DSA-" + std::to_string(other.n) + ".crt"));
        auto w = cms::verify(sd, std::nullopt, {wrong}, b);
        EXPECT_EQ(code_of(w), KErr::ekeyrejected)
            << where << " with the ML-DSA-" << other.n << " cert: " << describe(w);
      }
      // No certificate at all: nobody matches the signer.
      auto none = cms::verify(sd, std::nullopt, {}, b);
      EXPECT_EQ(code_of(none), KErr::enokey) << where << ": " << describe(none);
    }
  }
  EXPECT_EQ(verified, 12);
}

// Interop: OpenSSL verifies the signed-attrs examples; neither 3.5.7 nor 4.0.3 verifies the
// no-signed-attrs ones, whose content is attached (test::openssl_mldsa_noattr_refusal).
TEST(VectorsRfc9882, OpenSslCliVerifiesSignedAttrsExamples) {
  int ok = 0, refused = 0;
  for (const auto& ex : rfc9882_examples()) {
    const auto r =
        test::run(test::openssl() + " cms -verify -binary -inform PEM -in " + test::q(test::vector_path(ex.file)) +
                  " -certfile " + test::q(test::vector_path(ex.cert)) + " -noverify -out /dev/null");
    if (ex.signed_attrs) {
      EXPECT_EQ(r.status, 0) << ex.file << ": " << r.err;
      EXPECT_NE(r.err.find("CMS Verification successful"), std::string::npos) << ex.file << ": " << r.err;
      ok += r.status == 0;
    } else {
      EXPECT_NE(r.status, 0) << ex.file;
      EXPECT_NE(r.err.find(test::openssl_mldsa_noattr_refusal(true)), std::string::npos) << ex.file << ": " << r.err;
      refused += r.status != 0;
    }
  }
  EXPECT_EQ(ok, 3);
  EXPECT_EQ(refused, 3);
}

// ===================================================================== OpenSSL 3.5.7 CLI

namespace {
struct Generated {
  crypto::Certificate cert;
  Bytes content;
};
Generated generated(const Level& lv) {
  return {one_cert(gen("mldsa" + std::to_string(lv.n) + ".cert.der")),
          test::slurp(test::vector_path(gen("content.bin")))};
}
std::string p7s_name(const Level& lv, const std::string& kind) {
  return gen("mldsa" + std::to_string(lv.n) + "." + kind + ".p7s");
}
}  // namespace

TEST(VectorsOpenSsl357, DetachedMinimalAttrsVerify) {
  int verified = 0;
  for (const Level& lv : kLevels) {
    const auto g = generated(lv);
    ASSERT_EQ(g.content, test::pattern(4096));
    ASSERT_TRUE(g.cert.skid().has_value());
    EXPECT_EQ(g.cert.serial().size(), 2u);
    EXPECT_EQ(to_hex(g.cert.serial()), "1001");
    EXPECT_EQ(g.cert.subject_cn(), "Test module signing key");
    for (const bool skid : {false, true}) {
      const std::string file = p7s_name(lv, skid ? "detached.min-attrs.skid" : "detached.min-attrs.issuer-serial");
      const auto sd = parse_or_throw(test::slurp(test::vector_path(file)), file);
      EXPECT_EQ(sd.version, skid ? 3 : 1) << file;
      EXPECT_FALSE(sd.econtent.has_value()) << file;
      EXPECT_TRUE(sd.certificates.empty()) << file;
      ASSERT_EQ(sd.signers.size(), 1u) << file;
      const auto& si = sd.signers[0];
      EXPECT_EQ(si.version, skid ? 3 : 1) << file;
      if (skid) {
        EXPECT_EQ(si.sid_type, cms::SignerIdType::subject_key_id) << file;
        EXPECT_EQ(si.skid, *g.cert.skid()) << file;
        EXPECT_EQ(si.kernel_key_id(), *g.cert.skid()) << file;
      } else {
        EXPECT_EQ(si.sid_type, cms::SignerIdType::issuer_and_serial) << file;
        EXPECT_EQ(si.serial, (Bytes{0x10, 0x01})) << file;
        EXPECT_EQ(si.kernel_key_id(), g.cert.kernel_id()) << file;
      }
      EXPECT_EQ(si.digest_algorithm_oid, kSha512Oid) << file;
      EXPECT_FALSE(si.has_signing_time) << file;
      EXPECT_FALSE(si.has_smime_capabilities) << file;
      EXPECT_EQ(si.signature.size(), lv.sig_size) << file;
      const Bytes changed = flip_bit(g.content, 100);
      for (Backend b : kBackends) {
        auto v = cms::verify(sd, ByteView(g.content), {g.cert}, b);
        ASSERT_TRUE(v.ok()) << file << " (" << backend_name(b) << "): " << describe(v);
        EXPECT_EQ(v->key_algo, lv.algo);
        ++verified;
        auto t = cms::verify(sd, ByteView(changed), {g.cert}, b);
        EXPECT_EQ(code_of(t), KErr::ekeyrejected) << file << " (" << backend_name(b) << ") changed: " << describe(t);
      }
    }
  }
  EXPECT_EQ(verified, 12);
}

TEST(VectorsOpenSsl357, Shake256DigestIsUnsupported) {
  const Level& lv = kLevels[1];
  const auto g = generated(lv);
  const std::string file = p7s_name(lv, "detached.min-attrs.shake256");
  const auto sd = parse_or_throw(test::slurp(test::vector_path(file)), file);
  ASSERT_EQ(sd.signers.size(), 1u);
  EXPECT_EQ(sd.signers[0].digest_algorithm_oid, kShake256Oid);
  EXPECT_EQ(sd.signers[0].digest_algorithm, std::nullopt);
  ASSERT_TRUE(sd.signers[0].message_digest_attr.has_value());
  EXPECT_EQ(sd.signers[0].message_digest_attr->size(), 64u);
  for (Backend b : kBackends) {
    auto v = cms::verify(sd, ByteView(g.content), {g.cert}, b);
    EXPECT_EQ(code_of(v), KErr::enopkg) << backend_name(b) << ": " << describe(v);
  }
}

TEST(VectorsOpenSsl357, AttachedDefaultAttrsWithEmbeddedCert) {
  int verified = 0;
  for (const Level& lv : kLevels) {
    const auto g = generated(lv);
    const std::string file = p7s_name(lv, "attached.default-attrs.with-cert");
    const auto sd = parse_or_throw(test::slurp(test::vector_path(file)), file);
    ASSERT_EQ(sd.certificates.size(), 1u) << file;
    EXPECT_EQ(sd.certificates[0], g.cert.der()) << file;
    ASSERT_TRUE(sd.econtent.has_value()) << file;
    EXPECT_EQ(*sd.econtent, g.content) << file;
    ASSERT_EQ(sd.signers.size(), 1u) << file;
    EXPECT_TRUE(sd.signers[0].has_signing_time) << file;
    EXPECT_TRUE(sd.signers[0].has_smime_capabilities) << file;
    EXPECT_EQ(sd.signers[0].sid_type, cms::SignerIdType::issuer_and_serial) << file;
    cms::SignedData tampered = sd;
    tampered.econtent = flip_bit(g.content, 4095, 7);
    // A certificate carried in the message is never trusted by itself: without a
    // candidate the signer is unknown (ENOKEY); the caller trusts it by passing it.
    auto untrusted = cms::verify(sd, std::nullopt, {});
    EXPECT_EQ(code_of(untrusted), KErr::enokey) << file << ": " << describe(untrusted);
    const std::vector<crypto::Certificate> embedded{crypto::Certificate::from_der(sd.certificates[0]).value()};
    for (Backend b : kBackends) {
      auto v = cms::verify(sd, std::nullopt, embedded, b);
      ASSERT_TRUE(v.ok()) << file << " (" << backend_name(b) << "): " << describe(v);
      EXPECT_EQ(v->certificate_index, 0u) << file;
      EXPECT_EQ(v->key_algo, lv.algo) << file;
      ++verified;
      auto t = cms::verify(tampered, std::nullopt, embedded, b);
      EXPECT_EQ(code_of(t), KErr::ekeyrejected) << file << " (" << backend_name(b) << ") changed: " << describe(t);
      // Attached content plus detached content is refused (kernel: "non-detached data").
      auto both = cms::verify(sd, ByteView(g.content), embedded, b);
      EXPECT_EQ(code_of(both), KErr::ebadmsg) << file << ": " << describe(both);
    }
  }
  EXPECT_EQ(verified, 6);
}

// Our builder reproduces sign-file/OpenSSL's DER exactly; only the (hedged) ML-DSA
// signature value at the very end differs.
TEST(VectorsOpenSsl357, BuildDetachedMatchesByteStructure) {
  int compared = 0;
  for (const Level& lv : kLevels) {
    const auto g = generated(lv);
    auto key =
        crypto::PrivateKey::load(test::vector_path(gen("mldsa" + std::to_string(lv.n) + ".key.pem")), std::nullopt);
    ASSERT_TRUE(key.ok()) << describe(key);
    EXPECT_EQ(seed_of(*key), std::optional<Bytes>(rfc_seed()));
    for (const bool skid : {false, true}) {
      const std::string file = p7s_name(lv, skid ? "detached.min-attrs.skid" : "detached.min-attrs.issuer-serial");
      const Bytes want = test::slurp(test::vector_path(file));
      for (Backend b : kBackends) {
        const std::string where = file + " (" + backend_name(b) + ")";
        cms::BuildOptions opt;
        opt.digest = HashAlgo::sha512;
        opt.signed_attrs = true;
        opt.sid = skid ? cms::SignerIdType::subject_key_id : cms::SignerIdType::issuer_and_serial;
        opt.backend = b;
        auto built = cms::build_detached(*key, g.cert, g.content, opt);
        ASSERT_TRUE(built.ok()) << where << ": " << describe(built);
        ASSERT_EQ(built->size(), want.size()) << where;
        const auto prefix = static_cast<std::ptrdiff_t>(want.size() - lv.sig_size);
        EXPECT_TRUE(std::equal(want.begin(), want.begin() + prefix, built->begin()))
            << where << ": DER differs before the signature";
        EXPECT_FALSE(std::equal(want.begin() + prefix, want.end(), built->begin() + prefix))
            << where << ": signature identical to OpenSSL's (not hedged?)";
        const auto sd = parse_or_throw(*built, where);
        for (Backend vb : kBackends) {
          auto v = cms::verify(sd, ByteView(g.content), {g.cert}, vb);
          EXPECT_TRUE(v.ok()) << where << " verified by " << backend_name(vb) << ": " << describe(v);
        }
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 12);
}
