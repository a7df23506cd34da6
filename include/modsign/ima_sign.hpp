// modsign — IMA file signatures: making the security.ima value the kernel appraises
// (type 0x03 EVM_IMA_XATTR_DIGSIG, struct signature_v2_hdr version 2 or 3, the raw
// signature), setting and reading it, and predicting what an enforcing
// "appraise func=FILE_CHECK appraise_type=imasig|sigv3" rule does with a file carrying it.
// Mirrors security/integrity/digsig.c integrity_digsig_verify, digsig_asymmetric.c
// asymmetric_verify and asymmetric_verify_v3, ima/ima_appraise.c xattr_verify,
// ima_check_blacklist and ima_appraise_measurement, ima/ima_policy.c (appraise_type),
// Linux 7.2.13; the value layout is what evmctl (ima-evm-utils) writes.
//
// Value layout (sizes in bytes):
//   0      type       0x03
//   1      version    2: the signature is over the file digest; 3: over struct
//                     ima_file_id = 0x03 ‖ hash_algo ‖ digest (34/50/66 bytes for
//                     SHA-256/384/512), RSA/ECDSA over its hash, ML-DSA over the bytes
//                     themselves (pure ML-DSA, empty context)
//   2      hash_algo  enum hash_algo (include/uapi/linux/hash_info.h): 2 sha1, 4 sha256,
//                     5 sha384, 6 sha512, 7 sha224, 20-22 sha3-256/384/512
//   3..6   keyid      big-endian: the last 4 bytes of the certificate's SKID
//   7..8   sig_size   big-endian: the bytes that follow
//   9..    signature  RSA PKCS#1 v1.5 (modulus size), ECDSA DER Ecdsa-Sig-Value (P-256:
//                     70-72, P-384: 102-104), ML-DSA-44/65/87 2,420 / 3,309 / 4,627
// Totals for ML-DSA-44/65/87: 2,429 / 3,318 / 4,636 bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "modsign/export.hpp"
#include "modsign/ima_types.hpp"
#include "modsign/output.hpp"
#include "modsign/profile.hpp"
#include "modsign/result.hpp"
#include "modsign/sign.hpp"
#include "modsign/trust.hpp"

