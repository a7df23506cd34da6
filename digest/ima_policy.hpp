// mirrors security/integrity/ima/ima_policy.c ima_parse_rule (Opt_appraise_type), ima_validate_rule (the flags each
// func takes), Linux 7.2.13
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cms/kernel_model.hpp"
#include "common/result.hpp"

namespace modsign::digest {

/// The PCRs a measurement can go to: a rule's pcr= must pass INVALID_PCR (ima_policy.c: 0 to
/// the bits of ima_iint_cache.measured_pcrs, an unsigned long, less one: 0-63 on a 64-bit
/// kernel) and the default is CONFIG_IMA_MEASURE_PCR_IDX (8-14).
inline constexpr std::uint32_t kImaPcrLimit = 64;

/// The IMA_* flags (security/integrity/ima/ima.h) an appraise rule's appraise_type sets.
struct ImaRuleFlags {
  bool digsig_required = false;  ///< IMA_DIGSIG_REQUIRED
  bool sigv3_required = false;   ///< IMA_SIGV3_REQUIRED
  bool modsig_allowed = false;   ///< IMA_MODSIG_ALLOWED
  bool check_blacklist = false;  ///< IMA_CHECK_BLACKLIST
  bool verity_required = false;  ///< IMA_VERITY_REQUIRED (digest_type=verity; modsign never sets it)
};

/// Whether the kernel of `profile` appraises version 3 signatures in a type 0x03
/// (EVM_IMA_XATTR_DIGSIG) value and knows appraise_type=sigv3 outside fs-verity rules:
/// from Linux 7.1 (profiles "v7.1", "v7.2").  Earlier kernels refuse a version 3 value with
/// "invalid-signature-version" and a sigv3 rule without digest_type=verity with EINVAL.
bool ima_sigv3_file_signatures(const cms::KernelModel& profile);

/// "appraise func=`func` appraise_type=`type`" as the kernel of `profile` parses and
/// validates it: "imasig" digsig_required + check_blacklist; "sigv3" also sigv3_required
/// (7.1 and later); "imasig|modsig" digsig_required + modsig_allowed + check_blacklist.
/// EINVAL (the write to the policy file fails) for another type, sigv3 before 7.1, and
/// imasig|modsig with a func other than MODULE_CHECK, KEXEC_KERNEL_CHECK and
/// KEXEC_INITRAMFS_CHECK; for func KEXEC_CMDLINE, KEY_CHECK, CRITICAL_DATA and
/// SETXATTR_CHECK; and for a word that is no func (see ima_func_known()).
Result<ImaRuleFlags> ima_parse_appraise_rule(std::string_view func, std::string_view type,
                                             const cms::KernelModel& profile);

/// Whether `func` is a word Opt_func takes (ima_parse_rule, Linux 7.2.13): the nine file
/// hooks (FILE_CHECK, PATH_CHECK = FILE_CHECK, MMAP_CHECK, FILE_MMAP = MMAP_CHECK,
/// MMAP_CHECK_REQPROT, BPRM_CHECK, CREDS_CHECK, FIRMWARE_CHECK, POLICY_CHECK), MODULE_CHECK,
/// KEXEC_KERNEL_CHECK, KEXEC_INITRAMFS_CHECK, and KEXEC_CMDLINE, KEY_CHECK, CRITICAL_DATA,
/// SETXATTR_CHECK, whose appraise rules ima_validate_rule refuses (EINVAL from
/// ima_parse_appraise_rule); kImaFuncs lists them for messages.
bool ima_func_known(std::string_view func);
inline constexpr const char* kImaFuncs =
    "FILE_CHECK, PATH_CHECK, MMAP_CHECK, FILE_MMAP, MMAP_CHECK_REQPROT, BPRM_CHECK, CREDS_CHECK, FIRMWARE_CHECK, "
    "POLICY_CHECK, MODULE_CHECK, KEXEC_KERNEL_CHECK, KEXEC_INITRAMFS_CHECK, KEXEC_CMDLINE, KEY_CHECK, CRITICAL_DATA, "
    "SETXATTR_CHECK";

/// Whether `type` is an appraise_type value Opt_appraise_type knows at all ("imasig",
/// "sigv3", "imasig|modsig"); kImaAppraiseTypes lists them for messages.
bool ima_appraise_type_known(std::string_view type);
inline constexpr const char* kImaAppraiseTypes = "imasig, sigv3, imasig|modsig";

}  // namespace modsign::digest
