// mirrors kernel/module/signing.c module_sig_check, mod_verify_sig; kernel/module/main.c load_module (module_decompress
// before module_sig_check), Linux 7.2.13 modsign — the load decision for a signed module (kernel/module/signing.c
// module_sig_check / mod_verify_sig, kernel/module_signature.c mod_check_sig).
#pragma once

#include <string>
#include <vector>

#include "cms/kernel_model.hpp"
#include "cms/system_keyring.hpp"
#include "common/result.hpp"
#include "modsign/load_verdict.hpp"
#include "module/decompress.hpp"

namespace modsign {
class FileReader;  // common/file.hpp
}

namespace modsign::module {

// LoadOutcome and the verdict are public data (include/modsign/verdict.hpp).
using modsign::LoadOutcome;
using modsign::outcome_name;
using LoadVerdict = modsign::Verdict;

/// module_sig_check()'s decision on mod_verify_sig's result `err` (kernel/module/signing.c):
/// none loads ("signature verified: <detail>"); a soft error (ENODATA, ENOPKG, ENOKEY) is
/// refused with EKEYREJECTED when `profile.enforce`, with EPERM under `profile.lockdown`,
/// else loads tainted; every other errno refuses the module with it.  Sets outcome,
/// sig_errno, load_errno and reason of `v` (the rest is kept).  The one place this rule
/// lives: predictions and blacklist verdicts both use it.
/// `trusted key "CN" (skid HEX, serial HEX)`: the certificate that vouched for a signer, as
/// verdicts name it (module and kexec alike).
std::string trusted_key_text(const TrustedKey& key);

LoadVerdict decide(LoadVerdict v, KErr err, const std::string& detail, const cms::KernelModel& profile);

/// Predict module loading (kernel-semantics §5.2): `mangled` = init_module flags
/// MODULE_INIT_IGNORE_MODVERSIONS/VERMAGIC (the signature is then ignored).  The
/// trailer is checked as mod_check_sig does, then verify_pkcs7_signature(usage module)
/// against `keyring`.  ENODATA/ENOPKG/ENOKEY are soft: refused with EKEYREJECTED when
/// `profile.enforce`, with EPERM under `profile.lockdown`, else loads tainted.  Every other
/// error refuses the module with that errno.  Mainline behaviour: Debian's kernels also
/// retry ENOKEY against the platform (UEFI db/MOK) keyring, which is not modelled here.
LoadVerdict module_sig_check(ByteView file, const cms::Keyring& keyring, const cms::KernelModel& profile,
                             bool mangled = false, crypto::Backend backend = crypto::Backend::automatic);

/// module_sig_check() for an uncompressed module file read in one streaming pass
/// (1 MiB chunks): the hashes the signers name and, for ML-DSA without signedAttrs, the μ
/// under every ML-DSA key of the keyring and the message are computed together, then the
/// mirror runs on those (verify_pkcs7_signature_prehashed).  Same verdicts, constant
/// memory.  Throws IoError when the file cannot be read.
LoadVerdict module_sig_check_file(const std::string& path, const cms::Keyring& keyring,
                                  const cms::KernelModel& profile);
/// The same, of a file already open (a walked entry's locked file).
LoadVerdict module_sig_check_file(const FileReader& in, const cms::Keyring& keyring, const cms::KernelModel& profile);

/// load_module() on a module read from disk: module_decompress() runs before
/// module_sig_check(), so a stream the kernel cannot decompress (m.kernel_decompress_problem
/// non-empty) refuses the module with EINVAL, no signature checked (reason: the problem,
/// every errno EINVAL); otherwise module_sig_check(m.image, ...).  Verdict::compression is
/// `m` without its image for a compressed module.
LoadVerdict module_sig_check_image(const ModuleImage& m, const cms::Keyring& keyring, const cms::KernelModel& profile,
                                   crypto::Backend backend = crypto::Backend::automatic);

}  // namespace modsign::module
