// modsign — CMS SignedData (RFC 5652 §5) for module signatures: model, builder, parser,
// verifier.  The builder writes exactly the two forms the kernel's sign-file produces;
// the parser reads those plus RFC 9882's examples (attached or detached, with or without
// signedAttrs).  The kernel-exact parser (BER, kernel errno for every rule) grows from it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::cms {

/// How a SignerInfo names its signer (RFC 5652 §5.3 SignerIdentifier).
enum class SignerIdType {
  issuer_and_serial,  ///< issuerAndSerialNumber; SignerInfo and SignedData version 1
  subject_key_id,     ///< [0] subjectKeyIdentifier; SignerInfo and SignedData version 3
};

/// One SignerInfo as parsed.  All byte fields are copies of the encoded values.
struct SignerInfo {
  int version = 1;
  SignerIdType sid_type = SignerIdType::issuer_and_serial;
  Bytes issuer;  ///< issuer Name TLV (issuer_and_serial)
  Bytes serial;  ///< serialNumber INTEGER contents (issuer_and_serial)
  Bytes skid;    ///< subjectKeyIdentifier contents (subject_key_id)
  Bytes digest_algorithm_oid;
  std::optional<crypto::HashAlgo> digest_algorithm;  ///< nullopt if not a known digest
  /// signedAttrs exactly as received, starting with the [0] IMPLICIT tag 0xA0.
  std::optional<Bytes> signed_attrs;
  std::optional<Bytes> content_type_attr;    ///< contentType attribute value (OID contents)
  std::optional<Bytes> message_digest_attr;  ///< messageDigest attribute value (OCTET STRING contents)
  bool has_signing_time = false;
  bool has_smime_capabilities = false;
  Bytes signature_algorithm_oid;
  bool signature_algorithm_params_null = false;       ///< parameters present and NULL
  std::optional<crypto::KeyAlgo> signature_key_algo;  ///< from signature_algorithm_oid
  Bytes signature;

  /// The kernel's signer key id (kernel-semantics §1.5): serial ‖ issuer Name contents
  /// for version 1, the SKID for version 3.
  Bytes kernel_key_id() const;
  /// The signedAttrs re-tagged as an explicit SET OF (0x31 ‖ received length ‖ contents):
  /// what the signature covers (RFC 5652 §5.4; RFC 9882 §3.3).  Empty if absent.
  Bytes signed_attrs_as_set() const;
};

/// A parsed ContentInfo(SignedData).
struct SignedData {
  int version = 1;
  std::vector<Bytes> digest_algorithm_oids;
  Bytes econtent_type;              ///< eContentType OID contents (id-data for modules)
  std::optional<Bytes> econtent;    ///< attached content (OCTET STRING contents); nullopt if detached
  std::vector<Bytes> certificates;  ///< each certificate's DER
  bool has_crls = false;
  std::vector<SignerInfo> signers;
};

/// Parse DER ContentInfo { id-signedData, [0] SignedData } (RFC 5652 §3, §5.1); with
/// Rules::ber also the lengths the kernel's BER decoder takes (indefinite, non-minimal),
/// as pkcs7_parse_message() reads a module's signature (lib/asn1_decoder.c).
/// Errors: EBADMSG for malformed DER or structure (message says which element),
/// EINVAL for an outer content type other than id-signedData ("Only support
/// pkcs7_signedData type") or SignedData/SignerInfo version other than 1 or 3.
Result<SignedData> parse(ByteView der, asn1::Rules rules = asn1::Rules::der);

/// What to build.
struct BuildOptions {
  crypto::HashAlgo digest = crypto::HashAlgo::sha512;  ///< SignerInfo digestAlgorithm
  bool signed_attrs = false;                           ///< add signedAttrs {contentType id-data, messageDigest}
  SignerIdType sid = SignerIdType::issuer_and_serial;
  crypto::Backend backend = crypto::Backend::automatic;
  /// ML-DSA deterministic (rnd = 0^32, FIPS 204 Alg. 2) and ECDSA RFC 6979 nonces; RSA
  /// PKCS#1 v1.5 is deterministic anyway.
  bool deterministic = false;
};

/// Build a detached ContentInfo(SignedData) over `content` with no certificates and one
/// SignerInfo, byte for byte the structure of kernel sign-file with OpenSSL 3.x:
///   SignedData version 1 (3 with SKID), digestAlgorithms {digest}, encapContentInfo
///   {id-data} without eContent, SignerInfo {version, sid, digestAlgorithm (parameters
///   absent), [signedAttrs {contentType, messageDigest} in DER order], signatureAlgorithm
///   (rsaEncryption + NULL, ecdsa-with-SHAn, id-ml-dsa-* absent), signature}.
/// Without signedAttrs, ML-DSA signs `content` itself and RSA/ECDSA sign H(content);
/// with them, the DER SET OF attributes is signed (RFC 9882 §3.3, RFC 5652 §5.4).
/// Errors: ENOKEY when SKID is requested and the certificate has none; EKEYREJECTED when
/// the key does not match the certificate; EINVAL if signing fails.
Result<Bytes> build_detached(const crypto::PrivateKey& key, const crypto::Certificate& cert, ByteView content,
                             const BuildOptions& opt);

