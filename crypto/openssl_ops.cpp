// modsign's own: OpenSSL backend — digests, Hasher, MlDsaMu, signing and verification (OpenSSL and Botan ML-DSA).
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rsa.h>

#include <atomic>

#include "crypto/crypto.hpp"
#include "crypto/openssl_util.hpp"
#include "crypto/pkcs11_store.hpp"

namespace modsign::crypto {

namespace {

using ossl::MdCtxPtr;
using ossl::ml_dsa_name;
using ossl::PkeyCtxPtr;
using ossl::SigPtr;

const EVP_MD* md_of(HashAlgo a) {
  const EVP_MD* md = EVP_get_digestbyname(std::string(hash_info(a).openssl_name).c_str());
  if (!md) throw LibraryError("OpenSSL lacks digest " + std::string(hash_info(a).name));
  return md;
}

}  // namespace

// ------------------------------------------------------------------------------- hashes

Bytes digest(HashAlgo a, ByteView data) {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned n = 0;
  if (!EVP_Digest(data.data(), data.size(), out.data(), &n, md_of(a), nullptr))
    throw LibraryError("EVP_Digest: " + openssl_error());
  out.resize(n);
  return out;
}

struct Hasher::Impl {
  MdCtxPtr ctx{EVP_MD_CTX_new()};
};

Hasher::Hasher(HashAlgo a) : impl_(std::make_unique<Impl>()) {
  if (!impl_->ctx || !EVP_DigestInit_ex(impl_->ctx.get(), md_of(a), nullptr))
    throw LibraryError("EVP_DigestInit_ex: " + openssl_error());
}
Hasher::~Hasher() = default;
void Hasher::update(ByteView d) {
  if (!EVP_DigestUpdate(impl_->ctx.get(), d.data(), d.size()))
    throw LibraryError("EVP_DigestUpdate: " + openssl_error());
}
Bytes Hasher::final() {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned n = 0;
  if (!EVP_DigestFinal_ex(impl_->ctx.get(), out.data(), &n))
    throw LibraryError("EVP_DigestFinal_ex: " + openssl_error());
  out.resize(n);
  return out;
}

// ---------------------------------------------------------------------------- signatures

namespace {
/// ml_dsa_uses(): relaxed counters, one increment per signature made or checked.
struct UseCounters {
  std::atomic<std::uint64_t> openssl_sign{0}, botan_sign{0}, openssl_verify{0}, botan_verify{0};
};
UseCounters g_uses;
void count(std::atomic<std::uint64_t>& c) { c.fetch_add(1, std::memory_order_relaxed); }

/// The ML-DSA parameters: "mu" (the input is μ) and, for signing, "deterministic" (rnd = 0^32),
/// each only when set; `ints` holds their values.
struct MlDsaParams {
  int ints[2] = {1, 1};
  OSSL_PARAM p[3];
  MlDsaParams(bool mu, bool deterministic) {
    std::size_t n = 0;
    if (mu) p[n++] = OSSL_PARAM_construct_int(OSSL_SIGNATURE_PARAM_MU, &ints[0]);
    if (deterministic) p[n++] = OSSL_PARAM_construct_int(OSSL_SIGNATURE_PARAM_DETERMINISTIC, &ints[1]);
    p[n] = OSSL_PARAM_construct_end();
  }
  MlDsaParams(const MlDsaParams&) = delete;
  MlDsaParams& operator=(const MlDsaParams&) = delete;
};

Result<Bytes> openssl_ml_dsa_sign(const PrivateKey& key, ByteView msg, bool deterministic) {
  count(g_uses.openssl_sign);
  EVP_PKEY* k = static_cast<EVP_PKEY*>(key.native());
  const auto turn = pkcs11::session_turn(k);
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, k, nullptr));
  SigPtr alg(EVP_SIGNATURE_fetch(nullptr, ml_dsa_name(key.algo()), nullptr));
  MlDsaParams params(false, deterministic);
  if (!ctx || !alg || EVP_PKEY_sign_message_init(ctx.get(), alg.get(), params.p) <= 0)
    return make_error(KErr::einval, "ML-DSA sign init: " + openssl_error());
  size_t len = 0;
  if (EVP_PKEY_sign(ctx.get(), nullptr, &len, msg.data(), msg.size()) <= 0)
    return make_error(KErr::einval, "ML-DSA sign: " + openssl_error());
  Bytes sig(len);
  if (EVP_PKEY_sign(ctx.get(), sig.data(), &len, msg.data(), msg.size()) <= 0)
    return make_error(KErr::einval, "ML-DSA sign: " + openssl_error());
  sig.resize(len);
  return sig;
}

