// modsign — kexec_verdict() and kexec_verdict_file() (include/modsign/kexec.hpp).
#include "modsign/kexec.hpp"

#include "api/internal.hpp"
#include "common/file.hpp"
#include "module/kexec_file.hpp"

namespace modsign {

std::string_view kexec_outcome_name(KexecOutcome o) {
  switch (o) {
    case KexecOutcome::loads: return "loads";
    case KexecOutcome::loads_unverified: return "loads-unverified";
    case KexecOutcome::refused: return "refused";
  }
  return "refused";
}

std::string_view kexec_arch_name(KexecArch a) { return a == KexecArch::arm64 ? "arm64" : "x86_64"; }

bool kexec_sig_force_supported(KexecArch a) { return module::kexec_sig_force_supported(a); }

Result<KexecOptions> kexec_options_of(const KernelConfig& config) {
  auto set = [&](std::string_view name) { return config.value(name) == "y"; };
  const bool arm64 = set("ARM64");
  constexpr auto unmodelled = Error::Reason::unpredictable;
  if (!arm64 && !set("X86_64"))
    return make_error(KErr::eopnotsupp,
                      config.source + ": neither CONFIG_X86_64 nor CONFIG_ARM64: kexec_file_load of another "
                                      "architecture's image is not modelled",
                      unmodelled);
  if (!set("KEXEC_FILE"))
    return make_error(KErr::enosys, config.source + ": CONFIG_KEXEC_FILE is not set: kexec_file_load is ENOSYS");
  if (!set("KEXEC_SIG"))
    return make_error(KErr::eopnotsupp,
                      config.source + ": CONFIG_KEXEC_SIG is not set: kexec_file_load checks no signature (not modelled)",
                      unmodelled);
  const char* loader = arm64 ? "KEXEC_IMAGE_VERIFY_SIG" : "KEXEC_BZIMAGE_VERIFY_SIG";
  if (!set(loader))
    return make_error(KErr::eopnotsupp, config.source + ": CONFIG_" + loader +
                                            " is not set: the loader has no verify_sig and every image is EKEYREJECTED "
                                            "(not modelled)",
                      unmodelled);
  KexecOptions o;
  o.arch = arm64 ? KexecArch::arm64 : KexecArch::x86_64;
  o.sig_force = set("KEXEC_SIG_FORCE") && kexec_sig_force_supported(o.arch);
  return o;
}

KexecVerdict kexec_verdict(ByteView image, const TrustStore& trust, const TrustStore* platform,
                           const KernelProfile& profile, const KexecOptions& options) {
  return module::kexec_file_check(image, trust.impl().keyring, platform ? &platform->impl().keyring : nullptr,
                                  api::to_kernel(profile), options.sig_force && kexec_sig_force_supported(options.arch),
                                  api::backend_named(options.backend),
                                  options.arch);
}

KexecVerdict kexec_verdict_file(const std::string& path, const TrustStore& trust, const TrustStore* platform,
                                const KernelProfile& profile, const KexecOptions& options) {
  constexpr std::uint64_t kKexecFileSizeMax = 0x7fffffff;  // KEXEC_FILE_SIZE_MAX (INT_MAX)
  const Bytes image = read_file(path, kKexecFileSizeMax);
  return kexec_verdict(image, trust, platform, profile, options);
}

}  // namespace modsign
