// modsign — the kernel whose behaviour is predicted.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "modsign/byte_order.hpp"
#include "modsign/export.hpp"
#include "modsign/machine.hpp"

namespace modsign {

/// A kernel generation and the configuration that changes what it does with a signed
/// module.  A plain value (copyable, no resources).
///
/// Generations (docs/kernel-semantics.md):
///   "v6.1"  Linux 6.1-6.6: no ML-DSA; md4/md5 digests still mapped, no SHA-3 digests
///           (pkcs7_sig_note_digest_algo in crypto/asymmetric_keys/pkcs7_parser.c).
///   "v6"    later 6.x (e.g. 6.12): no ML-DSA OIDs, SHA-3 known.
///   "v7.0"  Linux 7.0: ML-DSA-44/65/87 signers (module rules confirmed against 7.2.13,
///           which checks modules as 7.0 does).
///   "v7.1", "v7.2"  Linux 7.1 and 7.2: the same for modules; they differ only for IMA
///           file signatures (include/modsign/ima_sign.hpp, include/modsign/ima.hpp):
///           7.1 appraises sigv3 security.ima signatures of RSA/ECDSA keys, and its
///           ima_get_hash_algo() takes the hash of a version 3 value (7.0 only of version
///           2); 7.2 also appraises ML-DSA keys (pure ML-DSA over struct ima_file_id,
///           security/integrity/digsig_asymmetric.c, Linux 7.2.13).
///   Every `modsign ima` command gives these names the same meaning.
class MODSIGN_API KernelProfile {
 public:
  /// "v7.0", the default.
  KernelProfile();

  /// "v6.1", "v6", "v7.0", "v7.1" or "v7.2"; also "6.1", "6", "7.0", "v7", "7", "7.1" and
  /// "7.2".  nullopt for any other name.  The switches below start off.
  static std::optional<KernelProfile> parse(std::string_view name);

  /// The canonical generation name: "v6.1", "v6", "v7.0", "v7.1" or "v7.2".
  std::string name() const;
  /// name() and every switch that changes a module's verdict, each as "+<switch>":
  /// "+waiver", "+enforce", "+lockdown", "+decompress=<module_decompress()>", "+no-<family>"
  /// for each absent signature algorithm and hash family, in that order
  /// ("v7.0+waiver+enforce", "v6.1+no-ecdsa"); name() alone when none is set.  The same
  /// "+waiver" spelling as ModuleSignatureInfo::accepted_by.
  std::string label() const;

  /// CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA (7.0 only): an ML-DSA signer with
  /// signedAttrs is accepted (with a kernel log line) instead of refused (EKEYREJECTED).
  bool waive_mldsa_authattrs() const noexcept { return waive_mldsa_authattrs_; }
  /// Turning the waiver on is refused for "v6.1" and "v6": the option is declared only in
  /// the 7.x crypto/asymmetric_keys/Kconfig.  Throws UsageError "--waive-mldsa-authattrs
  /// exists only for a v7.x --kernel (v7.0, v7.1, v7.2)" (the profile is left unchanged); `on`
  /// = false never throws.
  void set_waive_mldsa_authattrs(bool on);

  /// module.sig_enforce=1 or CONFIG_MODULE_SIG_FORCE (kernel/module/signing.c
  /// module_sig_check): a soft failure (ENODATA, ENOPKG, ENOKEY) refuses the module with
  /// EKEYREJECTED instead of loading it tainted.
  bool enforce() const noexcept { return enforce_; }
  void set_enforce(bool on) noexcept { enforce_ = on; }

  /// lockdown=integrity (security_locked_down(LOCKDOWN_MODULE_SIGNATURE)): a soft failure
  /// refuses the module with EPERM.
  bool lockdown() const noexcept { return lockdown_; }
  void set_lockdown(bool on) noexcept { lockdown_ = on; }

  /// What the kernel's own module decompressor takes, for a compressed module given to
  /// finit_module(2) with MODULE_INIT_COMPRESSED_FILE (kernel/module/main.c
  /// init_module_from_file): "" (the default) a kernel built for the module's own format;
  /// "none" a kernel without CONFIG_MODULE_DECOMPRESS, whose module_decompress() stub
  /// (kernel/module/internal.h) fails with EOPNOTSUPP; "gzip", "xz" or "zstd" the one
  /// format CONFIG_MODULE_COMPRESS_<FORMAT> built into kernel/module/decompress.c, which
  /// refuses any other with EINVAL ("not an xz compressed module").  Linux 7.2.13.
  const std::string& module_decompress() const noexcept { return module_decompress_; }
  /// Throws UsageError "--module-decompress: unknown value X (none, gzip, xz, zstd)" for
  /// another value (the profile is left unchanged).
  void set_module_decompress(std::string_view format);

