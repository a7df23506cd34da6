// modsign — predict_module_file() and predict_module_image() (include/modsign/verdict.hpp).
#include "modsign/verdict.hpp"

#include "api/internal.hpp"
#include "common/file.hpp"
#include "common/module_read.hpp"
#include "module/decompress.hpp"
#include "module/module_signature.hpp"
#include "module/signing.hpp"

namespace modsign {

crypto::Backend api::backend_named(const std::string& name) {
  if (name == "botan") return crypto::Backend::botan;
  if (name == "openssl") return crypto::Backend::openssl;
  if (name == "auto") return crypto::Backend::automatic;
  throw UsageError("unknown backend '" + name + "' (auto|openssl|botan)");
}

Verdict predict_module_image(const ModuleImage& m, const TrustStore& trust, const KernelProfile& profile,
                             const std::string& backend) {
  Verdict v =
      module::module_sig_check_image(m, impl_of(trust).keyring, api::to_model(profile), api::backend_named(backend));
  if (const auto stack = module::split_stack(m.image); stack.size() > 1) {
    const std::size_t n = stack.size() - 1;
    v.notes.push_back("note: " + std::to_string(n) + (n == 1 ? " more signature" : " more signatures") +
                      " under the one the kernel checks (it reads only the outermost; modsign info lists them)");
  }
  return v;
}

Verdict predict_module_file(const std::string& path, const TrustStore& trust, const KernelProfile& profile,
                            const PredictOptions& o) {
  std::optional<InputLock> lock;  // a walked entry: one open file, checked to be the one the walk found
  if (o.expect_file) lock.emplace(path, o.expect_file, LockMode::shared);
  const auto& keyring = impl_of(trust).keyring;
  if (lock ? module::streamable_file(FileReader(*lock), o.stream_above) : module::streamable_file(path, o.stream_above))
    return lock ? module::module_sig_check_file(FileReader(*lock), keyring, api::to_model(profile))
                : module::module_sig_check_file(path, keyring, api::to_model(profile));
  const Bytes stored = lock ? read_module_bytes(*lock, o.max_size) : read_module_bytes(path, o.max_size);
  auto img = module::open_module(stored, o.max_size, {o.keep_bad_stream, true});
  if (!img) throw InputError(path + ": " + img.error().message);
  return predict_module_image(img.value(), trust, profile, o.backend);
}

Verdict predict_module_file(const std::string& path, const TrustStore& trust, const KernelProfile& profile) {
  {
    FileReader f(path);
    const Bytes head = f.read_at(0, static_cast<std::size_t>(std::min<std::uint64_t>(f.size(), 16)));
    if (const auto c = module::detect_compression(head); c != module::Compression::none)
      throw InputError(path + ": " + std::string(module::compression_name(c)) +
                       "-compressed module: the kernel checks the decompressed image; decompress it first");
  }
  return module::module_sig_check_file(path, impl_of(trust).keyring, api::to_model(profile));
}

}  // namespace modsign
