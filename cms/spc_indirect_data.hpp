// modsign — Authenticode signatures: the PKCS#7 SignedData of a WIN_CERTIFICATE and the
// SpcIndirectDataContent it signs (Microsoft "Windows Authenticode Portable Executable
// Signature Format", Authenticode-Specific Structures: SpcIndirectDataContent,
// SpcAttributeTypeAndOptionalValue, DigestInfo).
#pragma once

#include <optional>
#include <string>

#include "cms/signed_data.hpp"
#include "common/result.hpp"
#include "crypto/algorithms.hpp"

namespace modsign::cms {

/// OID contents of SPC_INDIRECT_DATA_OBJID (1.3.6.1.4.1.311.2.1.4).
inline constexpr std::uint8_t kOidSpcIndirectData[] = {0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x01, 0x04};
/// OID contents of SPC_PE_IMAGE_DATAOBJ (1.3.6.1.4.1.311.2.1.15), the data type of a PE image.
inline constexpr std::uint8_t kOidSpcPeImageData[] = {0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x01, 0x0f};

/// One parsed Authenticode signature.
struct AuthenticodeSignedData {
  /// The SignedData as cms::parse() reads it; `econtent` holds the SpcIndirectDataContent
  /// TLV (the SEQUENCE, tag 0x30 first).
  SignedData signed_data;
  Bytes data_type;                                   ///< SpcAttributeTypeAndOptionalValue type (OID contents)
  Bytes digest_algorithm_oid;                        ///< messageDigest DigestInfo digestAlgorithm (OID contents)
  std::optional<crypto::HashAlgo> digest_algorithm;  ///< nullopt: not a digest modsign knows
  Bytes digest;                                      ///< messageDigest DigestInfo digest (OCTET STRING contents)
};

/// Parse the bCertificate of a WIN_CERT_TYPE_PKCS_SIGNED_DATA entry: one DER ContentInfo
/// (anything after its end, the zero padding some signers put inside dwLength, is
/// ignored) holding a SignedData whose eContentType is SPC_INDIRECT_DATA_OBJID.
/// Authenticode encodes the content as in PKCS#7 v1.5 (RFC 2315 §7: [0] EXPLICIT
/// SpcIndirectDataContent, no OCTET STRING around it); it is read as such and handed to
/// cms::parse() in the RFC 5652 form (the same content inside an OCTET STRING).
/// Errors: EBADMSG "malformed Authenticode PKCS#7: <element>: <reason>" for malformed DER,
/// "eContentType is <oid>, not SPC_INDIRECT_DATA_OBJID (1.3.6.1.4.1.311.2.1.4)",
/// "no SpcIndirectDataContent (detached content)"; cms::parse()'s errors (EBADMSG,
/// EINVAL) as it reports them.
Result<AuthenticodeSignedData> parse_authenticode(ByteView pkcs7);

/// One-line text of an X.501 Name TLV in encoded order, "C=US, O=Example, CN=Signer" (the
/// attributes `openssl x509 -nameopt oneline` abbreviates: C, ST, L, O, OU, CN, emailAddress,
/// serialNumber, DC, UID; any other type by its dotted OID), values copied as encoded;
/// multi-valued RDNs joined with " + ".  "(malformed Name)" if it does not decode.
std::string name_text(ByteView name_tlv);

}  // namespace modsign::cms
