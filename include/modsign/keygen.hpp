// modsign — a new module signing key and its self-signed certificate, as certs/Makefile
// makes signing_key.pem (certs/default_x509.genkey, Linux 7.2.13).
#pragma once

#include <string>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/result.hpp"

namespace modsign {

/// What generate_key() makes and where it writes.
struct KeygenOptions {
  /// "ml-dsa-44", "ml-dsa-65", "ml-dsa-87" (seed form, RFC 9881 §6), "rsa-2048",
  /// "rsa-3072", "rsa-4096", "ecdsa-p256", "ecdsa-p384" (any case).
  std::string algorithm = "ml-dsa-65";
  /// Subject and issuer DN, e.g. "CN=Build key,O=Example".
  std::string subject = "CN=modsign module signing key";
  /// Validity from now, in days: 1..3000000.
  int days = 36500;
  /// The private key (PKCS#8 PEM, mode 0600), followed by the certificate (PEM) unless
  /// cert_out is set.
  std::string out;
  /// The certificate alone (PEM, mode 0644), written before the key; "" = in `out`.
  std::string cert_out;
  /// Replace `out` and `cert_out` when they exist (each atomically, as before); false refuses
  /// any existing file there (a key, a certificate, a module, or a symbolic link to one)
  /// with KeygenRefusal::exists.  `modsign keygen` sets it only with --force.
  bool replace_existing = true;
};

/// What generate_key() wrote.
struct KeygenReport {
  std::string key_path;   ///< KeygenOptions::out
  std::string cert_path;  ///< cert_out, or out when the certificate is in the key file
  std::string algorithm;  ///< "ML-DSA-65", "RSA-4096", "ECDSA-P256", ...
  std::string subject;    ///< the certificate's subject as text (e.g. "CN = modsign module signing key", as OpenSSL
                          ///< prints a name)
  std::string serial;     ///< its serialNumber as colon hex ("5A:...")
  std::vector<std::string> files_written;  ///< in order: cert_out (if set), out
};

/// Why generate_key() refused its options (KeygenError::reason()).
enum class KeygenRefusal {
  unknown_algorithm,  ///< KeygenOptions::algorithm is none of the names above
  days,               ///< days outside 1..3000000
  same_file,          ///< out and cert_out name the same file (also by another spelling or a link)
  exists,             ///< out or cert_out exists and replace_existing is false
  certificate,        ///< the certificate cannot be made (e.g. a malformed subject)
};
/// UsageError with its KeygenRefusal.
class MODSIGN_API KeygenError : public UsageError {
 public:
  KeygenError(KeygenRefusal reason, const std::string& what) : UsageError(what), reason_(reason) {}
  KeygenRefusal reason() const noexcept { return reason_; }

 private:
  KeygenRefusal reason_;
};

/// Generate a key and a self-signed certificate (X.509 v3, random positive 20-byte serial,
/// subject = issuer, validity now .. now + days, basicConstraints critical CA:FALSE,
/// keyUsage digitalSignature, subjectKeyIdentifier, authorityKeyIdentifier; signed with
/// SHA-256 for RSA and P-256, SHA-384 for P-384, pure ML-DSA) and
/// write them with write-then-rename (files are new: modes 0600 and 0644 as above,
/// whatever the old file had).  The key bytes are cleansed from memory after writing.
/// Throws KeygenError: "unknown algorithm 'X' (ml-dsa-44|ml-dsa-65|ml-dsa-87|rsa-2048|
/// rsa-3072|rsa-4096|ecdsa-p256|ecdsa-p384)", "days must be between 1 and 3000000", "out
/// and cert_out name the same file", "<path>: exists; refusing to overwrite it" (reason
/// exists, checked before a key is made), or the certificate's reason; InputError
/// "<out>: <reason>" when the key cannot be encoded; IoError when a file cannot be written
/// (a failure writing the key leaves the certificate written; none leaves a key without
/// its certificate).
MODSIGN_API KeygenReport generate_key(const KeygenOptions& options);

}  // namespace modsign
