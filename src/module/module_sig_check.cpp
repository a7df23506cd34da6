#include "module/module_sig_check.hpp"

#include "module/module_signature.hpp"

namespace modsign::module {

std::string_view outcome_name(LoadOutcome o) {
  switch (o) {
    case LoadOutcome::loads: return "loads";
    case LoadOutcome::loads_tainted: return "loads-tainted";
    case LoadOutcome::refused: return "refused";
  }
  return "?";
}

LoadVerdict module_sig_check(ByteView file, const kernel::Keyring& keyring, const kernel::KernelProfile& profile,
                             bool mangled, crypto::Backend backend) {
  LoadVerdict v;
  KErr err = KErr::enodata;
  std::string detail = mangled ? "signature ignored: module loaded with version information removed" : "no signature marker";
  if (!mangled && has_marker(file)) {
    auto split = module::split(file);
    if (!split) {
      err = split.error().code;
      detail = split.error().message;
    } else {
      auto rep = kernel::verify_pkcs7_signature(split->content, split->cms, keyring, kernel::Usage::module, profile,
                                                backend);
      v.signers = std::move(rep.signers);
      v.log = std::move(rep.log);
      err = rep.err;
      detail = rep.reason;
      if (err == KErr::none && !v.signers.empty()) {
        detail = v.signers.front().sig_algo + " signature";
        if (v.signers.front().signed_attrs) detail += " with signedAttrs";
        if (!rep.trusted_by.empty()) detail += ", trusted key \"" + rep.trusted_by.front() + "\"";
      }
    }
  }
  v.sig_errno = err;
  if (err == KErr::none) {
    v.outcome = LoadOutcome::loads;
    v.reason = "signature verified: " + detail;
    return v;
  }
  const char* soft = err == KErr::enodata  ? "unsigned module"
                     : err == KErr::enopkg ? "module with unsupported crypto"
                     : err == KErr::enokey ? "module with unavailable key"
                                           : nullptr;
  if (!soft) {
    // All other errors are fatal, even when signatures are not required.
    v.outcome = LoadOutcome::refused;
    v.load_errno = err;
    v.reason = detail;
    return v;
  }
  if (profile.enforce) {
    v.outcome = LoadOutcome::refused;
    v.load_errno = KErr::ekeyrejected;
    v.reason = std::string("Loading of ") + soft + " is rejected (" + detail + ")";
    return v;
  }
  if (profile.lockdown) {
    v.outcome = LoadOutcome::refused;
    v.load_errno = KErr::eperm;
    v.reason = std::string("Lockdown: unsigned module loading is restricted: ") + soft + " (" + detail + ")";
    return v;
  }
  v.outcome = LoadOutcome::loads_tainted;
  v.reason = std::string(soft) + ": " + detail + "; module verification failed: signature and/or required key missing - tainting kernel";
  return v;
}

}  // namespace modsign::module
