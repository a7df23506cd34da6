// modsign's own: the kernel being predicted (KernelModel, Generation) and the types every cms/ mirror file shares
// Usage is enum key_being_used_for (include/linux/verification.h); Blacklist stands for the
// .blacklist keyring (certs/blacklist.c); Keyring::add_path is in cms/system_keyring.cpp
// (docs/kernel-semantics.md; confirmed against Linux 7.2.13 where noted).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "crypto/crypto.hpp"
#include "modsign/machine.hpp"

namespace modsign::cms {

/// Kernel generations whose PKCS#7 behaviour differs.
enum class Generation {
  v6,    ///< before the 2026 ML-DSA series (6.x): no ML-DSA OIDs, TBS blacklist hash = cert's own hash
  v7_0,  ///< with it (7.0 and later): ML-DSA, algo_takes_data, SHA-256 TBS blacklist hash
};

/// The kernel being predicted, and the configuration that changes module-signature outcomes:
/// the mirrors' model of it.  Callers of the library give the public KernelProfile
/// (include/modsign/profile.hpp); api/profile.cpp turns it into this.
struct KernelModel {
  Generation generation = Generation::v7_0;
  bool waive_mldsa_authattrs = false;  ///< CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA (7.0 only)
  bool enforce = false;                ///< module.sig_enforce=1 / CONFIG_MODULE_SIG_FORCE
  bool lockdown = false;               ///< lockdown=integrity (LOCKDOWN_MODULE_SIGNATURE refused)
  /// Linux 6.1-6.6 digest OIDs (profile "v6.1", generation v6): pkcs7_sig_note_digest_algo
  /// still maps md4 and md5 and knows no SHA-3 digest, and pkcs7_sig_note_pkey_algo knows no
  /// id-ecdsa-with-sha3-*.  Confirmed on Debian 12's 6.1.0-57 (tools/kernel-conformance:
  /// md5 is hashed and checked, EKEYREJECTED; sha3-256 is "Unsupported digest algo",
  /// ENOPKG); SHA-3 arrived and md4/md5 left in later 6.x kernels (6.12 behaves as "v6").
  bool legacy_digests = false;
  /// The in-kernel module decompressor (CONFIG_MODULE_DECOMPRESS): "" built for the
  /// module's own format, "none" not built, or "gzip"/"xz"/"zstd" (module/decompress.cpp
  /// module_decompress_refusal).
  std::string module_decompress;
  /// The signature algorithm families the kernel's configuration leaves out: "rsa"
  /// (CONFIG_CRYPTO_RSA), "ecdsa" (CONFIG_CRYPTO_ECDSA), "mldsa" (CONFIG_CRYPTO_MLDSA, all
  /// three parameter sets).  crypto_alloc_sig() of such an algorithm fails with ENOENT
  /// (cms/public_key.cpp).  Empty: every algorithm of the generation is there.
  std::set<std::string> absent_sig_algos;
  /// Whether crypto_alloc_sig() finds the algorithm of a kernel pkey_algo name ("rsa",
  /// "ecdsa", "ecdsa-nist-p256", "mldsa65" ...).
  bool has_sig_algo(const std::string& pkey_algo) const;
  /// The digest families the kernel's PKCS#7 parser names that its configuration leaves
  /// out: "sm3" (CONFIG_CRYPTO_SM3, 6.x CONFIG_CRYPTO_SM3_GENERIC), "streebog"
  /// (CONFIG_CRYPTO_STREEBOG; streebog256 and streebog512).  Neither =y nor =m: then
  /// crypto_alloc_shash() fails and pkcs7_digest() returns ENOPKG (unsupported crypto).
  /// Empty: both are there (a module is loaded on demand, as Debian's Streebog).
  std::set<std::string> absent_hashes;
  /// Whether crypto_alloc_shash() finds the kernel hash_algo name ("sm3", "streebog256",
  /// "streebog512"; every other name is taken as present).
  bool has_hash(const std::string& hash_algo) const;
  /// The 7.x release within generation v7_0 (profiles "v7.0", "v7.1", "v7.2"): module
  /// signatures behave alike, IMA file signatures do not (digest/ima_appraise.cpp
  /// ima_sigv3_file_signatures, digest/digsig_asymmetric.cpp asymmetric_verify_v3).
  int release = 0;
  /// The kernel's own byte order: CONFIG_CPU_BIG_ENDIAN=y (s390, big-endian arm64/ppc64/
  /// mips builds).  The signature formats do not depend on it (module_signature and
  /// signature_v2_hdr are big-endian, PE/COFF and EFI little-endian, on every kernel);
  /// IMA's measurement list and template hashes do (digest/ima_fs.cpp ima_list_big_endian).
  bool big_endian = false;
  /// The ima_canonical_fmt boot parameter (security/integrity/ima/ima_fs.c); it changes
  /// anything only on a big-endian kernel.
  bool ima_canonical_fmt = false;
  /// The machine the kernel is built for (CONFIG_X86_64, CONFIG_ARM64, CONFIG_S390): only
  /// the measured outcome of the d-modsig stack overflow depends on it
  /// (digest/ima_template_lib.hpp ima_digest_field_survivable).
  Machine machine = Machine::x86_64;

