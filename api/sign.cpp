// modsign — Signer and sign_module_file() (include/modsign/sign.hpp).
#include "modsign/sign.hpp"

#include <cstdlib>

#include "api/internal.hpp"
#include "cms/signed_data.hpp"
#include "common/file.hpp"
#include "crypto/algorithms.hpp"
#include "module/module_signature.hpp"

namespace modsign {

Signer::Signer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
Signer::Signer(const Signer&) = default;
Signer& Signer::operator=(const Signer&) = default;
Signer::~Signer() = default;

Signer Signer::load(const std::string& key_path, const std::string& cert_path) {
  std::optional<std::string> pin;
  if (const char* p = std::getenv("KBUILD_SIGN_PIN")) pin = std::string(p);
  auto key = crypto::PrivateKey::load(key_path, pin);
  if (pin) crypto::cleanse(*pin);
  if (!key) throw InputError(key_path + ": " + key.error().message);
  const std::string cert_file = cert_path.empty() ? key_path : cert_path;
  auto certs = crypto::Certificate::load_all(cert_file);
  if (!certs) throw InputError(cert_file + ": " + certs.error().message);
  for (auto& c : certs.value())
    if (c.public_key() == key->public_key())
      return Signer(std::make_shared<const Impl>(Impl{std::move(key.value()), std::move(c), cert_file}));
  throw InputError(cert_file + ": no certificate matches the private key " + key_path);
}

std::string Signer::algorithm() const { return std::string(crypto::key_algo_name(impl_->key.algo())); }
const std::string& Signer::certificate_path() const { return impl_->cert_path; }

SignReport sign_module_file(const Signer& signer, const std::string& path, const SignOptions& options) {
  const auto& s = signer.impl();
  const auto hash = crypto::hash_by_name(options.hash);
  if (!hash) throw InputError(path + ": unknown hash '" + options.hash + "'");
  if (crypto::is_ml_dsa(s.key.algo()) && options.signed_attrs && *hash != crypto::HashAlgo::sha512)
    throw InputError(path + ": ML-DSA with signedAttrs needs sha512 (kernels refuse any other digest there)");
  const Bytes file = read_file(path);
  if (const auto c = module::detect_compression(file); c != module::Compression::none)
    throw InputError(path + ": " + std::string(module::compression_name(c)) +
                     "-compressed module: decompress it, sign the .ko, then recompress it");
  ByteView content = file;
  if (module::has_marker(file)) {
    if (!options.replace) throw InputError(path + ": module is already signed");
    auto split = module::split(file);
    if (!split)
      throw InputError(path + ": cannot strip the existing signature: " + std::string(errno_name(split.error().code)) +
                       " " + split.error().message);
    content = split->content;
  }
  cms::BuildOptions opt;
  opt.digest = *hash;
  opt.signed_attrs = options.signed_attrs;
  opt.sid = options.skid ? cms::SignerIdType::subject_key_id : cms::SignerIdType::issuer_and_serial;
  opt.backend = s.key.has_ml_dsa_seed() ? crypto::default_ml_dsa_backend(crypto::MlDsaOp::sign) : crypto::Backend::openssl;
  auto cms_der = cms::build_detached(s.key, s.cert, content, opt);
  if (!cms_der) throw InputError(path + ": " + cms_der.error().message);
  SignReport r;
  r.path = options.out.empty() ? path : options.out;
  write_file_atomic(r.path, module::append_signature(content, cms_der.value()));
  r.algorithm = signer.algorithm();
  r.hash = std::string(crypto::hash_info(*hash).name);
  r.signed_attrs = options.signed_attrs;
  r.cms_size = cms_der->size();
  return r;
}

}  // namespace modsign
