// Helpers shared by the test_kernel_*.cpp files: PKCS#7 SignedData messages built as DER by
// the test (SignerInfo and message specifications), signers made once, and the kernel's
// parse and verify entry points with their errno.
#pragma once

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "asn1/der.hpp"
#include "cms/kernel.hpp"
#include "crypto/crypto.hpp"
#include "module/module_sig_check.hpp"
#include "test_support.hpp"

namespace modsign::test::kernel_tests {

using asn1::Writer;
using cms::KernelModel;
using cms::Usage;
using crypto::HashAlgo;
using crypto::KeyAlgo;

inline Bytes oid_bytes(std::initializer_list<std::uint8_t> b) { return Bytes(b); }
inline Bytes to_bytes(ByteView v) { return Bytes(v.begin(), v.end()); }

inline const Bytes kData = to_bytes(crypto::oid::data);
inline const Bytes kSignedData = to_bytes(crypto::oid::signed_data);
inline const Bytes kEnvelopedData = oid_bytes({0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x03});
inline const Bytes kMsIndirectData = oid_bytes({0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x01, 0x04});
inline const Bytes kMd5 = oid_bytes({0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x05});
inline const Bytes kSha256WithRsa = oid_bytes({0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b});
inline const Bytes kUnknownAttr = oid_bytes({0x2a, 0x03, 0x04});  // 1.2.3.4

struct Signer {
  crypto::PrivateKey key;
  crypto::Certificate cert;
};

inline const Signer& signer(KeyAlgo a, int days = 3650) {
  static std::map<std::pair<KeyAlgo, int>, Signer> cache;
  auto it = cache.find({a, days});
  if (it == cache.end()) {
    auto key = crypto::PrivateKey::generate(a, 2048);
    auto cert = crypto::Certificate::self_signed(key, "CN=kernel mirror test", days).value();
    it = cache.emplace(std::pair{a, days}, Signer{key, cert}).first;
  }
  return it->second;
}

inline Bytes tlv(std::uint8_t tag, ByteView content) { return Writer().tlv(tag, content).take(); }
inline Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
inline Bytes oid(ByteView o) { return tlv(asn1::kOid, o); }
inline Bytes attr(ByteView type, std::vector<Bytes> values) {
  Bytes vals;
  for (const auto& v : values) vals.insert(vals.end(), v.begin(), v.end());
  return tlv(asn1::kSequence, cat({oid(type), tlv(asn1::kSet, vals)}));
}
inline Bytes content_type_attr(ByteView type) { return attr(crypto::oid::content_type, {oid(type)}); }
inline Bytes message_digest_attr(ByteView d) { return attr(crypto::oid::message_digest, {tlv(asn1::kOctetString, d)}); }

/// One SignerInfo to build.  Defaults: version 1, issuer+serial of the signer's cert,
/// SHA-256 (RSA) / SHA-512 (ML-DSA), no attributes, signed correctly over `content`.
struct SiSpec {
  KeyAlgo algo = KeyAlgo::rsa;
  int version = 1;
  bool skid = false;
  std::optional<Bytes> digest_oid;
  std::optional<HashAlgo> hash;
  std::optional<std::vector<Bytes>> attrs;  // full Attribute TLVs, in wire order
  std::optional<Bytes> sig_oid;
  std::optional<Bytes> signature;  // override
  bool corrupt_signature = false;
  const Signer* who = nullptr;
};

struct MsgSpec {
  Bytes outer = kSignedData;
  Bytes sd_version = {0x01};
  Bytes econtent_type = kData;
  std::optional<Bytes> econtent;
  std::vector<Bytes> certs;
  std::vector<SiSpec> signers;
  bool omit_signer_infos = false;
};

inline HashAlgo hash_for(const SiSpec& s) {
  if (s.hash) return *s.hash;
  return crypto::is_ml_dsa(s.algo) ? HashAlgo::sha512 : HashAlgo::sha256;
}

inline Bytes build_si(const SiSpec& s, ByteView content) {
  const Signer& sg = s.who ? *s.who : signer(s.algo);
  const HashAlgo h = hash_for(s);
  Bytes sid = s.skid ? tlv(asn1::context_prim(0), *sg.cert.skid())
                     : tlv(asn1::kSequence, cat({to_bytes(sg.cert.issuer()), tlv(asn1::kInteger, sg.cert.serial())}));
  Bytes dalg = tlv(asn1::kSequence, oid(s.digest_oid ? ByteView(*s.digest_oid) : crypto::hash_info(h).oid));
  Bytes attrs_block, to_sign(content.begin(), content.end());
  if (s.attrs) {
    Bytes body;
    for (const auto& a : *s.attrs) body.insert(body.end(), a.begin(), a.end());
    attrs_block = tlv(asn1::context_cons(0), body);
    to_sign = tlv(asn1::kSet, body);
  }
  Bytes sig = s.signature ? *s.signature : crypto::sign_message(sg.key, h, to_sign).value();
  if (s.corrupt_signature) sig[sig.size() / 2] ^= 0x01;
  Bytes salg_oid = s.sig_oid ? *s.sig_oid : to_bytes(crypto::signature_oid(s.algo, h));
  Bytes salg = tlv(asn1::kSequence, cat({oid(salg_oid), s.algo == KeyAlgo::rsa ? Bytes{0x05, 0x00} : Bytes{}}));
  return tlv(asn1::kSequence, cat({Writer().integer(static_cast<std::uint64_t>(s.version)).take(), sid, dalg,
                                   attrs_block, salg, tlv(asn1::kOctetString, sig)}));
}

inline Bytes build(const MsgSpec& m, ByteView content) {
  Bytes sis;
  for (const auto& s : m.signers) {
    Bytes si = build_si(s, content);
    sis.insert(sis.end(), si.begin(), si.end());
  }
  Bytes eci = tlv(asn1::kSequence,
                  cat({oid(m.econtent_type),
                       m.econtent ? tlv(asn1::context_cons(0), tlv(asn1::kOctetString, *m.econtent)) : Bytes{}}));
  Bytes certs;
  if (!m.certs.empty()) {
    Bytes body;
    for (const auto& c : m.certs) body.insert(body.end(), c.begin(), c.end());
    certs = tlv(asn1::context_cons(0), body);
  }
  Bytes dalgs = tlv(asn1::kSet, tlv(asn1::kSequence, oid(crypto::hash_info(HashAlgo::sha256).oid)));
  Bytes sd = tlv(asn1::kSequence, cat({tlv(asn1::kInteger, m.sd_version), dalgs, eci, certs,
                                       m.omit_signer_infos ? Bytes{} : tlv(asn1::kSet, sis)}));
  return tlv(asn1::kSequence, cat({oid(m.outer), tlv(asn1::context_cons(0), sd)}));
}

inline const Bytes& content() {
  static const Bytes c = test::pattern(3000);
  return c;
}

inline KErr parse_err(const MsgSpec& m, const KernelModel& p = KernelModel::v7_0()) {
  auto r = cms::pkcs7_parse_message(build(m, content()), p);
  return r ? KErr::none : r.error().code;
}

inline MsgSpec one(SiSpec s) {
  MsgSpec m;
  if (s.version == 3) m.sd_version = {0x03};
  m.signers.push_back(std::move(s));
  return m;
}

inline std::vector<Bytes> good_attrs(HashAlgo h = HashAlgo::sha256, ByteView data = content()) {
  return {content_type_attr(crypto::oid::data), message_digest_attr(crypto::digest(h, data))};
}

inline cms::Keyring keyring_of(std::initializer_list<const Signer*> ss) {
  cms::Keyring k;
  for (auto* s : ss) k.certificates.push_back(s->cert);
  return k;
}

inline cms::VerifyReport verify_module_sig(const Bytes& der, const cms::Keyring& k,
                                           const KernelModel& p = KernelModel::v7_0()) {
  return cms::verify_pkcs7_signature(content(), der, k, Usage::module, p);
}

inline KErr verify_usage(const MsgSpec& m, Usage u, const KernelModel& p = KernelModel::v7_0()) {
  auto msg = cms::pkcs7_parse_message(build(m, content()), p);
  if (!msg) return msg.error().code;
  if (!msg->data) { EXPECT_TRUE(cms::pkcs7_supply_detached_data(*msg, content()).ok()); }
  auto st = cms::pkcs7_verify(*msg, u, p);
  return st ? KErr::none : st.error().code;
}

}  // namespace modsign::test::kernel_tests
