// modsign — the settings of the kernel a module is signed for, read from its build tree
// or its .config, as its build uses them to sign modules and check their signatures:
// CONFIG_MODULE_SIG_HASH and CONFIG_MODULE_SIG_KEY (scripts/Makefile.modinst cmd_sign,
// certs/Makefile signing_key.x509), the hash and key-type symbols (kernel/module/Kconfig,
// crypto/Kconfig, crypto/asymmetric_keys/Kconfig), Linux 7.2.13.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/profile.hpp"
#include "modsign/result.hpp"

namespace modsign {

/// A kernel configuration.  Plain data.
struct KernelConfig {
  /// The file read: DIR/.config, else DIR/include/config/auto.conf (read_kernel_build), or
  /// the file given (read_kernel_config).  Every warning names it.
  std::string source;
  /// The build tree ("" for read_kernel_config).
  std::string build_dir;
  /// VERSION.PATCHLEVEL, e.g. "7.2": from DIR/Makefile (VERSION = / PATCHLEVEL =), else
  /// DIR/include/config/kernel.release, else the "# Linux/<arch> 7.2.13 Kernel
  /// Configuration" line every generated .config starts with; "" when none says.
  std::string version;
  /// Every CONFIG_ symbol that is set, its last value unquoted: "y", "m", "sha256",
  /// "certs/signing_key.pem", "64".  A "# CONFIG_X is not set" line takes X out.  For display;
  /// modsign's rules read `assignments` by type, as kconfig does.
  std::map<std::string, std::string> symbols;
  /// One assignment of a symbol: the line it is on (counted from 1) and the text after '='
  /// as written ("n" for a "# CONFIG_X is not set" line).
  struct Assignment {
    std::size_t line = 0;
    std::string text;
  };
  /// Every assignment of each symbol, in file order.  scripts/kconfig/confdata.c
  /// conf_read_simple() and conf_set_sym_val() read them by the symbol's type, the last valid
  /// one winning: a bool or tristate takes an assignment starting with y, m or n
  /// ("y # note" is y) and ignores any other ("\"y\"" keeps the earlier value); a string
  /// takes only a quoted one, up to its closing quote (backslash escapes undone).  A line
  /// that does not start with "CONFIG_" (leading spaces included) is not an assignment, and
  /// "CONFIG_X = y" assigns a symbol named "X " that no rule reads.
  std::map<std::string, std::vector<Assignment>> assignments;
  /// CONFIG_MODULE_SIG_HASH ("" when not set).
  std::string sig_hash;
  /// The line of `source` that sets it (counted from 1; 0 when not set).
  std::size_t sig_hash_line = 0;
  /// The signing key as the build's modules_install passes it to sign-file: a pkcs11: URI
  /// as it is; an absolute path as it is; a relative one under build_dir (the Kconfig
  /// default "certs/signing_key.pem" when the symbol is not set).  "" for
  /// read_kernel_config (no tree to find it in).
  std::string sig_key;
  /// build_dir + "/certs/signing_key.x509" (the certificate certs/Makefile extracts from
  /// sig_key); "" for read_kernel_config.
  std::string sig_cert;

