// mirrors security/integrity/ima/ima_policy.c ima_parse_rule (Opt_appraise_type), ima_validate_rule (the flags each
// func takes), Linux 7.2.13
#include "digest/ima_policy.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace modsign::digest {

bool ima_sigv3_file_signatures(const cms::KernelModel& profile) {
  return profile.generation == cms::Generation::v7_0 && profile.release >= 1;
}

bool ima_appraise_type_known(std::string_view type) {
  return type == "imasig" || type == "sigv3" || type == "imasig|modsig";
}

namespace {
// Opt_func (ima_parse_rule) takes these words; PATH_CHECK and FILE_MMAP are the older names
// of FILE_CHECK and MMAP_CHECK.  ima_validate_rule then sorts them for an appraise rule:
// the file hooks take appraise_type, the module and kexec hooks also modsig, and the rest
// (KEXEC_CMDLINE, KEY_CHECK and CRITICAL_DATA measure only; SETXATTR_CHECK takes nothing but
// appraise_algos) refuse any appraise_type.
constexpr std::array<std::string_view, 9> kFileFuncs{"FILE_CHECK",  "PATH_CHECK",         "MMAP_CHECK",
                                                     "FILE_MMAP",   "MMAP_CHECK_REQPROT", "BPRM_CHECK",
                                                     "CREDS_CHECK", "FIRMWARE_CHECK",     "POLICY_CHECK"};
constexpr std::array<std::string_view, 3> kModsigFuncs{"MODULE_CHECK", "KEXEC_KERNEL_CHECK", "KEXEC_INITRAMFS_CHECK"};
constexpr std::array<std::string_view, 4> kOtherFuncs{"KEXEC_CMDLINE", "KEY_CHECK", "CRITICAL_DATA", "SETXATTR_CHECK"};
template <std::size_t N>
bool one_of(const std::array<std::string_view, N>& words, std::string_view w) {
  return std::find(words.begin(), words.end(), w) != words.end();
}
bool modsig_func(std::string_view func) { return one_of(kModsigFuncs, func); }
}  // namespace

bool ima_func_known(std::string_view func) {
  return one_of(kFileFuncs, func) || one_of(kModsigFuncs, func) || one_of(kOtherFuncs, func);
}

Result<ImaRuleFlags> ima_parse_appraise_rule(std::string_view func, std::string_view type,
                                             const cms::KernelModel& profile) {
  const std::string rule = "appraise func=" + std::string(func) + " appraise_type=" + std::string(type);
  if (!ima_func_known(func)) return make_error(KErr::einval, rule + ": unknown func");
  if (one_of(kOtherFuncs, func))
    return make_error(KErr::einval,
                      rule + ": func=" + std::string(func) + " takes no appraise_type (ima_validate_rule)");
  ImaRuleFlags f;
  if (type == "imasig") {
    f.digsig_required = f.check_blacklist = true;
  } else if (type == "sigv3") {
    // Before 7.1 sigv3 exists only for fs-verity rules (digest_type=verity).
    if (!ima_sigv3_file_signatures(profile))
      return make_error(KErr::einval, rule + ": this kernel takes appraise_type=sigv3 only with digest_type=verity");
    f.sigv3_required = f.digsig_required = f.check_blacklist = true;
  } else if (type == "imasig|modsig") {
    f.digsig_required = f.modsig_allowed = f.check_blacklist = true;
  } else {
    return make_error(KErr::einval, rule + ": unknown appraise_type");
  }
  // ima_validate_rule: IMA_MODSIG_ALLOWED only for the module and kexec hooks.
  if (f.modsig_allowed && !modsig_func(func))
    return make_error(KErr::einval, rule + ": modsig is allowed only for MODULE_CHECK and KEXEC_*_CHECK");
  return f;
}

}  // namespace modsign::digest
