// modsign — signing a kernel module with an appended PKCS#7 signature, as the kernel's
// scripts/sign-file does (a detached CMS SignedData, struct module_signature, the
// "~Module signature appended~\n" marker; kernel/module_signature.c, Linux 7.2.13).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "modsign/export.hpp"
#include "modsign/result.hpp"

namespace modsign {

/// A private key and the X.509 certificate that holds its public half.  Copies share the
/// loaded key (immutable; usable from several threads at once).
class MODSIGN_API Signer {
 public:
  /// Load the private key from `key_path` (PEM: PKCS#8, encrypted PKCS#8, traditional
  /// RSA/EC, the first key block of a file that may also hold certificates; or DER
  /// PKCS#8; ML-DSA in any RFC 9881 §6 form) and the certificate from `cert_path`, or from
  /// the key file itself when `cert_path` is empty (PEM CERTIFICATE blocks, or one DER
  /// certificate).  Of several certificates the one whose public key equals the key's is
  /// used.  An encrypted key takes its passphrase from the environment variable
  /// KBUILD_SIGN_PIN, as sign-file does; there is no prompt.
  /// Keys: RSA 2048..4096, ECDSA P-256/P-384, ML-DSA-44/65/87.
  /// Throws IoError when a file cannot be read; InputError "<file>: <reason>" when the key
  /// file holds no usable or decryptable key, the certificate file holds no certificate,
  /// or no certificate matches the key.
  static Signer load(const std::string& key_path, const std::string& cert_path = "");

  /// The key's algorithm: "RSA", "ECDSA-P256", "ECDSA-P384", "ML-DSA-44", "ML-DSA-65",
  /// "ML-DSA-87".
  std::string algorithm() const;
  /// The file the certificate was taken from (`cert_path`, or `key_path` when that was
  /// empty); TrustStore::from_certificates() accepts it.
  const std::string& certificate_path() const;

  Signer(const Signer&);
  Signer& operator=(const Signer&);
  ~Signer();

  /// The library's side of the handle (opaque to callers).
  struct Impl;
  const Impl& impl() const noexcept { return *impl_; }
  explicit Signer(std::shared_ptr<const Impl> impl);

 private:
  std::shared_ptr<const Impl> impl_;
};

/// How sign_module_file() signs.
struct SignOptions {
  /// SignerInfo digestAlgorithm: "sha1", "sha224", "sha256", "sha384", "sha512",
  /// "sha3-256", "sha3-384" or "sha3-512".  ML-DSA with signed_attrs needs "sha512"
  /// (crypto/asymmetric_keys/public_key.c refuses any other digest there).
  std::string hash = "sha512";
  /// Add signedAttrs {contentType id-data, messageDigest} (RFC 5652 §5.4; for ML-DSA
  /// RFC 9882 §3.3).  Without them ML-DSA signs the module bytes themselves.
  bool signed_attrs = false;
  /// Identify the signer by subjectKeyIdentifier (SignerInfo version 3) instead of
  /// issuerAndSerialNumber (version 1); the certificate must carry one.
  bool skid = false;
  /// Strip an existing appended signature and sign again; without it an already signed
  /// module is refused (InputError).
  bool replace = false;
  /// Write the signed module here instead of replacing `path` ("" = in place).
  std::string out;
};

/// What sign_module_file() wrote.
struct SignReport {
  std::string path;       ///< the file written (SignOptions::out, or the input path)
  std::string algorithm;  ///< Signer::algorithm(), e.g. "ML-DSA-65"
  std::string hash;       ///< the digest name, e.g. "sha512"
  bool signed_attrs = false;
  std::size_t cms_size = 0;  ///< bytes of the DER ContentInfo(SignedData) appended
};

/// Sign the uncompressed module at `path`: the file is read whole (at most 1 GiB), a
/// detached SignedData over it is built (no certificates inside, one SignerInfo, byte for
/// byte sign-file's structure with OpenSSL 3.x), then module ‖ SignedData ‖
/// struct module_signature (12 bytes, id_type PKEY_ID_PKCS7, sig_len big-endian) ‖
/// "~Module signature appended~\n" replaces the output file atomically (a temporary file
/// in the same directory, fsync, rename; mode kept when replacing in place).
/// Throws IoError when the module cannot be read or the output written; InputError
/// "<path>: <reason>" for a compressed module (the kernel checks the signature inside the
/// decompressed image: decompress, sign, recompress), an already signed module without
/// `replace` (or one whose signature cannot be stripped), an unknown `hash`, ML-DSA with
/// signed_attrs and a hash other than sha512, `skid` with a certificate that has no
/// subjectKeyIdentifier, or a signing failure.  On a throw the output file is untouched.
MODSIGN_API SignReport sign_module_file(const Signer& signer, const std::string& path, const SignOptions& options = {});

}  // namespace modsign
