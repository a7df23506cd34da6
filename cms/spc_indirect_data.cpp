// modsign — Authenticode signatures (cms/spc_indirect_data.hpp).
#include "cms/spc_indirect_data.hpp"

#include <algorithm>

#include "asn1/der.hpp"

namespace modsign::cms {

namespace {
bool same(ByteView a, ByteView b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
Bytes copy(ByteView b) { return Bytes(b.begin(), b.end()); }
}  // namespace

Result<AuthenticodeSignedData> parse_authenticode(ByteView pkcs7) {
  AuthenticodeSignedData out;
  Bytes rfc5652;
  try {
    asn1::Reader top(pkcs7);
    const asn1::Element ci_el = top.expect(asn1::kSequence, "ContentInfo");  // padding may follow
    asn1::Reader ci = top.inside(ci_el);
    const asn1::Element ct = ci.expect(asn1::kOid, "contentType");
    const asn1::Element c0 = ci.expect(asn1::context_cons(0), "content [0]");
    ci.finish("ContentInfo");
    asn1::Reader x = ci.inside(c0);
    asn1::Reader s = x.enter(asn1::kSequence, "SignedData");
    x.finish("content [0]");
    const asn1::Element version = s.expect(asn1::kInteger, "SignedData version");
    const asn1::Element algs = s.next();
    asn1::Reader eci = s.enter(asn1::kSequence, "encapContentInfo");
    const ByteView rest = s.rest();
    const asn1::Element type = eci.expect(asn1::kOid, "eContentType");
    if (!same(type.content, kOidSpcIndirectData))
      return make_error(KErr::ebadmsg, "eContentType is " + asn1::oid_to_string(type.content) +
                                           ", not SPC_INDIRECT_DATA_OBJID (1.3.6.1.4.1.311.2.1.4)");
    asn1::Element e0;
    if (!eci.maybe(asn1::context_cons(0), e0))
      return make_error(KErr::ebadmsg, "no SpcIndirectDataContent (detached content)");
    eci.finish("encapContentInfo");
    asn1::Reader content = eci.inside(e0);
    const asn1::Element spc = content.expect(asn1::kSequence, "SpcIndirectDataContent");
    content.finish("eContent [0]");

    // SpcIndirectDataContent ::= SEQUENCE { data SpcAttributeTypeAndOptionalValue,
    //                                       messageDigest DigestInfo }
    asn1::Reader sp = content.inside(spc);
    asn1::Reader data = sp.enter(asn1::kSequence, "SpcAttributeTypeAndOptionalValue");
    out.data_type = copy(data.expect(asn1::kOid, "SpcAttributeTypeAndOptionalValue type").content);
    asn1::Reader di = sp.enter(asn1::kSequence, "DigestInfo");
    sp.finish("SpcIndirectDataContent");
    asn1::Reader alg = di.enter(asn1::kSequence, "DigestInfo digestAlgorithm");
    out.digest_algorithm_oid = copy(alg.expect(asn1::kOid, "digestAlgorithm OID").content);
    asn1::Element params;
    alg.maybe(asn1::kNull, params);
    alg.finish("DigestInfo digestAlgorithm");
    out.digest = copy(di.expect(asn1::kOctetString, "DigestInfo digest").content);
    di.finish("DigestInfo");
    out.digest_algorithm = crypto::hash_by_oid(out.digest_algorithm_oid);

    // The same SignedData in the RFC 5652 form, for cms::parse().
    asn1::Writer w;
    w.add(asn1::kSequence, [&](asn1::Writer& a) {
      a.raw(ct.tlv);
      a.add(asn1::context_cons(0), [&](asn1::Writer& b) {
        b.add(asn1::kSequence, [&](asn1::Writer& c) {
          c.raw(version.tlv).raw(algs.tlv);
          c.add(asn1::kSequence, [&](asn1::Writer& d) {
            d.raw(type.tlv);
            d.add(asn1::context_cons(0), [&](asn1::Writer& f) { f.octet_string(spc.tlv); });
          });
          c.raw(rest);
        });
      });
    });
    rfc5652 = w.take();
  } catch (const asn1::DecodeError& ex) {
    return make_error(KErr::ebadmsg, std::string("malformed Authenticode PKCS#7: ") + ex.what());
  }
  auto sd = parse(rfc5652);
  if (!sd) return sd.error();
  out.signed_data = std::move(*sd);
  return out;
}

std::string name_text(ByteView name_tlv) {
  struct Short {
    const char* oid;
    const char* name;
  };
  static constexpr Short kShort[] = {
      {"2.5.4.6", "C"},
      {"2.5.4.8", "ST"},
      {"2.5.4.7", "L"},
      {"2.5.4.10", "O"},
      {"2.5.4.11", "OU"},
      {"2.5.4.3", "CN"},
      {"1.2.840.113549.1.9.1", "emailAddress"},
      {"2.5.4.5", "serialNumber"},
      {"0.9.2342.19200300.100.1.25", "DC"},
      {"0.9.2342.19200300.100.1.1", "UID"},
  };
  std::string out;
  try {
    asn1::Reader top(name_tlv);
    asn1::Reader name = top.enter(asn1::kSequence, "Name");
    top.finish("Name");
    while (!name.empty()) {
      asn1::Reader rdn = name.enter(asn1::kSet, "RelativeDistinguishedName");
      if (!out.empty()) out += ", ";
      bool first = true;
      while (!rdn.empty()) {
        asn1::Reader atv = rdn.enter(asn1::kSequence, "AttributeTypeAndValue");
        std::string type = asn1::oid_to_string(atv.expect(asn1::kOid, "attribute type").content);
        for (const auto& s : kShort)
          if (type == s.oid) type = s.name;
        const asn1::Element v = atv.next();
        out += (first ? "" : " + ") + type + "=" + std::string(v.content.begin(), v.content.end());
        first = false;
      }
    }
  } catch (const asn1::DecodeError&) { return "(malformed Name)"; }
  return out;
}

}  // namespace modsign::cms
