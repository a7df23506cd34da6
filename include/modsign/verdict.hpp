// modsign — what a kernel does when a signed module is loaded: init_module's signature
// check (kernel/module/signing.c module_sig_check, mod_verify_sig;
// kernel/module_signature.c mod_check_sig; certs/system_keyring.c verify_pkcs7_signature;
// Linux 7.2.13), predicted errno for errno.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/profile.hpp"
#include "modsign/result.hpp"
#include "modsign/trust.hpp"

namespace modsign {

/// The predicted outcome of loading one module.
struct Verdict {
  /// "loads" (signature verified), "loads-tainted" (a soft failure, ENODATA, ENOPKG or
  /// ENOKEY, without enforcement or lockdown: TAINT_UNSIGNED_MODULE, 'E'), or "refused".
  std::string outcome;
  /// For "refused" the errno init_module returns (EKEYREJECTED for a soft failure under
  /// enforce, EPERM under lockdown, else the check's own errno); otherwise what
  /// mod_verify_sig returned (KErr::none when the signature verified).
  KErr err = KErr::none;
  /// The kernel's log wording plus modsign's detail ("" when the module loads cleanly).
  std::string reason;
};

/// Predict init_module for the uncompressed module file at `path` (read in one streaming
/// pass, constant memory): the trailer is checked as mod_check_sig does (no marker:
/// ENODATA; a malformed struct module_signature: EBADMSG), then the PKCS#7 is parsed,
/// verified over the module bytes and its signer looked up in `trust`, all as the kernel
/// of `profile` does (unknown algorithms ENOPKG, untrusted signer ENOKEY, a bad signature
/// or messageDigest EKEYREJECTED, ...).  Mainline behaviour: Debian's kernels also try the
/// platform keyring (UEFI db, MOK) on ENOKEY, which is not modelled.
/// Throws IoError when the file cannot be read; InputError "<path>: <reason>" for a
/// compressed module (the kernel decompresses before it checks; decompress it first).
MODSIGN_API Verdict predict_module_file(const std::string& path, const TrustStore& trust, const KernelProfile& profile);

}  // namespace modsign
