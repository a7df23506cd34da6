// modsign — what kexec_file_load() does with a kernel image: the signature check of the
// bzImage's PE/COFF (Authenticode) signature, predicted errno for errno.  Mirrors
// kimage_file_prepare_segments(), kimage_validate_signature() and
// kexec_kernel_verify_pe_sig() in kernel/kexec_file.c, bzImage64_probe() in
// arch/x86/kernel/kexec-bzimage64.c, image_probe() in arch/arm64/kernel/kexec_image.c, verify_pefile_signature() in
// crypto/asymmetric_keys/verify_pefile.c and mscode_parse() in
// crypto/asymmetric_keys/mscode_parser.c, Linux 7.2.13 (docs/kernel-semantics.md, "kexec").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/kernel_config.hpp"
#include "modsign/load_verdict.hpp"
#include "modsign/profile.hpp"
#include "modsign/result.hpp"
#include "modsign/trust.hpp"

namespace modsign {

/// What kexec_file_load() does with the image.
enum class KexecOutcome {
  loads,             ///< the signature verified
  loads_unverified,  ///< verification failed but is not enforced: the kernel logs it and loads
  refused,           ///< kexec_file_load fails with KexecVerdict::load_errno
};
/// "loads", "loads-unverified", "refused".
MODSIGN_API std::string_view kexec_outcome_name(KexecOutcome o);

/// What a KexecVerdict predicts: kexec_file_load's signature step (kernel/kexec_file.c
/// kimage_validate_signature and the image probe before it), not the loader's later work
/// (bzImage64_load: setup data, memory placement).  `modsign verify --usage kexec --json`
/// prints it as "predicts".
inline constexpr std::string_view kKexecVerdictPredicts = "kimage_validate_signature";

/// The architecture of the kernel doing kexec_file_load(), which decides the image loader:
/// x86_64 bzImage64 (kexec_bzimage64_ops) or arm64 Image (kexec_image_ops; Debian's arm64
/// vmlinuz is such an Image, its EFI stub's PE/COFF signed for Secure Boot).  Both then
/// check the PE/COFF signature the same way (kexec_kernel_verify_pe_sig).
enum class KexecArch { x86_64, arm64 };
/// "x86_64", "arm64".
MODSIGN_API std::string_view kexec_arch_name(KexecArch a);
/// Whether a kernel of `a` can have CONFIG_KEXEC_SIG_FORCE: it depends on
/// ARCH_SUPPORTS_KEXEC_SIG_FORCE (kernel/Kconfig.kexec), which only x86 selects (Linux 7.2.13).
/// An arm64 kernel logs a failed check and loads the image unless it is locked down.
MODSIGN_API bool kexec_sig_force_supported(KexecArch a);

/// The kernel configuration kexec's verdict depends on, beyond KernelProfile::lockdown()
/// (lockdown=integrity or confidentiality: LOCKDOWN_KEXEC).
struct KexecOptions {
  /// The kernel's architecture: its loader's probe (step 1 of kexec_verdict()).
  KexecArch arch = KexecArch::x86_64;
  /// CONFIG_KEXEC_SIG_FORCE (or set_kexec_sig_enforced(), s390 secure boot): a failed
  /// verification refuses the image with its own errno.  Ignored where
  /// kexec_sig_force_supported(arch) is false: no such kernel exists.
  bool sig_force = false;
  /// CONFIG_INTEGRITY_PLATFORM_KEYRING: an ENOKEY from the secondary keyring is retried
  /// against the platform keyring (kexec_verdict()'s `platform`); without it `platform` is
  /// never consulted.
  bool platform_keyring = true;
  /// x86-64 only: the running kernel uses 5-level page tables (pgtable_l5_enabled(): a CPU
  /// with LA57, as qemu's "max" CPU and recent server CPUs have, and no `no5lvl` on the
  /// command line; /proc/cpuinfo then lists the flag la57).  bzImage64_probe() then refuses
  /// an image without XLF_5LEVEL in xloadflags with ENOEXEC.  Not in a kernel's
  /// configuration: kexec_options_of() leaves it false (4-level paging).
  bool five_level_paging = false;
  /// Verification backend for ML-DSA, as PredictOptions::backend ("auto", "openssl", "botan").
  std::string backend = "auto";
};

/// The KexecOptions of the kernel whose configuration is `config` (read_kernel_build,
/// read_kernel_config): arch arm64 for CONFIG_ARM64=y, x86_64 for CONFIG_X86_64=y;
/// sig_force for CONFIG_KEXEC_SIG_FORCE=y; platform_keyring for
/// CONFIG_INTEGRITY_PLATFORM_KEYRING=y.  An error (the message names the file and the
/// symbol) where kexec_verdict() would not describe that kernel: KErr::enosys, the kernel's
/// own answer, for the first; KErr::eopnotsupp with Error::Reason::unpredictable for the
/// others: CONFIG_KEXEC_FILE not set (kexec_file_load is ENOSYS), CONFIG_KEXEC_SIG not
/// set (no signature is checked), the loader's own check not set
/// (CONFIG_KEXEC_BZIMAGE_VERIFY_SIG, CONFIG_KEXEC_IMAGE_VERIFY_SIG: every image is
/// EKEYREJECTED, "kernel loader does not support signature verification"), another
/// architecture, or more than one of CONFIG_X86_64, CONFIG_ARM64 and CONFIG_S390.
MODSIGN_API Result<KexecOptions> kexec_options_of(const KernelConfig& config);

/// The predicted outcome of kexec_file_load(kernel_fd, -1, cmdline, KEXEC_FILE_NO_INITRAMFS)
/// for one image (`modsign verify --usage kexec` prints it).
struct KexecVerdict {
  KexecOutcome outcome = KexecOutcome::refused;
  /// The errno verify shows: none when it loads verified, load_errno when refused, else
  /// (loads-unverified) sig_errno.
  KErr err = KErr::none;
  /// What kexec_image_verify_sig() returned (none = verified); also none when the image
  /// was refused by the loader's probe before any signature check.
  KErr sig_errno = KErr::none;
  /// What kexec_file_load() returns: ENOEXEC from bzImage64_probe; with a failed check
  /// sig_errno under sig_force, EPERM under lockdown, else none.
  KErr load_errno = KErr::none;
  std::string reason;  ///< the kernel's log wording plus modsign's detail
  /// Keyring whose verdict sig_errno is: "secondary" (.secondary_trusted_keys, or
  /// .builtin_trusted_keys without CONFIG_SECONDARY_TRUSTED_KEYRING) or "platform" (the
  /// retry on ENOKEY); "" when no signature was checked.
  std::string keyring;
  std::vector<SignerSummary> signers;    ///< every SignerInfo of the image's PKCS#7
  std::vector<std::string> trusted_by;   ///< CN of the trusted certificate(s) that vouched
  std::vector<TrustedKey> trusted_keys;  ///< the same certificates: CN, SKID and serial
  std::vector<std::string> log;          ///< other kernel log lines
  /// The image digest named by SpcIndirectDataContent ("sha256"), "" when not reached.
  std::string digest_algo;
  /// SpcIndirectDataContent's digest, and the kernel's own digest of the image (its
  /// pefile_digest_pe byte runs; empty when not reached).  They differ on EKEYREJECTED
  /// "Digest mismatch".
  Bytes signed_digest, image_digest;
};

/// Predict kexec_file_load() for the image bytes `image` on the kernel of `profile`:
///  1. the loader's probe (refused, no signature check): on x86_64 bzImage64_probe, ENOEXEC
///     for anything but an x86-64 bzImage of boot protocol 2.12 or later loadable above
///     4 GiB; on arm64 image_probe, EINVAL for anything without the arm64 Image header's
///     magic "ARM\x64" at byte 56 (a zboot or gzip-compressed image included: kexec-tools
///     unpacks those before the call);
///  2. kexec_kernel_verify_pe_sig: verify_pefile_signature against `trust` (the
///     .secondary_trusted_keys: builtin and secondary certificates, with trust's
///     .blacklist) — ENODATA unsigned, ELIBBAD unparsable PE, ENOTSUPP (524) a
///     WIN_CERTIFICATE not revision 2.0 / PKCS, EMSGSIZE, EBADMSG and ENOPKG from the
///     PKCS#7 and SpcIndirectDataContent, ENOKEY untrusted signer, EKEYREJECTED bad
///     signature, revoked or tbs:-listed certificate, or image digest mismatch; on ENOKEY,
///     when `platform` is given and options.platform_keyring is set
///     (CONFIG_INTEGRITY_PLATFORM_KEYRING with the UEFI db/MOK certificates it holds), the
///     same against `platform`'s certificates (and trust's .blacklist).  bin: hashes (dbx EFI_CERT_SHA256 entries) are
///     never consulted: no kexec path calls is_binary_blacklisted();
///  3. kimage_validate_signature: a failure refuses the image with its errno under
///     options.sig_force, with EPERM under profile.lockdown(), else loads unverified.
/// IMA's appraisal of KEXEC_KERNEL_CHECK (ima_appraise_signature) is not modelled: no IMA
/// policy is assumed.  Never throws for image content (std::bad_alloc aside).
MODSIGN_API KexecVerdict kexec_verdict(ByteView image, const TrustStore& trust, const TrustStore* platform,
                                       const KernelProfile& profile, const KexecOptions& options = {});

/// The same for the file at `path` (read whole, at most 2 GiB - 1 bytes: KEXEC_FILE_SIZE_MAX).
/// Throws IoError when it cannot be read or is larger.
MODSIGN_API KexecVerdict kexec_verdict_file(const std::string& path, const TrustStore& trust,
                                            const TrustStore* platform, const KernelProfile& profile,
                                            const KexecOptions& options = {});

}  // namespace modsign
