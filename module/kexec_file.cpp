// mirrors kernel/kexec_file.c kexec_kernel_verify_pe_sig, kexec_image_verify_sig, kimage_validate_signature,
// kimage_file_prepare_segments (the order of its checks), kexec_image_probe_default, Linux 7.2.13
#include "module/kexec_file.hpp"

#include <optional>
#include <string>

#include "cms/verify_pefile.hpp"
#include "module/kernel_config.hpp"
#include "module/kernel_read_file.hpp"
#include "module/kexec_bzimage64.hpp"
#include "module/kexec_image.hpp"
#include "module/signing.hpp"

namespace modsign::module {

namespace {

void take(KexecVerdict& v, const cms::PefileReport& r, const char* keyring) {
  v.sig_errno = r.pkcs7.err;
  v.reason = r.pkcs7.reason;
  v.keyring = keyring;
  v.signers = r.pkcs7.signers;
  v.trusted_by = r.pkcs7.trusted_by;
  v.trusted_keys = r.pkcs7.trusted_keys;
  v.log = r.pkcs7.log;
  v.digest_algo = r.ctx.digest_algo;
  v.signed_digest = r.ctx.digest;
  v.image_digest = r.computed;
}

}  // namespace

bool kexec_sig_force_supported(KexecArch arch) { return arch == KexecArch::x86_64; }

Machine machine_of(KexecArch arch) { return arch == KexecArch::arm64 ? Machine::arm64 : Machine::x86_64; }

Result<KexecOptions> kexec_options_of(const KernelConfig& config) {
  auto set = [&](std::string_view name) { return is_set_y(config, name); };
  const std::optional<Machine> machine = module::machine_of(config);
  const bool arm64 = machine == Machine::arm64;
  constexpr auto unmodelled = Error::Reason::unpredictable;
  if (!arm64 && machine != Machine::x86_64)
    return make_error(KErr::eopnotsupp,
                      config.source + ": " +
                          (machine ? "an " + std::string(machine_name(*machine)) + " kernel"
                                   : std::string("not exactly one of CONFIG_X86_64, CONFIG_ARM64 and "
                                                 "CONFIG_S390 is y")) +
                          ": kexec_file_load of another architecture's image is not modelled",
                      unmodelled);
  if (!set("KEXEC_FILE"))
    return make_error(KErr::enosys, config.source + ": CONFIG_KEXEC_FILE is not set: kexec_file_load is ENOSYS");
  if (!set("KEXEC_SIG"))
    return make_error(
        KErr::eopnotsupp,
        config.source + ": CONFIG_KEXEC_SIG is not set: kexec_file_load checks no signature (not modelled)",
        unmodelled);
  const char* loader = arm64 ? "KEXEC_IMAGE_VERIFY_SIG" : "KEXEC_BZIMAGE_VERIFY_SIG";
  if (!set(loader))
    return make_error(KErr::eopnotsupp,
                      config.source + ": CONFIG_" + loader +
                          " is not set: the loader has no verify_sig and every image is EKEYREJECTED "
                          "(not modelled)",
                      unmodelled);
  KexecOptions o;
  o.arch = arm64 ? KexecArch::arm64 : KexecArch::x86_64;
  o.sig_force = set("KEXEC_SIG_FORCE") && module::kexec_sig_force_supported(o.arch);
  o.platform_keyring = set("INTEGRITY_PLATFORM_KEYRING");
  return o;
}

KexecVerdict kexec_file_check(ByteView image, const cms::Keyring& secondary, const cms::Keyring* platform,
                              const cms::KernelModel& profile, bool sig_force, crypto::Backend backend, KexecArch arch,
                              bool five_level_paging) {
  KexecVerdict v;
  // kimage_file_prepare_segments reads the image with kernel_read_file_from_fd first: an
  // empty file is EINVAL before any loader probes it.
  if (auto empty = kernel_read_file_refusal(image.size())) {
    v.outcome = KexecOutcome::refused;
    v.err = v.load_errno = empty->code;
    v.reason = "the kernel image is empty (kernel_read_file: EINVAL before the loader's probe)";
    return v;
  }
  // arch_kexec_kernel_image_probe comes first: an image no loader takes is never checked.
  // kexec_image_probe_default returns the (only) loader's own error.
  if (auto st = arch == KexecArch::arm64 ? arm64_image_probe(image) : bzimage64_probe(image, five_level_paging); !st) {
    v.outcome = KexecOutcome::refused;
    v.err = v.load_errno = st.error().code;
    v.reason = st.error().message;
    return v;
  }
  // kexec_kernel_verify_pe_sig: VERIFY_USE_SECONDARY_KEYRING, then the platform keyring.
  take(v, cms::verify_pefile_signature(image, secondary, profile, backend), "secondary");
  if (v.sig_errno == KErr::enokey && platform) {
    cms::Keyring plat{platform->certificates, secondary.blacklist};
    const std::string first = v.reason;
    take(v, cms::verify_pefile_signature(image, plat, profile, backend), "platform");
    v.reason = "secondary keyring: " + first + "; platform keyring: " + v.reason;
  }
  if (v.sig_errno == KErr::none) {
    v.outcome = KexecOutcome::loads;
    v.reason = "signature verified (" + v.keyring + " keyring)";
    if (!v.trusted_keys.empty()) v.reason += ": " + trusted_key_text(v.trusted_keys.front());
    return v;
  }
  // kimage_validate_signature
  if (sig_force) {
    v.outcome = KexecOutcome::refused;
    v.err = v.load_errno = v.sig_errno;
    v.reason =
        "Enforced kernel signature verification failed (" + std::string(errno_name(v.sig_errno)) + "): " + v.reason;
  } else if (profile.lockdown) {
    v.outcome = KexecOutcome::refused;
    v.err = v.load_errno = KErr::eperm;
    v.reason = "Lockdown: kexec of unsigned images is restricted (" + std::string(errno_name(v.sig_errno)) + ": " +
               v.reason + ")";
  } else {
    v.outcome = KexecOutcome::loads_unverified;
    v.err = v.sig_errno;
    v.reason = "kernel signature verification failed (" + std::string(errno_name(v.sig_errno)) + "): " + v.reason;
  }
  return v;
}

}  // namespace modsign::module
