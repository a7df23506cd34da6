// mirrors crypto/asymmetric_keys/pkcs7_parser.c pkcs7_parse_message, the pkcs7.asn1 callbacks (pkcs7_note_*,
// pkcs7_sig_note_*), pkcs7_check_authattrs, pkcs7_supply_detached_data, Linux 7.2.13 Function names follow the kernel's
// so that each piece can be checked against its source.
#include "cms/pkcs7_parser.hpp"

#include <algorithm>

#include "asn1/der.hpp"
#include "cms/x509_cert_parser.hpp"
#include "cms/x509_public_key.hpp"

namespace modsign::cms {

using asn1::Element;
using asn1::Reader;
using asn1::Rules;

namespace {

Bytes copy(ByteView b) { return Bytes(b.begin(), b.end()); }

// ----------------------------------------------------------------------------- OID tables

constexpr std::uint8_t kOidSignedData[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02};
constexpr std::uint8_t kOidContentType[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x03};
constexpr std::uint8_t kOidMessageDigest[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x04};
constexpr std::uint8_t kOidSigningTime[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x05};
constexpr std::uint8_t kOidSmimeCaps[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x0f};
constexpr std::uint8_t kOidMsSpOpusInfo[] = {0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x01, 0x0c};
constexpr std::uint8_t kOidMsStatementType[] = {0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x01, 0x0b};

struct DigestOid {
  std::vector<std::uint8_t> oid;
  const char* name;
  int era = 0;  ///< 0: every profile; 1: only legacy_digests (6.1-6.6); 2: all but legacy_digests
};
// pkcs7_sig_note_digest_algo (kernel-semantics §1.7).
const std::vector<DigestOid>& digest_oids() {
  static const std::vector<DigestOid> t = {
      {{0x2b, 0x0e, 0x03, 0x02, 0x1a}, "sha1"},
      {{0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01}, "sha256"},
      {{0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02}, "sha384"},
      {{0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03}, "sha512"},
      {{0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x04}, "sha224"},
      {{0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x83, 0x11}, "sm3"},
      {{0x2a, 0x85, 0x03, 0x07, 0x01, 0x01, 0x02, 0x02}, "streebog256"},
      {{0x2a, 0x85, 0x03, 0x07, 0x01, 0x01, 0x02, 0x03}, "streebog512"},
      {{0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x08}, "sha3-256", 2},
      {{0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x09}, "sha3-384", 2},
      {{0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x0a}, "sha3-512", 2},
      {{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x04}, "md4", 1},
      {{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x05}, "md5", 1},
  };
  return t;
}

struct PkeyOid {
  std::vector<std::uint8_t> oid;
  const char* pkey_algo;
  const char* encoding;
  bool takes_data;
  bool v7_only;
};
// pkcs7_sig_note_pkey_algo (kernel-semantics §1.7).
const std::vector<PkeyOid>& pkey_oids() {
  static const std::vector<PkeyOid> t = {
      {{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01}, "rsa", "pkcs1", false, false},
      {{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x01}, "ecdsa", "x962", false, false},
      {{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x01}, "ecdsa", "x962", false, false},
      {{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02}, "ecdsa", "x962", false, false},
      {{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03}, "ecdsa", "x962", false, false},
      {{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x04}, "ecdsa", "x962", false, false},
      {{0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x0a}, "ecdsa", "x962", false, false},
      {{0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x0b}, "ecdsa", "x962", false, false},
      {{0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x0c}, "ecdsa", "x962", false, false},
      {{0x2a, 0x85, 0x03, 0x07, 0x01, 0x01, 0x01, 0x01}, "ecrdsa", "raw", false, false},
      {{0x2a, 0x85, 0x03, 0x07, 0x01, 0x01, 0x01, 0x02}, "ecrdsa", "raw", false, false},
      {{0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x11}, "mldsa44", "raw", true, true},
      {{0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x12}, "mldsa65", "raw", true, true},
      {{0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x13}, "mldsa87", "raw", true, true},
      // SM2-with-SM3 (1.2.156.10197.1.501): Linux 6.1 only (legacy_digests); later kernels
      // dropped SM2 from asymmetric keys.  Found by mutant 20261206:521 (Debian 12:
      // EKEYREJECTED, where modsign said "Unknown pkey algo").
      {{0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x83, 0x75}, "sm2", "raw", false, false},
  };
  return t;
}

// Authenticated-attribute bits (enum in pkcs7_parser.h).
enum : unsigned {
  sinfo_has_content_type = 1u << 0,
  sinfo_has_signing_time = 1u << 1,
  sinfo_has_message_digest = 1u << 2,
  sinfo_has_smime_caps = 1u << 3,
  sinfo_has_ms_opus_info = 1u << 4,
  sinfo_has_ms_statement_type = 1u << 5,
};

/// `parameters ANY OPTIONAL`, the last element of an AlgorithmIdentifier `seq` whose reader
/// `r` stands after the OID.  lib/asn1_decoder.c skips an absent optional element only at the
/// end of a definite-length container (dp == datalen); inside an indefinite-length one the
/// ANY matches the end-of-contents octets themselves (tag 0, length 0), and the SEQUENCE
/// then misses its own end-of-contents octets: a decoder error (EBADMSG).  Found by the
/// mutation campaign (signerinfo.digestAlgorithm.length.indefinite, tools/conformance).
void algorithm_parameters(Reader& r, const Element& seq, const char* what) {
  if (!r.empty()) {
    r.next();
    return;
  }
  if (seq.header_len() >= 2 && seq.tlv[1] == 0x80)
    throw asn1::DecodeError(std::string(what) +
                            ": indefinite length without parameters (the end-of-contents "
                            "octets are taken as the parameters)");
}

/// Thrown by the callbacks; carries the errno that aborts the decoder.
struct Abort {
  KErr code;
  std::string message;
};
[[noreturn]] void fail(KErr code, std::string message) { throw Abort{code, std::move(message)}; }

/// struct pkcs7_parse_context.
struct ParseContext {
  Pkcs7Message msg;
  const KernelModel& profile;
  const Blacklist* blacklist;
  Bytes raw_serial, raw_issuer, raw_skid;
  bool expect_skid = false;
  int x509_index = 0;
  int sinfo_index = 0;
};

void pkcs7_extract_cert(ParseContext& ctx, const Element& e) {
  // The action gets the element's own identifier octet and wants a constructed SEQUENCE
  // exactly (the BER leniency on the constructed bit is the grammar's, and Certificate is
  // an ANY).  Found by the mutation campaign (certificate.tag: 0x10 on Debian 12's 6.1).
  if (e.tag != asn1::kSequence) fail(KErr::ebadmsg, "Cert began with tag " + std::to_string(e.tag));
  if (e.tlv.size() > 65535) fail(KErr::emsgsize, "X.509 certificate larger than 65535 bytes");
  const std::string which = "X.509 certificate " + std::to_string(ctx.x509_index + 1);
  // x509_cert_parse: the kernel's decoder and callbacks first, then the certificate as the
  // BER decoder read it.
  if (auto st = x509_decode(e.tlv, ctx.profile); !st) fail(st.error().code, which + ": " + st.error().message);
  auto c = crypto::Certificate::from_der(e.tlv, Rules::ber);
  if (!c) fail(c.error().code, which + ": " + c.error().message);
  if (auto st = x509_supported(*c, ctx.profile); !st) fail(st.error().code, which + ": " + st.error().message);
  X509Cert x = x509_cert_of(std::move(c.value()));
  x.index = ++ctx.x509_index;
  x.blacklisted = tbs_blacklisted(x.cert, ctx.profile, ctx.blacklist);
  if (auto st = check_self_signed(x, ctx.profile); !st) fail(st.error().code, which + ": " + st.error().message);
  ctx.msg.certs.push_back(std::move(x));
}

// Certificates / CRLs: SET OF or SEQUENCE OF elements fed to pkcs7_extract_cert.
// A CertificateList is treated as SEQUENCE OF Certificate, so a real CRL's TBSCertList
// reaches the X.509 parser (kernel-semantics §1.4).
void note_cert_list(ParseContext& ctx, const Element& list, bool crl) {
  Reader r(list.content, Rules::ber);
  // SET OF / SEQUENCE OF with no element: a decoder error in 7.2, except for certSet
  // ([0] IMPLICIT SET OF ExtendedCertificateOrCertificate): its element type is a CHOICE,
  // whose alternatives lib/asn1_decoder.c skips at the end of the list, so an empty
  // certificates [0] is accepted.  Found by the mutation campaign
  // (signeddata.certificates.value.drop-last: the kernel loads the module).
  if (r.empty() && !crl && (list.tag & 0x1f) == 0) return;
  if (r.empty()) fail(KErr::ebadmsg, std::string("ASN.1 decoder: empty ") + (crl ? "CRL" : "certificate") + " list");
  while (!r.empty()) {
    Element e = r.next();
    if (!crl) {
      pkcs7_extract_cert(ctx, e);
      continue;
    }
    if ((e.tag | 0x20) != asn1::kSequence) fail(KErr::ebadmsg, "CRL is not a SEQUENCE");
    Reader items(e.content, Rules::ber);
    if (items.empty()) fail(KErr::ebadmsg, "ASN.1 decoder: empty CRL");
    while (!items.empty()) pkcs7_extract_cert(ctx, items.next());
  }
}

// pkcs7_sig_note_authenticated_attr: fires once per value of each attribute.
void note_authenticated_attr(ParseContext& ctx, SignedInfo& si, ByteView type, const Element& value) {
  auto repeated = [&](unsigned bit) {
    if (si.aa_set & bit) fail(KErr::ekeyrejected, "Repeated/multivalue AuthAttrs not permitted");
    si.aa_set |= bit;
  };
  const bool authenticode = same(ctx.msg.data_type, kOidMsIndirectData);
  if (same(type, kOidContentType)) {
    repeated(sinfo_has_content_type);
    // look_up_OID(value): the value's tag is not checked.
    if (!same(value.content, ctx.msg.data_type)) fail(KErr::ebadmsg, "Mismatch between global data type and sinfo");
  } else if (same(type, kOidSigningTime)) {
    repeated(sinfo_has_signing_time);
    auto t = asn1::decode_time(value.tag, value.content);
    if (!t) fail(KErr::ebadmsg, "signingTime is not a valid UTCTime/GeneralizedTime");
    si.signing_time = *t;
  } else if (same(type, kOidMessageDigest)) {
    repeated(sinfo_has_message_digest);
    if (value.tag != asn1::kOctetString) fail(KErr::ebadmsg, "messageDigest is not an OCTET STRING");
    si.msgdigest = copy(value.content);
  } else if (same(type, kOidSmimeCaps)) {
    repeated(sinfo_has_smime_caps);
    if (!authenticode) fail(KErr::ekeyrejected, "S/MIME Caps only allowed with Authenticode");
  } else if (same(type, kOidMsSpOpusInfo)) {
    repeated(sinfo_has_ms_opus_info);
    if (!authenticode) fail(KErr::ekeyrejected, "Authenticode AuthAttrs only allowed with Authenticode");
  } else if (same(type, kOidMsStatementType)) {
    repeated(sinfo_has_ms_statement_type);
    if (!authenticode) fail(KErr::ekeyrejected, "Authenticode AuthAttrs only allowed with Authenticode");
  }
}

// aaSet and aaSequence: SET OF / SEQUENCE OF AuthenticatedAttribute.  The compiled grammar
// matches the first element without OR_SKIP, so an empty list is a decoding error (EBADMSG)
// on the spot, before any later field's action.  (Generated case
// pkcs7:SignerInfo.authenticatedAttributes.add-aaSequence-empty, 7.2.13: EBADMSG.)
void note_attributes(ParseContext& ctx, SignedInfo& si, Reader attrs) {
  if (attrs.empty()) throw asn1::DecodeError("no AuthenticatedAttribute in the SET OF / SEQUENCE OF");
  while (!attrs.empty()) {
    Reader attr = attrs.enter(asn1::kSequence, "AuthenticatedAttribute");
    Element type = attr.expect(asn1::kOid, "attribute type");
    Reader values = attr.enter(asn1::kSet, "attribute values");
    attr.finish("AuthenticatedAttribute");
    if (values.empty()) throw asn1::DecodeError("empty attribute values");
    while (!values.empty()) note_authenticated_attr(ctx, si, type.content, values.next());
  }
}

SignedInfo parse_signer_info(ParseContext& ctx, const Element& el) {
  SignedInfo si;
  Reader r(el.content, Rules::ber);
  // pkcs7_note_signerinfo_version
  Element v = r.expect(asn1::kInteger, "SignerInfo version");
  if (v.content.size() != 1 || (v.content[0] != 1 && v.content[0] != 3))
    fail(KErr::einval, "Unsupported SignerInfo version");
  if (v.content[0] == 1) {
    if (ctx.msg.version != 1)
      fail(KErr::ebadmsg, "SignerInfo version 1 in SignedData version " + std::to_string(ctx.msg.version));
    ctx.expect_skid = false;
  } else {
    if (ctx.msg.version == 1) fail(KErr::ebadmsg, "SignerInfo version 3 in SignedData version 1");
    ctx.expect_skid = true;
  }
  // sid: the noted values live in the parse context, so a CHOICE that disagrees with the
  // version leaves the other id's bytes from an earlier SignerInfo (or empty).
  Element sid = r.next();
  if (sid.tag == asn1::context_prim(0)) {
    ctx.raw_skid = copy(sid.content);
  } else if ((sid.tag | 0x20) == asn1::kSequence) {
    Reader ias(sid.content, Rules::ber);
    Element name = ias.expect(asn1::kSequence, "issuer Name");
    if (name.content.empty()) throw asn1::DecodeError("empty issuer Name");
    // Only the raw bytes are kept (pkcs7_sig_note_issuer), but the decoder walks the
    // grammar: Name ::= SEQUENCE OF RelativeDistinguishedName, RDN ::= SET OF
    // AttributeValueAssertion { attributeType OID, attributeValue ANY } (pkcs7.asn1).
    // A damaged Name is EBADMSG, as any grammar mismatch.  (Found by differential testing
    // against OpenSSL: the Name was taken as opaque before.)
    asn1::check_name(name.content, Rules::ber);
    ctx.raw_issuer = copy(name.content);
    ctx.raw_serial = copy(ias.expect(asn1::kInteger, "serialNumber").content);
    ias.finish("issuerAndSerialNumber");
  } else {
    fail(KErr::ebadmsg, "SignerIdentifier has an unexpected tag");
  }
  // pkcs7_sig_note_digest_algo
  {
    Element de = r.expect(asn1::kSequence, "digestAlgorithm");
    Reader da = r.inside(de);
    Element oid = da.expect(asn1::kOid, "digestAlgorithm OID");
    algorithm_parameters(da, de, "digestAlgorithm");
    da.finish("digestAlgorithm");
    const auto& t = digest_oids();
    const int absent_era = ctx.profile.legacy_digests ? 2 : 1;
    auto it = std::find_if(t.begin(), t.end(),
                           [&](const DigestOid& d) { return d.era != absent_era && same(d.oid, oid.content); });
    if (it == t.end()) fail(KErr::enopkg, "Unsupported digest algo: " + asn1::oid_to_string(oid.content));
    si.hash_algo = it->name;
  }
  // authenticatedAttributes: [0] IMPLICIT SET OF (recorded) or [2] EXPLICIT SEQUENCE OF
  // (values noted, but the block itself is not kept: no pkcs7_sig_note_set_of_authattrs).
  Element e;
  if (r.peek(asn1::context_cons(0))) {
    e = r.next();
    note_attributes(ctx, si, Reader(e.content, Rules::ber));
    // pkcs7_sig_note_set_of_authattrs
    if (!(si.aa_set & sinfo_has_content_type) || !(si.aa_set & sinfo_has_message_digest))
      fail(KErr::ebadmsg, "Missing required AuthAttr");
    if (!same(ctx.msg.data_type, kOidMsIndirectData) && (si.aa_set & sinfo_has_ms_opus_info))
      fail(KErr::ebadmsg, "Unexpected Authenticode AuthAttr");
    // From the length octets to the end of the contents: an indefinite-length block is
    // kept (and hashed) without its end-of-contents octets, as the kernel does.
    const std::size_t hdr = static_cast<std::size_t>(e.content.data() - e.tlv.data());
    si.authattrs = Bytes(e.tlv.begin() + 1, e.tlv.begin() + static_cast<std::ptrdiff_t>(hdr + e.content.size()));
  } else if (r.peek(asn1::context_cons(2))) {
    e = r.next();
    Reader outer(e.content, Rules::ber);
    note_attributes(ctx, si, outer.enter(asn1::kSequence, "aaSequence"));
  }
  // pkcs7_sig_note_pkey_algo
  {
    Element pe = r.expect(asn1::kSequence, "digestEncryptionAlgorithm");
    Reader pa = r.inside(pe);
    Element oid = pa.expect(asn1::kOid, "digestEncryptionAlgorithm OID");
    algorithm_parameters(pa, pe, "digestEncryptionAlgorithm");
    pa.finish("digestEncryptionAlgorithm");
    const auto& t = pkey_oids();
    auto it = std::find_if(t.begin(), t.end(), [&](const PkeyOid& p) { return same(p.oid, oid.content); });
    // id-ecdsa-with-sha3-* (2.16.840.1.101.3.4.3.10-12) came with SHA-3 support (not in 6.1).
    const bool ecdsa_sha3 = it != t.end() && it->oid.size() == 9 && it->oid[8] >= 0x0a && it->oid[8] <= 0x0c;
    const bool sm2 = it != t.end() && std::string_view(it->pkey_algo) == "sm2";
    // The kernel's words, then which algorithm it is when another kernel generation knows it.
    const std::string unknown = "Unknown pkey algo " + asn1::oid_to_string(oid.content);
    if (it == t.end()) fail(KErr::enopkg, unknown);
    if (it->v7_only && ctx.profile.generation == Generation::v6)
      fail(KErr::enopkg, unknown + " (" + it->pkey_algo + ", which --kernel v7.0 and later know)");
    if (ecdsa_sha3 && ctx.profile.legacy_digests)
      fail(KErr::enopkg, unknown + " (ecdsa with SHA-3, which --kernel v6.1 does not know)");
    if (sm2 && !ctx.profile.legacy_digests) fail(KErr::enopkg, unknown + " (sm2, which only --kernel v6.1 knows)");
    si.pkey_algo = it->pkey_algo;
    si.encoding = it->encoding;
    si.algo_takes_data = it->takes_data && ctx.profile.generation == Generation::v7_0;
  }
  // pkcs7_sig_note_signature
  si.signature = copy(r.expect(asn1::kOctetString, "encryptedDigest").content);
  if (r.peek(asn1::context_cons(1)) || r.peek(asn1::context_cons(3))) {
    // unauthenticatedAttributes: SET/SEQUENCE OF { type OID, values SET OF ANY }.
    Reader ua(r.next().content, Rules::ber);
    if (ua.empty()) throw asn1::DecodeError("empty unauthenticatedAttributes");
    while (!ua.empty()) {
      Reader a = ua.enter(asn1::kSequence, "UnauthenticatedAttribute");
      a.expect(asn1::kOid, "attribute type");
      Reader vals = a.enter(asn1::kSet, "attribute values");
      a.finish("UnauthenticatedAttribute");
      if (vals.empty()) throw asn1::DecodeError("empty attribute values");
    }
  }
  if (!r.empty()) fail(KErr::ebadmsg, "unexpected data at the end of SignerInfo");
  // pkcs7_note_signed_info
  if (same(ctx.msg.data_type, kOidMsIndirectData) && !si.authattrs)
    fail(KErr::ebadmsg, "Authenticode requires AuthAttrs");
  si.expect_skid = ctx.expect_skid;
  if (!ctx.expect_skid) {
    si.auth_id = ctx.raw_serial;
    si.auth_id.insert(si.auth_id.end(), ctx.raw_issuer.begin(), ctx.raw_issuer.end());
  } else {
    si.auth_id = ctx.raw_skid;
  }
  si.index = ++ctx.sinfo_index;
  return si;
}

void parse_signed_data(ParseContext& ctx, Reader& sd, bool sd_indefinite) {
  // pkcs7_note_signeddata_version
  Element v = sd.expect(asn1::kInteger, "SignedData version");
  if (v.content.size() != 1 || (v.content[0] != 1 && v.content[0] != 3))
    fail(KErr::einval, "Unsupported SignedData version");
  ctx.msg.version = v.content[0];
  // digestAlgorithms: SET OF or SEQUENCE OF; OIDs only noted.
  if (sd.peek(asn1::kSet) || sd.peek(asn1::kSequence)) {
    Reader algs(sd.next().content, Rules::ber);
    if (algs.empty()) throw asn1::DecodeError("empty digestAlgorithms");
    while (!algs.empty()) {
      Element ae = algs.expect(asn1::kSequence, "DigestAlgorithmIdentifier");
      Reader a = algs.inside(ae);
      a.expect(asn1::kOid, "digest algorithm OID");
      algorithm_parameters(a, ae, "DigestAlgorithmIdentifier");
      a.finish("DigestAlgorithmIdentifier");
    }
  } else {
    fail(KErr::ebadmsg, "digestAlgorithms missing");
  }
  // lib/asn1_decoder.c's FLAG_MATCHED when it reaches signerInfos: whether the last
  // element whose tag it read matched.  An optional element is skipped without a read at
  // the end of a definite-length container, but read, and not matched, when the
  // end-of-contents octets of an indefinite one are next.
  bool matched = true;
  // contentInfo (pkcs7_note_content, pkcs7_note_data)
  {
    const bool ci_indefinite = sd.remaining() > 1 && sd.rest()[1] == 0x80;
    Reader ci = sd.enter(asn1::kSequence, "contentInfo");
    Element type = ci.expect(asn1::kOid, "eContentType");
    Element e;
    if (ci.peek(asn1::context_cons(0))) {
      Reader explicit0(ci.next().content, Rules::ber);
      Element data = explicit0.next();
      explicit0.finish("content [0]");
      ctx.msg.data = copy(data.content);
      ctx.msg.data_header = copy(data.tlv.first(data.header_len()));
      ctx.msg.data_embedded = true;
    } else if (ci_indefinite) {
      matched = false;  // content [0] OPTIONAL read the end-of-contents octets
    }
    if (!ci.empty()) fail(KErr::ebadmsg, "unexpected data in contentInfo");
    if (!same(type.content, kOidData) && !same(type.content, kOidMsIndirectData))
      fail(KErr::einval, "Unsupported data type " + asn1::oid_to_string(type.content));
    ctx.msg.data_type = copy(type.content);
  }
  // certificates [0] IMPLICIT SET OF / [2] IMPLICIT SEQUENCE OF
  if (sd.peek(asn1::context_cons(0)) || sd.peek(asn1::context_cons(2))) {
    note_cert_list(ctx, sd.next(), false);
    matched = true;
  }
  // crls [1] / [3]
  if (sd.peek(asn1::context_cons(1)) || sd.peek(asn1::context_cons(3))) {
    note_cert_list(ctx, sd.next(), true);
    matched = true;
  }
  // signerInfos: SET OF or SEQUENCE OF, a CHOICE the grammar does not make optional.  At
  // the end of a definite-length SignedData both alternatives are skipped and the decoder's
  // final check tests FLAG_MATCHED as the last read left it: matched, the message decodes
  // with zero signers, which pkcs7_check_authattrs then refuses (EINVAL); not matched (an
  // indefinite-length contentInfo without content just before), "Unexpected tag" (EBADMSG).
  // In an indefinite-length SignedData the first alternative reads its end-of-contents
  // octets: always EBADMSG.  Found by the mutation campaign (signeddata.value.drop-last +
  // signeddata.encapContentInfo.length.indefinite).
  if (sd.empty()) {
    if (sd_indefinite || !matched) fail(KErr::ebadmsg, "ASN.1 decoder: Unexpected tag (signerInfos missing)");
    return;
  }
  if (!sd.peek(asn1::kSet) && !sd.peek(asn1::kSequence)) fail(KErr::ebadmsg, "signerInfos has an unexpected tag");
  Reader sis = sd.enter(sd.peek(asn1::kSet) ? asn1::kSet : asn1::kSequence, "signerInfos");
  // Confirmed on 7.2's decoder: an empty signerInfos SET/SEQUENCE is a decoder error.
  if (sis.empty()) fail(KErr::ebadmsg, "ASN.1 decoder: empty signerInfos");
  while (!sis.empty()) {
    Element e = sis.expect(asn1::kSequence, "SignerInfo");
    ctx.msg.signed_infos.push_back(parse_signer_info(ctx, e));
  }
  if (!sd.empty()) fail(KErr::ebadmsg, "unexpected data at the end of SignedData");
}

// pkcs7_check_authattrs (7.0 form; v6 has no waiver and no "none" rewrite).
void pkcs7_check_authattrs(Pkcs7Message& msg, const KernelModel& profile) {
  if (msg.signed_infos.empty()) fail(KErr::einval, "Inconsistently supplied authAttrs");
  const SignedInfo& first = msg.signed_infos.front();
  msg.have_authattrs = first.authattrs.has_value();
  msg.authattrs_rej_waivable = profile.generation == Generation::v7_0 && profile.waive_mldsa_authattrs;
  if (msg.have_authattrs && first.pkey_algo.rfind("mldsa", 0) != 0) msg.authattrs_rej_waivable = false;
  for (std::size_t i = 1; i < msg.signed_infos.size(); ++i)
    if (msg.signed_infos[i].authattrs.has_value() != msg.have_authattrs)
      fail(KErr::einval, "Inconsistently supplied authAttrs");
  if (profile.generation == Generation::v7_0)
    for (auto& si : msg.signed_infos)
      if (!si.authattrs && si.algo_takes_data) si.hash_algo = "none";
}

}  // namespace

// --------------------------------------------------------------------------------- parse

Result<Pkcs7Message> pkcs7_parse_message(ByteView der, const KernelModel& profile, const Blacklist* blacklist) {
  ParseContext ctx{Pkcs7Message{}, profile, blacklist, {}, {}, {}, false, 0, 0};
  // lib/asn1_decoder.c refuses inputs of 64 KiB or more.
  if (der.size() > 65535)
    return make_error(KErr::emsgsize,
                      "PKCS#7 message of " + std::to_string(der.size()) + " bytes exceeds the ASN.1 decoder's 65535");
  try {
    try {
      Reader top(der, Rules::ber);
      Reader ci = top.enter(asn1::kSequence, "ContentInfo");
      Element type = ci.expect(asn1::kOid, "contentType");
      // pkcs7_check_content_type
      if (!same(type.content, kOidSignedData)) fail(KErr::einval, "Only support pkcs7_signedData type");
      if (ci.peek(asn1::context_cons(0))) {
        Reader explicit0 = ci.enter(asn1::context_cons(0), "content [0]");
        const bool sd_indefinite = explicit0.remaining() > 1 && explicit0.rest()[1] == 0x80;
        Reader sd = explicit0.enter(asn1::kSequence, "SignedData");
        parse_signed_data(ctx, sd, sd_indefinite);
        // [0] EXPLICIT holds exactly one SignedData: anything after it inside the [0] is a
        // length mismatch at the end of the tagged element (lib/asn1_decoder.c, EBADMSG),
        // found by the mutation campaign (signeddata.duplicate, contentinfo.content.value.append-null).
        explicit0.finish("content [0]");
      }
      if (!ci.empty()) fail(KErr::ebadmsg, "unexpected data at the end of ContentInfo");
    } catch (const asn1::DecodeError& e) { fail(KErr::ebadmsg, std::string("ASN.1 decoder: ") + e.what()); }
    pkcs7_check_authattrs(ctx.msg, profile);
  } catch (const Abort& a) { return make_error(a.code, a.message); }
  return std::move(ctx.msg);
}

Status pkcs7_supply_detached_data(Pkcs7Message& msg, ByteView data) {
  if (msg.data) return make_error(KErr::einval, "Data already supplied");
  msg.data = copy(data);
  return ok_status();
}

}  // namespace modsign::cms
