// modsign — `cms dump`: a ContentInfo(SignedData) field by field with byte offsets
// (RFC 5652 §3, §5; RFC 5280 §4.1 for the certificates).  Generic asn1/ reader, not the
// kernel mirror (include/modsign/cms.hpp says why).
#include <map>
#include <string>

#include "api/cms_internal.hpp"
#include "asn1/der.hpp"
#include "common/file.hpp"
#include "crypto/algorithms.hpp"
#include "modsign/cms.hpp"
#include "modsign/module_image.hpp"
#include "modsign/output.hpp"
#include "module/decompress.hpp"
#include "module/module_signature.hpp"

namespace modsign {

namespace {

using asn1::Element;
using asn1::Reader;

/// Display names of the OIDs a dump shows; the digests come from crypto::hash_info.
std::map<std::string, std::string> make_oid_names() {
  std::map<std::string, std::string> m = {
      {"1.2.840.113549.1.7.1", "data"},
      {"1.2.840.113549.1.7.2", "signedData"},
      {"1.3.6.1.4.1.311.2.1.4", "spcIndirectDataContext"},
      {"1.2.840.113549.1.9.3", "contentType"},
      {"1.2.840.113549.1.9.4", "messageDigest"},
      {"1.2.840.113549.1.9.5", "signingTime"},
      {"1.2.840.113549.1.9.15", "smimeCapabilities"},
      {"1.2.840.113549.1.9.52", "cmsAlgorithmProtection"},
      {"1.2.840.113549.1.9.16.2.47", "signingCertificateV2"},
      {"2.16.840.1.101.3.4.2.11", "shake128"},
      {"2.16.840.1.101.3.4.2.12", "shake256"},
      {"1.2.840.113549.1.1.1", "rsaEncryption"},
      {"1.2.840.113549.1.1.5", "sha1WithRSAEncryption"},
      {"1.2.840.113549.1.1.10", "RSASSA-PSS"},
      {"1.2.840.113549.1.1.11", "sha256WithRSAEncryption"},
      {"1.2.840.113549.1.1.12", "sha384WithRSAEncryption"},
      {"1.2.840.113549.1.1.13", "sha512WithRSAEncryption"},
      {"1.2.840.113549.1.1.14", "sha224WithRSAEncryption"},
      {"1.2.840.10045.2.1", "id-ecPublicKey"},
      {"1.2.840.10045.4.1", "ecdsa-with-SHA1"},
      {"1.2.840.10045.4.3.1", "ecdsa-with-SHA224"},
      {"1.2.840.10045.4.3.2", "ecdsa-with-SHA256"},
      {"1.2.840.10045.4.3.3", "ecdsa-with-SHA384"},
      {"1.2.840.10045.4.3.4", "ecdsa-with-SHA512"},
      {"2.16.840.1.101.3.4.3.10", "id-ecdsa-with-sha3-256"},
      {"2.16.840.1.101.3.4.3.11", "id-ecdsa-with-sha3-384"},
      {"2.16.840.1.101.3.4.3.12", "id-ecdsa-with-sha3-512"},
      {"2.16.840.1.101.3.4.3.17", "id-ml-dsa-44"},
      {"2.16.840.1.101.3.4.3.18", "id-ml-dsa-65"},
      {"2.16.840.1.101.3.4.3.19", "id-ml-dsa-87"},
      {"2.16.840.1.101.3.4.3.32", "HashML-DSA-44-with-SHA512"},
      {"2.16.840.1.101.3.4.3.33", "HashML-DSA-65-with-SHA512"},
      {"2.16.840.1.101.3.4.3.34", "HashML-DSA-87-with-SHA512"},
      {"2.16.840.1.101.3.4.1.2", "aes128-CBC"},
      {"2.16.840.1.101.3.4.1.22", "aes192-CBC"},
      {"2.16.840.1.101.3.4.1.42", "aes256-CBC"},
      {"2.16.840.1.101.3.4.1.6", "aes128-GCM"},
      {"2.16.840.1.101.3.4.1.26", "aes192-GCM"},
      {"2.16.840.1.101.3.4.1.46", "aes256-GCM"},
      {"1.2.840.113549.3.7", "des-ede3-cbc"},
      {"1.2.840.113549.3.2", "rc2-cbc"},
      {"1.3.14.3.2.7", "des-cbc"},
      {"1.2.643.2.2.9", "gost-r-3411-94"},
      {"2.5.4.3", "CN"},
      {"2.5.4.6", "C"},
      {"2.5.4.7", "L"},
      {"2.5.4.8", "ST"},
      {"2.5.4.10", "O"},
      {"2.5.4.11", "OU"},
      {"1.2.840.113549.1.9.1", "emailAddress"},
  };
  using crypto::HashAlgo;
  for (const HashAlgo h : {HashAlgo::sha1, HashAlgo::sha224, HashAlgo::sha256, HashAlgo::sha384, HashAlgo::sha512,
                           HashAlgo::sha3_256, HashAlgo::sha3_384, HashAlgo::sha3_512, HashAlgo::md5}) {
    const crypto::HashInfo& i = crypto::hash_info(h);
    m.emplace(asn1::oid_to_string(i.oid), std::string(i.name));
  }
  return m;
}

const std::map<std::string, std::string>& oid_names() {
  static const std::map<std::string, std::string> m = make_oid_names();
  return m;
}

CmsTlv where(const Element& e, ByteView base) {
  return {static_cast<std::size_t>(e.tlv.data() - base.data()), e.tlv.size()};
}

std::string oid_text(ByteView content) { return asn1::oid_to_string(content); }

/// AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters ANY OPTIONAL }.
CmsAlgorithm algorithm(Reader& r, const char* what, ByteView base) {
  const Element e = r.expect(asn1::kSequence, what);
  Reader in = r.inside(e);
  CmsAlgorithm a;
  a.at = where(e, base);
  a.oid = oid_text(in.expect(asn1::kOid, what).content);
  a.name = cms_oid_name(a.oid);
  if (!in.empty()) {
    const Element p = in.next();
    a.parameters = true;
    a.parameters_null = p.tag == asn1::kNull && p.content.empty();
  }
  in.finish(what);
  return a;
}

std::string string_value(const Element& e) {
  std::string s;
  for (auto b : e.content) s += (b >= 0x20 && b < 0x7f) ? static_cast<char>(b) : '?';
  return s;
}

/// The time as "YYYY-MM-DDTHH:MM:SSZ" (UTCTime YY < 50 means 20YY, RFC 5280 §4.1.2.5.1);
/// the raw text when it is not of that shape.
std::string time_text(const Element& e) {
  std::string s = string_value(e);
  std::string y;
  if (e.tag == asn1::kUtcTime && s.size() == 13)
    y = (s.substr(0, 2) < "50" ? "20" : "19") + s.substr(0, 2), s = s.substr(2);
  else if (e.tag == asn1::kGeneralizedTime && s.size() == 15) y = s.substr(0, 4), s = s.substr(4);
  else return s;
  return y + "-" + s.substr(0, 2) + "-" + s.substr(2, 2) + "T" + s.substr(4, 2) + ":" + s.substr(6, 2) + ":" +
         s.substr(8, 2) + "Z";
}

}  // namespace

std::string cms_oid_name(const std::string& dotted) {
  const auto& m = oid_names();
  if (auto it = m.find(dotted); it != m.end()) return it->second;
  // draft-ietf-lamps-pq-composite-sigs: composite ML-DSA signatures, id-MLDSA44-RSA2048-PSS-SHA256
  // (1.3.6.1.5.5.7.6.37) onwards, and the earlier drafts' arc 2.16.840.1.114027.80.8.1.
  const std::string pkix = "1.3.6.1.5.5.7.6.", entrust = "2.16.840.1.114027.80.8.1.";
  if (dotted.rfind(pkix, 0) == 0) {
    try {
      const int n = std::stoi(dotted.substr(pkix.size()));
      if (n >= 37 && n <= 54 && dotted.find('.', pkix.size()) == std::string::npos) return "composite ML-DSA";
    } catch (const std::exception&) {}
  }
  if (dotted.rfind(entrust, 0) == 0) return "composite ML-DSA";
  return "";
}

namespace cms_detail {

std::string name_text(ByteView name_tlv) {
  std::string out;
  try {
    Reader r(name_tlv);
    Reader rdns = r.enter(asn1::kSequence, "Name");
    while (!rdns.empty()) {
      Reader rdn = rdns.enter(asn1::kSet, "RelativeDistinguishedName");
      while (!rdn.empty()) {
        Reader atv = rdn.enter(asn1::kSequence, "AttributeTypeAndValue");
        const std::string oid = oid_text(atv.expect(asn1::kOid, "attribute type").content);
        const std::string n = cms_oid_name(oid);
        const Element v = atv.next();
        if (!out.empty()) out += ", ";
        out += (n.empty() ? oid : n) + "=" + string_value(v);
      }
    }
  } catch (const asn1::DecodeError&) { return "(malformed Name)"; }
  return out;
}

Bytes decode_pem_cms(ByteView in, const std::string& name, bool& pem) {
  const std::string text(in.begin(), in.end());
  pem = false;
  for (const std::string label : {"PKCS7", "CMS"}) {
    const std::string begin = "-----BEGIN " + label + "-----", end = "-----END " + label + "-----";
    const auto b = text.find(begin);
    if (b == std::string::npos) continue;
    const auto e = text.find(end, b);
    if (e == std::string::npos) throw InputError(name + ": PEM " + label + " block has no END line");
    pem = true;
    Bytes out;
    unsigned acc = 0;
    int bits = 0, pad = 0;
    for (std::size_t i = b + begin.size(); i < e; ++i) {
      const char c = text[i];
      int v;
      if (c >= 'A' && c <= 'Z') v = c - 'A';
      else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
      else if (c >= '0' && c <= '9') v = c - '0' + 52;
      else if (c == '+') v = 62;
      else if (c == '/') v = 63;
      else if (c == '=') {
        ++pad;
        continue;
      } else if (c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
      else throw InputError(name + ": PEM " + label + " block is damaged (bad base64)");
      if (pad) throw InputError(name + ": PEM " + label + " block is damaged (bad base64)");
      acc = (acc << 6) | static_cast<unsigned>(v);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out.push_back(static_cast<std::uint8_t>(acc >> bits));
      }
    }
    if (pad > 2 || out.empty()) throw InputError(name + ": PEM " + label + " block is damaged (bad base64)");
    return out;
  }
  return Bytes(in.begin(), in.end());
}

}  // namespace cms_detail

namespace {

/// Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue }
/// (RFC 5280 §4.1); only the TBS fields the dump shows are read.
CmsCertificate certificate(Reader& r, ByteView base) {
  const Element e = r.expect(asn1::kSequence, "Certificate");
  CmsCertificate c;
  c.at = where(e, base);
  Reader cert = r.inside(e);
  Reader tbs = cert.enter(asn1::kSequence, "TBSCertificate");
  Element el;
  tbs.maybe(asn1::context_cons(0), el);  // version
  const Element serial = tbs.expect(asn1::kInteger, "serialNumber");
  c.serial.assign(serial.content.begin(), serial.content.end());
  algorithm(tbs, "signature", base);
  c.issuer = cms_detail::name_text(tbs.expect(asn1::kSequence, "issuer").tlv);
  tbs.expect(asn1::kSequence, "validity");
  c.subject = cms_detail::name_text(tbs.expect(asn1::kSequence, "subject").tlv);
  Reader spki = tbs.enter(asn1::kSequence, "subjectPublicKeyInfo");
  c.public_key_algorithm = algorithm(spki, "subjectPublicKeyInfo.algorithm", base);
  tbs.maybe(asn1::context_prim(1), el);  // issuerUniqueID
  tbs.maybe(asn1::context_prim(2), el);  // subjectUniqueID
  if (tbs.maybe(asn1::context_cons(3), el)) {
    Reader exts = tbs.inside(el).enter(asn1::kSequence, "extensions");
    while (!exts.empty()) {
      Reader ext = exts.enter(asn1::kSequence, "Extension");
      const std::string id = oid_text(ext.expect(asn1::kOid, "extnID").content);
      Element critical;
      ext.maybe(0x01, critical);
      const Element value = ext.expect(asn1::kOctetString, "extnValue");
      if (id == "2.5.29.14") {
        Reader v(value.content);
        const Element k = v.expect(asn1::kOctetString, "subjectKeyIdentifier");
        c.skid = Bytes(k.content.begin(), k.content.end());
      }
    }
  }
  return c;
}

/// The values of one Attribute, as text (include/modsign/cms.hpp, CmsAttribute).
CmsAttribute attribute(Reader& r, ByteView base, CmsSignerInfo* si) {
  const Element e = r.expect(asn1::kSequence, "Attribute");
  Reader in = r.inside(e);
  CmsAttribute a;
  a.at = where(e, base);
  const Element type = in.expect(asn1::kOid, "attrType");
  a.oid = oid_text(type.content);
  a.name = cms_oid_name(a.oid);
  Reader values = in.enter(asn1::kSet, "attrValues");
  in.finish("Attribute");
  while (!values.empty()) {
    const Element v = values.next();
    if (a.oid == "1.2.840.113549.1.9.3" && v.tag == asn1::kOid) {
      const std::string d = oid_text(v.content), n = cms_oid_name(d);
      a.values.push_back(n.empty() ? d : n + " (" + d + ")");
      if (si) si->content_type = Bytes(v.content.begin(), v.content.end());
    } else if (a.oid == "1.2.840.113549.1.9.4" && v.tag == asn1::kOctetString) {
      a.values.push_back(to_hex(v.content));
      if (si) si->message_digest = Bytes(v.content.begin(), v.content.end());
    } else if (a.oid == "1.2.840.113549.1.9.5" && (v.tag == asn1::kUtcTime || v.tag == asn1::kGeneralizedTime)) {
      a.values.push_back(time_text(v));
      if (si) si->signing_time = a.values.back();
    } else if (a.oid == "1.2.840.113549.1.9.15" && v.tag == asn1::kSequence) {
      Reader caps = values.inside(v);
      while (!caps.empty()) {
        const CmsAlgorithm cap = algorithm(caps, "SMIMECapability", base);
        a.values.push_back(cap.name.empty() ? cap.oid : cap.name + " (" + cap.oid + ")");
      }
    } else {
      a.values.push_back(to_hex(v.tlv));
    }
  }
  return a;
}

CmsSignerInfo signer_info(Reader& r, ByteView base) {
  const Element e = r.expect(asn1::kSequence, "SignerInfo");
  Reader in = r.inside(e);
  CmsSignerInfo s;
  s.at = where(e, base);
  s.version = static_cast<int>(in.read_small_uint("SignerInfo.version"));
  Element el;
  if (in.maybe(asn1::context_prim(0), el)) {
    s.sid_at = where(el, base);
    s.sid_is_skid = true;
    s.sid_skid.assign(el.content.begin(), el.content.end());
  } else {
    const Element sid = in.expect(asn1::kSequence, "issuerAndSerialNumber");
    s.sid_at = where(sid, base);
    Reader ias = in.inside(sid);
    s.sid_issuer = cms_detail::name_text(ias.expect(asn1::kSequence, "issuer").tlv);
    const Element serial = ias.expect(asn1::kInteger, "serialNumber");
    s.sid_serial.assign(serial.content.begin(), serial.content.end());
    ias.finish("issuerAndSerialNumber");
  }
  s.digest_algorithm = algorithm(in, "digestAlgorithm", base);
  if (in.maybe(asn1::context_cons(0), el)) {
    s.signed_attrs_at = where(el, base);
    Reader attrs = in.inside(el);
    while (!attrs.empty()) s.signed_attrs.push_back(attribute(attrs, base, &s));
  }
  s.signature_algorithm = algorithm(in, "signatureAlgorithm", base);
  const Element sig = in.expect(asn1::kOctetString, "signature");
  s.signature_length = sig.content.size();
  s.signature_at = where(sig, base);
  if (in.maybe(asn1::context_cons(1), el)) {
    Reader attrs = in.inside(el);
    while (!attrs.empty()) s.unsigned_attrs.push_back(attribute(attrs, base, nullptr));
  }
  in.finish("SignerInfo");
  return s;
}

CmsDump dump_der(ByteView der, asn1::Rules rules) {
  CmsDump d;
  d.der_size = der.size();
  Reader top(der, rules);
  const Element ci = top.expect(asn1::kSequence, "ContentInfo");
  top.finish("ContentInfo (bytes after it)");
  Reader cinfo = top.inside(ci);
  const Element ct = cinfo.expect(asn1::kOid, "contentType");
  d.content_type.oid = oid_text(ct.content);
  d.content_type.name = cms_oid_name(d.content_type.oid);
  d.content_type.at = where(ct, der);
  if (d.content_type.oid != "1.2.840.113549.1.7.2")
    throw asn1::DecodeError("ContentInfo.contentType is " + d.content_type.oid +
                            ", not signedData (1.2.840.113549.1.7.2)");
  Reader explicit0 = cinfo.enter(asn1::context_cons(0), "ContentInfo.content");
  cinfo.finish("ContentInfo");
  const Element sde = explicit0.expect(asn1::kSequence, "SignedData");
  explicit0.finish("ContentInfo.content");
  d.signed_data_at = where(sde, der);
  Reader sd = explicit0.inside(sde);
  d.version = static_cast<int>(sd.read_small_uint("SignedData.version"));
  Reader algs = sd.enter(asn1::kSet, "digestAlgorithms");
  while (!algs.empty()) d.digest_algorithms.push_back(algorithm(algs, "DigestAlgorithmIdentifier", der));
  Reader eci = sd.enter(asn1::kSequence, "encapContentInfo");
  const Element et = eci.expect(asn1::kOid, "eContentType");
  d.econtent_type.oid = oid_text(et.content);
  d.econtent_type.name = cms_oid_name(d.econtent_type.oid);
  d.econtent_type.at = where(et, der);
  Element el;
  if (eci.maybe(asn1::context_cons(0), el)) {
    d.econtent = true;
    Reader ec = eci.inside(el);
    const Element os = ec.next();
    d.econtent_at = where(os, der);
    d.econtent_length = cms_detail::octets(os, rules).size();
    ec.finish("eContent");
  }
  eci.finish("encapContentInfo");
  if (sd.maybe(asn1::context_cons(0), el)) {
    Reader certs = sd.inside(el);
    while (!certs.empty()) {
      if (certs.peek(asn1::kSequence)) d.certificates.push_back(certificate(certs, der));
      else certs.next();  // other CertificateChoices (attribute certificates, other)
    }
  }
  if (sd.maybe(asn1::context_cons(1), el)) {
    Reader crls = sd.inside(el);
    while (!crls.empty()) crls.next(), ++d.crls;
  }
  Reader signers = sd.enter(asn1::kSet, "signerInfos");
  while (!signers.empty()) d.signers.push_back(signer_info(signers, der));
  sd.finish("SignedData");
  return d;
}

}  // namespace

namespace cms_detail {

Bytes octets(const Element& e, asn1::Rules rules) {
  if (e.tag == asn1::kOctetString) return Bytes(e.content.begin(), e.content.end());
  if (e.tag != (asn1::kOctetString | 0x20)) throw asn1::DecodeError("eContent: expected an OCTET STRING");
  Bytes out;  // constructed OCTET STRING (BER, X.690 §8.7.3): the concatenated segments
  Reader r(e.content, rules);
  while (!r.empty()) {
    const Bytes part = octets(r.next(), rules);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

CmsDump dump(ByteView der, const std::string& name) {
  try {
    return dump_der(der, asn1::Rules::der);
  } catch (const asn1::DecodeError& der_error) {
    try {
      CmsDump d = dump_der(der, asn1::Rules::ber);  // indefinite lengths (openssl cms -stream)
      d.ber = true;
      return d;
    } catch (const asn1::DecodeError&) { throw InputError(name + ": " + der_error.what()); }
  }
}

}  // namespace cms_detail

namespace cms_detail {

CmsInput read_cms_input(ByteView in, const std::string& name) {
  CmsInput r;
  // A signed module first, by its marker, as the kernel finds its signature: whatever its
  // content holds (a PEM block, a first byte 0x30) is the content, never the signature.
  const auto marker = module::kMarker;
  if (in.size() >= marker.size() && std::equal(marker.begin(), marker.end(), in.end() - marker.size())) {
    auto split = module::split(in);
    if (!split) throw InputError(name + ": signed module whose signature cannot be read: " + split.error().message);
    r.der.assign(split->cms.begin(), split->cms.end());
    r.module_content.emplace(split->content.begin(), split->content.end());
    return r;
  }
  r.der = decode_pem_cms(in, name, r.pem);
  if (r.pem || (!in.empty() && in[0] == 0x30)) return r;  // a SEQUENCE: read as a ContentInfo
  const std::string head(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(in.size(), 80)));
  if (head.rfind("-----BEGIN ", 0) == 0)
    throw InputError(name + ": PEM without a PKCS7 or CMS block (it begins " + head.substr(0, head.find('\n')) + ")");
  if (in.size() >= 4 && in[0] == 0x7f && in[1] == 'E' && in[2] == 'L' && in[3] == 'F')
    throw InputError(name + ": an ELF file without an appended module signature: no SignedData to read");
  if (const Compression c = module::detect_compression(in); c != Compression::none)
    throw InputError(name + ": " + std::string(compression_name(c)) +
                     "-compressed file, not a SignedData: for a compressed module, `modsign extract` writes its "
                     "signature as a .p7s file");
  return r;
}

}  // namespace cms_detail

CmsDump cms_dump(ByteView pem_or_der, const std::string& name) {
  const cms_detail::CmsInput in = cms_detail::read_cms_input(pem_or_der, name);
  CmsDump d = cms_detail::dump(in.der, name);
  d.pem = in.pem;
  d.module_signature = in.module_content.has_value();
  return d;
}

CmsDump cms_dump_file(const std::string& path) {
  const Bytes in = read_file(path, kMaxModuleSize);
  return cms_dump(in, path);
}

}  // namespace modsign