/// Digests of content that is not held in memory: H(content) with BuildOptions::digest
/// (needed with signedAttrs, and for RSA/ECDSA without them), and for ML-DSA without
/// signedAttrs the μ of the content under the signing key (crypto::MlDsaMu).
struct ContentDigests {
  std::optional<Bytes> digest;
  std::optional<Bytes> mu;
};

/// build_detached() for streamed content: the same bytes, with the signature made from
/// `cd` (external μ for ML-DSA without signedAttrs: OpenSSL's "mu" parameter; the result
/// is an ordinary pure ML-DSA signature).  Errors as build_detached(), plus EINVAL when a
/// needed digest is missing.
Result<Bytes> build_detached_prehashed(const crypto::PrivateKey& key, const crypto::Certificate& cert,
                                       const ContentDigests& cd, const BuildOptions& opt);

/// What the key signs for one SignerInfo, for a signer outside this process (the
/// prepare/attach flow): the signature over `to_sign` completes the SignedData that
/// build_detached_prehashed() would make from the same digests.
struct SigningInput {
  enum class Kind {
    mu,            ///< ML-DSA without signedAttrs: to_sign is the 64-byte external μ of the content
    signed_attrs,  ///< ML-DSA with signedAttrs: to_sign is the DER SET, signed pure (ctx "")
    digest,        ///< RSA/ECDSA: to_sign is H(content), or H(SET) with signedAttrs
  };
  Kind kind = Kind::mu;
  Bytes to_sign;
  std::optional<Bytes> attrs_set;  ///< the DER signedAttrs SET OF (RFC 5652 §5.4) when signed
  Bytes mu;                        ///< ML-DSA: μ of what is signed (to_sign itself for Kind::mu); else empty
  Bytes digest_info;  ///< RSA: DER DigestInfo {digestAlgorithm + NULL, to_sign} (RFC 8017 §9.2); else empty
};
/// The SigningInput for `key` (the certificate's public key) and `cd`: H(content) is
/// needed with signedAttrs and for RSA/ECDSA, μ for ML-DSA without signedAttrs.
/// Errors: EINVAL when a needed digest is missing.
Result<SigningInput> signing_input(const crypto::PublicKey& key, const ContentDigests& cd, const BuildOptions& opt);
/// Checks `signature` over `in` with `key` as the kernel will (ML-DSA: μ or the SET, pure;
/// RSA PKCS#1 v1.5 / ECDSA over the digest).  Errors: EBADMSG (ML-DSA signature of the
/// wrong size), EKEYREJECTED (does not verify), EINVAL (digest of the wrong size).
Status check_signature(const crypto::PublicKey& key, const SigningInput& in, crypto::HashAlgo hash, ByteView signature);
/// The SignedData of build_detached_prehashed() around a `signature` made elsewhere over
/// `in.to_sign`, after check_signature().  Errors: ENOKEY (SKID asked for, the certificate
/// has none), and those of check_signature().
Result<Bytes> build_detached_with_signature(const crypto::Certificate& cert, const SigningInput& in, ByteView signature,
                                            const BuildOptions& opt);

/// Successful verification: who signed and how.
struct Verified {
  std::size_t certificate_index = 0;  ///< index into `candidates`
  crypto::KeyAlgo key_algo = crypto::KeyAlgo::rsa;
};

/// Verify the first SignerInfo of `sd` over the detached content (module bytes) or, when
/// `detached_content` is nullopt, over the attached eContent, with the signer found
/// among `candidates` only (never among the message's own certificates) by issuer+serial
/// (kernel id) or SKID.  Follows pkcs7_digest()/pkcs7_verify_one() (crypto/asymmetric_keys/pkcs7_verify.c,
/// kernel 7.0): with signedAttrs, messageDigest must equal H(content) (size mismatch
/// EBADMSG, value mismatch EKEYREJECTED) and the signature covers the SET-retagged
/// attributes; without them, ML-DSA signs the content and RSA/ECDSA H(content).
/// Errors: ENOKEY no candidate matches the signer; EBADMSG no SignerInfo, no content or
/// both detached and attached content (kernel: "non-detached data"), malformed signature,
/// missing contentType/messageDigest attribute, messageDigest of the wrong size; ENOPKG unknown digest or signature
/// algorithm; EKEYREJECTED signature algorithm differs from the key's, or the signature is invalid.
Result<Verified> verify(const SignedData& sd, std::optional<ByteView> detached_content,
                        const std::vector<crypto::Certificate>& candidates,
                        crypto::Backend backend = crypto::Backend::automatic);

}  // namespace modsign::cms
