// mirrors kernel/kexec_file.c kexec_kernel_verify_pe_sig, kexec_image_verify_sig, kimage_validate_signature,
// kimage_file_prepare_segments (the order of its checks), kexec_image_probe_default, Linux 7.2.13
#pragma once

#include "cms/kernel_model.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"
#include "modsign/kexec.hpp"
#include "modsign/machine.hpp"

namespace modsign::module {

using KexecVerdict = modsign::KexecVerdict;

/// kimage_file_prepare_segments() up to the signature check, for an image already read:
/// the probe of `arch`'s loader (bzImage64_probe, arm64's image_probe), then
/// kimage_validate_signature() with kexec_kernel_verify_pe_sig()
/// (`secondary`, then `platform` on ENOKEY when it is not nullptr).  `sig_force` is
/// CONFIG_KEXEC_SIG_FORCE, profile.lockdown LOCKDOWN_KEXEC, `five_level_paging` the x86-64
/// machine's paging mode (bzimage64_probe).  Outcomes as kexec_verdict()
/// in include/modsign/kexec.hpp.
/// CONFIG_KEXEC_SIG_FORCE's dependency ARCH_SUPPORTS_KEXEC_SIG_FORCE (kernel/Kconfig.kexec):
/// selected by arch/x86/Kconfig alone.
bool kexec_sig_force_supported(KexecArch arch);
/// The Machine whose loader `arch` names.
Machine machine_of(KexecArch arch);
/// kexec_options_of() (include/modsign/kexec.hpp): the architecture (module::machine_of),
/// then kernel/Kconfig.kexec's KEXEC_FILE, KEXEC_SIG, the loader's *_VERIFY_SIG and
/// KEXEC_SIG_FORCE.
Result<KexecOptions> kexec_options_of(const KernelConfig& config);

KexecVerdict kexec_file_check(ByteView image, const cms::Keyring& secondary, const cms::Keyring* platform,
                              const cms::KernelModel& profile, bool sig_force, crypto::Backend backend,
                              KexecArch arch = KexecArch::x86_64, bool five_level_paging = false);

}  // namespace modsign::module
