// modsign — signing in two phases, for a private key that this process never holds (a cloud
// KMS, an HSM behind another host, an offline signing machine): prepare_module_file() says
// what the key must sign for a module, the signer signs it elsewhere, and
// attach_signature_file() checks that signature and writes the module exactly as
// sign_module_file() would have.  What is signed follows RFC 5652 §5.4 (signedAttrs),
// RFC 9882 §3 (pure ML-DSA in CMS) and FIPS 204 Algorithm 7 line 6 (the external μ).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "modsign/export.hpp"
#include "modsign/output.hpp"
#include "modsign/result.hpp"
#include "modsign/sign.hpp"

namespace modsign {

/// The X.509 certificate of a signer whose private key is elsewhere.  Copies share the
/// parsed certificate (immutable; usable from several threads at once).
class MODSIGN_API SignerCertificate {
 public:
  /// The first certificate in `cert_path` (PEM CERTIFICATE blocks, or one DER certificate).
  /// Throws IoError "<file>: <reason>" when the file cannot be read; InputError
  /// "<file>: <reason>" when it holds no certificate or a malformed one.
  static SignerCertificate load(const std::string& cert_path);
  /// The certificate `signer` signs with (Signer::certificate_path()).
  static SignerCertificate of(const Signer& signer);
  /// The key's algorithm, as Signer::algorithm(): "RSA", "ECDSA-P256", "ECDSA-P384",
  /// "ML-DSA-44", "ML-DSA-65", "ML-DSA-87".
  std::string algorithm() const;
  /// The file the certificate was read from.
  const std::string& path() const;
  /// SHA-256 of the certificate's DER (32 bytes).
  Bytes sha256() const;

  SignerCertificate(const SignerCertificate&);
  SignerCertificate& operator=(const SignerCertificate&);
  ~SignerCertificate();

  /// The library's side of the handle (opaque to callers).
  struct Impl;

