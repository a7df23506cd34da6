// Mirror of the kernel's PKCS#7 parser, digest, verifier and trust code.  Function names
// follow the kernel's so that each piece can be checked against its source.
#include "cms/kernel.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "asn1/der.hpp"

namespace modsign::kernel {

std::optional<Bytes> x509_tbs_blacklist_hash(const crypto::Certificate& c, const KernelProfile& p) {
  if (p.generation == Generation::v7_0) return crypto::digest(crypto::HashAlgo::sha256, c.tbs());
  // Before 7.0 the TBS digest is the certificate signature's own hash, and no check
  // happens when that hash is not available (x509_get_sig_params).
  auto h = c.signature_hash();
  if (!h) return std::nullopt;
  // 6.1-6.6 cannot parse a SHA-3-signed certificate at all (x509_supported): no lookup.
  if (p.legacy_digests && (*h == crypto::HashAlgo::sha3_256 || *h == crypto::HashAlgo::sha3_384 ||
                           *h == crypto::HashAlgo::sha3_512))
    return std::nullopt;
  return crypto::digest(*h, c.tbs());
}

using asn1::Element;
using asn1::Reader;
using asn1::Rules;
using asn1::Writer;

std::string KernelProfile::name() const {
  return generation == Generation::v6 ? (legacy_digests ? "v6.1" : "v6") : "v7.0";
}

std::optional<KernelProfile> KernelProfile::parse(const std::string& n) {
  if (n == "v6.1" || n == "6.1") return v6_1();
  if (n == "v6" || n == "6") return v6();
  if (n == "v7.0" || n == "7.0" || n == "v7" || n == "7") return v7_0();
  return std::nullopt;
}

Status Keyring::add_path(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(path, ec))
      if (e.is_regular_file()) files.push_back(e.path().string());
    if (ec) throw IoError(path + ": " + ec.message());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      auto st = add_path(f);
      if (!st) return st;
    }
    return ok_status();
  }
  auto certs = crypto::Certificate::load_all(path);
  if (!certs) return make_error(certs.error().code, path + ": " + certs.error().message);
  for (auto& c : certs.value()) certificates.push_back(std::move(c));
  return ok_status();
}

