// The kernel mirror against kernel-semantics.md §9 (items 1-38), each situation built as
// DER by the test, with the errno (and digest bytes) the kernel gives.  Items marked
// [inf]/[mem] in the document were checked in Linux 7.2.13's source (Debian
// linux-source-7.2); where the source differs, the test follows the source and says so.
#include <gtest/gtest.h>

#include <optional>

#include "asn1/der.hpp"
#include "cms/kernel.hpp"
#include "cms/signed_data.hpp"
#include "crypto/crypto.hpp"
#include "module/module_sig_check.hpp"
#include "module/module_signature.hpp"
#include "test_support.hpp"

using namespace modsign;
using asn1::Writer;
using crypto::HashAlgo;
using crypto::KeyAlgo;
using kernel::KernelProfile;
using kernel::Usage;

namespace {

Bytes oid_bytes(std::initializer_list<std::uint8_t> b) { return Bytes(b); }
Bytes to_bytes(ByteView v) { return Bytes(v.begin(), v.end()); }

const Bytes kData = to_bytes(crypto::oid::data);
const Bytes kSignedData = to_bytes(crypto::oid::signed_data);
const Bytes kEnvelopedData = oid_bytes({0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x03});
const Bytes kMsIndirectData = oid_bytes({0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x01, 0x04});
const Bytes kMd5 = oid_bytes({0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x05});
const Bytes kSha256WithRsa = oid_bytes({0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b});
const Bytes kUnknownAttr = oid_bytes({0x2a, 0x03, 0x04});  // 1.2.3.4

struct Signer {
  crypto::PrivateKey key;
  crypto::Certificate cert;
};

const Signer& signer(KeyAlgo a, int days = 3650) {
  static std::map<std::pair<KeyAlgo, int>, Signer> cache;
  auto it = cache.find({a, days});
  if (it == cache.end()) {
    auto key = crypto::PrivateKey::generate(a, 2048);
    auto cert = crypto::Certificate::self_signed(key, "CN=kernel mirror test", days).value();
    it = cache.emplace(std::pair{a, days}, Signer{key, cert}).first;
  }
  return it->second;
}

Bytes tlv(std::uint8_t tag, ByteView content) { return Writer().tlv(tag, content).take(); }
Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
Bytes oid(ByteView o) { return tlv(asn1::kOid, o); }
Bytes attr(ByteView type, std::vector<Bytes> values) {
  Bytes vals;
  for (const auto& v : values) vals.insert(vals.end(), v.begin(), v.end());
  return tlv(asn1::kSequence, cat({oid(type), tlv(asn1::kSet, vals)}));
}
Bytes content_type_attr(ByteView type) { return attr(crypto::oid::content_type, {oid(type)}); }
Bytes message_digest_attr(ByteView d) { return attr(crypto::oid::message_digest, {tlv(asn1::kOctetString, d)}); }

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
  std::optional<Bytes> signature;           // override
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

HashAlgo hash_for(const SiSpec& s) {
  if (s.hash) return *s.hash;
  return crypto::is_ml_dsa(s.algo) ? HashAlgo::sha512 : HashAlgo::sha256;
}

Bytes build_si(const SiSpec& s, ByteView content) {
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
  return tlv(asn1::kSequence, cat({Writer().integer(static_cast<std::uint64_t>(s.version)).take(), sid, dalg, attrs_block,
                                   salg, tlv(asn1::kOctetString, sig)}));
}

Bytes build(const MsgSpec& m, ByteView content) {
  Bytes sis;
  for (const auto& s : m.signers) {
    Bytes si = build_si(s, content);
    sis.insert(sis.end(), si.begin(), si.end());
  }
  Bytes eci = tlv(asn1::kSequence, cat({oid(m.econtent_type),
                                        m.econtent ? tlv(asn1::context_cons(0), tlv(asn1::kOctetString, *m.econtent))
                                                   : Bytes{}}));
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

const Bytes& content() {
  static const Bytes c = test::pattern(3000);
  return c;
}

KErr parse_err(const MsgSpec& m, const KernelProfile& p = KernelProfile::v7_0()) {
  auto r = kernel::pkcs7_parse_message(build(m, content()), p);
  return r ? KErr::none : r.error().code;
}

MsgSpec one(SiSpec s) {
  MsgSpec m;
  if (s.version == 3) m.sd_version = {0x03};
  m.signers.push_back(std::move(s));
  return m;
}

std::vector<Bytes> good_attrs(HashAlgo h = HashAlgo::sha256, ByteView data = content()) {
  return {content_type_attr(crypto::oid::data), message_digest_attr(crypto::digest(h, data))};
}

kernel::Keyring keyring_of(std::initializer_list<const Signer*> ss) {
  kernel::Keyring k;
  for (auto* s : ss) k.certificates.push_back(s->cert);
  return k;
}

kernel::VerifyReport verify_module_sig(const Bytes& der, const kernel::Keyring& k,
                                       const KernelProfile& p = KernelProfile::v7_0()) {
  return kernel::verify_pkcs7_signature(content(), der, k, Usage::module, p);
}

}  // namespace

// ------------------------------------------------------------------------- parse (1-15)

TEST(KernelParse, Item01OuterContentTypeIdData) {
  MsgSpec m = one({});
  m.outer = kData;
  EXPECT_EQ(parse_err(m), KErr::einval);
}

TEST(KernelParse, Item02SignedDataVersion) {
  for (Bytes v : {Bytes{0x02}, Bytes{0x04}, Bytes{0x05}, Bytes{0x00, 0x01}}) {
    MsgSpec m = one({});
    m.sd_version = v;
    EXPECT_EQ(parse_err(m), KErr::einval) << to_hex(v);
  }
}

TEST(KernelParse, Item03VersionMismatch) {
  MsgSpec a = one({.version = 3, .skid = true});
  a.sd_version = {0x01};
  EXPECT_EQ(parse_err(a), KErr::ebadmsg);
  MsgSpec b = one({});
  b.sd_version = {0x03};
  EXPECT_EQ(parse_err(b), KErr::ebadmsg);
  EXPECT_EQ(parse_err(one({.version = 3, .skid = true})), KErr::none);
}

TEST(KernelParse, Item04EnvelopedDataContent) {
  MsgSpec m = one({});
  m.econtent_type = kEnvelopedData;
  EXPECT_EQ(parse_err(m), KErr::einval);
}

TEST(KernelParse, Item05NoSignerInfos) {
  // Corrected from the 7.2 source: an empty SET is a decoder error (EBADMSG); only an
  // absent signerInfos (no SignerInfo at all) reaches pkcs7_check_authattrs' EINVAL.
  MsgSpec empty;
  EXPECT_EQ(parse_err(empty), KErr::ebadmsg);
  MsgSpec absent;
  absent.omit_signer_infos = true;
  EXPECT_EQ(parse_err(absent), KErr::einval);
}

TEST(KernelParse, Item06InconsistentAuthattrs) {
  MsgSpec m;
  m.signers.push_back({.attrs = good_attrs()});
  m.signers.push_back({});
  EXPECT_EQ(parse_err(m), KErr::einval);
}

TEST(KernelParse, Item07DigestMd5) { EXPECT_EQ(parse_err(one({.digest_oid = kMd5})), KErr::enopkg); }

TEST(KernelParse, Item08Sha256WithRsaAsSignatureAlgorithm) {
  EXPECT_EQ(parse_err(one({.sig_oid = kSha256WithRsa})), KErr::enopkg);
}

TEST(KernelParse, Item09TwoMessageDigestAttributes) {
  auto a = good_attrs();
  a.push_back(message_digest_attr(crypto::digest(HashAlgo::sha256, content())));
  EXPECT_EQ(parse_err(one({.attrs = a})), KErr::ekeyrejected);
}

TEST(KernelParse, Item10MultiValuedMessageDigest) {
  const Bytes d = tlv(asn1::kOctetString, crypto::digest(HashAlgo::sha256, content()));
  std::vector<Bytes> a{content_type_attr(crypto::oid::data), attr(crypto::oid::message_digest, {d, d})};
  EXPECT_EQ(parse_err(one({.attrs = a})), KErr::ekeyrejected);
}

TEST(KernelParse, Item11MessageDigestAsBitString) {
  std::vector<Bytes> a{content_type_attr(crypto::oid::data),
                       attr(crypto::oid::message_digest, {tlv(asn1::kBitString, Bytes(33, 0))})};
  EXPECT_EQ(parse_err(one({.attrs = a})), KErr::ebadmsg);
}

TEST(KernelParse, Item12MissingContentType) {
  std::vector<Bytes> a{message_digest_attr(crypto::digest(HashAlgo::sha256, content()))};
  EXPECT_EQ(parse_err(one({.attrs = a})), KErr::ebadmsg);
}

TEST(KernelParse, Item13ContentTypeMismatch) {
  std::vector<Bytes> a{content_type_attr(kMsIndirectData), message_digest_attr(crypto::digest(HashAlgo::sha256, content()))};
  EXPECT_EQ(parse_err(one({.attrs = a})), KErr::ebadmsg);
}

TEST(KernelParse, Item14SmimeCapabilitiesOutsideAuthenticode) {
  auto a = good_attrs();
  a.push_back(attr(crypto::oid::smime_capabilities, {tlv(asn1::kSequence, {})}));
  EXPECT_EQ(parse_err(one({.attrs = a})), KErr::ekeyrejected);
}

TEST(KernelParse, Item15UnknownMultiValuedAttributeIgnored) {
  auto a = good_attrs();
  a.push_back(attr(kUnknownAttr, {tlv(asn1::kNull, {}), tlv(asn1::kNull, {}), tlv(asn1::kInteger, Bytes{7})}));
  auto msg = kernel::pkcs7_parse_message(build(one({.attrs = a}), content()), KernelProfile::v7_0());
  ASSERT_TRUE(msg.ok()) << msg.error().message;
  EXPECT_TRUE(msg->have_authattrs);
  ASSERT_TRUE(kernel::pkcs7_supply_detached_data(*msg, content()).ok());
  EXPECT_TRUE(kernel::pkcs7_verify(*msg, Usage::unspecified, KernelProfile::v7_0()).ok());
}

// ------------------------------------------------------------------ data and digest (16-23)

TEST(KernelDigest, Item16EmbeddedDataPlusDetached) {
  MsgSpec m = one({});
  m.econtent = content();
  auto msg = kernel::pkcs7_parse_message(build(m, content()), KernelProfile::v7_0());
  ASSERT_TRUE(msg.ok());
  auto st = kernel::pkcs7_supply_detached_data(*msg, content());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, KErr::einval);
  EXPECT_EQ(verify_module_sig(build(m, content()), keyring_of({&signer(KeyAlgo::rsa)})).err, KErr::ebadmsg);
}