namespace modsign {

// ---- signing ------------------------------------------------------------------------------

/// How ima_sign_file() signs.
struct ImaSignOptions {
  /// The file hash: "sha1", "sha224", "sha256", "sha384", "sha512", "sha3-256",
  /// "sha3-384" or "sha3-512" (any case; the kernel names of enum hash_algo).
  std::string hash = "sha256";
  /// RSA/ECDSA: version 3 (appraised from Linux 7.1; what appraise_type=sigv3 requires)
  /// instead of version 2 (every kernel).  ML-DSA keys always make version 3 (the kernel
  /// verifies ML-DSA only there, from 7.2), whatever this says.
  bool v3 = false;
  /// The header's key id instead of ima_keyid(signer) (evmctl --keyid).
  std::optional<std::uint32_t> keyid;
  /// Reproducible values: ECDSA with RFC 6979 nonces, ML-DSA in the FIPS 204 deterministic
  /// variant (RSA PKCS#1 v1.5 always is).  As SignOptions::deterministic.
  bool deterministic = false;
  /// As SignOptions::expect_file: the file a walk of -r DIR (or a batch) found at the path.
  std::optional<WalkedFile> expect_file;
  /// The ML-DSA signing library, as SignOptions::backend: "auto" (Botan for a key with its
  /// seed, else OpenSSL), "openssl" or "botan" (SignError backend_needs_seed "<key>: the
  /// botan backend needs an ML-DSA key with its seed ..." for a key without, from
  /// check_ima_sign_options()).  Unknown: UsageError.
  std::string backend = "auto";
};

/// A security.ima value made by ima_sign_file() / ima_sign_digest().
struct ImaSignature {
  Bytes value;                  ///< the whole xattr value (header ‖ signature)
  ImaSignatureHeader header;    ///< its header, decoded
  std::string algorithm;        ///< Signer::algorithm(): "RSA", "ECDSA-P384", "ML-DSA-65" ...
  std::string hash;             ///< kernel name of the file hash: "sha256"
  Bytes file_digest;            ///< the file's digest under `hash`
  Bytes file_sha256;            ///< the file's SHA-256 (for manifests); empty from ima_sign_digest()
  std::uint64_t file_size = 0;  ///< bytes of the file; 0 from ima_sign_digest()
};

/// The key id request_asymmetric_key() ("id:%08x") finds the signer's certificate by: the
/// last 4 bytes of its subjectKeyIdentifier; without one, the last 4 bytes of serial ‖
/// issuer, the kernel's other key id (asymmetric_key_cmp_partial,
/// crypto/asymmetric_keys/asymmetric_type.c, Linux 7.2.13).
MODSIGN_API std::uint32_t ima_keyid(const Signer& signer);

/// Checks `options` against `signer` before any file is read: throws UsageError "unknown
/// hash 'X' (sha1, sha224, sha256, sha384, sha512, sha3-256, sha3-384, sha3-512)";
/// InputError "<key>: deterministic ECDSA (RFC 6979) is not available for a key on a
/// PKCS#11 token: its signer chooses the nonce".
MODSIGN_API void check_ima_sign_options(const Signer& signer, const ImaSignOptions& options);

/// The security.ima value for a file whose digest under options.hash is `digest`.
/// Throws as check_ima_sign_options(); InputError "digest of N bytes, sha256 has 32" for a
/// digest of the wrong size, "<key>: <reason>" when signing fails.
MODSIGN_API ImaSignature ima_sign_digest(const Signer& signer, ByteView digest, const ImaSignOptions& options = {});

/// The security.ima value for the regular file at `path`, read once in 1 MiB pieces (any
/// size).  Throws IoError "<path>: <reason>" (unreadable, not a regular file); otherwise as
/// ima_sign_digest().  Writes nothing: see write_security_ima().
MODSIGN_API ImaSignature ima_sign_file(const Signer& signer, const std::string& path,
                                       const ImaSignOptions& options = {});

// ---- the extended attribute ----------------------------------------------------------------

/// Set the extended attribute `name` (default "security.ima"; "user.ima" where security.*
/// is not settable, as evmctl --xattr-user) of `path` to `value` with setxattr(2), which
/// replaces the value atomically.  Symbolic links are followed.  Throws IoError naming the
/// file and the reason: "<path>: setxattr security.ima: the file system does not support
/// security.* extended attributes (EOPNOTSUPP)", "...: a value of N bytes does not fit
/// (E2BIG)" / "(ENOSPC)", "...: permission denied (EPERM)", else strerror and the errno name.
MODSIGN_API void write_security_ima(const std::string& path, ByteView value, const std::string& name = "security.ima");

/// ima_sign_file() and write_security_ima() on one open file, locked (flock, as every
/// modsign writer) from the hash to the xattr: the value set is the signature of the bytes
/// the file holds when it is set.  A file written meanwhile (size or modification time
/// changed) is refused, IoError "<path>: changed while being read (another process wrote
/// it); not signed" before anything is set, or, when the write came between the hash and
/// the xattr, "<path>: changed while being signed (another process wrote it); security.ima
/// put back as it was" ("... not set" when it had none): the old value is restored.
/// options.expect_file as SignOptions::expect_file.  Throws as ima_sign_file() and
/// write_security_ima().
MODSIGN_API ImaSignature ima_sign_file_xattr(const Signer& signer, const std::string& path,
                                             const std::string& name = "security.ima",
                                             const ImaSignOptions& options = {});

/// ima_sign_file() and the value written to `path`.sig (evmctl's sigfile, as write_file_atomic()
/// writes: atomic, owner, group, mode and extended attributes of an old one kept) in the
/// directory of the file that was read, opened once with it: never through a path that
/// leads elsewhere by then (a walked entry: options.expect_file), put in place as `route`
/// says (output.hpp: by default before the call returns).  Before anything is hashed, `path`.sig is
/// refused (as refuse_output_over(), checked in that directory) when it is the input, the
/// signer's key, certificate or PIN file, or holds a key or certificate.  Throws as
/// ima_sign_file() and IoError "<path>.sig: <reason>".
MODSIGN_API ImaSignature ima_sign_file_sigfile(const Signer& signer, const std::string& path,
                                               const ImaSignOptions& options = {}, const OutputRoute& route = {});

/// The value of extended attribute `name` of `path`; nullopt when the file has none
/// (ENODATA) or its file system keeps no extended attributes (EOPNOTSUPP).  Throws IoError
/// "<path>: getxattr security.ima: <reason>" otherwise (e.g. ENOENT).
MODSIGN_API std::optional<Bytes> read_security_ima(const std::string& path, const std::string& name = "security.ima");

/// The header of a security.ima value of type 0x03 with at least 9 bytes; nullopt otherwise.
MODSIGN_API std::optional<ImaSignatureHeader> ima_signature_header(ByteView value);

// ---- appraisal ------------------------------------------------------------------------------

/// The rule and boot parameters of an appraisal.
struct ImaAppraiseOptions {
  /// appraise_type: "imasig", "sigv3" or "imasig|modsig" (an appended signature is not
  /// looked for: `modsign ima appraise` predicts modules).
  std::string appraise_type = "imasig";
  /// func: FILE_CHECK (PATH_CHECK), BPRM_CHECK, MMAP_CHECK (FILE_MMAP), MMAP_CHECK_REQPROT,
  /// CREDS_CHECK, FIRMWARE_CHECK, POLICY_CHECK, MODULE_CHECK, KEXEC_KERNEL_CHECK,
  /// KEXEC_INITRAMFS_CHECK; KEXEC_CMDLINE, KEY_CHECK, CRITICAL_DATA and SETXATTR_CHECK give
  /// the policy write's EINVAL (they take no appraise_type).
  std::string func = "FILE_CHECK";
  /// ima_hash= (IMA's default file hash, used when the value names none).
  std::string ima_hash = "sha256";
  /// As SignOptions::expect_file: the file digest is taken from the file the walk of -r
  /// DIR found (one open file), never from another file the path leads to by then.
  std::optional<WalkedFile> expect_file;
  /// The ML-DSA verification library, as PredictOptions::backend ("auto", "openssl",
  /// "botan"; the same verdicts).  Unknown: UsageError.
  std::string backend = "auto";
};

/// Checks an appraise_type before any file is read: throws UsageError "unknown appraise_type
/// 'X' (imasig, sigv3, imasig|modsig)" for a value ima_parse_rule() knows under no func or
/// release (Opt_appraise_type in security/integrity/ima/ima_policy.c, Linux 7.2.13).  A
/// known value the kernel refuses for the rule's func or release (sigv3 before 7.1,
/// imasig|modsig for FILE_CHECK) is no error: ima_appraise_file() predicts the refusal.
MODSIGN_API void check_ima_appraise_type(const std::string& appraise_type);

/// Checks a func= value the same way: throws UsageError "unknown func 'X' (FILE_CHECK, ...)"
/// for a word ima_parse_rule() does not take as any func (Opt_func in
/// security/integrity/ima/ima_policy.c, Linux 7.2.13; compared exactly).  A func it takes
/// but whose appraise rules ima_validate_rule() refuses is no error: ima_appraise_file()
/// predicts the refusal, as it does for such a word.
MODSIGN_API void check_ima_func(const std::string& func);

/// What the `profile` kernel does when the file at `path` with security.ima `security_ima`
/// (nullopt: none) is opened under an enforcing rule `options`, with `ima` as the .ima
/// keyring (its certificates; its .blacklist bin: entries for ima_check_blacklist()).
/// Profiles: "v6.1", "v6", "v7.0" know no sigv3 (a version 3 value is
/// "invalid-signature-version", appraise_type=sigv3 is refused as a rule); "v7.1"
/// appraises sigv3 of RSA/ECDSA keys; "v7.2" also of ML-DSA keys.  The file is hashed
/// with the hash the value names (ima_get_hash_algo).  A verdict, never an exception, for
/// what the kernel decides; throws IoError when the file cannot be read; InputError
/// "<path>: security.ima names hash_algo N (rmd160), which modsign cannot compute" (md4,
/// RIPEMD, Whirlpool, Tiger, SM3, Streebog); UsageError for an unknown ima_hash.
MODSIGN_API ImaFileAppraisal ima_appraise_file(const std::string& path, const std::optional<Bytes>& security_ima,
                                               const TrustStore& ima, const KernelProfile& profile,
                                               const ImaAppraiseOptions& options = {});

}  // namespace modsign