  /// The value of `name` (with or without the "CONFIG_" prefix); "" when not set.
  MODSIGN_API std::string value(std::string_view name) const;
  /// Adds the assignment CONFIG_<name>=<text> (with or without the prefix) after the others,
  /// as a line at the end of the file would (line 0): for configurations built in code.
  MODSIGN_API void set(std::string_view name, std::string_view text);
};

/// Read the configuration of the kernel build (or headers) tree `dir`, e.g.
/// /lib/modules/$(uname -r)/build.  Throws IoError "<dir>: no .config or
/// include/config/auto.conf (not a kernel build tree)" when neither exists, IoError
/// "<file>: <reason>" when it cannot be read.
MODSIGN_API KernelConfig read_kernel_build(const std::string& dir);
/// Read the configuration file `file` (a .config, include/config/auto.conf or
/// /boot/config-*).  Throws IoError "<file>: <reason>" when it cannot be read, InputError
/// "<file>: no CONFIG_ symbol (not a kernel configuration)" when it holds none.
MODSIGN_API KernelConfig read_kernel_config(const std::string& file);

/// Checks that CONFIG_MODULE_SIG_HASH (when set) names a digest modsign signs with (the
/// names of SignOptions::hash).  Throws InputError "<source>:<line>:
/// CONFIG_MODULE_SIG_HASH=\"md5\" is not a digest modsign signs with (sha1|sha224|sha256|
/// sha384|sha512|sha3-256|sha3-384|sha3-512)".
MODSIGN_API void check_kernel_config_hash(const KernelConfig& config);

/// The profile of that kernel: the generation from `version` ("v6.1" before 6.7, "v6"
/// for later 6.x, "v7.0" from 7.0; "v7.0" when the version is unknown),
/// CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y the waiver (7.x only),
/// CONFIG_MODULE_SIG_FORCE=y enforce (kernel/module/signing.c sig_enforce), the module
/// decompressor from CONFIG_MODULE_DECOMPRESS and CONFIG_MODULE_COMPRESS_<FORMAT>
/// (KernelProfile::module_decompress(): "none" without it), the signature algorithms it
/// lacks (KernelProfile::absent_sig_algos(): "rsa", "ecdsa", "mldsa" for CONFIG_CRYPTO_RSA,
/// _ECDSA, _MLDSA not =y; "mldsa" on 7.x only), the digests it lacks (KernelProfile::
/// absent_hashes(): "sm3", "streebog" for CONFIG_CRYPTO_SM3 or _SM3_GENERIC, and
/// CONFIG_CRYPTO_STREEBOG, neither =y nor =m), the byte order (KernelProfile::byte_order():
/// big for CONFIG_CPU_BIG_ENDIAN=y, which every s390 and big-endian arm64, powerpc and mips
/// configuration sets), and the machine (KernelProfile::machine(): s390x for CONFIG_S390=y,
/// arm64 for CONFIG_ARM64=y, else x86_64).  Lockdown and ima_canonical_fmt are left off
/// (boot settings).
MODSIGN_API KernelProfile kernel_profile_of(const KernelConfig& config);

/// Whether verify() describes what the kernel of `config` does with a module's signature:
/// an error (KErr::eopnotsupp, Error::Reason::unpredictable; the message names the file)
/// without CONFIG_MODULE_SIG=y.  Such a kernel's module_sig_check() is the stub that
/// returns 0 (kernel/module/internal.h): every module loads untainted, signed or not, and
/// nothing is checked.
MODSIGN_API Status module_sig_modelled(const KernelConfig& config);

/// Why the kernel of `config` would not accept a signature made with a key of
/// `algorithm` (Signer::algorithm() "RSA", "ECDSA-P256", "ML-DSA-65" ..., or the kernel's
/// pkey_algo "rsa", "ecdsa", "mldsa65" of SignerSummary::sig_algo), digest `hash`
/// ("sha256", "sha3-384" ...) with or without signedAttrs; `what` starts each line
/// ("sha1 signature", "the module's signature").  Each entry is one line
/// "warning: <source>: <what>: <why>"; empty when nothing stands in the way:
///  - CONFIG_MODULE_SIG not set: the kernel checks no module signature;
///  - the digest's crypto symbol (CONFIG_CRYPTO_SHA1, _SHA256 for sha224/sha256, _SHA512
///    for sha384/sha512, _SHA3 for sha3-*) not set (ENOPKG) or =m (the digest must be
///    built in, kernel/module/Kconfig);
///  - sha1 with CONFIG_MODULE_SIG_SHA1 not set (no longer a signing choice; Linux 7.x
///    removed it);
///  - ML-DSA on a 6.x kernel (its PKCS#7 parser knows no ML-DSA OID: ENOPKG);
///  - RSA without CONFIG_CRYPTO_RSA=y, ECDSA without CONFIG_CRYPTO_ECDSA=y, ML-DSA on 7.x
///    without CONFIG_CRYPTO_MLDSA=y: the signature still parses, but crypto_alloc_sig()
///    finds no algorithm (ENOENT): a trusted key refuses the module (EKEYREJECTED) and a
///    self-signed certificate of that type is not loaded (ENOKEY; Linux 7.2.13
///    crypto/asymmetric_keys/public_key.c, pkcs7_trust.c, x509_public_key.c);
///  - ML-DSA with signedAttrs on 7.x without CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA
///    (EKEYREJECTED, crypto/asymmetric_keys/pkcs7_verify.c).
MODSIGN_API std::vector<std::string> kernel_config_warnings(const KernelConfig& config, std::string_view what,
                                                            std::string_view algorithm, std::string_view hash,
                                                            bool signed_attrs);

}  // namespace modsign