TEST(KernelDigest, Item17MessageDigestWrongSize) {
  std::vector<Bytes> a{content_type_attr(crypto::oid::data), message_digest_attr(Bytes(20, 0xab))};
  auto msg = kernel::pkcs7_parse_message(build(one({.attrs = a}), content()), KernelProfile::v7_0());
  ASSERT_TRUE(msg.ok());
  ASSERT_TRUE(kernel::pkcs7_supply_detached_data(*msg, content()).ok());
  auto d = kernel::pkcs7_get_digest(*msg, KernelProfile::v7_0());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, KErr::ebadmsg);
  // 7.2 source: the content hash stays cached, so a second call returns 0 with it.
  auto again = kernel::pkcs7_get_digest(*msg, KernelProfile::v7_0());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->buf, crypto::digest(HashAlgo::sha256, content()));
}

TEST(KernelDigest, Item18MessageDigestWrongValue) {
  Bytes d = crypto::digest(HashAlgo::sha256, content());
  d[0] ^= 1;
  std::vector<Bytes> a{content_type_attr(crypto::oid::data), message_digest_attr(d)};
  auto msg = kernel::pkcs7_parse_message(build(one({.attrs = a}), content()), KernelProfile::v7_0());
  ASSERT_TRUE(msg.ok());
  ASSERT_TRUE(kernel::pkcs7_supply_detached_data(*msg, content()).ok());
  EXPECT_EQ(kernel::pkcs7_get_digest(*msg, KernelProfile::v7_0()).error().code, KErr::ekeyrejected);
  auto msg2 = kernel::pkcs7_parse_message(build(one({.attrs = a}), content()), KernelProfile::v7_0());
  ASSERT_TRUE(kernel::pkcs7_supply_detached_data(*msg2, content()).ok());
  EXPECT_EQ(kernel::pkcs7_verify(*msg2, Usage::unspecified, KernelProfile::v7_0()).error().code, KErr::ekeyrejected);
}

TEST(KernelDigest, Item19TwoSignerInfos) {
  MsgSpec m;
  m.signers = {SiSpec{}, SiSpec{}};
  auto msg = kernel::pkcs7_parse_message(build(m, content()), KernelProfile::v7_0());
  ASSERT_TRUE(msg.ok());
  ASSERT_TRUE(kernel::pkcs7_supply_detached_data(*msg, content()).ok());
  EXPECT_EQ(kernel::pkcs7_get_digest(*msg, KernelProfile::v7_0()).error().code, KErr::ebadmsg);
}

TEST(KernelDigest, Item20RsaSha256NoAttrs) {
  auto msg = kernel::pkcs7_parse_message(build(one({}), content()), KernelProfile::v7_0());
  ASSERT_TRUE(msg.ok());
  ASSERT_TRUE(kernel::pkcs7_supply_detached_data(*msg, content()).ok());
  auto d = kernel::pkcs7_get_digest(*msg, KernelProfile::v7_0());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(to_hex(d->buf), to_hex(crypto::digest(HashAlgo::sha256, content())));
  EXPECT_EQ(d->buf.size(), 32u);
  EXPECT_EQ(d->hash_algo_index, 4);
}

TEST(KernelDigest, Item21RsaSha256WithAttrs) {
  const auto a = good_attrs();
  auto msg = kernel::pkcs7_parse_message(build(one({.attrs = a}), content()), KernelProfile::v7_0());
  ASSERT_TRUE(msg.ok());
  ASSERT_TRUE(kernel::pkcs7_supply_detached_data(*msg, content()).ok());
  auto d = kernel::pkcs7_get_digest(*msg, KernelProfile::v7_0());
  ASSERT_TRUE(d.ok());
  const Bytes set = tlv(asn1::kSet, cat({a[0], a[1]}));
  EXPECT_EQ(d->buf, crypto::digest(HashAlgo::sha256, set));
  EXPECT_NE(d->buf, crypto::digest(HashAlgo::sha256, content()));
  EXPECT_EQ(d->hash_algo_index, 4);
}