  /// The signature algorithm families this kernel's configuration leaves out, each once,
  /// in the order "rsa", "ecdsa", "mldsa" (CONFIG_CRYPTO_RSA, CONFIG_CRYPTO_ECDSA,
  /// CONFIG_CRYPTO_MLDSA not =y; kernel_profile_of() fills it).  Empty (the default): every
  /// algorithm of the generation is there.  crypto_alloc_sig() then finds no such
  /// algorithm (ENOENT, crypto_alg_mod_lookup in crypto/api.c, Linux 7.2.13): a trusted
  /// key of that type refuses the module with EKEYREJECTED (pkcs7_validate_trust_one), and
  /// a self-signed certificate of that type is not loaded into a keyring (its
  /// x509_check_for_self_signed fails), which leaves the module without a key (ENOKEY).
  const std::vector<std::string>& absent_sig_algos() const noexcept { return absent_sig_algos_; }
  /// Throws UsageError "unknown signature algorithm family X (rsa, ecdsa, mldsa)" for any
  /// other name (the profile is left unchanged); duplicates are dropped.
  void set_absent_sig_algos(const std::vector<std::string>& families);

  /// The digests of the kernel's PKCS#7 parser this kernel's configuration leaves out, each
  /// once, in the order "sm3", "streebog" (CONFIG_CRYPTO_SM3 or, on 6.x,
  /// CONFIG_CRYPTO_SM3_GENERIC; CONFIG_CRYPTO_STREEBOG; neither =y nor =m, as a module is
  /// loaded on demand; kernel_profile_of() fills it).  Empty (the default): both are there.
  /// A signature whose digestAlgorithm is one of them is then unsupported crypto (ENOPKG
  /// from pkcs7_digest, a soft failure); one the kernel has is hashed, and the signature
  /// check that follows fails (no RSA, ECDSA or ML-DSA scheme takes these digests).
  const std::vector<std::string>& absent_hashes() const noexcept { return absent_hashes_; }
  /// Throws UsageError "unknown digest family X (sm3, streebog)" for any other name (the
  /// profile is left unchanged); duplicates are dropped.
  void set_absent_hashes(const std::vector<std::string>& families);

  /// The kernel's byte order (ByteOrder::little, the default; kernel_profile_of() reads
  /// CONFIG_CPU_BIG_ENDIAN).  Module signatures, security.ima values, Authenticode and EFI
  /// structures do not depend on it (module_signature and signature_v2_hdr are big-endian,
  /// PE/COFF and EFI little-endian, on every kernel).  IMA's binary measurement list and its
  /// template hashes do: a big-endian kernel writes the list's u32 fields (PCR index, name
  /// and data lengths, each field's length) and hashes each field's length big-endian,
  /// unless it boots with ima_canonical_fmt (security/integrity/ima/ima_fs.c
  /// ima_measurements_show, ima_crypto.c ima_calc_field_array_hash_tfm, Linux 7.2.13).
  ByteOrder byte_order() const noexcept { return byte_order_; }
  void set_byte_order(ByteOrder order) noexcept { byte_order_ = order; }

  /// The ima_canonical_fmt boot parameter: IMA's list and template hashes little-endian on a
  /// big-endian kernel.  A no-op on a little-endian kernel (ima_fs.c
  /// default_canonical_fmt_setup sets it only #ifdef __BIG_ENDIAN).
  bool ima_canonical_fmt() const noexcept { return ima_canonical_fmt_; }
  void set_ima_canonical_fmt(bool on) noexcept { ima_canonical_fmt_ = on; }
  /// The order of IMA's u32 fields on this kernel: big only for a big-endian kernel without
  /// ima_canonical_fmt.
  ByteOrder ima_byte_order() const noexcept {
    return byte_order_ == ByteOrder::big && !ima_canonical_fmt_ ? ByteOrder::big : ByteOrder::little;
  }

  /// The machine the kernel is built for (Machine::x86_64, the default; kernel_profile_of()
  /// reads CONFIG_X86_64, CONFIG_ARM64 and CONFIG_S390).  It does not set the byte order.
  /// It decides one outcome of undefined behaviour, taken from measured 7.2.13 builds: a
  /// d-modsig field longer than the kernel's 201-byte stack buffer (ima_template(),
  /// include/modsign/ima.hpp), which an s390x build survives up to 265 bytes.
  Machine machine() const noexcept { return machine_; }
  void set_machine(Machine machine) noexcept { machine_ = machine; }

 private:
  explicit KernelProfile(std::string generation) : generation_(std::move(generation)) {}
  std::string generation_;
  bool waive_mldsa_authattrs_ = false;
  bool enforce_ = false;
  bool lockdown_ = false;
  std::string module_decompress_;
  std::vector<std::string> absent_sig_algos_;
  std::vector<std::string> absent_hashes_;
  ByteOrder byte_order_ = ByteOrder::little;
  bool ima_canonical_fmt_ = false;
  Machine machine_ = Machine::x86_64;
};

}  // namespace modsign
