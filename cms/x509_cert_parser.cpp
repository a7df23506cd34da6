// mirrors crypto/asymmetric_keys/x509_cert_parser.c x509_cert_parse, x509_note_sig_algo, x509_extract_key_data
// (algorithm acceptance), x509_note_signature, x509_process_extension and the x509.asn1 / x509_akid.asn1 grammar,
// Linux 7.2.13
#include "cms/x509_cert_parser.hpp"

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "asn1/der.hpp"
#include "cms/x509_public_key.hpp"

namespace modsign::cms {

X509Cert x509_cert_of(crypto::Certificate cert) {
  X509Cert x;
  x.cert = std::move(cert);
  x.id = x.cert.kernel_id();
  x.skid = x.cert.skid();
  x.akid_id = x.cert.akid_id();
  x.akid_skid = x.cert.akid_keyid();
  return x;
}

std::optional<std::string> gost2012_signature_hash(ByteView o) {
  static constexpr std::uint8_t prefix[] = {0x2a, 0x85, 0x03, 0x07, 0x01, 0x01, 0x03};  // 1.2.643.7.1.1.3
  if (o.size() != 8 || !std::equal(prefix, prefix + 7, o.begin())) return std::nullopt;
  if (o[7] == 2) return "streebog256";
  if (o[7] == 3) return "streebog512";
  return std::nullopt;
}

Status x509_note_sig_algo(ByteView o, const KernelModel& profile) {
  // GOST R 34.10-2012 with Streebog-256/512 ("ecrdsa"): known to every profile; whether the
  // hash is there is x509_get_sig_params' question (cms/x509_public_key).  Found by mutant
  // 20261207:151 (tbsCertificate.signature swapped to it: the outer algorithm then differs,
  // EINVAL, where modsign had stopped at "unsupported", ENOPKG).
  if (gost2012_signature_hash(o)) return ok_status();
  bool ecdsa = false;
  auto ka = crypto::key_algo_by_signature_oid(o, &ecdsa);
  const bool mldsa_sig = ka && crypto::is_ml_dsa(*ka);
  static constexpr std::uint8_t rsa_sha3_prefix[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03};
  // id-rsassa-pkcs1-v1_5-with-sha3-256/384/512 (2.16.840.1.101.3.4.3.14-16): the registry has
  // no SHA3-224 signature OID (.13, nor ECDSA's .9), so those are ENOPKG.  Found by the
  // grammar generator (rsa-embedded-akid:x509:AlgorithmIdentifier.algorithm.oid-2.16.840.1.
  // 101.3.4.3.13: the built 7.2.13 loads tainted where modsign refused EINVAL).
  const bool rsa_sha3 =
      o.size() == 9 && std::equal(rsa_sha3_prefix, rsa_sha3_prefix + 8, o.begin()) && o[8] >= 0x0e && o[8] <= 0x10;
  const bool rsa_pkcs1 = crypto::signature_hash_of(o).has_value() && !ecdsa;
  // id-ecdsa-with-sha3-* (2.16.840.1.101.3.4.3.10-12), as rsa_sha3 above.
  const bool ecdsa_sha3 = ecdsa && o.size() == 9 && std::equal(rsa_sha3_prefix, rsa_sha3_prefix + 8, o.begin()) &&
                          o[8] >= 0x0a && o[8] <= 0x0c;
  if (!(rsa_pkcs1 || rsa_sha3 || ecdsa || mldsa_sig) || (mldsa_sig && profile.generation == Generation::v6))
    return make_error(KErr::enopkg, "unsupported certificate signature algorithm " + asn1::oid_to_string(o));
  // 6.1-6.6 x509_note_sig_algo() knows no SHA-3 signature OIDs (they came with SHA-3 module
  // signing): x509_cert_parse() fails with ENOPKG.  Confirmed on Debian 12's 6.1
  // (tools/kernel-conformance sha3-rsa-cert-embedded, sha3-ecdsa-cert-embedded).
  if (profile.legacy_digests && (rsa_sha3 || ecdsa_sha3))
    return make_error(KErr::enopkg, "unsupported certificate signature algorithm " + asn1::oid_to_string(o) +
                                        " (no SHA-3 before Linux 6.7)");
  return ok_status();
}

namespace {
/// check_self_signed() of `cert` under `profile`, remembered: x509_supported() runs for every
/// keyring certificate at every verification, and the answer depends only on the
/// certificate and the profile's algorithms.  At most 4,096 answers are kept (then forgotten).
Status self_signature_status(const crypto::Certificate& cert, const KernelModel& profile) {
  static std::mutex lock;
  static std::unordered_map<std::string, std::optional<Error>> known;
  std::string key = std::to_string(static_cast<int>(profile.generation)) + (profile.legacy_digests ? "l" : "-");
  for (const auto& a : profile.absent_sig_algos) key += a + ",";
  key += ';';
  for (const auto& h : profile.absent_hashes) key += h + ",";
  key += '\0';
  key.append(reinterpret_cast<const char*>(cert.der().data()), cert.der().size());
  {
    std::lock_guard<std::mutex> g(lock);
    if (auto it = known.find(key); it != known.end()) return it->second ? Status(*it->second) : ok_status();
  }
  X509Cert x = x509_cert_of(cert);
  Status st = check_self_signed(x, profile);
  std::lock_guard<std::mutex> g(lock);
  if (known.size() >= 4096) known.clear();
  known.emplace(std::move(key), st ? std::nullopt : std::optional<Error>(st.error()));
  return st;
}
}  // namespace

Status x509_supported(const crypto::Certificate& cert, const KernelModel& profile) {
  // x509_cert_parse decodes every certificate it loads with the x509.asn1 grammar under
  // its BER rules (a keyring file's certificate as much as an embedded one): what OpenSSL
  // reads but that decoder refuses (a length in more than 2 octets inside the
  // SubjectPublicKeyInfo, say) is never loaded (hostile review: --cert with such a key).
  if (auto st = x509_decode(cert.der(), profile); !st) return st;
  if (auto st = x509_note_sig_algo(cert.signature_algorithm(), profile); !st) return st;
  if (crypto::is_ml_dsa(cert.public_key().algo()) && profile.generation == Generation::v6)
    return make_error(KErr::enopkg, "ML-DSA keys need kernel 7.0");
  // x509_cert_parse() ends with x509_check_for_self_signed() and returns its error: a
  // self-signed certificate whose signature does not verify (EKEYREJECTED, EBADMSG), or
  // whose algorithm the kernel lacks (crypto_alloc_sig()'s ENOENT; only ENOPKG is forgiven
  // there), is not parsed, so never loaded (x509_cert_parser.c:129, Linux 7.2.13).
  return self_signature_status(cert, profile);
}

std::optional<std::string> x509_unloadable_note(const crypto::Certificate& cert, const KernelModel& profile,
                                                const std::string& which) {
  auto st = x509_supported(cert, profile);
  if (st) return std::nullopt;
  return which + " is not loaded by a " + profile.name() + " kernel (" + std::string(errno_name(st.error().code)) +
         ": " + st.error().message + ")";
}

// ------------------------------------------------------------------ the x509.asn1 decoder

namespace {

using asn1::Element;
using asn1::Reader;
using asn1::Rules;

struct X509Abort {
  KErr code;
  std::string message;
};
[[noreturn]] void x509_fail(KErr code, std::string message) { throw X509Abort{code, std::move(message)}; }

bool indefinite(const Element& e) { return e.header_len() >= 2 && e.tlv[1] == 0x80; }

// AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters ANY OPTIONAL }.  An absent
// optional ANY at the end of an indefinite-length SEQUENCE takes the end-of-contents octets
// (lib/asn1_decoder.c skips optional elements only at the end of a definite container).
Element algorithm_identifier(Reader& outer, const char* what, Element* params = nullptr) {
  Element e = outer.expect(asn1::kSequence, what);
  Reader r = outer.inside(e);
  Element o = r.expect(asn1::kOid, what);
  if (!r.empty()) {
    Element p = r.next();
    if (params) *params = p;
  } else if (indefinite(e)) {
    throw asn1::DecodeError(std::string(what) + ": indefinite length without parameters");
  }
  r.finish(what);
  return o;
}

// Name ::= SEQUENCE OF RelativeDistinguishedName; RDN ::= SET OF AttributeValueAssertion.
// A SEQUENCE OF / SET OF without any element is a decoder error.
void name(Reader& outer, const char* what) {
  Element e = outer.expect(asn1::kSequence, what);
  Reader rdns = outer.inside(e);
  if (rdns.empty()) throw asn1::DecodeError(std::string(what) + ": empty Name");
  asn1::check_name(e.content, Rules::ber);
}

constexpr std::uint8_t kOidSkid[] = {0x55, 0x1d, 0x0e};
constexpr std::uint8_t kOidKeyUsage[] = {0x55, 0x1d, 0x0f};
constexpr std::uint8_t kOidBasicConstraints[] = {0x55, 0x1d, 0x13};
constexpr std::uint8_t kOidAkid[] = {0x55, 0x1d, 0x23};
constexpr std::uint8_t kOidGost256[] = {0x2a, 0x85, 0x03, 0x07, 0x01, 0x01, 0x01, 0x01};
constexpr std::uint8_t kOidGost512[] = {0x2a, 0x85, 0x03, 0x07, 0x01, 0x01, 0x01, 0x02};
constexpr std::uint8_t kOidP192[] = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x01};
constexpr std::uint8_t kOidP521[] = {0x2b, 0x81, 0x04, 0x00, 0x23};

bool same(ByteView a, ByteView b) { return std::ranges::equal(a, b); }

// x509_process_extension: the extensions the kernel reads, with its shape checks (EBADMSG).
// keyUsage and basicConstraints are read from Linux 6.4 on (KEY_EFLAG_*), not by the 6.1
// profile (legacy_digests covers 6.1-6.6; Debian 12's 6.1 is the kernel it stands for).
void process_extension(ByteView id, ByteView v, bool& have_skid, std::optional<Bytes>& akid, bool key_flags) {
  const std::size_t n = v.size();
  if (same(id, kOidSkid)) {
    if (have_skid || n < 3) x509_fail(KErr::ebadmsg, "subjectKeyIdentifier repeated or shorter than 3 bytes");
    if (v[0] != asn1::kOctetString || v[1] != n - 2)
      x509_fail(KErr::ebadmsg, "subjectKeyIdentifier is not a short OCTET STRING");
    have_skid = true;
  } else if (same(id, kOidKeyUsage) && key_flags) {
    if (n < 4 || v[0] != asn1::kBitString || v[2] >= 8) x509_fail(KErr::ebadmsg, "malformed keyUsage");
  } else if (same(id, kOidAkid)) {
    akid = Bytes(v.begin(), v.end());  // decoded after the certificate (x509_akid.asn1)
  } else if (same(id, kOidBasicConstraints) && key_flags) {
    if (n < 2 || v[0] != asn1::kSequence || v[1] != n - 2) x509_fail(KErr::ebadmsg, "malformed basicConstraints");
    if (v[1] != 0 && !(n >= 5 && v[2] == 0x01 && v[3] == 1 && v[4] == 0xff))
      x509_fail(KErr::ebadmsg, "basicConstraints other than CA:TRUE or empty");
  }
}

// x509_akid.asn1's GeneralName, a CHOICE tried in the grammar's order as lib/asn1_decoder.c
// does: the constructed alternatives (otherName, x400Address, directoryName, ediPartyName)
// also take a primitive identifier (Reader::maybe's BER rule), whose contents are then read
// as the constructed type's; the primitive ones take only their own identifier.  (Generated
// case x509_akid:AuthorityKeyIdentifier.authorityCertIssuer[].constructed-bit, 7.2.13: a
// primitive [4] directoryName loads.)
void general_name(Reader& gns) {
  Element gn;
  if (gns.maybe(asn1::context_cons(0), gn)) {  // otherName: SEQUENCE { type-id OID, value [0] ANY }
    Reader on = gns.inside(gn);
    on.expect(asn1::kOid, "otherName type-id");
    on.expect(asn1::context_cons(0), "otherName value");
    on.finish("otherName");
  } else if (gns.maybe(asn1::context_prim(1), gn) || gns.maybe(asn1::context_prim(2), gn) ||
             gns.maybe(asn1::context_cons(3), gn)) {
  } else if (gns.maybe(asn1::context_cons(4), gn)) {  // directoryName [4] Name
    Reader dn = gns.inside(gn);
    name(dn, "directoryName");
    dn.finish("directoryName");
  } else if (gns.maybe(asn1::context_cons(5), gn)) {  // ediPartyName: { [0] ANY OPTIONAL, [1] ANY }
    Reader ep = gns.inside(gn);
    Element x;
    ep.maybe(asn1::context_cons(0), x);
    ep.expect(asn1::context_cons(1), "partyName");
    ep.finish("ediPartyName");
  } else if (!(gns.maybe(asn1::context_prim(6), gn) || gns.maybe(asn1::context_prim(7), gn) ||
               gns.maybe(asn1::context_prim(8), gn))) {
    throw asn1::DecodeError("GeneralName with an unexpected tag");
  }
}

// x509_akid.asn1: AuthorityKeyIdentifier ::= SEQUENCE { [0] IMPLICIT OCTET STRING OPTIONAL,
// [1] IMPLICIT GeneralNames OPTIONAL, [2] IMPLICIT INTEGER OPTIONAL }.
void decode_akid(ByteView der) {
  Reader top(der, Rules::ber);
  Reader akid = top.enter(asn1::kSequence, "AuthorityKeyIdentifier");
  Element e;
  akid.maybe(asn1::context_prim(0), e);
  if (akid.maybe(asn1::context_cons(1), e)) {
    Reader gns = akid.inside(e);  // SEQUENCE OF GeneralName (a CHOICE: may be empty)
    while (!gns.empty()) general_name(gns);
  }
  akid.maybe(asn1::context_prim(2), e);
  akid.finish("AuthorityKeyIdentifier");
  top.finish("AuthorityKeyIdentifier");
}

void decode_certificate(ByteView der, const KernelModel& profile) {
  Reader top(der, Rules::ber);
  Reader cert = top.enter(asn1::kSequence, "Certificate");
  Reader tbs = cert.enter(asn1::kSequence, "TBSCertificate");
  Element e;
  if (tbs.maybe(asn1::context_cons(0), e)) {  // version [0] EXPLICIT INTEGER DEFAULT
    Reader v = tbs.inside(e);
    v.expect(asn1::kInteger, "version");
    v.finish("version [0]");
  }
  tbs.expect(asn1::kInteger, "serialNumber");
  Element sig_algo = algorithm_identifier(tbs, "signature");
  // x509_note_sig_algo runs when the OID is met, before the rest is decoded.
  if (auto st = x509_note_sig_algo(sig_algo.content, profile); !st) x509_fail(st.error().code, st.error().message);
  name(tbs, "issuer");
  {
    Reader validity = tbs.enter(asn1::kSequence, "validity");
    // Time is a CHOICE: lib/asn1_decoder.c skips its alternatives at the end of the
    // container, so a Validity holding notBefore alone is accepted; an empty one is not.
    // (The mutation campaign on 7.2.13: certificate.tbs.validity.inner.remove gives
    // EKEYREJECTED from the self-signature, certificate.tbs.validity.value.empty EBADMSG.)
    for (int i = 0; i < 2; ++i) {
      const char* what = i == 0 ? "notBefore" : "notAfter";
      if (i == 1 && validity.empty()) break;
      Element t = validity.next();
      if (t.tag != asn1::kUtcTime && t.tag != asn1::kGeneralizedTime)
        throw asn1::DecodeError(std::string(what) + " is neither UTCTime nor GeneralizedTime");
      if (!asn1::decode_time(t.tag, t.content)) x509_fail(KErr::ebadmsg, std::string("invalid ") + what);
    }
    validity.finish("validity");
  }
  name(tbs, "subject");
  {
    Reader spki = tbs.enter(asn1::kSequence, "subjectPublicKeyInfo");
    Element params;
    Element key_oid = algorithm_identifier(spki, "subjectPublicKeyInfo algorithm", &params);
    Element bits = spki.expect(asn1::kBitString, "subjectPublicKey");
    spki.finish("subjectPublicKeyInfo");
    // x509_extract_key_data: the key algorithms the kernel knows, else ENOPKG.
    const ByteView k = key_oid.content;
    bool known = same(k, crypto::oid::rsa_encryption) || same(k, kOidGost256) || same(k, kOidGost512);
    if (same(k, crypto::oid::ml_dsa_44) || same(k, crypto::oid::ml_dsa_65) || same(k, crypto::oid::ml_dsa_87))
      known = profile.generation != Generation::v6;
    if (same(k, crypto::oid::ec_public_key)) {
      // parse_OID (lib/oid_registry.c) on the parameters' TLV as x509_note_params kept it:
      // an OBJECT IDENTIFIER with a one-octet length and at least one contents octet, else
      // EBADMSG (mutation campaign: certificate.tbs.subjectPublicKeyInfo.inner.value.truncate).
      if (params.tag != asn1::kOid || params.header_len() != 2 || params.content.empty())
        x509_fail(KErr::ebadmsg, "EC key parameters are not a curve OID (parse_OID)");
      const ByteView c = params.content;
      if (!(same(c, kOidP192) || same(c, crypto::oid::prime256v1) || same(c, crypto::oid::secp384r1) ||
            same(c, kOidP521)))
        x509_fail(KErr::enopkg, "unsupported EC curve " + asn1::oid_to_string(c));
      // P-521 came with Linux 6.10 (ecdsa-nist-p521): Debian 12's 6.1 kernel image has no
      // such algorithm name, 6.12's has; the v6.1 profile (legacy_digests) is 6.1-6.6.
      if (same(c, kOidP521) && profile.legacy_digests)
        x509_fail(KErr::enopkg, "unsupported EC curve " + asn1::oid_to_string(c) + " (P-521 needs Linux 6.10)");
      known = true;
    }
    if (!known) x509_fail(KErr::enopkg, "unsupported public key algorithm " + asn1::oid_to_string(k));
    if (bits.content.empty() || bits.content[0] != 0) x509_fail(KErr::ebadmsg, "subjectPublicKey has unused bits");
  }
  tbs.maybe(asn1::context_prim(1), e);  // issuerUniqueID
  tbs.maybe(asn1::context_prim(2), e);  // subjectUniqueID
  bool have_skid = false;
  std::optional<Bytes> akid;
  if (tbs.maybe(asn1::context_cons(3), e)) {  // extensions [3] EXPLICIT SEQUENCE OF Extension
    Reader outer = tbs.inside(e);
    Reader exts = outer.enter(asn1::kSequence, "extensions");
    outer.finish("extensions [3]");
    if (exts.empty()) throw asn1::DecodeError("empty extensions");
    while (!exts.empty()) {
      Reader ext = exts.enter(asn1::kSequence, "Extension");
      Element id = ext.expect(asn1::kOid, "extnID");
      Element crit;
      ext.maybe(0x01, crit);
      Element val = ext.expect(asn1::kOctetString, "extnValue");
      ext.finish("Extension");
      process_extension(id.content, val.content, have_skid, akid, !profile.legacy_digests);
    }
  }
  tbs.finish("TBSCertificate");
  Element outer_algo = algorithm_identifier(cert, "signatureAlgorithm");
  Element sig = cert.expect(asn1::kBitString, "signature");
  // x509_note_signature: both algorithm identifiers must name the same algorithm, and the
  // BIT STRING of an RSA, ECDSA, EC-RDSA or ML-DSA signature has no unused bits.
  if (!same(outer_algo.content, sig_algo.content))
    x509_fail(KErr::einval, "signatureAlgorithm differs from tbsCertificate.signature");
  if (sig.content.empty() || sig.content[0] != 0) x509_fail(KErr::ebadmsg, "signature BIT STRING has unused bits");
  cert.finish("Certificate");
  top.finish("Certificate");
  if (akid) {
    try {
      decode_akid(*akid);
    } catch (const asn1::DecodeError& ex) {
      x509_fail(KErr::ebadmsg, std::string("AuthorityKeyIdentifier: ") + ex.what());
    }
  }
}

}  // namespace

Status x509_decode(ByteView der, const KernelModel& profile) {
  try {
    try {
      decode_certificate(der, profile);
    } catch (const asn1::DecodeError& ex) { x509_fail(KErr::ebadmsg, std::string("ASN.1 decoder: ") + ex.what()); }
  } catch (const X509Abort& a) { return make_error(a.code, a.message); }
  return ok_status();
}

}  // namespace modsign::cms