TEST(KernelDigest, Item22MlDsaNoAttrs) {
  const Bytes der = build(one({.algo = KeyAlgo::ml_dsa_65}), content());
  auto msg = kernel::pkcs7_parse_message(der, KernelProfile::v7_0());
  ASSERT_TRUE(msg.ok());
  EXPECT_EQ(msg->signed_infos[0].hash_algo, "none");
  ASSERT_TRUE(kernel::pkcs7_supply_detached_data(*msg, content()).ok());
  auto d = kernel::pkcs7_get_digest(*msg, KernelProfile::v7_0());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, KErr::einval);
  EXPECT_EQ(d.error().message, "pkcs7_get_digest: No digest available");
  // Before 7.0 the ML-DSA OID is unknown: the parse fails.
  EXPECT_EQ(kernel::pkcs7_parse_message(der, KernelProfile::v6()).error().code, KErr::enopkg);
}

TEST(KernelDigest, Item23MlDsaAttrsSha512) {
  const auto a = good_attrs(HashAlgo::sha512);
  auto msg = kernel::pkcs7_parse_message(build(one({.algo = KeyAlgo::ml_dsa_65, .attrs = a}), content()),
                                         KernelProfile::v7_0());
  ASSERT_TRUE(msg.ok());
  ASSERT_TRUE(kernel::pkcs7_supply_detached_data(*msg, content()).ok());
  auto d = kernel::pkcs7_get_digest(*msg, KernelProfile::v7_0());
  ASSERT_TRUE(d.ok());
  const Bytes set = tlv(asn1::kSet, cat({a[0], a[1]}));
  EXPECT_EQ(to_hex(d->buf), to_hex(set));  // the re-tagged attributes, not a digest
  EXPECT_EQ(d->buf.size(), set.size());
  EXPECT_EQ(d->hash_algo_index, 6);
}

// ------------------------------------------------------------------- usage gates (24-28)

namespace {
KErr verify_usage(const MsgSpec& m, Usage u, const KernelProfile& p = KernelProfile::v7_0()) {
  auto msg = kernel::pkcs7_parse_message(build(m, content()), p);
  if (!msg) return msg.error().code;
  if (!msg->data) {
    EXPECT_TRUE(kernel::pkcs7_supply_detached_data(*msg, content()).ok());
  }
  auto st = kernel::pkcs7_verify(*msg, u, p);
  return st ? KErr::none : st.error().code;
}
}  // namespace

TEST(KernelVerify, Item24RsaAttrsOnModule) {
  EXPECT_EQ(verify_usage(one({.attrs = good_attrs()}), Usage::module), KErr::ekeyrejected);
  EXPECT_EQ(verify_usage(one({.attrs = good_attrs()}), Usage::module, KernelProfile::v6()), KErr::ekeyrejected);
  auto waived = KernelProfile::v7_0();
  waived.waive_mldsa_authattrs = true;
  EXPECT_EQ(verify_usage(one({.attrs = good_attrs()}), Usage::module, waived), KErr::ekeyrejected);
}

TEST(KernelVerify, Item25MlDsaAttrsWaiver) {
  const MsgSpec m = one({.algo = KeyAlgo::ml_dsa_65, .attrs = good_attrs(HashAlgo::sha512)});
  EXPECT_EQ(verify_usage(m, Usage::module), KErr::ekeyrejected);
  auto waived = KernelProfile::v7_0();
  waived.waive_mldsa_authattrs = true;
  auto msg = kernel::pkcs7_parse_message(build(m, content()), waived);
  ASSERT_TRUE(msg.ok());
  ASSERT_TRUE(kernel::pkcs7_supply_detached_data(*msg, content()).ok());
  std::vector<std::string> log;
  EXPECT_TRUE(kernel::pkcs7_verify(*msg, Usage::module, waived, &log).ok());
  EXPECT_EQ(log, std::vector<std::string>{"Waived invalid module sig (has authattrs)"});
  // Only the first SignerInfo decides: RSA first, ML-DSA second is not waivable.
  MsgSpec mixed;
  mixed.signers = {SiSpec{.attrs = good_attrs()}, SiSpec{.algo = KeyAlgo::ml_dsa_65, .attrs = good_attrs(HashAlgo::sha512)}};
  EXPECT_EQ(verify_usage(mixed, Usage::module, waived), KErr::ekeyrejected);
}

TEST(KernelVerify, ImaModsigVerifyReusesTheDigestOfPkcs7GetDigest) {
  // ima_collect_modsig() runs pkcs7_get_digest() before ima_modsig_verify() verifies the same
  // message.  A failed messageDigest check leaves the content digest in sig->m, so under the
  // waiver IMA checks an ML-DSA signature over SHA-512(content) and passes, where the module
  // loader (a fresh message) refuses.
  const Signer& s = signer(KeyAlgo::ml_dsa_65);
  const Bytes h = crypto::digest(HashAlgo::sha512, content());
  Bytes wrong = h;
  wrong[0] ^= 0xff;
  const Bytes over_digest = crypto::sign_message(s.key, HashAlgo::sha512, h).value();
  const Bytes quirk = build(one({.algo = KeyAlgo::ml_dsa_65,
                                 .attrs = std::vector<Bytes>{content_type_attr(kData), message_digest_attr(wrong)},
                                 .signature = over_digest}),
                            content());
  auto waived = KernelProfile::v7_0();
  waived.waive_mldsa_authattrs = true;
  const auto k = keyring_of({&s});
  auto ima = kernel::ima_modsig_verify(content(), quirk, k, waived);
  EXPECT_EQ(ima.err, KErr::none) << ima.reason;
  EXPECT_EQ(ima.trusted_by, std::vector<std::string>{"kernel mirror test"});
  auto loader = kernel::verify_pkcs7_signature(content(), quirk, k, Usage::module, waived);
  EXPECT_EQ(loader.err, KErr::ekeyrejected);
  EXPECT_EQ(loader.reason, "Sig 1: Message digest doesn't match");
  // Without the waiver module usage refuses the signedAttrs before any digest matters.
  auto strict = kernel::ima_modsig_verify(content(), quirk, k, KernelProfile::v7_0());
  EXPECT_EQ(strict.err, KErr::ekeyrejected);
  EXPECT_EQ(strict.reason, "Invalid module sig (has authattrs)");
  // A right messageDigest: pkcs7_get_digest gives the signedAttrs, and a signature over the
  // content digest fails as it does for the loader.
  const Bytes plain = build(one({.algo = KeyAlgo::ml_dsa_65,
                                 .attrs = std::vector<Bytes>{content_type_attr(kData), message_digest_attr(h)},
                                 .signature = over_digest}),
                            content());
  EXPECT_EQ(kernel::ima_modsig_verify(content(), plain, k, waived).err, KErr::ekeyrejected);
  EXPECT_EQ(kernel::verify_pkcs7_signature(content(), plain, k, Usage::module, waived).err, KErr::ekeyrejected);
  // And the regular waived message passes both.
  const Bytes good = build(one({.algo = KeyAlgo::ml_dsa_65, .attrs = good_attrs(HashAlgo::sha512)}), content());
  EXPECT_EQ(kernel::ima_modsig_verify(content(), good, k, waived).err, KErr::none);
  EXPECT_EQ(kernel::verify_pkcs7_signature(content(), good, k, Usage::module, waived).err, KErr::none);
}

TEST(KernelVerify, Item26FirmwareNeedsAttrs) {
  EXPECT_EQ(verify_usage(one({}), Usage::firmware), KErr::ekeyrejected);
  EXPECT_EQ(verify_usage(one({.attrs = good_attrs()}), Usage::firmware), KErr::none);
}

TEST(KernelVerify, Item27KexecNeedsAuthenticode) { EXPECT_EQ(verify_usage(one({}), Usage::kexec_pe), KErr::ekeyrejected); }

TEST(KernelVerify, Item28KeySignatureUsage) { EXPECT_EQ(verify_usage(one({}), Usage::key_signature), KErr::einval); }

// ------------------------------------------------------------------ trust and keys (29-35)

