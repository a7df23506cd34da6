// modsign — what the facade implementations (api/) share: the handles' insides and the
// conversion of the public KernelProfile.  Not installed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "blacklist/sources.hpp"
#include "cms/kernel.hpp"
#include "cms/signed_data.hpp"
#include "crypto/crypto.hpp"
#include "module/decompress.hpp"
#include "modsign/profile.hpp"
#include "modsign/sign.hpp"
#include "modsign/trust.hpp"
#include "modsign/verdict.hpp"

namespace modsign {

struct Signer::Impl {
  crypto::PrivateKey key;
  crypto::Certificate cert;
  std::string cert_path;
  std::string key_path;
  std::vector<std::string> notes;
};

/// keyring.blacklist is a copy of sources.keyring (what verify_pkcs7_signature consults);
/// `sources` keeps the origins for blacklist checks.
struct TrustStore::Impl {
  KernelProfile profile;
  kernel::Keyring keyring;
  blacklist::Sources sources;
  std::vector<std::string> notes, keyring_notes;
};

namespace api {
/// The internal profile with the public one's generation and switches.
kernel::KernelProfile to_kernel(const KernelProfile& p);
/// The ML-DSA verification backend a PredictOptions/KexecOptions::backend string names:
/// "botan", "openssl", anything else the library's default for verification (api/verdict.cpp).
crypto::Backend backend_named(const std::string& name);

/// A module file read for signing or stripping: the stored bytes and the image the kernel
/// checks.  Throws IoError (unreadable, larger than max(max_size, 1 GiB)) and InputError
/// "<path>: <fmt>-compressed module: <reason>" for a stream that does not decompress within
/// `max_size` (api/sign.cpp).
struct StoredModule {
  Bytes stored;
  module::ModuleImage m;
};
StoredModule read_stored_module(const std::string& path, std::uint64_t max_size);
/// Throws InputError "PATH: empty file, not a module" or "PATH: a PEM file (-----BEGIN
/// ...), not a module" (a key or certificate named as the module).
void refuse_non_module(const std::string& path);
/// refuse_output_over() for sign_module_file(): the signed module `out` (unless p7s_only)
/// against the key and certificate files; the .p7s `p7s` (if written) against those, the
/// input module and `out`.  Throws IoError.
void refuse_sign_outputs(const Signer& signer, const std::string& path, const std::string& out,
                         const std::string& p7s, const SignOptions& o);
/// Routes the writes of one call to `batch` (when not nullptr), attributed to the item of
/// the thread's active Scope of that batch.
struct BatchRoute {
  explicit BatchRoute(OutputBatch* b) {
    if (b) scope.emplace(*b, OutputBatch::Scope::current_item(*b));
  }
  std::optional<OutputBatch::Scope> scope;
};
/// sign_module_file() in one streaming pass (api/sign_stream.cpp).
SignReport sign_streaming(const Signer& signer, const std::string& path, const SignOptions& options);
/// The cms::BuildOptions of `options` for `signer`, after check_sign_options() (api/sign.cpp);
/// `prefix` ("<path>: " or "") goes before the hash messages.
cms::BuildOptions build_options(const Signer& signer, const SignOptions& options, const std::string& prefix);
}  // namespace api

}  // namespace modsign