Status openssl_ml_dsa_verify(const PublicKey& key, ByteView msg, ByteView sig, ByteView context = {}) {
  count(g_uses.openssl_verify);
  EVP_PKEY* k = static_cast<EVP_PKEY*>(key.native());
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, k, nullptr));
  SigPtr alg(EVP_SIGNATURE_fetch(nullptr, ml_dsa_name(key.algo()), nullptr));
  OSSL_PARAM params[2] = {OSSL_PARAM_END, OSSL_PARAM_END};
  if (!context.empty())
    params[0] = OSSL_PARAM_construct_octet_string(OSSL_SIGNATURE_PARAM_CONTEXT_STRING,
                                                  const_cast<std::uint8_t*>(context.data()), context.size());
  if (!ctx || !alg || EVP_PKEY_verify_message_init(ctx.get(), alg.get(), params) <= 0)
    return make_error(KErr::einval, "ML-DSA verify init: " + openssl_error());
  int rc = EVP_PKEY_verify(ctx.get(), sig.data(), sig.size(), msg.data(), msg.size());
  ERR_clear_error();
  if (rc != 1) return make_error(KErr::ekeyrejected, "signature does not verify");
  return ok_status();
}
/// botan::ml_dsa_verify() as a Status.
Status botan_ml_dsa_verify(const PublicKey& key, ByteView message, ByteView signature) {
  count(g_uses.botan_verify);
  if (!botan::ml_dsa_verify(key.algo(), key.raw(), message, signature))
    return make_error(KErr::ekeyrejected, "signature does not verify");
  return ok_status();
}
}  // namespace

MlDsaUses ml_dsa_uses() {
  return {g_uses.openssl_sign.load(std::memory_order_relaxed), g_uses.botan_sign.load(std::memory_order_relaxed),
          g_uses.openssl_verify.load(std::memory_order_relaxed), g_uses.botan_verify.load(std::memory_order_relaxed)};
}

struct MlDsaMu::Impl {
  MdCtxPtr ctx{EVP_MD_CTX_new()};
};

MlDsaMu::MlDsaMu(ByteView pk) : impl_(std::make_unique<Impl>()) {
  std::uint8_t tr[64];
  MdCtxPtr t(EVP_MD_CTX_new());
  if (!t || !EVP_DigestInit_ex(t.get(), EVP_shake256(), nullptr) || !EVP_DigestUpdate(t.get(), pk.data(), pk.size()) ||
      !EVP_DigestFinalXOF(t.get(), tr, sizeof tr))
    throw LibraryError("SHAKE256(pk): " + openssl_error());
  static constexpr std::uint8_t prefix[2] = {0x00, 0x00};  // pure mode, empty context
  if (!impl_->ctx || !EVP_DigestInit_ex(impl_->ctx.get(), EVP_shake256(), nullptr) ||
      !EVP_DigestUpdate(impl_->ctx.get(), tr, sizeof tr) || !EVP_DigestUpdate(impl_->ctx.get(), prefix, 2))
    throw LibraryError("SHAKE256 init: " + openssl_error());
}
MlDsaMu::~MlDsaMu() = default;
void MlDsaMu::update(ByteView m) {
  if (!EVP_DigestUpdate(impl_->ctx.get(), m.data(), m.size())) throw LibraryError("SHAKE256: " + openssl_error());
}
Bytes MlDsaMu::final() {
  Bytes mu(64);
  if (!EVP_DigestFinalXOF(impl_->ctx.get(), mu.data(), mu.size())) throw LibraryError("SHAKE256: " + openssl_error());
  return mu;
}

Result<Bytes> ml_dsa_sign_mu(const PrivateKey& key, ByteView mu, bool deterministic) {
  if (!is_ml_dsa(key.algo()) || mu.size() != 64)
    return make_error(KErr::einval, "ML-DSA μ signing needs an ML-DSA key and 64 bytes");
  count(g_uses.openssl_sign);
  EVP_PKEY* k = static_cast<EVP_PKEY*>(key.native());
  const auto turn = pkcs11::session_turn(k);
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, k, nullptr));
  SigPtr alg(EVP_SIGNATURE_fetch(nullptr, ml_dsa_name(key.algo()), nullptr));
  MlDsaParams params(true, deterministic);
  if (!ctx || !alg || EVP_PKEY_sign_message_init(ctx.get(), alg.get(), params.p) <= 0)
    return make_error(KErr::einval, "ML-DSA μ sign init: " + openssl_error());
  size_t len = ml_dsa_signature_size(key.algo());
  Bytes sig(len);
  if (EVP_PKEY_sign(ctx.get(), sig.data(), &len, mu.data(), mu.size()) <= 0)
    return make_error(KErr::einval, "ML-DSA μ sign: " + openssl_error());
  sig.resize(len);
  return sig;
}