  static KernelModel v6() { return KernelModel{Generation::v6}; }
  static KernelModel v6_1() {
    KernelModel p{Generation::v6};
    p.legacy_digests = true;
    return p;
  }
  static KernelModel v7_0() { return KernelModel{Generation::v7_0}; }
  static KernelModel v7(int release) {
    KernelModel p{Generation::v7_0};
    p.release = release;
    return p;
  }
  /// Whether this kernel has CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA at all: the
  /// option is declared only in the 7.x crypto/asymmetric_keys/Kconfig (with ML-DSA).
  bool has_mldsa_authattrs_waiver() const { return generation == Generation::v7_0; }
  /// "v6.1", "v6", "v7.0", "v7.1" or "v7.2"; parse accepts those and "6.1", "7.0", "v7",
  /// "6", "7.1", "7.2".
  std::string name() const;
  static std::optional<KernelModel> parse(const std::string& name);
};

/// What the signature is being checked for (enum key_being_used_for).
enum class Usage { module, firmware, kexec_pe, unspecified, bpf, key_signature };

/// The system blacklist (certs/blacklist.c): "tbs:<hex>" and "bin:<hex>" descriptions and
/// revoked certificates (CONFIG_SYSTEM_REVOCATION_LIST).  The blacklist issue fills it.
struct Blacklist {
  std::set<std::string> descriptions;  ///< e.g. "tbs:3a4f..." (lower-case hex)
  std::vector<crypto::Certificate> revoked;
  bool is_tbs_blacklisted(const Bytes& hash) const { return descriptions.count("tbs:" + to_hex(hash)) != 0; }
};

/// A keyring of trusted certificates (e.g. .builtin_trusted_keys + .secondary) and a blacklist.
struct Keyring {
  std::vector<crypto::Certificate> certificates;
  Blacklist blacklist;
  /// Add every certificate in `path`: a PEM bundle or DER file, or every regular file in a
  /// directory (non-recursive, sorted by name).  Errors: EBADMSG for a file holding no
  /// or a malformed certificate (message names the file).  Throws IoError if unreadable.
  /// In a directory, an entry that is not a certificate file is skipped as the kernel's
  /// certificate loaders skip what they cannot parse (see add_path in system_keyring.cpp):
  /// a FIFO, socket, device, subdirectory, dangling or looping symbolic link, or a regular
  /// file that is empty or holds neither DER (first byte 0x30) nor a PEM CERTIFICATE
  /// block.  Each gets "<dir>/<entry>: skipped: <why> (not a certificate)" in `*skipped`
  /// (when given); with `strict` it is an error instead, EBADMSG "<dir>/<entry>: <why>
  /// (not a certificate)".  A file that claims to be a certificate (DER, or a PEM
  /// CERTIFICATE block) but does not parse stays an error in both modes, except a key type
  /// the kernel cannot load (ENOPKG from the public key, e.g. Ed25519): that certificate
  /// alone (a DER file, or one PEM block of a bundle: the bundle's other certificates are
  /// kept) is skipped with "<file>: skipped: [PEM block N: ]<reason> (a key type the
  /// kernel cannot load)", or, with `strict`, ENOPKG "<file>: [PEM block N: ]<reason> (a
  /// key type the kernel cannot load)".
  Status add_path(const std::string& path, bool strict = false, std::vector<std::string>* skipped = nullptr);

 private:
  /// The certificates of one file's bytes, for add_path.
  Status add_certificates(const std::string& file, ByteView bytes, bool strict, std::vector<std::string>* skipped);
};

}  // namespace modsign::cms
