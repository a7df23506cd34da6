// modsign — any CMS SignedData, not only a module's: a field-by-field dump with byte
// offsets, and verification as RFC 5652 §5.4/§5.6 and RFC 9882 define it (optionally
// also as a given kernel would, through the kernel mirror of cms/pkcs7_*).
//
// The dump reads with the generic DER reader of asn1/ (falling back to its BER rules for
// indefinite lengths), not with the kernel mirror (cms/pkcs7_parser), because the mirror
// refuses what RFC 5652 allows and a dump must still show: SignedData/SignerInfo versions
// other than 1 and 3, eContentTypes other than id-data, digest and signature algorithms
// the kernel does not know (SHAKE256, HashML-DSA, composite), CRLs, unsignedAttrs, and
// certificates with any public key.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/profile.hpp"
#include "modsign/result.hpp"

namespace modsign {

/// Where one TLV sits in the DER (after PEM armour is removed): `offset` of its identifier
/// octet from the start of the DER, `length` of the whole TLV (identifier, length and
/// contents octets; for an indefinite length also the end-of-contents octets), in bytes.
struct CmsTlv {
  std::size_t offset = 0;
  std::size_t length = 0;
};

/// An AlgorithmIdentifier or any OID: its name ("sha256", "id-ml-dsa-65",
/// "ecdsa-with-SHA256", "HashML-DSA-65-with-SHA512", "composite ML-DSA ..."; "" when modsign
/// knows no name), dotted OID, whether parameters are present and whether they are NULL.
struct CmsAlgorithm {
  std::string name;
  std::string oid;
  bool parameters = false;
  bool parameters_null = false;
  CmsTlv at;
};

/// One certificate of SignedData.certificates (X.509, RFC 5280 §4.1).
struct CmsCertificate {
  std::string subject;  ///< "CN=..., O=..." (RDNs in encoded order; unknown types as dotted OIDs)
  std::string issuer;
  Bytes serial;                       ///< serialNumber INTEGER contents octets
  std::optional<Bytes> skid;          ///< subjectKeyIdentifier extension contents
  CmsAlgorithm public_key_algorithm;  ///< subjectPublicKeyInfo.algorithm
  CmsTlv at;
};

/// One Attribute (RFC 5652 §5.3): type by name and OID, and each value as text:
/// contentType the OID's name and dotted form ("data (1.2.840.113549.1.7.1)"), messageDigest
/// lower-case hex, signingTime "YYYY-MM-DDTHH:MM:SSZ", smimeCapabilities one entry per
/// capability (name and OID), any other value the hex of its whole TLV.
struct CmsAttribute {
  std::string name;
  std::string oid;
  std::vector<std::string> values;
  CmsTlv at;
};

/// One SignerInfo (RFC 5652 §5.3).
struct CmsSignerInfo {
  int version = 0;
  bool sid_is_skid = false;  ///< sid is [0] subjectKeyIdentifier (else issuerAndSerialNumber)
  std::string sid_issuer;    ///< issuerAndSerialNumber.issuer as text
  Bytes sid_serial;          ///< issuerAndSerialNumber.serialNumber contents
  Bytes sid_skid;            ///< subjectKeyIdentifier
  CmsTlv sid_at;             ///< the sid element
  CmsAlgorithm digest_algorithm;
  std::optional<CmsTlv> signed_attrs_at;  ///< the [0] signedAttrs element; nullopt if absent
  std::vector<CmsAttribute> signed_attrs;
  std::optional<Bytes> content_type;        ///< contentType value (OID contents octets)
  std::optional<Bytes> message_digest;      ///< messageDigest value
  std::optional<std::string> signing_time;  ///< "YYYY-MM-DDTHH:MM:SSZ"
  CmsAlgorithm signature_algorithm;
  std::size_t signature_length = 0;  ///< bytes of the signature OCTET STRING contents
  CmsTlv signature_at;
  std::vector<CmsAttribute> unsigned_attrs;
  CmsTlv at;
};

/// A ContentInfo(SignedData) field by field (RFC 5652 §3, §5.1, §5.2).
struct CmsDump {
  bool pem = false;  ///< the input was PEM ("PKCS7" or "CMS" armour)
  /// The input was a signed module: this is the SignedData appended to it (its trailer read
  /// as mod_check_sig does; offsets count from the SignedData's first byte).
  bool module_signature = false;
  std::size_t der_size = 0;  ///< bytes of DER (of BER when `ber`)
  /// The encoding is BER, not DER: lengths only a BER decoder takes (indefinite, as
  /// `openssl cms -stream` writes, or non-minimal), which the kernel's decoder reads too.
  bool ber = false;
  CmsAlgorithm content_type;  ///< ContentInfo.contentType (signedData)
  int version = 0;            ///< SignedData.version
  CmsTlv signed_data_at;
  std::vector<CmsAlgorithm> digest_algorithms;
  CmsAlgorithm econtent_type;
  bool econtent = false;            ///< eContent present (attached)
  std::size_t econtent_length = 0;  ///< bytes of eContent (the OCTET STRING contents)
  std::optional<CmsTlv> econtent_at;
  std::vector<CmsCertificate> certificates;
  std::size_t crls = 0;  ///< number of RevocationInfoChoices
  std::vector<CmsSignerInfo> signers;
};

/// Dump `pem_or_der`, named `name` in messages.  PEM is recognised by "-----BEGIN PKCS7-----"
/// or "-----BEGIN CMS-----" (the first such block is used); a signed module (ending with
/// "~Module signature appended~\n") by its marker: the SignedData appended to it is dumped.
/// Throws InputError "<name>: <what>" for bad armour or base64, other PEM ("<name>: PEM without
/// a PKCS7 or CMS block (it begins -----BEGIN PRIVATE KEY-----)"), a module whose trailer
/// cannot be read ("<name>: signed module whose signature cannot be read: <reason>"), an
/// unsigned ELF file ("<name>: an ELF file without an appended module signature: no
/// SignedData to read"), a compressed file ("<name>: xz-compressed file, not a SignedData:
/// for a compressed module, `modsign extract` writes its signature as a .p7s file"), a
/// ContentInfo that is not signedData,
/// malformed DER/BER ("<name>: SignerInfo: expected tag 0x30, found 0x04"), or bytes
/// after the ContentInfo.
MODSIGN_API CmsDump cms_dump(ByteView pem_or_der, const std::string& name);
/// The same for a file of at most kMaxModuleSize bytes.  Throws IoError if unreadable.
MODSIGN_API CmsDump cms_dump_file(const std::string& path);

/// Name of an OID given in dotted form ("2.16.840.1.101.3.4.2.3" -> "sha512"); "" if unknown.
MODSIGN_API std::string cms_oid_name(const std::string& dotted);

/// What to verify a SignedData with.
struct CmsVerifyOptions {
  /// The signed content for a detached SignedData (must be absent for an attached one).
  std::optional<std::string> content;
  /// Trusted certificates (PEM bundles, DER files or directories, as TrustSources::keyrings).
  /// When empty, the message's own certificates are used and a note says so.
  std::vector<std::string> certificates;
  /// Also answer as this kernel would (verify_pkcs7_signature, usage module signature,
  /// the certificates above as its trusted keyring).
  std::optional<KernelProfile> kernel;
};

/// The RFC verdict for one SignerInfo.
struct CmsSignerVerdict {
  bool verified = false;
  std::string reason;     ///< "" when verified, else why not ("messageDigest differs from H(content)")
  std::string signer;     ///< subject of the certificate found by sid ("" if none)
  std::string algorithm;  ///< "ML-DSA-65", "RSA", "ECDSA-P256" (the certificate's key)
  bool signed_attrs = false;
};

/// Result of cms_verify_file().
struct CmsVerification {
  bool verified = false;  ///< every SignerInfo verified (and there is at least one)
  std::vector<CmsSignerVerdict> signers;
  bool detached = false;
  /// `path` was a signed module: its appended SignedData was verified, over the module's
  /// content unless CmsVerifyOptions::content names another file.
  bool module_signature = false;
  /// With CmsVerifyOptions::kernel: the kernel's errno (KErr::none = accepted) and reason.
  std::optional<KErr> kernel_errno;
  std::string kernel_reason;
  std::vector<std::string> notes;
};

/// Verify the SignedData in `path` (PEM or DER, or the one appended to a signed module, over
/// the module's content: cms_dump()'s input rules) as RFC 5652 §5.4/§5.6 and RFC 9882 §3
/// define it, for every SignerInfo: the signer's certificate is found by sid
/// (issuerAndSerialNumber or subjectKeyIdentifier) among the trusted certificates (no chain
/// is built: a certificate given is trusted); with signedAttrs, contentType must equal
/// eContentType and messageDigest H(content) (digestAlgorithm: SHA-2, SHA-3 or SHAKE256
/// with 64 bytes of output, RFC 9882 §3.3), and the signature covers the DER SET OF
/// signedAttrs; without them it covers the content.  RSA PKCS#1 v1.5 (rsaEncryption or
/// sha*WithRSAEncryption), ECDSA (ecdsa-with-SHA*) and pure ML-DSA-44/65/87 are checked;
/// HashML-DSA, composite ML-DSA and RSASSA-PSS signers are named and refused as unsupported
/// (not verified).  Throws UsageError for a detached SignedData without `content` (a module's
/// own content stands in) or an attached one with it; InputError "<file>: <what>" for malformed input or certificate
/// files; IoError if a file is unreadable.
MODSIGN_API CmsVerification cms_verify_file(const std::string& path, const CmsVerifyOptions& options);

}  // namespace modsign
