// modsign — TrustStore (include/modsign/trust.hpp): the files loaded in the kernel's order.
#include "modsign/trust.hpp"

#include "api/internal.hpp"
#include "blacklist/blacklist.hpp"
#include "blacklist/hash_list.hpp"
#include "blacklist/load_uefi.hpp"
#include "cms/system_keyring.hpp"
#include "cms/x509_cert_parser.hpp"

namespace modsign {

TrustStore::TrustStore(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
TrustStore::TrustStore(const TrustStore&) = default;
TrustStore& TrustStore::operator=(const TrustStore&) = default;
TrustStore::~TrustStore() = default;

TrustStore TrustStore::load(const TrustSources& sources, const KernelProfile& profile) {
  return load(sources, profile, nullptr);
}

TrustStore TrustStore::load(const TrustSources& src, const KernelProfile& profile, std::vector<std::string>* pending) {
  const cms::KernelModel kp = api::to_model(profile);
  auto impl = std::make_shared<Impl>();
  impl->profile = profile;
  if (pending) pending->clear();
  struct Pending {  // the keyring notes so far, for the caller, when loading stops
    std::vector<std::string>* out;
    const std::vector<std::string>& notes;
    bool done = false;
    ~Pending() {
      if (out && !done) *out = notes;
    }
  } guard{pending, impl->keyring_notes};
  // 1. .builtin_trusted_keys / .secondary_trusted_keys.
  for (const auto& k : src.keyrings)
    if (auto st = cms::load_keyring_path(impl->keyring, k, kp, impl->keyring_notes, src.strict); !st)
      throw InputError(st.error().message);
  blacklist::Sources& bl = impl->sources;
  // 2. blacklist_init(): CONFIG_SYSTEM_BLACKLIST_HASH_LIST (device_initcall).
  for (const auto& f : src.blacklists)
    if (auto st = blacklist::load_hash_list(bl, f, blacklist::read_hash_list(f)); !st)
      throw InputError(st.error().message + " (run modsign blacklist lint)");
  // 3. load_revocation_certificate_list(): CONFIG_SYSTEM_REVOCATION_KEYS (late_initcall).
  for (const auto& f : src.revoked)
    if (auto st = blacklist::load_revocation_certificates(bl, f, kp); !st)
      throw InputError(f + ": " + st.error().message);
  // 4. load_uefi_certs(): dbx and MokListXRT share get_handler_for_dbx.
  for (const auto& f : src.dbx)
    if (auto st =
            blacklist::efi::load_dbx_file(f, bl, blacklist::efi::Variable::dbx, blacklist::efi::Container::detect, kp);
        !st)
      throw InputError(f + ": " + std::string(errno_name(st.error().code)) + ": " + st.error().message);
  impl->keyring.blacklist = bl.keyring;
  impl->notes = impl->keyring_notes;
  impl->notes.insert(impl->notes.end(), bl.notes.begin(), bl.notes.end());
  guard.done = true;
  return TrustStore(std::move(impl));
}

TrustStore TrustStore::from_certificates(const std::vector<std::string>& paths, const KernelProfile& profile) {
  const cms::KernelModel kp = api::to_model(profile);
  auto impl = std::make_shared<Impl>();
  impl->profile = profile;
  for (const auto& path : paths) {
    const std::size_t first = impl->keyring.certificates.size();
    if (auto st = impl->keyring.add_path(path, false, &impl->keyring_notes); !st) throw InputError(st.error().message);
    for (std::size_t i = first; i < impl->keyring.certificates.size(); ++i)
      if (auto st = cms::x509_supported(impl->keyring.certificates[i], kp); !st)
        impl->keyring_notes.push_back(path + " certificate " + std::to_string(i - first + 1) + ": " +
                                      std::string(errno_name(st.error().code)) + ": " + st.error().message);
  }
  impl->notes = impl->keyring_notes;
  return TrustStore(std::move(impl));
}

std::size_t TrustStore::size() const { return impl_->keyring.certificates.size(); }
const std::vector<std::string>& TrustStore::notes() const { return impl_->notes; }
const std::vector<std::string>& TrustStore::keyring_notes() const { return impl_->keyring_notes; }
const std::vector<std::string>& TrustStore::blacklist_notes() const { return impl_->sources.notes; }
const KernelProfile& TrustStore::profile() const { return impl_->profile; }

std::vector<Bytes> TrustStore::certificates() const {
  std::vector<Bytes> out;
  for (const auto& c : impl_->keyring.certificates) out.push_back(c.der());
  return out;
}

std::vector<Bytes> TrustStore::supported_certificates() const {
  const cms::KernelModel kp = api::to_model(impl_->profile);
  std::vector<Bytes> out;
  for (const auto& c : impl_->keyring.certificates)
    if (cms::x509_supported(c, kp)) out.push_back(c.der());
  return out;
}

std::vector<std::string> TrustStore::blacklist_descriptions() const {
  const auto& d = impl_->sources.keyring.descriptions;
  return {d.begin(), d.end()};
}

std::vector<TrustOrigin> TrustStore::origins(const std::string& description) const {
  std::vector<TrustOrigin> out;
  const auto it = impl_->sources.description_origins.find(description);
  if (it != impl_->sources.description_origins.end())
    for (const auto& o : it->second) out.push_back({o.file, o.where});
  return out;
}

std::vector<RevokedCertificate> TrustStore::revoked_certificates() const {
  std::vector<RevokedCertificate> out;
  const auto& s = impl_->sources;
  for (std::size_t i = 0; i < s.keyring.revoked.size(); ++i)
    out.push_back({s.keyring.revoked[i].der(), {s.revoked_origins[i].file, s.revoked_origins[i].where}});
  return out;
}

}  // namespace modsign