 private:
  friend struct detail::Access;
  explicit SignerCertificate(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

/// What the external signer is given (PreparedModule::to_sign).
enum class ToSign {
  /// ML-DSA without signedAttrs: the 64-byte external μ = SHAKE256(SHAKE256(pk, 64) ‖
  /// 0x00 ‖ 0x00 ‖ M, 64) of the module content M (FIPS 204 Alg. 7 line 6, pure, empty
  /// context).  Sign it with ML-DSA.Sign_internal from μ (OpenSSL "mu" = 1, AWS KMS
  /// MessageType EXTERNAL_MU, Google Cloud KMS digest.external_mu).
  mu,
  /// ML-DSA with signedAttrs: the DER SET OF {contentType, messageDigest} (RFC 5652 §5.4),
  /// signed as a message by pure ML-DSA with an empty context (RFC 9882 §3.3);
  /// PreparedModule::mu is its μ for a signer that takes μ.
  signed_attrs,
  /// RSA and ECDSA: the digest (PreparedModule::hash) of the content, or of the DER
  /// signedAttrs SET with signedAttrs; sign it as a precomputed digest (RSA PKCS#1 v1.5
  /// over PreparedModule::digest_info, ECDSA over the digest).
  digest,
};
/// "mu", "signed-attrs", "digest".
MODSIGN_API std::string_view to_sign_name(ToSign t);

/// One module prepared for signing elsewhere: how it was read, the form of its SignerInfo,
/// and what to sign.  attach_signature_file() takes it back (a caller may store it, e.g.
/// as one JSON line of a manifest, and rebuild it).
struct PreparedModule {
  std::string path;          ///< the module file as named
  std::uint64_t size = 0;    ///< bytes of the file as stored (compressed, if it is)
  Bytes sha256;              ///< SHA-256 of the file as stored (32 bytes)
  std::string compression;   ///< "xz", "zstd" or "gzip" for a compressed file, else ""
  std::string certificate;   ///< SignerCertificate::path()
  Bytes certificate_sha256;  ///< SignerCertificate::sha256()
  std::string algorithm;     ///< SignerCertificate::algorithm()
  // The SignOptions of the signature, recorded so that attach makes the same SignedData:
  std::string hash;           ///< digestAlgorithm name, e.g. "sha512"
  bool signed_attrs = false;  ///< SignOptions::signed_attrs
  bool skid = false;          ///< SignOptions::skid
  bool replace = false;       ///< SignOptions::replace
  bool recompress = false;    ///< SignOptions::recompress
  ToSign kind = ToSign::mu;
  Bytes to_sign;           ///< mu: 64 bytes; signed_attrs: the DER SET; digest: the digest
  Bytes mu;                ///< ML-DSA: μ of what is signed (= to_sign for ToSign::mu); else empty
  Bytes digest_info;       ///< RSA: DER DigestInfo {digestAlgorithm, NULL, to_sign} (RFC 8017 §9.2); else empty
  Bytes signed_attrs_der;  ///< with signedAttrs: the DER SET the signature covers; else empty
};

/// check_sign_options() for a signer known by its certificate alone: throws SignError
/// unknown_hash, mldsa_signed_attrs_hash, no_skid ("<path()>: certificate has no
/// subjectKeyIdentifier"), or UsageError for an unknown backend name.
MODSIGN_API void check_sign_options(const SignerCertificate& cert, const SignOptions& options);

/// Reads the module at `path` as sign_module_file() does (decompressed when compressed, an
/// old signature stripped with `options.replace`) and returns what the key of `cert` must
/// sign for it with `options` (hash, signed_attrs, skid, replace, recompress, max_size;
/// p7s_only admits a compressed module without recompress, as in sign_module_file()).
/// Nothing is written.  An uncompressed regular file larger than options.stream_above is
/// read once in 1 MiB pieces (constant memory); any other is read whole (at most
/// max(max_size, 1 GiB) bytes).
/// Throws as sign_module_file() does for the module and the options (IoError, SignError
/// unknown_hash, mldsa_signed_attrs_hash, no_skid, already_signed, compressed, other;
/// InputError for an empty or PEM file).
MODSIGN_API PreparedModule prepare_module_file(const SignerCertificate& cert, const std::string& path,
                                               const SignOptions& options = {});

/// Cross-checks the values `prepared` records (e.g. a manifest line read back) against
/// each other, `cert` and the module file's first bytes, so that an edited record is
/// refused before any module is written.  Throws InputError "<path>: \"<field>\" <why>
/// (edited since prepare)" for the field:
///  - "algorithm" not cert.algorithm() ("is RSA, the certificate's key is ML-DSA-65");
///  - "to_sign_type" other than "digest" for an RSA or ECDSA key;
///  - "form" implying another to_sign_type than the recorded one (ML-DSA: "mu" without
///    signedAttrs, "signed-attrs" with them), or, for a digest, signedAttrs without
///    signed_attrs_der (or no signedAttrs with it);
///  - "hash" not a digest name, or (to_sign_type digest) of another size than to_sign;
///  - "to_sign" of the wrong size for to_sign_type mu (64 bytes);
///  - "keyid" true for a certificate without subjectKeyIdentifier;
///  - "compression" other than the module file's format ("is xz, the module is not
///    compressed"; "is null, the module is zstd-compressed");
///  - "recompress" true for a module that is not compressed.
/// IoError when the module cannot be read.  A "keyid", "replace" or ML-DSA "hash" flipped
/// to another valid value leaves nothing to check it against; the signature check of
/// attach_signature_file() covers everything to_sign covers.
MODSIGN_API void check_prepared(const SignerCertificate& cert, const PreparedModule& prepared);

/// check_prepared(), then, for a module file that still has prepared.size bytes and
/// prepared.sha256, everything prepare_module_file() gives for it with the recorded hash,
/// signed_attrs, keyid, replace and recompress (and `options`' max_size, stream_above,
/// p7s_only, backend) compared with `prepared`, so that a manifest of several modules is
/// refused before any is written (the module is read once more).  Throws InputError
/// "<path>: \"<field>\" <why> (edited since prepare)" for the fields of check_prepared()
/// and: "hash" that prepare refuses for this module or writes under another name;
/// "keyid" true without a subjectKeyIdentifier; "replace" false for a signed module;
/// "recompress" false for a compressed module (without p7s_only); "to_sign",
/// "signed_attrs_der", "mu" or "digest_info" other than the module's (e.g. an RSA "hash"
/// edited from sha512 to sha3-512).  A module whose size or SHA-256 changed is not refused
/// here: attach_signature_file() tells "already attached" from "changed since prepare".
/// IoError when the module cannot be read.
MODSIGN_API void recheck_prepared(const SignerCertificate& cert, const PreparedModule& prepared,
                                  const SignOptions& options = {});

/// Completes `prepared` with `signature` (ML-DSA: the FIPS 204 signature, 2420/3309/4627
/// bytes; RSA: the PKCS#1 v1.5 signature block; ECDSA: DER Ecdsa-Sig-Value), made over
/// prepared.to_sign by the key of `cert`.  In order, before anything is written: the
/// certificate must be the prepared one (SHA-256), the module file must be unchanged
/// (size, then SHA-256), the to_sign recomputed from it must equal prepared.to_sign, and
/// the signature must verify with the certificate's key as the kernel checks it.  Then the
/// SignedData and the module are assembled and written as sign_module_file() writes them
/// (same bytes: identical for RSA and for deterministic ML-DSA/ECDSA signatures), using
/// `output`'s out, p7s, p7s_only, p7s_out and max_size (its other fields are taken from
/// `prepared`).  An uncompressed file larger than output.stream_above is streamed (1 MiB
/// pieces: one pass to check it, one to copy it while hashing it again; SignReport::
/// streamed and external_mu set as sign_module_file() sets them); others are read whole.
/// check_prepared() runs first.  A module that no longer matches prepare but already
/// carries exactly the SignedData `signature` makes for it (an attach run again after a
/// partial failure: its signatures stripped, the rest has prepared.to_sign, and its
/// outermost SignedData is the one built now) is left as it is: SignReport::
/// already_attached, nothing written (read whole, up to max(max_size, 1 GiB)).
/// Throws InputError "<cert>: not the certificate the module was prepared with (SHA-256
/// differs)", "<path>: changed since prepare (N bytes, prepared with M)", "<path>: changed
/// since prepare (SHA-256 differs)", "<path>: to_sign differs from the module's (the
/// prepared data was altered)"; SignError(SignRefusal::signature_mismatch) "<path>:
/// signature does not verify with <cert>", or with ": <reason>" when it is not the
/// verification itself that fails (e.g. "ML-DSA signature is 100 bytes, ML-DSA-65 needs
/// 3309"); and as sign_module_file()
/// (IoError, SignError); a streamed file that changes between its two passes: "<path>:
/// changed while being written".  On a throw no output is touched.  The outputs are put in
/// place as `route` says, as sign_module_file().
MODSIGN_API SignReport attach_signature_file(const SignerCertificate& cert, const PreparedModule& prepared,
                                             ByteView signature, const SignOptions& output = {},
                                             const OutputRoute& route = {});

}  // namespace modsign