TEST(KernelTrust, Item29WrongSignatureWithoutCertificates) {
  const MsgSpec m = one({.corrupt_signature = true});
  EXPECT_EQ(verify_usage(m, Usage::module), KErr::none);  // nothing checked: no embedded signer
  auto msg = kernel::pkcs7_parse_message(build(m, content()), KernelProfile::v7_0());
  ASSERT_TRUE(kernel::pkcs7_supply_detached_data(*msg, content()).ok());
  ASSERT_TRUE(kernel::pkcs7_verify(*msg, Usage::module, KernelProfile::v7_0()).ok());
  auto t = kernel::pkcs7_validate_trust(*msg, {signer(KeyAlgo::rsa).cert}, KernelProfile::v7_0());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, KErr::ekeyrejected);
}

TEST(KernelTrust, Item30UnknownSigner) {
  const Bytes der = build(one({}), content());
  EXPECT_EQ(verify_module_sig(der, keyring_of({&signer(KeyAlgo::ml_dsa_65)})).err, KErr::enokey);
  const Bytes module_file = module::append_signature(content(), der);
  auto v = module::module_sig_check(module_file, keyring_of({}), KernelProfile::v7_0());
  EXPECT_EQ(v.outcome, module::LoadOutcome::loads_tainted);
  EXPECT_EQ(v.sig_errno, KErr::enokey);
  auto enforced = KernelProfile::v7_0();
  enforced.enforce = true;
  v = module::module_sig_check(module_file, keyring_of({}), enforced);
  EXPECT_EQ(v.outcome, module::LoadOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::ekeyrejected);
}

TEST(KernelTrust, Item31BlacklistedEmbeddedCertificate) {
  const Signer& a = signer(KeyAlgo::rsa);
  const Signer& b = signer(KeyAlgo::ecdsa_p256);
  kernel::Blacklist bl;
  bl.descriptions.insert("tbs:" + to_hex(crypto::digest(HashAlgo::sha256, a.cert.tbs())));
  MsgSpec m = one({});
  m.certs = {a.cert.der()};
  auto msg = kernel::pkcs7_parse_message(build(m, content()), KernelProfile::v7_0(), &bl);
  ASSERT_TRUE(msg.ok()) << msg.error().message;
  EXPECT_TRUE(msg->certs[0].blacklisted);
  ASSERT_TRUE(kernel::pkcs7_supply_detached_data(*msg, content()).ok());
  EXPECT_EQ(kernel::pkcs7_verify(*msg, Usage::module, KernelProfile::v7_0()).error().code, KErr::ekeyrejected);
  // A second, valid signer makes it pass, in either order.
  for (bool blacklisted_first : {true, false}) {
    MsgSpec two;
    two.certs = {a.cert.der(), b.cert.der()};
    SiSpec sa{}, sb{.algo = KeyAlgo::ecdsa_p256};
    two.signers = blacklisted_first ? std::vector<SiSpec>{sa, sb} : std::vector<SiSpec>{sb, sa};
    auto m2 = kernel::pkcs7_parse_message(build(two, content()), KernelProfile::v7_0(), &bl);
    ASSERT_TRUE(m2.ok());
    ASSERT_TRUE(kernel::pkcs7_supply_detached_data(*m2, content()).ok());
    EXPECT_TRUE(kernel::pkcs7_verify(*m2, Usage::module, KernelProfile::v7_0()).ok()) << blacklisted_first;
  }
  // The blacklisted signer's own bad signature is returned first: a well-formed RSA
  // signature over other content is EKEYREJECTED (rsassa_pkcs1_verify: digest mismatch).
  const Bytes other_sig = crypto::sign_message(a.key, HashAlgo::sha256, test::pattern(10)).value();
  MsgSpec bad = one({.signature = other_sig});
  bad.certs = {a.cert.der()};
  auto m3 = kernel::pkcs7_parse_message(build(bad, content()), KernelProfile::v7_0(), &bl);
  ASSERT_TRUE(kernel::pkcs7_supply_detached_data(*m3, content()).ok());
  auto st3 = kernel::pkcs7_verify(*m3, Usage::module, KernelProfile::v7_0());
  ASSERT_FALSE(st3.ok());
  EXPECT_EQ(st3.error().code, KErr::ekeyrejected);
  EXPECT_EQ(st3.error().message, "signature does not verify");
}

TEST(KernelTrust, Item32SigningTimeOutsideValidity) {
  const Signer& s = signer(KeyAlgo::rsa);
  auto a = good_attrs();
  a.push_back(attr(crypto::oid::signing_time, {tlv(asn1::kUtcTime, Bytes{'0', '1', '0', '1', '0', '1', '0', '0', '0',
                                                                         '0', '0', '0', 'Z'})}));  // 2001
  MsgSpec m = one({.attrs = a});
  m.certs = {s.cert.der()};
  EXPECT_EQ(verify_usage(m, Usage::unspecified), KErr::ekeyrejected);
  // Without the embedded certificate the time is never checked.
  EXPECT_EQ(verify_usage(one({.attrs = a}), Usage::unspecified), KErr::none);
}

TEST(KernelTrust, Item33MlDsaAttrsSha256) {
  const Signer& s = signer(KeyAlgo::ml_dsa_65);
  MsgSpec m = one({.algo = KeyAlgo::ml_dsa_65, .hash = HashAlgo::sha256, .attrs = good_attrs(HashAlgo::sha256)});
  MsgSpec with_cert = m;
  with_cert.certs = {s.cert.der()};
  EXPECT_EQ(verify_usage(with_cert, Usage::unspecified), KErr::einval);
  auto r = kernel::verify_pkcs7_signature(content(), build(m, content()), keyring_of({&s}), Usage::unspecified,
                                          KernelProfile::v7_0());
  EXPECT_EQ(r.err, KErr::ekeyrejected);
}

TEST(KernelTrust, Item34MlDsaNoAttrsDigestIgnored) {
  const Signer& s = signer(KeyAlgo::ml_dsa_65);
  for (HashAlgo h : {HashAlgo::sha256, HashAlgo::sha512, HashAlgo::sha3_256}) {
    auto r = verify_module_sig(build(one({.algo = KeyAlgo::ml_dsa_65, .hash = h}), content()), keyring_of({&s}));
    EXPECT_EQ(r.err, KErr::none) << crypto::hash_info(h).name << ": " << r.reason;
  }
}

TEST(KernelTrust, Item35MlDsaWrongSignatureLength) {
  const Signer& s = signer(KeyAlgo::ml_dsa_65);
  Bytes sig = crypto::sign_message(s.key, HashAlgo::sha512, content()).value();
  sig.pop_back();
  MsgSpec m = one({.algo = KeyAlgo::ml_dsa_65, .signature = sig});
  MsgSpec with_cert = m;
  with_cert.certs = {s.cert.der()};
  EXPECT_EQ(verify_usage(with_cert, Usage::module), KErr::ebadmsg);
  EXPECT_EQ(verify_module_sig(build(m, content()), keyring_of({&s})).err, KErr::ekeyrejected);
}

// ------------------------------------------------------------------- module load (36-38)