namespace {

bool same(ByteView a, ByteView b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
Bytes copy(ByteView b) { return Bytes(b.begin(), b.end()); }

// ----------------------------------------------------------------------------- OID tables

constexpr std::uint8_t kOidData[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01};
constexpr std::uint8_t kOidSignedData[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02};
constexpr std::uint8_t kOidMsIndirectData[] = {0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x01, 0x04};
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

/// Thrown by the callbacks; carries the errno that aborts the decoder.
struct Abort {
  KErr code;
  std::string message;
};
[[noreturn]] void fail(KErr code, std::string message) { throw Abort{code, std::move(message)}; }

/// struct pkcs7_parse_context.
struct ParseContext {
  Pkcs7Message msg;
  const KernelProfile& profile;
  const Blacklist* blacklist;
  Bytes raw_serial, raw_issuer, raw_skid;
  bool expect_skid = false;
  int x509_index = 0;
  int sinfo_index = 0;
};

bool tbs_blacklisted(const crypto::Certificate& c, const KernelProfile& p, const Blacklist* bl) {
  if (!bl || bl->descriptions.empty()) return false;
  auto h = x509_tbs_blacklist_hash(c, p);
  return h && bl->is_tbs_blacklisted(*h);
}

// x509_check_for_self_signed (x509_public_key.c): same raw subject and issuer, an AKID (if
// any) pointing at the certificate itself (both parts must agree when both exist), then
// the signature checked with its own key; ENOPKG marks the signature unsupported.
Status check_self_signed(X509Cert& x, const KernelProfile& profile);

void pkcs7_extract_cert(ParseContext& ctx, const Element& e) {
  if ((e.tag & ~0x20) != (asn1::kSequence & ~0x20)) fail(KErr::ebadmsg, "Cert began with tag " + std::to_string(e.tag));
  if (e.tlv.size() > 65535) fail(KErr::emsgsize, "X.509 certificate larger than 65535 bytes");
  const std::string which = "X.509 certificate " + std::to_string(ctx.x509_index + 1);
  auto c = crypto::Certificate::from_der(e.tlv);
  if (!c) fail(c.error().code, which + ": " + c.error().message);
  if (auto st = x509_supported(*c, ctx.profile); !st) fail(st.error().code, which + ": " + st.error().message);
  X509Cert x;
  x.cert = std::move(c.value());
  x.id = x.cert.kernel_id();
  x.skid = x.cert.skid();
  x.akid_id = x.cert.akid_id();
  x.akid_skid = x.cert.akid_keyid();
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
  // SET OF / SEQUENCE OF with no element: a decoder error in 7.2.
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

void note_attributes(ParseContext& ctx, SignedInfo& si, Reader attrs) {
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
    if (ctx.msg.version != 1) fail(KErr::ebadmsg, "SignerInfo version 1 in SignedData version " + std::to_string(ctx.msg.version));
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
    Reader da = r.enter(asn1::kSequence, "digestAlgorithm");
    Element oid = da.expect(asn1::kOid, "digestAlgorithm OID");
    if (!da.empty()) da.next();  // parameters ANY OPTIONAL
    da.finish("digestAlgorithm");
    const auto& t = digest_oids();
    const int absent_era = ctx.profile.legacy_digests ? 2 : 1;
    auto it = std::find_if(t.begin(), t.end(), [&](const DigestOid& d) {
      return d.era != absent_era && same(d.oid, oid.content);
    });
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
    Reader pa = r.enter(asn1::kSequence, "digestEncryptionAlgorithm");
    Element oid = pa.expect(asn1::kOid, "digestEncryptionAlgorithm OID");
    if (!pa.empty()) pa.next();  // parameters ANY OPTIONAL
    pa.finish("digestEncryptionAlgorithm");
    const auto& t = pkey_oids();
    auto it = std::find_if(t.begin(), t.end(), [&](const PkeyOid& p) { return same(p.oid, oid.content); });
    // id-ecdsa-with-sha3-* (2.16.840.1.101.3.4.3.10-12) came with SHA-3 support (not in 6.1).
    const bool ecdsa_sha3 = it != t.end() && it->oid.size() == 9 && it->oid[8] >= 0x0a && it->oid[8] <= 0x0c;
    if (it == t.end() || (it->v7_only && ctx.profile.generation == Generation::v6) ||
        (ecdsa_sha3 && ctx.profile.legacy_digests))
      fail(KErr::enopkg, "Unknown pkey algo " + asn1::oid_to_string(oid.content));
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
  if (same(ctx.msg.data_type, kOidMsIndirectData) && !si.authattrs) fail(KErr::ebadmsg, "Authenticode requires AuthAttrs");
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

void parse_signed_data(ParseContext& ctx, Reader& sd) {
  // pkcs7_note_signeddata_version
  Element v = sd.expect(asn1::kInteger, "SignedData version");
  if (v.content.size() != 1 || (v.content[0] != 1 && v.content[0] != 3)) fail(KErr::einval, "Unsupported SignedData version");
  ctx.msg.version = v.content[0];
  // digestAlgorithms: SET OF or SEQUENCE OF; OIDs only noted.
  if (sd.peek(asn1::kSet) || sd.peek(asn1::kSequence)) {
    Reader algs(sd.next().content, Rules::ber);
    if (algs.empty()) throw asn1::DecodeError("empty digestAlgorithms");
    while (!algs.empty()) {
      Reader a = algs.enter(asn1::kSequence, "DigestAlgorithmIdentifier");
      a.expect(asn1::kOid, "digest algorithm OID");
      if (!a.empty()) a.next();
      a.finish("DigestAlgorithmIdentifier");
    }
  } else {
    fail(KErr::ebadmsg, "digestAlgorithms missing");
  }
  // contentInfo (pkcs7_note_content, pkcs7_note_data)
  {
    Reader ci = sd.enter(asn1::kSequence, "contentInfo");
    Element type = ci.expect(asn1::kOid, "eContentType");
    Element e;
    if (ci.peek(asn1::context_cons(0))) {
      Reader explicit0(ci.next().content, Rules::ber);
      Element data = explicit0.next();
      explicit0.finish("content [0]");
      ctx.msg.data = copy(data.content);
      ctx.msg.data_embedded = true;
    }
    if (!ci.empty()) fail(KErr::ebadmsg, "unexpected data in contentInfo");
    if (!same(type.content, kOidData) && !same(type.content, kOidMsIndirectData))
      fail(KErr::einval, "Unsupported data type " + asn1::oid_to_string(type.content));
    ctx.msg.data_type = copy(type.content);
  }
  // certificates [0] IMPLICIT SET OF / [2] IMPLICIT SEQUENCE OF
  if (sd.peek(asn1::context_cons(0)) || sd.peek(asn1::context_cons(2))) note_cert_list(ctx, sd.next(), false);
  // crls [1] / [3]
  if (sd.peek(asn1::context_cons(1)) || sd.peek(asn1::context_cons(3))) note_cert_list(ctx, sd.next(), true);
  // signerInfos: SET OF or SEQUENCE OF
  // 7.2's decoder lets a missing signerInfos through: zero signers, which
  // pkcs7_check_authattrs then refuses (EINVAL).
  if (sd.empty()) return;
  if (!sd.peek(asn1::kSet) && !sd.peek(asn1::kSequence)) fail(KErr::ebadmsg, "signerInfos has an unexpected tag");
  Reader sis(sd.next().content, Rules::ber);
  // Confirmed on 7.2's decoder: an empty signerInfos SET/SEQUENCE is a decoder error.
  if (sis.empty()) fail(KErr::ebadmsg, "ASN.1 decoder: empty signerInfos");
  while (!sis.empty()) {
    Element e = sis.expect(asn1::kSequence, "SignerInfo");
    ctx.msg.signed_infos.push_back(parse_signer_info(ctx, e));
  }
  if (!sd.empty()) fail(KErr::ebadmsg, "unexpected data at the end of SignedData");
}

// pkcs7_check_authattrs (7.0 form; v6 has no waiver and no "none" rewrite).
void pkcs7_check_authattrs(Pkcs7Message& msg, const KernelProfile& profile) {
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

std::optional<crypto::HashAlgo> hash_of(const std::string& name) {
  if (name == "none" || name == "sm3" || name.rfind("streebog", 0) == 0) return std::nullopt;
  return crypto::hash_by_name(name);
}

int hash_algo_index(const std::string& name) {
  static const char* const names[] = {"md4",    "md5",    "sha1",   "rmd160", "sha256",      "sha384",
                                      "sha512", "sha224", "rmd128", "rmd256", "rmd320",      "wp256",
                                      "wp384",  "wp512",  "tgr128", "tgr160", "tgr192",      "sm3",
                                      "streebog256", "streebog512", "sha3-256", "sha3-384", "sha3-512"};
  for (int i = 0; i < static_cast<int>(std::size(names)); ++i)
    if (name == names[i]) return i;
  return -1;
}

std::optional<crypto::KeyAlgo> key_algo_of(const std::string& pkey_algo) {
  if (pkey_algo == "mldsa44") return crypto::KeyAlgo::ml_dsa_44;
  if (pkey_algo == "mldsa65") return crypto::KeyAlgo::ml_dsa_65;
  if (pkey_algo == "mldsa87") return crypto::KeyAlgo::ml_dsa_87;
  if (pkey_algo == "rsa") return crypto::KeyAlgo::rsa;
  return std::nullopt;
}

/// The kernel decodes ECDSA-Sig-Value with its BER decoder and reads r and s as unsigned
/// (crypto/ecdsa-x962.c): re-encode that as the strict DER OpenSSL wants.  nullopt if
/// the kernel could not decode it either (EBADMSG).
std::optional<Bytes> normalize_ecdsa_signature(ByteView sig) {
  try {
    Reader top(sig, Rules::ber);
    Element seq = top.next();
    if ((seq.tag & ~0x20) != (asn1::kSequence & ~0x20)) return std::nullopt;
    Reader in(seq.content, Rules::ber);
    Element r = in.expect(asn1::kInteger, "r"), s = in.expect(asn1::kInteger, "s");
    auto unsigned_int = [](ByteView v) {
      std::size_t i = 0;
      while (i < v.size() && v[i] == 0) ++i;
      Bytes out(v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
      if (out.empty() || (out[0] & 0x80)) out.insert(out.begin(), 0);
      return out;
    };
    Writer w;
    w.add(asn1::kSequence, [&](Writer& q) {
      q.tlv(asn1::kInteger, unsigned_int(r.content));
      q.tlv(asn1::kInteger, unsigned_int(s.content));
    });
    return w.take();
  } catch (const asn1::DecodeError&) {
    return std::nullopt;
  }
}

/// rsassa_pkcs1_verify (crypto/rsassa-pkcs1.c, 7.2): s^e mod n, then the EMSA-PKCS1-v1_5
/// block checked field by field with the kernel's errno for each.
Status rsassa_pkcs1_verify(const crypto::PublicKey& key, crypto::HashAlgo h, ByteView digest, ByteView sig) {
  const std::size_t k = static_cast<std::size_t>((key.bits() + 7) / 8);
  if (sig.size() != k) return make_error(KErr::einval, "RSA signature is " + std::to_string(sig.size()) + " bytes, the key needs " + std::to_string(k));
  // s <= 1 is refused before the public operation.
  if (std::all_of(sig.begin(), sig.end() - 1, [](std::uint8_t c) { return c == 0; }) && sig.back() <= 1)
    return make_error(KErr::einval, "RSA signature representative out of range");
  auto em = crypto::rsa_public_raw(key, sig);
  if (!em) return make_error(KErr::einval, "RSA signature representative out of range");
  const Bytes& b = *em;
  if (b[0] != 0x00) return make_error(KErr::einval, "RSA block does not start with 00");
  if (b[1] != 0x01) return make_error(KErr::ebadmsg, "RSA block type is not 01");
  std::size_t i = 2;
  while (i < b.size() && b[i] == 0xff) ++i;
  if (i - 2 < 8 || i >= b.size() || b[i] != 0x00) return make_error(KErr::ebadmsg, "bad PKCS#1 v1.5 padding");
  ++i;
  // DigestInfo prefix: SEQUENCE { SEQUENCE { OID, NULL }, OCTET STRING (hash size) }.
  const auto& hi = crypto::hash_info(h);
  Writer alg;
  alg.add(asn1::kSequence, [&](Writer& a) {
    a.oid(hi.oid);
    a.null();
  });
  Bytes prefix;
  {
    const Bytes inner = alg.bytes();
    Bytes octet_hdr = asn1::header(asn1::kOctetString, hi.size);
    prefix = asn1::header(asn1::kSequence, inner.size() + octet_hdr.size() + hi.size);
    prefix.insert(prefix.end(), inner.begin(), inner.end());
    prefix.insert(prefix.end(), octet_hdr.begin(), octet_hdr.end());
  }
  if (b.size() - i != prefix.size() + hi.size || !std::equal(prefix.begin(), prefix.end(), b.begin() + static_cast<std::ptrdiff_t>(i)))
    return make_error(KErr::ebadmsg, "DigestInfo does not match " + std::string(hi.name));
  if (!std::equal(digest.begin(), digest.end(), b.begin() + static_cast<std::ptrdiff_t>(i + prefix.size())))
    return make_error(KErr::ekeyrejected, "signature does not verify");
  return ok_status();
}

/// public_key_verify_signature(key, sig) with sig->m = m (kernel-semantics §2.7, §3.3).
Status public_key_verify_signature(const crypto::PublicKey& key, const SignedInfo& si, ByteView m,
                                   crypto::Backend backend = crypto::Backend::openssl, const Pkcs7Message* msg = nullptr) {
  const crypto::KeyAlgo ka = key.algo();
  const bool key_ecdsa = crypto::is_ecdsa(ka);
  if (key_ecdsa ? si.pkey_algo != "ecdsa" : key_algo_of(si.pkey_algo) != ka)
    return make_error(KErr::ekeyrejected, "signature algorithm " + si.pkey_algo + " differs from the key's " +
                                              std::string(crypto::kernel_pkey_name(ka)));
  if (crypto::is_ml_dsa(ka)) {
    // software_key_determine_akcipher: raw encoding, hash "none" or "sha512" only.
    if (si.hash_algo != "none" && si.hash_algo != "sha512")
      return make_error(KErr::einval, "ML-DSA accepts hash none or sha512, not " + si.hash_algo);
    if (msg && si.m_is_data && msg->data_prehashed) {  // the data itself, as external μ
      for (const auto& [pk, mu] : msg->data_mu)
        if (pk == key.raw()) return crypto::ml_dsa_verify_mu(key, mu, si.signature);
      return make_error(KErr::einval, "no μ of the data for this ML-DSA key");
    }
    return crypto::verify_message(key, crypto::HashAlgo::sha512, m, si.signature, backend);
  }
  auto h = hash_of(si.hash_algo);
  // software_key_determine_akcipher: ECDSA takes SHA-1, SHA-2 or SHA-3 only, else EINVAL.
  // md4/md5 reach here only under v6.1, whose list is SHA-1/SHA-2 (confirmed on Debian 12's
  // 6.1: a genuine ECDSA signature under digestAlgorithm md5 is refused with EINVAL).
  if (key_ecdsa && (si.hash_algo == "md4" || si.hash_algo == "md5")) h.reset();
  if (!h) return make_error(KErr::einval, "no " + si.pkey_algo + " signature scheme with " + si.hash_algo);
  if (key_ecdsa) {
    auto der = normalize_ecdsa_signature(si.signature);
    if (!der) return make_error(KErr::ebadmsg, "malformed ECDSA-Sig-Value");
    return crypto::verify_digest(key, *h, m, *der);
  }
  return rsassa_pkcs1_verify(key, *h, m, si.signature);
}

/// The certificate's own signature as a SignedInfo-like view, for chain checks.
SignedInfo cert_sig(const crypto::Certificate& c) {
  SignedInfo si;
  bool ecdsa = false;
  auto ka = crypto::key_algo_by_signature_oid(c.signature_algorithm(), &ecdsa);
  si.pkey_algo = ecdsa ? "ecdsa" : ka ? std::string(crypto::kernel_pkey_name(*ka)) : "rsa";
  if (auto h = c.signature_hash()) si.hash_algo = crypto::hash_info(*h).name;
  else si.hash_algo = "none";
  si.signature = Bytes(c.signature_value().begin(), c.signature_value().end());
  return si;
}

/// Check `child`'s certificate signature with `issuer_key` as the kernel does.
Status verify_cert_signature(const crypto::Certificate& child, const crypto::PublicKey& issuer_key,
                             crypto::Backend backend = crypto::Backend::openssl) {
  if (child.signature_value().empty()) return make_error(KErr::ebadmsg, "certificate signature BIT STRING has unused bits");
  SignedInfo si = cert_sig(child);
  if (si.hash_algo == "none") return public_key_verify_signature(issuer_key, si, child.tbs(), backend);
  auto h = hash_of(si.hash_algo);
  if (!h) return make_error(KErr::enopkg, "unsupported certificate hash");
  return public_key_verify_signature(issuer_key, si, crypto::digest(*h, child.tbs()), backend);
}

Status check_self_signed(X509Cert& x, const KernelProfile& profile) {
  (void)profile;
  if (!same(x.cert.subject(), x.cert.issuer())) return ok_status();
  if (x.akid_id || x.akid_skid) {
    const bool a = x.skid && x.akid_skid && *x.skid == *x.akid_skid;
    const bool b = x.akid_id && x.id == *x.akid_id;
    if (!a && !b) return ok_status();  // AKID names another certificate: not self-signed
    if ((a != b) && x.akid_id && x.akid_skid) return make_error(KErr::ekeyrejected, "AKID parts disagree");
  }
  auto st = verify_cert_signature(x.cert, x.cert.public_key());
  if (!st) {
    if (st.error().code == KErr::enopkg) {
      x.unsupported_sig = true;
      return ok_status();
    }
    return make_error(st.error().code, "self-signature: " + st.error().message);
  }
  x.self_signed = true;
  return ok_status();
}

}  // namespace

Status x509_supported(const crypto::Certificate& cert, const KernelProfile& profile) {
  const ByteView o = cert.signature_algorithm();
  bool ecdsa = false;
  auto ka = crypto::key_algo_by_signature_oid(o, &ecdsa);
  const bool mldsa_sig = ka && crypto::is_ml_dsa(*ka);
  static constexpr std::uint8_t rsa_sha3_prefix[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03};
  const bool rsa_sha3 = o.size() == 9 && std::equal(rsa_sha3_prefix, rsa_sha3_prefix + 8, o.begin()) && o[8] >= 0x0d && o[8] <= 0x10;
  const bool rsa_pkcs1 = cert.signature_hash().has_value() && !ecdsa;
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
  if (crypto::is_ml_dsa(cert.public_key().algo()) && profile.generation == Generation::v6)
    return make_error(KErr::enopkg, "ML-DSA keys need kernel 7.0");
  return ok_status();
}

namespace {
}  // namespace

// --------------------------------------------------------------------------------- parse

Result<Pkcs7Message> pkcs7_parse_message(ByteView der, const KernelProfile& profile, const Blacklist* blacklist) {
  ParseContext ctx{Pkcs7Message{}, profile, blacklist, {}, {}, {}, false, 0, 0};
  // lib/asn1_decoder.c refuses inputs of 64 KiB or more.
  if (der.size() > 65535) return make_error(KErr::emsgsize, "PKCS#7 message of " + std::to_string(der.size()) + " bytes exceeds the ASN.1 decoder's 65535");
  try {
    try {
      Reader top(der, Rules::ber);
      Reader ci = top.enter(asn1::kSequence, "ContentInfo");
      Element type = ci.expect(asn1::kOid, "contentType");
      // pkcs7_check_content_type
      if (!same(type.content, kOidSignedData)) fail(KErr::einval, "Only support pkcs7_signedData type");
      if (ci.peek(asn1::context_cons(0))) {
        Reader explicit0 = ci.enter(asn1::context_cons(0), "content [0]");
        Reader sd = explicit0.enter(asn1::kSequence, "SignedData");
        parse_signed_data(ctx, sd);
      }
      if (!ci.empty()) fail(KErr::ebadmsg, "unexpected data at the end of ContentInfo");
    } catch (const asn1::DecodeError& e) {
      fail(KErr::ebadmsg, std::string("ASN.1 decoder: ") + e.what());
    }
    pkcs7_check_authattrs(ctx.msg, profile);
  } catch (const Abort& a) {
    return make_error(a.code, a.message);
  }
  return std::move(ctx.msg);
}

Status pkcs7_supply_detached_data(Pkcs7Message& msg, ByteView data) {
  if (msg.data) return make_error(KErr::einval, "Data already supplied");
  msg.data = copy(data);
  return ok_status();
}

// -------------------------------------------------------------------------------- digest

Status pkcs7_digest(Pkcs7Message& msg, std::size_t index, const KernelProfile& profile) {
  SignedInfo& si = msg.signed_infos.at(index);
  const ByteView data = msg.data ? ByteView(*msg.data) : ByteView();
  if (profile.generation == Generation::v7_0 && !si.authattrs && si.algo_takes_data) {
    si.m.reset();
    si.m_is_data = true;
    si.m_free = false;
    return ok_status();
  }
  if (si.m) return ok_status();
  auto h = hash_of(si.hash_algo);
  if (!h) return make_error(KErr::enopkg, "hash " + si.hash_algo + " not available");
  auto cached = std::find_if(msg.data_digests.begin(), msg.data_digests.end(),
                             [&](const auto& e) { return e.first == si.hash_algo; });
  if (cached == msg.data_digests.end()) {
    msg.data_digests.emplace_back(si.hash_algo, crypto::digest(*h, data));
    cached = msg.data_digests.end() - 1;
  }
  Bytes d = cached->second;
  // The content hash is cached before the messageDigest checks, so a second call after a
  // failed check returns 0 with it (as 7.2's pkcs7_digest does).
  si.m = d;
  si.m_free = true;
  if (si.authattrs) {
    if (!si.msgdigest) return make_error(KErr::ekeyrejected, "Authattrs lack messageDigest");
    if (si.msgdigest->size() != d.size())
      return make_error(KErr::ebadmsg, "Sig " + std::to_string(si.index) + ": Invalid digest size (" +
                                           std::to_string(si.msgdigest->size()) + ")");
    if (*si.msgdigest != d) return make_error(KErr::ekeyrejected, "Sig " + std::to_string(si.index) + ": Message digest doesn't match");
    Bytes set{asn1::kSet};
    set.insert(set.end(), si.authattrs->begin(), si.authattrs->end());
    if (profile.generation == Generation::v7_0 && si.algo_takes_data)
      d = std::move(set);
    else
      d = crypto::digest(*h, set);
  }
  si.m = std::move(d);
  si.m_free = true;
  return ok_status();
}

Result<KernelDigest> pkcs7_get_digest(Pkcs7Message& msg, const KernelProfile& profile) {
  if (msg.signed_infos.size() != 1)
    return make_error(KErr::ebadmsg, "pkcs7_get_digest needs exactly one SignerInfo, the message has " +
                                         std::to_string(msg.signed_infos.size()));
  auto st = pkcs7_digest(msg, 0, profile);
  if (!st) return st.error();
  const SignedInfo& si = msg.signed_infos[0];
  if (profile.generation == Generation::v7_0 && !si.m_free)
    return make_error(KErr::einval, "pkcs7_get_digest: No digest available");
  KernelDigest out{si.m.value_or(Bytes{}), si.hash_algo, std::nullopt};
  const int idx = hash_algo_index(si.hash_algo);
  if (idx >= 0) out.hash_algo_index = idx;
  return out;
}

// -------------------------------------------------------------------------------- verify

namespace {

// sig->m: the digest (or attributes) pkcs7_digest made, or the data itself.
ByteView signed_bytes(const Pkcs7Message& msg, const SignedInfo& si) {
  if (si.m_is_data) return msg.data ? ByteView(*msg.data) : ByteView();
  return si.m ? ByteView(*si.m) : ByteView();
}

// pkcs7_find_key: the first embedded certificate whose x509->id equals auth_ids[0].
void pkcs7_find_key(Pkcs7Message& msg, SignedInfo& si) {
  for (std::size_t i = 0; i < msg.certs.size(); ++i)
    if (msg.certs[i].id == si.auth_id) {
      si.signer = i;
      return;
    }
}

// pkcs7_verify_sig_chain (pkcs7_verify.c, 7.2): from the signer certificate up, find
// each issuer among the embedded certificates by the AKID (issuer+serial first, then
// keyid), check the child's signature with it (errors returned as they are), stop at a
// self-signed, blacklisted or unknown issuer, or a loop.
Status pkcs7_verify_sig_chain(Pkcs7Message& msg, SignedInfo& si) {
  for (auto& c : msg.certs) c.seen = false;
  if (!si.signer) return ok_status();
  std::size_t cur = *si.signer;
  for (;;) {
    X509Cert& x = msg.certs[cur];
    x.seen = true;
    if (x.blacklisted) {
      si.blacklisted = true;
      return ok_status();
    }
    if (x.self_signed || x.unsupported_sig) {
      if (x.self_signed) x.signer = cur;
      return ok_status();
    }
    std::optional<std::size_t> issuer;
    if (x.akid_id) {
      for (std::size_t i = 0; i < msg.certs.size() && !issuer; ++i)
        if (msg.certs[i].id == *x.akid_id) issuer = i;
      if (issuer && x.akid_skid && (!msg.certs[*issuer].skid || *msg.certs[*issuer].skid != *x.akid_skid))
        return make_error(KErr::ekeyrejected, "Sig " + std::to_string(si.index) + ": X.509 chain contains auth-skid nonmatch");
    } else if (x.akid_skid) {
      for (std::size_t i = 0; i < msg.certs.size() && !issuer; ++i)
        if (msg.certs[i].skid && *msg.certs[i].skid == *x.akid_skid) issuer = i;
    }
    if (!issuer) return ok_status();  // the root of this chain is not in the message
    if (msg.certs[*issuer].seen) return ok_status();  // loop
    auto st = verify_cert_signature(x.cert, msg.certs[*issuer].cert.public_key(), msg.backend);
    if (!st) return st;
    x.signer = *issuer;
    cur = *issuer;
  }
}

Status pkcs7_verify_one(Pkcs7Message& msg, std::size_t index, const KernelProfile& profile) {
  auto st = pkcs7_digest(msg, index, profile);
  if (!st) return st;
  SignedInfo& si = msg.signed_infos[index];
  pkcs7_find_key(msg, si);
  if (!si.signer) return ok_status();  // checked later against the trusted keys
  const X509Cert& x = msg.certs[*si.signer];
  if (si.signing_time && (*si.signing_time < x.cert.valid_from() || *si.signing_time > x.cert.valid_to()))
    return make_error(KErr::ekeyrejected, "Message signed outside of X.509 validity window");
  st = public_key_verify_signature(x.cert.public_key(), si, signed_bytes(msg, si), msg.backend, &msg);
  if (!st) return st;
  return pkcs7_verify_sig_chain(msg, si);
}

}  // namespace

Status pkcs7_verify(Pkcs7Message& msg, Usage usage, const KernelProfile& profile, std::vector<std::string>* warnings) {
  const bool data = same(msg.data_type, kOidData);
  switch (usage) {
    case Usage::module:
      if (!data) return make_error(KErr::ekeyrejected, "Invalid module sig (not pkcs7-data)");
      if (msg.have_authattrs) {
        if (profile.generation == Generation::v7_0 && msg.authattrs_rej_waivable) {
          if (warnings) warnings->push_back("Waived invalid module sig (has authattrs)");
        } else {
          return make_error(KErr::ekeyrejected, "Invalid module sig (has authattrs)");
        }
      }
      break;
    case Usage::firmware:
      if (!data) return make_error(KErr::ekeyrejected, "Invalid firmware sig (not pkcs7-data)");
      if (!msg.have_authattrs) return make_error(KErr::ekeyrejected, "Invalid firmware sig (missing authattrs)");
      break;
    case Usage::kexec_pe:
      if (!same(msg.data_type, kOidMsIndirectData))
        return make_error(KErr::ekeyrejected, "Invalid kexec sig (not Authenticode)");
      break;
    case Usage::unspecified:
    case Usage::bpf:
      if (!data) return make_error(KErr::ekeyrejected, "Invalid unspecified sig (not pkcs7-data)");
      break;
    case Usage::key_signature:
      return make_error(KErr::einval, "Invalid usage for pkcs7_verify");
  }
  KErr actual = KErr::enopkg;
  std::string reason = "all signers use unsupported crypto";
  for (std::size_t i = 0; i < msg.signed_infos.size(); ++i) {
    auto st = pkcs7_verify_one(msg, i, profile);
    SignedInfo& si = msg.signed_infos[i];
    if (si.blacklisted) {
      if (actual == KErr::enopkg) {
        actual = KErr::ekeyrejected;
        reason = "Sig " + std::to_string(si.index) + ": signer certificate is blacklisted";
      }
      continue;
    }
    if (!st) {
      if (st.error().code == KErr::enopkg) {
        si.unsupported_crypto = true;
        continue;
      }
      return st;
    }
    actual = KErr::none;
  }
  if (actual == KErr::none) return ok_status();
  return make_error(actual, reason);
}

namespace {
/// find_asymmetric_key(keyring, id_0, id_1, NULL, false) (asymmetric_type.c): the key
/// whose id (serial ‖ issuer) or SKID equals the first given id; when both ids are given,
/// the key's SKID must equal id_1 (EKEYREJECTED otherwise).  ENOKEY if none; EINVAL for an
/// empty id (the keyring search itself fails).
Result<const crypto::Certificate*> find_asymmetric_key(const std::vector<crypto::Certificate>& trusted,
                                                      const std::optional<Bytes>& id0, const std::optional<Bytes>& id1) {
  const std::optional<Bytes>& primary = id0 ? id0 : id1;
  if (!primary) return make_error(KErr::enokey, "no key id");
  if (primary->empty()) return make_error(KErr::einval, "empty key id");
  for (const auto& t : trusted) {
    if (t.kernel_id() != *primary && !(t.skid() && *t.skid() == *primary)) continue;
    if (id0 && id1 && !(t.skid() && *t.skid() == *id1))
      return make_error(KErr::ekeyrejected, "First ID matches, but second is missing or different");
    return &t;
  }
  return make_error(KErr::enokey, "no trusted key matches");
}
}  // namespace

Status pkcs7_validate_trust(Pkcs7Message& msg, const std::vector<crypto::Certificate>& trusted,
                            const KernelProfile& profile) {
  (void)profile;
  bool any_ok = false, any_unsupported = false;
  for (auto& si : msg.signed_infos) {
    if (si.unsupported_crypto) {
      any_unsupported = true;
      continue;
    }
    // pkcs7_validate_trust_one: walk the chain that pkcs7_verify built.  At a match the
    // trusted key checks the signature made by the matched certificate: the SignerInfo's
    // for the signer certificate itself, else the child certificate's.
    const crypto::Certificate* key = nullptr;
    const SignedInfo* sinfo_sig = &si;  // "sig": starts as the SignerInfo's signature
    const X509Cert* child = nullptr;    // when set, "sig" is child's certificate signature
    bool ended = false;
    const X509Cert* last = nullptr;
    if (si.signer) {
      std::size_t cur = *si.signer;
      for (std::size_t guard = 0; guard <= msg.certs.size(); ++guard) {
        const X509Cert& p = msg.certs[cur];
        auto k = find_asymmetric_key(trusted, p.id, p.skid);
        if (k) {
          key = *k;
          break;
        }
        if (p.signer && *p.signer == cur) {  // an unknown self-signed certificate ends it
          ended = true;
          break;
        }
        last = &p;
        child = &p;
        sinfo_sig = nullptr;
        if (p.unsupported_sig || !p.signer) break;
        cur = *p.signer;
      }
    }
    if (ended) continue;  // ENOKEY for this signer
    if (!key && last && (last->akid_id || last->akid_skid)) {
      auto k = find_asymmetric_key(trusted, last->akid_id, last->akid_skid);
      if (k) {
        key = *k;
        child = last;
        sinfo_sig = nullptr;
      } else if (k.error().code != KErr::enokey) {
        return make_error(k.error().code, "Sig " + std::to_string(si.index) + ": " + k.error().message);
      }
    }
    if (!key) {
      // Last resort, the "direct signer": every sign-file signature.
      auto k = find_asymmetric_key(trusted, si.auth_id, std::nullopt);
      if (!k) {
        if (k.error().code == KErr::enokey) continue;
        return make_error(k.error().code, "Sig " + std::to_string(si.index) + ": " + k.error().message);
      }
      key = *k;
      child = nullptr;
      sinfo_sig = &si;
    }
    if (sinfo_sig && !si.m && !si.m_is_data)
      return make_error(KErr::einval, "Sig " + std::to_string(si.index) + ": pkcs7_verify() must run before trust validation");
    Status st = sinfo_sig ? public_key_verify_signature(key->public_key(), *sinfo_sig, signed_bytes(msg, si), msg.backend, &msg)
                          : verify_cert_signature(child->cert, key->public_key(), msg.backend);
    if (!st) {
      if (st.error().code == KErr::enomem) return st;
      return make_error(KErr::ekeyrejected, "Sig " + std::to_string(si.index) + ": " + st.error().message);
    }
    msg.trusted_by.push_back(key->subject_cn());
    any_ok = true;
  }
  if (any_ok) return ok_status();
  if (any_unsupported) return make_error(KErr::enopkg, "all signers use unsupported crypto");
  return make_error(KErr::enokey, "no trusted key matches the signer");
}

namespace {
/// verify_pkcs7_signature after parsing: the data step is `supply`.
VerifyReport verify_with(ByteView pkcs7, const Keyring& keyring, Usage usage, const KernelProfile& profile,
                         crypto::Backend backend, const std::function<Status(Pkcs7Message&)>& supply) {
  VerifyReport rep;
  auto done = [&](const Error& e) {
    rep.err = e.code;
    rep.reason = e.message;
    return rep;
  };
  auto msg = pkcs7_parse_message(pkcs7, profile, &keyring.blacklist);
  if (!msg) return done(msg.error());
  msg->backend = backend;
  for (const auto& si : msg->signed_infos) {
    SignerSummary s;
    s.sid = si.expect_skid ? "skid " + to_hex(si.auth_id) : "issuer+serial " + to_hex(si.auth_id);
    s.digest_algo = si.hash_algo;
    s.sig_algo = si.pkey_algo;
    s.signed_attrs = si.authattrs.has_value();
    rep.signers.push_back(s);
  }
  if (!supply(*msg)) return done(make_error(KErr::ebadmsg, "PKCS#7 signature with non-detached data"));
  auto st = pkcs7_verify(*msg, usage, profile, &rep.log);
  if (!st) return done(st.error());
  // x509_key_preparse refuses blacklisted certificates, and x509_cert_parse those whose
  // algorithms the kernel lacks (x509_supported: ML-DSA before 7.0, SHA-3 before 6.7): they
  // are in no keyring.
  auto admitted = [&](const std::vector<crypto::Certificate>& certs) {
    std::vector<crypto::Certificate> out;
    for (const auto& c : certs)
      if (!tbs_blacklisted(c, profile, &keyring.blacklist) && x509_supported(c, profile)) out.push_back(c);
    return out;
  };
  const auto loadable = [&](const std::vector<crypto::Certificate>& certs) {
    return std::all_of(certs.begin(), certs.end(), [&](const crypto::Certificate& c) { return x509_supported(c, profile).ok(); });
  };
  const bool filter = !keyring.blacklist.descriptions.empty() || !loadable(keyring.certificates) ||
                      !loadable(keyring.blacklist.revoked);
  if (!keyring.blacklist.revoked.empty()) {
    auto revoked = filter ? pkcs7_validate_trust(*msg, admitted(keyring.blacklist.revoked), profile)
                          : pkcs7_validate_trust(*msg, keyring.blacklist.revoked, profile);
    if (revoked) return done(make_error(KErr::ekeyrejected, "Key is on the revocation list"));
  }
  msg->trusted_by.clear();
  st = filter ? pkcs7_validate_trust(*msg, admitted(keyring.certificates), profile)
              : pkcs7_validate_trust(*msg, keyring.certificates, profile);
  if (!st) return done(st.error());
  rep.trusted_by = msg->trusted_by;
  return rep;
}
}  // namespace

VerifyReport verify_pkcs7_signature(ByteView data, ByteView pkcs7, const Keyring& keyring, Usage usage,
                                    const KernelProfile& profile, crypto::Backend backend) {
  return verify_with(pkcs7, keyring, usage, profile, backend,
                     [&](Pkcs7Message& m) { return pkcs7_supply_detached_data(m, data); });
}

VerifyReport ima_modsig_verify(ByteView data, ByteView pkcs7, const Keyring& keyring, const KernelProfile& profile,
                               crypto::Backend backend) {
  return verify_with(pkcs7, keyring, Usage::module, profile, backend, [&](Pkcs7Message& m) {
    // ima_collect_modsig(): supply the file, and only then pkcs7_get_digest() for d-modsig.
    // Its pkcs7_digest() runs before pkcs7_verify() on the same message, and keeps the
    // content digest in sig->m even when a messageDigest check fails; pkcs7_verify() then
    // finds sig->m set and checks the signature over that digest (reachable only where
    // module usage allows signedAttrs: ML-DSA under the waiver).
    if (pkcs7_supply_detached_data(m, data)) (void)pkcs7_get_digest(m, profile);
    return ok_status();
  });
}

VerifyReport verify_pkcs7_signature_prehashed(const std::vector<std::pair<std::string, Bytes>>& digests,
                                              const std::vector<std::pair<Bytes, Bytes>>& mus, ByteView pkcs7,
                                              const Keyring& keyring, Usage usage, const KernelProfile& profile) {
  return verify_with(pkcs7, keyring, usage, profile, crypto::Backend::openssl, [&](Pkcs7Message& m) -> Status {
    if (m.data) return make_error(KErr::einval, "Data already supplied");
    m.data_digests = digests;
    m.data_mu = mus;
    m.data_prehashed = true;
    return ok_status();
  });
}

}  // namespace modsign::kernel
