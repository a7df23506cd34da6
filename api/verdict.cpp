// modsign — TrustStore and predict_module_file() (include/modsign/verdict.hpp).
#include "modsign/verdict.hpp"

#include "api/internal.hpp"
#include "common/file.hpp"
#include "module/module_sig_check.hpp"
#include "module/module_signature.hpp"

namespace modsign {

TrustStore::TrustStore(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
TrustStore::TrustStore(const TrustStore&) = default;
TrustStore& TrustStore::operator=(const TrustStore&) = default;
TrustStore::~TrustStore() = default;

TrustStore TrustStore::from_certificates(const std::vector<std::string>& paths, const KernelProfile& profile) {
  const kernel::KernelProfile kp = api::to_kernel(profile);
  auto impl = std::make_shared<Impl>();
  for (const auto& path : paths) {
    const std::size_t first = impl->keyring.certificates.size();
    if (auto st = impl->keyring.add_path(path); !st) throw InputError(st.error().message);
    for (std::size_t i = first; i < impl->keyring.certificates.size(); ++i)
      if (auto st = kernel::x509_supported(impl->keyring.certificates[i], kp); !st)
        impl->notes.push_back(path + " certificate " + std::to_string(i - first + 1) + ": " +
                              std::string(errno_name(st.error().code)) + ": " + st.error().message);
  }
  return TrustStore(std::move(impl));
}

std::size_t TrustStore::size() const { return impl_->keyring.certificates.size(); }
const std::vector<std::string>& TrustStore::notes() const { return impl_->notes; }

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