TEST(KernelModule, Item36TrailerFields) {
  const Signer& s = signer(KeyAlgo::rsa);
  const auto k = keyring_of({&s});
  const Bytes good = module::append_signature(content(), build(one({}), content()));
  EXPECT_EQ(module::module_sig_check(good, k, KernelProfile::v7_0()).outcome, module::LoadOutcome::loads);
  const std::size_t ms = good.size() - 28 - 12;
  Bytes id1 = good;
  id1[ms + 2] = 1;
  auto v = module::module_sig_check(id1, k, KernelProfile::v7_0());
  EXPECT_EQ(v.outcome, module::LoadOutcome::loads_tainted);
  EXPECT_EQ(v.sig_errno, KErr::enopkg);
  Bytes hash1 = good;
  hash1[ms + 1] = 1;
  v = module::module_sig_check(hash1, k, KernelProfile::v7_0());
  EXPECT_EQ(v.outcome, module::LoadOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::ebadmsg);
  Bytes len = good;
  const std::uint32_t too_long = static_cast<std::uint32_t>(good.size() - 28 - 12);
  for (int i = 0; i < 4; ++i) len[ms + 8 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(too_long >> (24 - 8 * i));
  v = module::module_sig_check(len, k, KernelProfile::v7_0());
  EXPECT_EQ(v.outcome, module::LoadOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::ebadmsg);
}

TEST(KernelModule, Item37NoMarker) {
  auto v = module::module_sig_check(content(), {}, KernelProfile::v7_0());
  EXPECT_EQ(v.outcome, module::LoadOutcome::loads_tainted);
  EXPECT_EQ(v.sig_errno, KErr::enodata);
  auto p = KernelProfile::v7_0();
  p.enforce = true;
  v = module::module_sig_check(content(), {}, p);
  EXPECT_EQ(v.outcome, module::LoadOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::ekeyrejected);
  EXPECT_EQ(v.reason, "Loading of unsigned module is rejected (no signature marker)");
  p.enforce = false;
  p.lockdown = true;
  v = module::module_sig_check(content(), {}, p);
  EXPECT_EQ(v.load_errno, KErr::eperm);
}

TEST(KernelModule, Item38MangledModuleIsUnsigned) {
  const Signer& s = signer(KeyAlgo::rsa);
  const Bytes good = module::append_signature(content(), build(one({}), content()));
  auto v = module::module_sig_check(good, keyring_of({&s}), KernelProfile::v7_0(), /*mangled=*/true);
  EXPECT_EQ(v.outcome, module::LoadOutcome::loads_tainted);
  EXPECT_EQ(v.sig_errno, KErr::enodata);
}

// ------------------------------------------------------ modsign's own forms per profile

TEST(KernelProfiles, ModsignFormsPerProfile) {
  const Bytes mod = content();
  auto check = [&](KeyAlgo algo, bool attrs, const KernelProfile& p, module::LoadOutcome want, KErr want_err) {
    const Signer& s = signer(algo);
    cms::BuildOptions opt;
    opt.digest = algo == KeyAlgo::rsa ? HashAlgo::sha256 : HashAlgo::sha512;
    opt.signed_attrs = attrs;
    for (auto sid : {cms::SignerIdType::issuer_and_serial, cms::SignerIdType::subject_key_id}) {
      opt.sid = sid;
      const Bytes file = module::append_signature(mod, cms::build_detached(s.key, s.cert, mod, opt).value());
      auto v = module::module_sig_check(file, keyring_of({&s}), p);
      EXPECT_EQ(v.outcome, want) << crypto::key_algo_name(algo) << " attrs=" << attrs << " " << p.name() << ": " << v.reason;
      EXPECT_EQ(v.outcome == module::LoadOutcome::refused ? v.load_errno : v.sig_errno, want_err) << v.reason;
    }
  };
  auto waived = KernelProfile::v7_0();
  waived.waive_mldsa_authattrs = true;
  for (auto algo : {KeyAlgo::ml_dsa_44, KeyAlgo::ml_dsa_65, KeyAlgo::ml_dsa_87}) {
    check(algo, false, KernelProfile::v7_0(), module::LoadOutcome::loads, KErr::none);
    check(algo, false, KernelProfile::v6(), module::LoadOutcome::loads_tainted, KErr::enopkg);
    check(algo, true, KernelProfile::v7_0(), module::LoadOutcome::refused, KErr::ekeyrejected);
    check(algo, true, waived, module::LoadOutcome::loads, KErr::none);
  }
  for (auto p : {KernelProfile::v6(), KernelProfile::v7_0(), waived}) {
    check(KeyAlgo::rsa, true, p, module::LoadOutcome::refused, KErr::ekeyrejected);
    check(KeyAlgo::rsa, false, p, module::LoadOutcome::loads, KErr::none);
    check(KeyAlgo::ecdsa_p384, false, p, module::LoadOutcome::loads, KErr::none);
  }
}

// ---------------------------------------------------------------------- decoder details

TEST(KernelDecoder, IndefiniteLengthsAndSizes) {
  // The same message with indefinite lengths on its outer constructed elements: accepted.
  const Signer& s = signer(KeyAlgo::rsa);
  const Bytes der = build(one({}), content());
  asn1::Reader top(der);
  auto ci = top.next();
  asn1::Reader in(ci.content);
  auto o = in.next();
  auto x0 = in.next();
  asn1::Reader in0(x0.content);
  auto sd = in0.next();
  const Bytes ber = cat({Bytes{0x30, 0x80}, to_bytes(o.tlv), Bytes{0xa0, 0x80}, Bytes{0x30, 0x80}, to_bytes(sd.content),
                         Bytes{0, 0, 0, 0, 0, 0}});
  EXPECT_EQ(verify_module_sig(ber, keyring_of({&s})).err, KErr::none);
  // Trailing bytes after the ContentInfo are accepted (lib/asn1_decoder.c).
  Bytes trailing = der;
  trailing.insert(trailing.end(), {1, 2, 3});
  EXPECT_EQ(verify_module_sig(trailing, keyring_of({&s})).err, KErr::none);
  // Inputs of 64 KiB or more: EMSGSIZE.
  Bytes big = der;
  big.resize(65536, 0);
  EXPECT_EQ(verify_module_sig(big, keyring_of({&s})).err, KErr::emsgsize);
  // More than 2 length octets: EBADMSG.
  Bytes three = cat({Bytes{0x30, 0x83, 0x00}, Bytes(der.begin() + 2, der.end())});
  three[3] = static_cast<std::uint8_t>((der.size() - 4) >> 8);
  three[4] = static_cast<std::uint8_t>(der.size() - 4);
  EXPECT_EQ(verify_module_sig(three, keyring_of({&s})).err, KErr::ebadmsg);
}

TEST(KernelDecoder, Version1SignerInfoWithSkidHasEmptyKeyId) {
  // 7.2 source: the issuer/serial noted by the parse context stay empty, so the key id is
  // empty and the keyring search fails with EINVAL: a hard error for module loading.
  const Signer& s = signer(KeyAlgo::rsa);
  MsgSpec m = one({.version = 1, .skid = true});
  auto r = verify_module_sig(build(m, content()), keyring_of({&s}));
  EXPECT_EQ(r.err, KErr::einval) << r.reason;
}

// ---------------------------------------------------------------------- OpenSSL agreement

TEST(KernelOpenSsl, ParserAgreement) {
  // Messages both parsers accept, and messages the kernel rejects that OpenSSL's CMS
  // parser accepts (its ASN.1 layer does not apply the kernel's rules).
  test::TempDir d;
  auto openssl_parses = [&](const Bytes& der) {
    test::spit(d / "m.p7s", der);
    return test::run(test::openssl() + " cms -cmsout -inform DER -in " + test::q(d / "m.p7s") + " -outform DER -out /dev/null")
               .status == 0;
  };
  struct Case {
    const char* what;
    MsgSpec m;
    KErr kernel;
    bool openssl;
  };
  auto with_unknown = good_attrs();
  with_unknown.push_back(attr(kUnknownAttr, {tlv(asn1::kNull, {}), tlv(asn1::kNull, {})}));
  auto two_md = good_attrs();
  two_md.push_back(message_digest_attr(crypto::digest(HashAlgo::sha256, content())));
  auto smime = good_attrs();
  smime.push_back(attr(crypto::oid::smime_capabilities, {tlv(asn1::kSequence, {})}));
  MsgSpec v2 = one({});
  v2.sd_version = {0x02};
  std::vector<Case> cases = {
      {"RSA, no signedAttrs", one({}), KErr::none, true},
      {"RSA, signedAttrs", one({.attrs = good_attrs()}), KErr::none, true},
      {"ML-DSA-65 no signedAttrs", one({.algo = KeyAlgo::ml_dsa_65}), KErr::none, true},
      {"ML-DSA-65 SKID", one({.algo = KeyAlgo::ml_dsa_65, .version = 3, .skid = true}), KErr::none, true},
      {"unknown attribute with two values", one({.attrs = with_unknown}), KErr::none, true},
      {"SignedData version 2 (kernel: EINVAL)", v2, KErr::einval, true},
      {"md5 digestAlgorithm (kernel: ENOPKG)", one({.digest_oid = kMd5}), KErr::enopkg, true},
      {"two messageDigest attributes (kernel: EKEYREJECTED)", one({.attrs = two_md}), KErr::ekeyrejected, true},
      {"sMIMECapabilities in id-data (kernel: EKEYREJECTED)", one({.attrs = smime}), KErr::ekeyrejected, true},
      {"sha256WithRSAEncryption signatureAlgorithm (kernel: ENOPKG)", one({.sig_oid = kSha256WithRsa}), KErr::enopkg, true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(parse_err(c.m), c.kernel) << c.what;
    EXPECT_EQ(openssl_parses(build(c.m, content())), c.openssl) << c.what;
  }
}

// ------------------------------------------------ chains and keyrings (7.2 source review)

namespace {
struct Pki {
  test::TempDir d;
  std::string O = test::openssl();
  std::string p(const std::string& n) const { return test::q(d / n); }
  void run(const std::string& cmd) {
    auto r = test::run(cmd);
    ASSERT_EQ(r.status, 0) << cmd << "\n" << r.err;
  }
  // root CA -> intermediate -> leaf, RSA-2048, SKID and AKID (keyid and issuer+serial).
  void make() {
    test::spit(d / "ext.cnf", std::string("[ca]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=keyCertSign\n"
                                          "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n"
                                          "[leaf]\nbasicConstraints=critical,CA:FALSE\nkeyUsage=digitalSignature\n"
                                          "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n"));
    for (const char* k : {"root", "inter", "leaf"})
      run(O + " genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out " + p(std::string(k) + ".key"));
    run(O + " req -new -x509 -key " + p("root.key") + " -subj /CN=Test-Root -days 3650 -set_serial 1 -out " + p("root.pem") +
        " -addext basicConstraints=critical,CA:TRUE -addext subjectKeyIdentifier=hash");
    run(O + " req -new -key " + p("inter.key") + " -subj /CN=Test-Inter -out " + p("inter.csr"));
    run(O + " x509 -req -in " + p("inter.csr") + " -CA " + p("root.pem") + " -CAkey " + p("root.key") +
        " -set_serial 2 -days 3650 -extfile " + p("ext.cnf") + " -extensions ca -out " + p("inter.pem"));
    run(O + " req -new -key " + p("leaf.key") + " -subj /CN=Test-Leaf -out " + p("leaf.csr"));
    run(O + " x509 -req -in " + p("leaf.csr") + " -CA " + p("inter.pem") + " -CAkey " + p("inter.key") +
        " -set_serial 3 -days 3650 -extfile " + p("ext.cnf") + " -extensions leaf -out " + p("leaf.pem"));
    test::spit(d / "mod.bin", content());
    run("cat " + p("inter.pem") + " " + p("root.pem") + " > " + p("chain.pem"));
  }
  // openssl cms -sign embeds the leaf (and -certfile extras).
  Bytes sign(bool with_chain) {
    run(O + " cms -sign -binary -noattr -md sha256 -in " + p("mod.bin") + " -signer " + p("leaf.pem") + " -inkey " +
        p("leaf.key") + (with_chain ? " -certfile " + p("chain.pem") : std::string()) + " -outform DER -out " + p("s.p7s"));
    return test::slurp(d / "s.p7s");
  }
  kernel::Keyring keyring(const std::string& pem) {
    kernel::Keyring k;
    EXPECT_TRUE(k.add_path(d / pem).ok());
    return k;
  }
};
}  // namespace

TEST(KernelChains, EmbeddedLeafTrustedDirectlyOrThroughItsIssuers) {
  Pki pki;
  ASSERT_NO_FATAL_FAILURE(pki.make());
  const Bytes leaf_only = pki.sign(false);
  const Bytes with_chain = pki.sign(true);
  // The leaf itself in the keyring: the SignerInfo's signature is checked with it.
  EXPECT_EQ(verify_module_sig(leaf_only, pki.keyring("leaf.pem")).err, KErr::none);
  // The intermediate (the leaf's AKID names it): found through the AKID, loads.
  auto r = verify_module_sig(leaf_only, pki.keyring("inter.pem"));
  EXPECT_EQ(r.err, KErr::none) << r.reason;
  // Whole chain embedded, keyring = intermediate or root: loads.
  r = verify_module_sig(with_chain, pki.keyring("inter.pem"));
  EXPECT_EQ(r.err, KErr::none) << r.reason;
  r = verify_module_sig(with_chain, pki.keyring("root.pem"));
  EXPECT_EQ(r.err, KErr::none) << r.reason;
  // Only the root, chain not embedded: nothing links the leaf to it: ENOKEY.
  EXPECT_EQ(verify_module_sig(leaf_only, pki.keyring("root.pem")).err, KErr::enokey);
}

TEST(KernelChains, KeyringLookupNeedsBothIds) {
  // Self-signed certificate A embedded; the keyring holds B with the same key (same SKID)
  // but another serial: the kernel's lookup by A's id fails and the unknown self-signed
  // certificate ends the walk (ENOKEY) — the SKID alone does not match.
  Pki pki;
  ASSERT_NO_FATAL_FAILURE(pki.make());
  pki.run(pki.O + " req -new -x509 -key " + pki.p("leaf.key") + " -subj /CN=Self -days 3650 -set_serial 10 -out " +
          pki.p("a.pem") + " -addext subjectKeyIdentifier=hash");
  pki.run(pki.O + " req -new -x509 -key " + pki.p("leaf.key") + " -subj /CN=Self -days 3650 -set_serial 11 -out " +
          pki.p("b.pem") + " -addext subjectKeyIdentifier=hash");
  pki.run(pki.O + " cms -sign -binary -noattr -md sha256 -in " + pki.p("mod.bin") + " -signer " + pki.p("a.pem") +
          " -inkey " + pki.p("leaf.key") + " -outform DER -out " + pki.p("a.p7s"));
  const Bytes der = test::slurp(pki.d / "a.p7s");
  EXPECT_EQ(verify_module_sig(der, pki.keyring("b.pem")).err, KErr::enokey);
  EXPECT_EQ(verify_module_sig(der, pki.keyring("a.pem")).err, KErr::none);
}

TEST(KernelChains, CertificateAcceptance) {
  // P-521 certificates are accepted (crypto/ecdsa.c supports it); an RSASSA-PSS-signed
  // certificate is not (x509_note_sig_algo: ENOPKG), in the message or in the keyring.
  Pki pki;
  pki.run(pki.O + " genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-521 -out " + pki.p("p521.key"));
  pki.run(pki.O + " req -new -x509 -key " + pki.p("p521.key") + " -subj /CN=P521 -days 3650 -out " + pki.p("p521.pem") +
          " -addext subjectKeyIdentifier=hash");
  test::spit(pki.d / "mod.bin", content());
  pki.run(pki.O + " cms -sign -binary -noattr -md sha512 -in " + pki.p("mod.bin") + " -signer " + pki.p("p521.pem") +
          " -inkey " + pki.p("p521.key") + " -outform DER -out " + pki.p("e.p7s"));
  auto r = verify_module_sig(test::slurp(pki.d / "e.p7s"), pki.keyring("p521.pem"));
  EXPECT_EQ(r.err, KErr::none) << r.reason;
  pki.run(pki.O + " genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out " + pki.p("r.key"));
  pki.run(pki.O + " req -new -x509 -key " + pki.p("r.key") + " -subj /CN=PSS -days 3650 -sigopt rsa_padding_mode:pss -out " +
          pki.p("pss.pem"));
  pki.run(pki.O + " cms -sign -binary -noattr -md sha256 -in " + pki.p("mod.bin") + " -signer " + pki.p("pss.pem") +
          " -inkey " + pki.p("r.key") + " -outform DER -out " + pki.p("pss.p7s"));
  auto m = kernel::pkcs7_parse_message(test::slurp(pki.d / "pss.p7s"), KernelProfile::v7_0());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, KErr::enopkg);
}

TEST(KernelTime, X509DecodeTimeRules) {
  auto t = [](std::uint8_t tag, const std::string& v) {
    return asn1::decode_time(tag, ByteView(reinterpret_cast<const std::uint8_t*>(v.data()), v.size()));
  };
  EXPECT_EQ(t(asn1::kUtcTime, "700101000000Z"), 0);
  EXPECT_EQ(t(asn1::kUtcTime, "491231235959Z"), 2524607999);                 // 2049
  EXPECT_EQ(t(asn1::kUtcTime, "600101000000Z"), std::nullopt);               // 1960 < 1970
  EXPECT_EQ(t(asn1::kUtcTime, "250101240000Z"), 1735776000);                 // hour 24 allowed
  EXPECT_EQ(t(asn1::kUtcTime, "250101235960Z"), 1735775999 + 1);             // leap second
  EXPECT_EQ(t(asn1::kGeneralizedTime, "20250101000000Z"), std::nullopt);     // GeneralizedTime in UTCTime range
  EXPECT_EQ(t(asn1::kGeneralizedTime, "21260101000000Z"), 4922899200);
  EXPECT_EQ(t(asn1::kUtcTime, "250229000000Z"), std::nullopt);               // not a leap year
  EXPECT_EQ(t(asn1::kUtcTime, "240229000000Z"), 1709164800);
  EXPECT_EQ(t(asn1::kUtcTime, "2501010000Z"), std::nullopt);                 // length
}

TEST(KernelSignatures, EcdsaSignatureDecodedLikeTheKernel) {
  // r and s re-encoded with a non-minimal length and trailing bytes: the kernel's BER
  // decoder reads them, so the module loads.
  const Signer& s = signer(KeyAlgo::ecdsa_p256);
  const Bytes sig = crypto::sign_message(s.key, HashAlgo::sha256, content()).value();
  asn1::Reader r(sig);
  auto seq = r.next();
  Bytes lax = cat({Bytes{0x30, 0x81, static_cast<std::uint8_t>(seq.content.size())}, to_bytes(seq.content), Bytes{0xde, 0xad}});
  auto rep = verify_module_sig(build(one({.algo = KeyAlgo::ecdsa_p256, .signature = lax}), content()), keyring_of({&s}));
  EXPECT_EQ(rep.err, KErr::none) << rep.reason;
  // Not a SEQUENCE at all: EBADMSG in the trust path collapses to EKEYREJECTED.
  rep = verify_module_sig(build(one({.algo = KeyAlgo::ecdsa_p256, .signature = Bytes{0x04, 0x01, 0x00}}), content()),
                          keyring_of({&s}));
  EXPECT_EQ(rep.err, KErr::ekeyrejected);
}

TEST(KernelSignatures, RsaErrnosOnTheEmbeddedCertificatePath) {
  // rsassa_pkcs1_verify (7.2): wrong length EINVAL; a valid block over another digest
  // EKEYREJECTED.  The embedded signer certificate makes pkcs7_verify return them as is.
  const Signer& s = signer(KeyAlgo::rsa);
  MsgSpec short_sig = one({.signature = Bytes(255, 0x42)});
  short_sig.certs = {s.cert.der()};
  EXPECT_EQ(verify_usage(short_sig, Usage::module), KErr::einval);
  MsgSpec other = one({.signature = crypto::sign_message(s.key, HashAlgo::sha256, test::pattern(5)).value()});
  other.certs = {s.cert.der()};
  EXPECT_EQ(verify_usage(other, Usage::module), KErr::ekeyrejected);
}

TEST(KernelDecoder, StructureChecksOfLibAsn1Decoder) {
  // Each variant differs from a valid RSA message by one structural change; the kernel's
  // decoder (lib/asn1_decoder.c, 7.2) refuses all but the first with EBADMSG.
  const Signer& s = signer(KeyAlgo::rsa);
  const Bytes sig = crypto::sign_message(s.key, HashAlgo::sha256, content()).value();
  const Bytes ias = tlv(asn1::kSequence, cat({to_bytes(s.cert.issuer()), tlv(asn1::kInteger, s.cert.serial())}));
  const Bytes dalg = tlv(asn1::kSequence, oid(crypto::hash_info(HashAlgo::sha256).oid));
  const Bytes salg = tlv(asn1::kSequence, cat({oid(crypto::oid::rsa_encryption), Bytes{0x05, 0x00}}));
  auto message = [&](Bytes sid, Bytes digest_alg, Bytes tail, Bytes dalgs_set, std::uint8_t outer_tag) {
    Bytes si = tlv(asn1::kSequence, cat({Bytes{0x02, 0x01, 0x01}, sid, digest_alg, salg, tlv(asn1::kOctetString, sig), tail}));
    Bytes sd = tlv(asn1::kSequence, cat({Bytes{0x02, 0x01, 0x01}, dalgs_set, tlv(asn1::kSequence, oid(kData)),
                                         tlv(asn1::kSet, si)}));
    return tlv(outer_tag, cat({oid(kSignedData), tlv(asn1::context_cons(0), sd)}));
  };
  const Bytes dalgs = tlv(asn1::kSet, dalg);
  auto err = [&](const Bytes& der) { return verify_module_sig(der, keyring_of({&s})).err; };
  // A primitive identifier where SEQUENCE is expected is accepted (the decoder masks the
  // constructed bit for constructed grammar elements).
  EXPECT_EQ(err(message(ias, dalg, {}, dalgs, 0x10)), KErr::none);
  EXPECT_EQ(err(message(ias, dalg, {}, dalgs, asn1::kSequence)), KErr::none);
  // Extra elements inside definite-length SEQUENCEs: "Cons length error".
  EXPECT_EQ(err(message(ias, tlv(asn1::kSequence, cat({oid(crypto::hash_info(HashAlgo::sha256).oid), Bytes{5, 0}, Bytes{5, 0}})),
                        {}, dalgs, asn1::kSequence)),
            KErr::ebadmsg);
  Bytes ias_extra = tlv(asn1::kSequence, cat({to_bytes(s.cert.issuer()), tlv(asn1::kInteger, s.cert.serial()), Bytes{2, 1, 7}}));
  EXPECT_EQ(err(message(ias_extra, dalg, {}, dalgs, asn1::kSequence)), KErr::ebadmsg);
  // Malformed unauthenticated attributes.
  EXPECT_EQ(err(message(ias, dalg, Bytes{0xa1, 0x03, 0xff, 0xff, 0xff}, dalgs, asn1::kSequence)), KErr::ebadmsg);
  // Well-formed unauthenticated attributes are parsed and ignored.
  EXPECT_EQ(err(message(ias, dalg, tlv(asn1::context_cons(1), attr(kUnknownAttr, {tlv(asn1::kNull, {})})), dalgs,
                        asn1::kSequence)),
            KErr::none);
  // Empty SET OF digestAlgorithms.
  EXPECT_EQ(err(message(ias, dalg, {}, Bytes{0x31, 0x00}, asn1::kSequence)), KErr::ebadmsg);
  // A subjectKeyIdentifier sid tagged [0] constructed (0xA0) instead of primitive (0x80).
  MsgSpec v3 = one({.version = 3, .skid = true});
  Bytes der = build(v3, content());
  const std::string hex = to_hex(der);
  const auto pos = hex.find("8014" + to_hex(*s.cert.skid()));
  ASSERT_NE(pos, std::string::npos);
  der[pos / 2] = 0xa0;
  EXPECT_EQ(err(der), KErr::ebadmsg);
  // An attribute with an empty value SET.
  auto a = good_attrs();
  a.push_back(attr(kUnknownAttr, {}));
  EXPECT_EQ(parse_err(one({.attrs = a})), KErr::ebadmsg);
}

// ------------------------------------------------ Linux 6.1 digests (real-kernel conformance)
// tools/kernel-conformance on Debian 12's 6.1.0-57-cloud-amd64: Debian's RSA/SHA-256 module
// signature with its digestAlgorithm changed to md5 is refused with EKEYREJECTED (the kernel
// hashes with md5 and logs "alg: No test for pkcs1pad(rsa,md5)"), and with sha3-256 it loads
// tainted ("PKCS7: Unknown OID ... Unsupported digest algo").  6.12 answers ENOPKG and
// EKEYREJECTED instead, which is profile v6; profile v6.1 is the older parser.

TEST(KernelProfiles, V61ParsesMd5AndNoSha3) {
  const auto v61 = KernelProfile::v6_1();
  EXPECT_EQ(v61.name(), "v6.1");
  EXPECT_EQ(KernelProfile::parse("6.1")->name(), "v6.1");
  EXPECT_EQ(KernelProfile::parse("v6")->name(), "v6");
  EXPECT_FALSE(KernelProfile::parse("v6")->legacy_digests);
  // md5 is a known digest only for v6.1.
  EXPECT_EQ(parse_err(one({.digest_oid = kMd5}), v61), KErr::none);
  EXPECT_EQ(parse_err(one({.digest_oid = kMd5}), KernelProfile::v6()), KErr::enopkg);
  // md4 too (1.2.840.113549.2.4).
  EXPECT_EQ(parse_err(one({.digest_oid = oid_bytes({0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x04})}), v61), KErr::none);
  // SHA-3 digests and id-ecdsa-with-sha3-* are unknown to v6.1 only.
  EXPECT_EQ(parse_err(one({.hash = HashAlgo::sha3_256}), v61), KErr::enopkg);
  EXPECT_EQ(parse_err(one({.hash = HashAlgo::sha3_256}), KernelProfile::v6()), KErr::none);
  EXPECT_EQ(parse_err(one({.algo = KeyAlgo::ecdsa_p256, .hash = HashAlgo::sha3_384}), v61), KErr::enopkg);
  EXPECT_EQ(parse_err(one({.algo = KeyAlgo::ecdsa_p256, .hash = HashAlgo::sha3_384}), KernelProfile::v6()), KErr::none);
  EXPECT_EQ(parse_err(one({.algo = KeyAlgo::ecdsa_p256, .hash = HashAlgo::sha384}), v61), KErr::none);
}

TEST(KernelProfiles, V61VerifiesMd5Signatures) {
  const auto v61 = KernelProfile::v6_1();
  const auto k = keyring_of({&signer(KeyAlgo::rsa)});
  // A SHA-256 signature relabelled md5: hashed with md5, the DigestInfo differs.
  const Bytes relabelled = build(one({.digest_oid = kMd5}), content());
  EXPECT_EQ(verify_module_sig(relabelled, k, v61).err, KErr::ekeyrejected);
  EXPECT_EQ(verify_module_sig(relabelled, k, KernelProfile::v6()).err, KErr::enopkg);
  // A real RSA/MD5 signature verifies on 6.1 (and is unsupported crypto elsewhere).
  const Bytes md5 = build(one({.hash = HashAlgo::md5}), content());
  EXPECT_EQ(verify_module_sig(md5, k, v61).err, KErr::none);
  EXPECT_EQ(verify_module_sig(md5, k, KernelProfile::v7_0()).err, KErr::enopkg);
  const Bytes module_file = module::append_signature(content(), relabelled);
  auto v = module::module_sig_check(module_file, k, v61);
  EXPECT_EQ(v.outcome, module::LoadOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::ekeyrejected);
  v = module::module_sig_check(module_file, k, KernelProfile::v6());
  EXPECT_EQ(v.outcome, module::LoadOutcome::loads_tainted);
  EXPECT_EQ(v.sig_errno, KErr::enopkg);
}

// tools/kernel-conformance case unknown-ecdsa-md5-embedded-cert on Debian 12's 6.1: a genuine
// ECDSA P-256 signature of md5(content) under digestAlgorithm md5, the signer's certificate
// in the message, is refused with EINVAL (software_key_determine_akcipher allows ECDSA only
// with SHA-1/SHA-2 there); modsign predicted it verified (loads tainted, untrusted key).
TEST(KernelProfiles, V61RefusesEcdsaWithMd5) {
  const auto v61 = KernelProfile::v6_1();
  const Signer& ec = signer(KeyAlgo::ecdsa_p256);
  // signatureAlgorithm ecdsa-with-SHA256 (1.2.840.10045.4.3.2): the kernel ignores its hash.
  MsgSpec m = one({.algo = KeyAlgo::ecdsa_p256, .hash = HashAlgo::md5,
                   .sig_oid = Bytes{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02}});
  m.certs = {ec.cert.der()};
  const Bytes der = build(m, content());
  // In the message: pkcs7_verify() checks it against the embedded certificate.
  auto r = verify_module_sig(der, keyring_of({}), v61);
  EXPECT_EQ(r.err, KErr::einval);
  EXPECT_EQ(r.reason, "no ecdsa signature scheme with md5");
  auto v = module::module_sig_check(module::append_signature(content(), der), keyring_of({}), v61);
  EXPECT_EQ(v.outcome, module::LoadOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::einval);
  // Only in the keyring: pkcs7_validate_trust() collapses the error into EKEYREJECTED.
  m.certs.clear();
  r = verify_module_sig(build(m, content()), keyring_of({&ec}), v61);
  EXPECT_EQ(r.err, KErr::ekeyrejected);
  EXPECT_EQ(r.reason, "Sig 1: no ecdsa signature scheme with md5");
  // Later kernels do not parse md5 at all; RSA with md5 still verifies on 6.1.
  EXPECT_EQ(verify_module_sig(der, keyring_of({}), KernelProfile::v6()).err, KErr::enopkg);
  EXPECT_EQ(verify_module_sig(build(one({.hash = HashAlgo::md5}), content()), keyring_of({&signer(KeyAlgo::rsa)}), v61).err,
            KErr::none);
}
