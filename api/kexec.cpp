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

std::string_view kexec_arch_name(KexecArch a) { return machine_name(module::machine_of(a)); }

bool kexec_sig_force_supported(KexecArch a) { return module::kexec_sig_force_supported(a); }

Result<KexecOptions> kexec_options_of(const KernelConfig& config) { return module::kexec_options_of(config); }

KexecVerdict kexec_verdict(ByteView image, const TrustStore& trust, const TrustStore* platform,
                           const KernelProfile& profile, const KexecOptions& options) {
  return module::kexec_file_check(image, impl_of(trust).keyring,
                                  platform && options.platform_keyring ? &impl_of(*platform).keyring : nullptr,
                                  api::to_model(profile), options.sig_force && kexec_sig_force_supported(options.arch),
                                  api::backend_named(options.backend), options.arch,
                                  options.five_level_paging && options.arch == KexecArch::x86_64);
}

KexecVerdict kexec_verdict_file(const std::string& path, const TrustStore& trust, const TrustStore* platform,
                                const KernelProfile& profile, const KexecOptions& options) {
  constexpr std::uint64_t kKexecFileSizeMax = 0x7fffffff;  // KEXEC_FILE_SIZE_MAX (INT_MAX)
  const Bytes image = read_file(path, kKexecFileSizeMax);
  return kexec_verdict(image, trust, platform, profile, options);
}

}  // namespace modsign