Status ml_dsa_verify_mu(const PublicKey& key, ByteView mu, ByteView signature) {
  if (!is_ml_dsa(key.algo()) || mu.size() != 64)
    return make_error(KErr::einval, "ML-DSA μ verification needs an ML-DSA key and 64 bytes");
  if (signature.size() != ml_dsa_signature_size(key.algo()))
    return make_error(KErr::ebadmsg, "ML-DSA signature of the wrong size");
  count(g_uses.openssl_verify);
  EVP_PKEY* k = static_cast<EVP_PKEY*>(key.native());
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, k, nullptr));
  SigPtr alg(EVP_SIGNATURE_fetch(nullptr, ml_dsa_name(key.algo()), nullptr));
  MlDsaParams params(true, false);
  if (!ctx || !alg || EVP_PKEY_verify_message_init(ctx.get(), alg.get(), params.p) <= 0)
    return make_error(KErr::einval, "ML-DSA μ verify init: " + openssl_error());
  const int rc = EVP_PKEY_verify(ctx.get(), signature.data(), signature.size(), mu.data(), mu.size());
  ERR_clear_error();
  if (rc != 1) return make_error(KErr::ekeyrejected, "signature does not verify");
  return ok_status();
}

Backend default_ml_dsa_backend(MlDsaOp op) {
  (void)op;  // the same library for both, measured (bench/RESULTS.md)
#if defined(__x86_64__)
  return Backend::botan;
#else
  return Backend::openssl;
#endif
}

Result<Bytes> sign_message(const PrivateKey& key, HashAlgo hash, ByteView message, Backend backend,
                           bool deterministic) {
  if (!is_ml_dsa(key.algo())) return sign_digest(key, hash, digest(hash, message), deterministic);
  const Backend use = backend == Backend::automatic ? default_ml_dsa_backend(MlDsaOp::sign) : backend;
  if (use == Backend::botan) {
    // Per-thread cached Botan signer (botan_backend.cpp); the seed is read only when
    // this thread has no signer for the key yet.
    bool no_seed = false;
    try {
      auto sig = botan::ml_dsa_sign_cached(
          key.algo(), key.public_key().raw(),
          [&]() -> std::optional<SecretBytes> {
            auto seed = key.ml_dsa_seed();
            no_seed = !seed;
            return seed;
          },
          message, deterministic);
      count(g_uses.botan_sign);
      return sig;
    } catch (const std::invalid_argument& e) {
      // automatic: a key without its seed (expandedKey form, a token's) signs with OpenSSL
      if (!no_seed || backend != Backend::automatic)
        return make_error(KErr::einval, no_seed ? "the Botan backend needs an ML-DSA key with a seed" : e.what());
    }
  }
  return openssl_ml_dsa_sign(key, message, deterministic);
}

Result<Bytes> sign_digest(const PrivateKey& key, HashAlgo hash, ByteView d, bool deterministic) {
  if (is_ml_dsa(key.algo())) return make_error(KErr::einval, "ML-DSA signs messages, not digests");
  if (d.size() != hash_info(hash).size) return make_error(KErr::einval, "digest of the wrong size");
  EVP_PKEY* k = static_cast<EVP_PKEY*>(key.native());
  const auto turn = pkcs11::session_turn(k);
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, k, nullptr));
  if (!ctx || EVP_PKEY_sign_init(ctx.get()) <= 0 || EVP_PKEY_CTX_set_signature_md(ctx.get(), md_of(hash)) <= 0)
    return make_error(KErr::einval, "sign init: " + openssl_error());
  if (key.algo() == KeyAlgo::rsa && EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_PADDING) <= 0)
    return make_error(KErr::einval, "RSA padding: " + openssl_error());
  if (deterministic && is_ecdsa(key.algo())) {
    // RFC 6979 §3.2: the nonce k derived from the key and the digest (HMAC-DRBG with the
    // signature's hash), so the same digest always gives the same signature.
    unsigned int nonce_type = 1;
    const OSSL_PARAM p[] = {OSSL_PARAM_construct_uint(OSSL_SIGNATURE_PARAM_NONCE_TYPE, &nonce_type),
                            OSSL_PARAM_construct_end()};
    if (EVP_PKEY_CTX_set_params(ctx.get(), p) <= 0)
      return make_error(KErr::einval, "ECDSA deterministic nonce (RFC 6979): " + openssl_error());
  }
  size_t len = 0;
  if (EVP_PKEY_sign(ctx.get(), nullptr, &len, d.data(), d.size()) <= 0)
    return make_error(KErr::einval, "sign: " + openssl_error());
  Bytes sig(len);
  if (EVP_PKEY_sign(ctx.get(), sig.data(), &len, d.data(), d.size()) <= 0)
    return make_error(KErr::einval, "sign: " + openssl_error());
  sig.resize(len);
  return sig;
}

