// modsign — TrustStore and predict_module_file() (include/modsign/verdict.hpp).
#include "modsign/verdict.hpp"

#include "api/internal.hpp"
#include "common/file.hpp"
#include "module/module_sig_check.hpp"
#include "module/module_signature.hpp"

namespace modsign {

Verdict predict_module_file(const std::string& path, const TrustStore& trust, const KernelProfile& profile) {
  {
    FileReader f(path);
    const Bytes head = f.read_at(0, static_cast<std::size_t>(std::min<std::uint64_t>(f.size(), 16)));
    if (const auto c = module::detect_compression(head); c != module::Compression::none)
      throw InputError(path + ": " + std::string(module::compression_name(c)) +
                       "-compressed module: the kernel checks the decompressed image; decompress it first");
  }
  const auto v = module::module_sig_check_file(path, trust.impl().keyring, api::to_kernel(profile));
  Verdict r;
  r.outcome = std::string(module::outcome_name(v.outcome));
  r.err = v.outcome == module::LoadOutcome::refused ? v.load_errno : v.sig_errno;
  r.reason = v.reason;
  return r;
}

}  // namespace modsign
