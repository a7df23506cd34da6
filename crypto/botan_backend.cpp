// Botan backend: pure ML-DSA (empty context) keygen-from-seed, sign, verify; hashes for
// benchmarks.
//
// Thread safety: Botan key objects are immutable after construction, but PK_Signer and
// PK_Verifier hold a running message hash, so they must not be shared between threads.
// The cached operations below live in thread_local storage: each thread (e.g. each
// worker of `modsign sign --jobs N`) builds its own, once per key, and reuses it for
// every module.  That saves the expansion of the matrix A (and, for signing, the NTT of
// s1, s2, t0) that Botan performs when an operation object is created
// (Dilithium_Signature_Operation / Dilithium_Verification_Operation constructors in
// src/lib/pubkey/dilithium/dilithium_common/dilithium.cpp, Botan 3.7.1).
#include <botan/auto_rng.h>
#include <botan/hash.h>
#include <botan/mem_ops.h>
#include <botan/ml_dsa.h>
#include <botan/pubkey.h>
#include <botan/system_rng.h>

#include <algorithm>
#include <vector>

#include "crypto/crypto.hpp"

namespace modsign::crypto::botan {

namespace {
Botan::ML_DSA_Mode mode_of(KeyAlgo a) {
  switch (a) {
    case KeyAlgo::ml_dsa_44: return Botan::ML_DSA_Mode::ML_DSA_4x4;
    case KeyAlgo::ml_dsa_65: return Botan::ML_DSA_Mode::ML_DSA_6x5;
    case KeyAlgo::ml_dsa_87: return Botan::ML_DSA_Mode::ML_DSA_8x7;
    default: throw std::invalid_argument("not an ML-DSA algorithm");
  }
}

// A few keys per thread are plenty (one signing key; a keyring's ML-DSA keys).
constexpr std::size_t kCacheEntries = 8;

struct CachedVerifier {
  KeyAlgo level;
  Bytes pk;
  std::unique_ptr<Botan::ML_DSA_PublicKey> key;
  std::unique_ptr<Botan::PK_Verifier> op;
};
struct CachedSigner {
  KeyAlgo level;
  bool deterministic;
  Bytes pk;  // the public half identifies the private key (FIPS 204: pk is a function of the seed)
  std::unique_ptr<Botan::ML_DSA_PrivateKey> key;
  std::unique_ptr<Botan::PK_Signer> op;
};

thread_local std::vector<CachedVerifier> t_verifiers;  // most recently used first
thread_local std::vector<CachedSigner> t_signers;

// The hedged signature's 32 random bytes come straight from the operating system
// (getrandom); Botan's System_RNG is thread-safe.
Botan::RandomNumberGenerator& thread_rng() { return Botan::system_rng(); }

/// The entry of (level, pk) for which `also` holds, moved to the front; nullptr if none.
template <class Entry, class Also>
Entry* find_entry(std::vector<Entry>& cache, KeyAlgo level, ByteView pk, Also also) {
  for (std::size_t i = 0; i < cache.size(); ++i)
    if (cache[i].level == level && std::ranges::equal(cache[i].pk, pk) && also(cache[i])) {
      if (i != 0)
        std::rotate(cache.begin(), cache.begin() + static_cast<std::ptrdiff_t>(i),
                    cache.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      return &cache.front();
    }
  return nullptr;
}

template <class Entry>
Entry& insert_entry(std::vector<Entry>& cache, Entry e) {
  if (cache.size() >= kCacheEntries) cache.pop_back();
  cache.insert(cache.begin(), std::move(e));
  return cache.front();
}
}  // namespace

Bytes ml_dsa_public_from_seed(KeyAlgo level, ByteView seed) {
  Botan::ML_DSA_PrivateKey sk(seed, mode_of(level));
  return sk.public_key()->raw_public_key_bits();
}

Bytes ml_dsa_sign(KeyAlgo level, ByteView seed, ByteView message, bool deterministic) {
  Botan::ML_DSA_PrivateKey sk(seed, mode_of(level));
  Botan::AutoSeeded_RNG rng;
  Botan::PK_Signer signer(sk, rng, deterministic ? "Deterministic" : "Randomized");
  return signer.sign_message(message.data(), message.size(), rng);
}

Bytes ml_dsa_sign_cached(KeyAlgo level, ByteView public_key, const std::function<std::optional<SecretBytes>()>& seed,
                         ByteView message, bool deterministic) {
  CachedSigner* e =
      find_entry(t_signers, level, public_key, [&](const CachedSigner& c) { return c.deterministic == deterministic; });
  if (!e) {
    auto s = seed();
    if (!s) throw std::invalid_argument("the Botan backend needs an ML-DSA key with a seed");
    CachedSigner fresh{level, deterministic, Bytes(public_key.begin(), public_key.end()),
                       std::make_unique<Botan::ML_DSA_PrivateKey>(s->value(), mode_of(level)), nullptr};
    if (fresh.key->public_key()->raw_public_key_bits() != fresh.pk)
      throw std::invalid_argument("ML-DSA seed does not give the key's public key");
    fresh.op =
        std::make_unique<Botan::PK_Signer>(*fresh.key, thread_rng(), deterministic ? "Deterministic" : "Randomized");
    e = &insert_entry(t_signers, std::move(fresh));
  }
  try {
    return e->op->sign_message(message.data(), message.size(), thread_rng());
  } catch (...) {
    t_signers.erase(t_signers.begin());  // state unknown: rebuild next time
    throw;
  }
}

bool ml_dsa_verify(KeyAlgo level, ByteView public_key, ByteView message, ByteView signature) {
  if (public_key.size() != ml_dsa_public_key_size(level)) return false;
  try {
    CachedVerifier* e = find_entry(t_verifiers, level, public_key, [](const CachedVerifier&) { return true; });
    if (!e) {
      CachedVerifier fresh{level, Bytes(public_key.begin(), public_key.end()),
                           std::make_unique<Botan::ML_DSA_PublicKey>(public_key, mode_of(level)), nullptr};
      fresh.op = std::make_unique<Botan::PK_Verifier>(*fresh.key, "");
      e = &insert_entry(t_verifiers, std::move(fresh));
    }
    try {
      return e->op->verify_message(message.data(), message.size(), signature.data(), signature.size());
    } catch (...) {
      t_verifiers.erase(t_verifiers.begin());
      throw;
    }
  } catch (const Botan::Exception&) { return false; }
}

void clear_thread_cache() {
  t_signers.clear();
  t_verifiers.clear();
}

Bytes digest(HashAlgo a, ByteView data) {
  const char* name = nullptr;
  switch (a) {
    case HashAlgo::sha256: name = "SHA-256"; break;
    case HashAlgo::sha384: name = "SHA-384"; break;
    case HashAlgo::sha512: name = "SHA-512"; break;
    case HashAlgo::sha3_256: name = "SHA-3(256)"; break;
    case HashAlgo::sha3_512: name = "SHA-3(512)"; break;
    default: throw std::invalid_argument("no Botan name for this hash here");
  }
  auto h = Botan::HashFunction::create_or_throw(name);
  h->update(data.data(), data.size());
  auto out = h->final();
  return Bytes(out.begin(), out.end());
}

Bytes shake256(ByteView data, std::size_t out_len) {
  auto h = Botan::HashFunction::create_or_throw("SHAKE-256(" + std::to_string(8 * out_len) + ")");
  h->update(data.data(), data.size());
  auto out = h->final();
  return Bytes(out.begin(), out.end());
}

struct KernelOnlyHasher::Impl {
  std::unique_ptr<Botan::HashFunction> h;
};

KernelOnlyHasher::KernelOnlyHasher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KernelOnlyHasher::~KernelOnlyHasher() = default;

std::unique_ptr<KernelOnlyHasher> KernelOnlyHasher::create(std::string_view kernel_name) {
  const char* name = kernel_name == "sm3"           ? "SM3"
                     : kernel_name == "streebog256" ? "Streebog-256"
                     : kernel_name == "streebog512" ? "Streebog-512"
                                                    : nullptr;
  if (!name) return nullptr;
  auto h = Botan::HashFunction::create(name);
  if (!h) return nullptr;
  return std::unique_ptr<KernelOnlyHasher>(new KernelOnlyHasher(std::make_unique<Impl>(Impl{std::move(h)})));
}

void KernelOnlyHasher::update(ByteView data) { impl_->h->update(data.data(), data.size()); }

Bytes KernelOnlyHasher::final() {
  auto out = impl_->h->final();
  return Bytes(out.begin(), out.end());
}

std::optional<Bytes> kernel_only_digest(std::string_view kernel_name, ByteView data) {
  auto h = KernelOnlyHasher::create(kernel_name);
  if (!h) return std::nullopt;
  h->update(data);
  return h->final();
}

}  // namespace modsign::crypto::botan