Result<Bytes> rsa_public_raw(const PublicKey& key, ByteView signature) {
  if (key.algo() != KeyAlgo::rsa) return make_error(KErr::einval, "not an RSA key");
  EVP_PKEY* k = static_cast<EVP_PKEY*>(key.native());
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, k, nullptr));
  if (!ctx || EVP_PKEY_verify_recover_init(ctx.get()) <= 0 ||
      EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_NO_PADDING) <= 0)
    return make_error(KErr::einval, "RSA init: " + openssl_error());
  size_t len = static_cast<size_t>(EVP_PKEY_get_size(k));
  Bytes out(len);
  if (EVP_PKEY_verify_recover(ctx.get(), out.data(), &len, signature.data(), signature.size()) <= 0) {
    ERR_clear_error();
    return make_error(KErr::einval, "RSA public operation failed");
  }
  // Left-pad to the modulus size.
  out.resize(len);
  const std::size_t k_bytes = static_cast<std::size_t>(EVP_PKEY_get_size(k));
  if (out.size() < k_bytes) out.insert(out.begin(), k_bytes - out.size(), 0);
  return out;
}

Status ml_dsa_verify_with_context(const PublicKey& key, ByteView message, ByteView signature, ByteView context,
                                  Backend backend) {
  if (!is_ml_dsa(key.algo())) return make_error(KErr::einval, "not an ML-DSA key");
  if (context.size() > 255) return make_error(KErr::einval, "ML-DSA context string longer than 255 bytes");
  if (signature.size() != ml_dsa_signature_size(key.algo()))
    return make_error(KErr::ebadmsg, "ML-DSA signature of the wrong size");
  const Backend use = backend != Backend::automatic ? backend
                      : context.empty()             ? default_ml_dsa_backend(MlDsaOp::verify)
                                                    : Backend::openssl;  // Botan's API has no context
  if (use == Backend::botan) {
    if (!context.empty()) return make_error(KErr::einval, "Botan's ML-DSA API has no context string");
    return botan_ml_dsa_verify(key, message, signature);
  }
  return openssl_ml_dsa_verify(key, message, signature, context);
}

Status verify_message(const PublicKey& key, HashAlgo hash, ByteView message, ByteView signature, Backend backend) {
  if (is_ml_dsa(key.algo())) {
    // crypto/mldsa.c: a signature of the wrong size is malformed (EBADMSG), not rejected.
    if (signature.size() != ml_dsa_signature_size(key.algo()))
      return make_error(KErr::ebadmsg, "ML-DSA signature is " + std::to_string(signature.size()) + " bytes, " +
                                           std::string(key_algo_name(key.algo())) + " needs " +
                                           std::to_string(ml_dsa_signature_size(key.algo())));
    const Backend use = backend == Backend::automatic ? default_ml_dsa_backend(MlDsaOp::verify) : backend;
    if (use == Backend::botan) return botan_ml_dsa_verify(key, message, signature);
    return openssl_ml_dsa_verify(key, message, signature);
  }
  return verify_digest(key, hash, digest(hash, message), signature);
}

Status verify_digest(const PublicKey& key, HashAlgo hash, ByteView d, ByteView signature) {
  if (is_ml_dsa(key.algo())) return make_error(KErr::einval, "ML-DSA signs messages, not digests");
  if (d.size() != hash_info(hash).size)
    return make_error(KErr::einval, "digest is " + std::to_string(d.size()) + " bytes, " +
                                        std::string(hash_info(hash).name) + " gives " +
                                        std::to_string(hash_info(hash).size));
  EVP_PKEY* k = static_cast<EVP_PKEY*>(key.native());
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, k, nullptr));
  if (!ctx || EVP_PKEY_verify_init(ctx.get()) <= 0 || EVP_PKEY_CTX_set_signature_md(ctx.get(), md_of(hash)) <= 0)
    return make_error(KErr::einval, "verify init: " + openssl_error());
  if (key.algo() == KeyAlgo::rsa && EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_PADDING) <= 0)
    return make_error(KErr::einval, "RSA padding: " + openssl_error());
  int rc = EVP_PKEY_verify(ctx.get(), signature.data(), signature.size(), d.data(), d.size());
  ERR_clear_error();
  if (rc != 1) return make_error(KErr::ekeyrejected, "signature does not verify");
  return ok_status();
}

}  // namespace modsign::crypto
