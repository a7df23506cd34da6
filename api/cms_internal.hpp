// modsign — helpers shared by api/cms_dump.cpp and api/cms_verify.cpp (not installed).
#pragma once

#include <optional>
#include <string>

#include "asn1/der.hpp"
#include "modsign/cms.hpp"

namespace modsign::cms_detail {

/// The DER inside the first "PKCS7" or "CMS" PEM block of `in` (`pem` set), or `in` itself.
/// Throws InputError "<name>: ..." for damaged armour or base64.
Bytes decode_pem_cms(ByteView in, const std::string& name, bool& pem);
/// What `cms dump` and `cms verify` read from a file: the SignedData's DER, and for a signed
/// module (the marker at its end) the content its appended signature covers.
struct CmsInput {
  Bytes der;
  bool pem = false;
  std::optional<Bytes> module_content;  ///< set when `der` was appended to a module
};
/// The SignedData appended to a signed module (the marker at its end: module::split(); its
/// content is never searched), else decode_pem_cms(), else for a file that is no DER an
/// InputError "<name>: ..." naming what the file is (other PEM,
/// an unsigned ELF module, a compressed file: `modsign extract` reads its signature).
CmsInput read_cms_input(ByteView in, const std::string& name);
/// An X.501 Name TLV as "CN=..., O=..." (RDNs in encoded order).
std::string name_text(ByteView name_tlv);
/// The contents of an OCTET STRING, primitive or (BER) constructed.
Bytes octets(const asn1::Element& e, asn1::Rules rules);
/// cms_dump() of DER/BER; throws InputError "<name>: <reason>".
CmsDump dump(ByteView der, const std::string& name);

}  // namespace modsign::cms_detail
