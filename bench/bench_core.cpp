// Google Benchmark: the per-module building blocks of signing and verification.
// Run: build/bin/modsign_bench  (results with machine and date go to bench/RESULTS.md)
#include <benchmark/benchmark.h>

#include <map>
#include <mutex>
#include <thread>

#include "cms/signed_data.hpp"
#include "crypto/crypto.hpp"
#include "digest/module_digest.hpp"
#include "module/module_sig_check.hpp"
#include "module/module_signature.hpp"

using namespace modsign;
using crypto::KeyAlgo;

namespace {

struct Signer {
  crypto::PrivateKey key;
  crypto::Certificate cert;
};

const Signer& signer(KeyAlgo a) {
  static std::mutex mu;  // the Threads(2) benchmarks call this from two threads
  std::lock_guard<std::mutex> lock(mu);
  static std::map<KeyAlgo, Signer> cache;
  auto it = cache.find(a);
  if (it == cache.end()) {
    auto key = crypto::PrivateKey::generate(a, 4096);
    auto cert = crypto::Certificate::self_signed(key, "CN=bench", 1).value();
    it = cache.emplace(a, Signer{key, cert}).first;
  }
  return it->second;
}

// A typical module: the Debian cloud kernel's median module is about 40 KiB.
Bytes module_content(std::size_t n = 40 * 1024) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(i * 131 + 7);
  return b;
}

void BM_Sign(benchmark::State& st, KeyAlgo a, crypto::Backend backend, bool attrs) {
  const auto& s = signer(a);
  const Bytes content = module_content();
  cms::BuildOptions opt;
  opt.digest = a == KeyAlgo::rsa ? crypto::HashAlgo::sha256 : crypto::HashAlgo::sha512;
  opt.backend = backend;
  opt.signed_attrs = attrs;
  for (auto _ : st) benchmark::DoNotOptimize(cms::build_detached(s.key, s.cert, content, opt).value());
}

void BM_Verify(benchmark::State& st, KeyAlgo a, crypto::Backend backend, bool attrs) {
  const auto& s = signer(a);
  const Bytes content = module_content();
  cms::BuildOptions opt;
  opt.digest = a == KeyAlgo::rsa ? crypto::HashAlgo::sha256 : crypto::HashAlgo::sha512;
  opt.signed_attrs = attrs;
  const Bytes signed_module =
      module::append_signature(content, cms::build_detached(s.key, s.cert, content, opt).value());
  const std::vector<crypto::Certificate> certs{s.cert};
  for (auto _ : st) {
    auto split = module::split(signed_module).value();
    auto sd = cms::parse(split.cms).value();
    benchmark::DoNotOptimize(cms::verify(sd, split.content, certs, backend).value());
  }
}

// What `modsign verify` does per module: the kernel mirror (trailer, pkcs7 parse,
// keyring lookup, signature check) on a 40 KiB module.
void BM_ModuleSigCheck(benchmark::State& st, KeyAlgo a, crypto::Backend backend, bool attrs) {
  const auto& s = signer(a);
  const Bytes content = module_content();
  cms::BuildOptions opt;
  opt.digest = a == KeyAlgo::rsa ? crypto::HashAlgo::sha256 : crypto::HashAlgo::sha512;
  opt.signed_attrs = attrs;
  const Bytes signed_module =
      module::append_signature(content, cms::build_detached(s.key, s.cert, content, opt).value());
  cms::Keyring ring;
  ring.certificates.push_back(s.cert);
  auto prof = cms::KernelModel::v7_0();
  prof.waive_mldsa_authattrs = attrs;  // 7.0 refuses ML-DSA with signedAttrs unless waived
  for (auto _ : st) {
    auto v = module::module_sig_check(signed_module, ring, prof, false, backend);
    if (v.outcome != module::LoadOutcome::loads) st.SkipWithError("does not load");
  }
}

void BM_ParseCms(benchmark::State& st) {
  const auto& s = signer(KeyAlgo::ml_dsa_65);
  const Bytes der = cms::build_detached(s.key, s.cert, module_content(), {}).value();
  for (auto _ : st) benchmark::DoNotOptimize(cms::parse(der).value());
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * der.size()));
}

void BM_Digest(benchmark::State& st, crypto::HashAlgo h) {
  const Bytes mib = module_content(1 << 20);
  for (auto _ : st) benchmark::DoNotOptimize(crypto::digest(h, mib));
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * (1 << 20));
}

// The same hashes with Botan (this build's CPU-specific code only: no SHA-NI when the CPU
// lacks it), to decide which library hashes.
void BM_DigestBotan(benchmark::State& st, crypto::HashAlgo h) {
  const Bytes mib = module_content(1 << 20);
  for (auto _ : st) benchmark::DoNotOptimize(crypto::botan::digest(h, mib));
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * (1 << 20));
}

// SHAKE256 of 1 MiB: the ML-DSA message hash (μ) of pure-mode signing, OpenSSL / Botan.
void BM_Shake256(benchmark::State& st, bool botan) {
  const Bytes mib = module_content(1 << 20);
  const Bytes pk = signer(KeyAlgo::ml_dsa_65).cert.public_key().raw();
  for (auto _ : st) {
    if (botan) {
      benchmark::DoNotOptimize(crypto::botan::shake256(mib, 64));
    } else {
      crypto::MlDsaMu mu(pk);
      mu.update(mib);
      benchmark::DoNotOptimize(mu.final());
    }
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * (1 << 20));
}

// One-pass digest of a module read once: SHA-512 (the signedAttrs messageDigest) and
// SHA-256 (the side digest) from the same 64 KiB pieces, per MiB.
void BM_OnePassPerMiB(benchmark::State& st) {
  const Bytes mib = module_content(1 << 20);
  for (auto _ : st) {
    digest::MultiHash mh;
    mh.add(crypto::HashAlgo::sha256);
    mh.add(crypto::HashAlgo::sha512);
    for (std::size_t off = 0; off < mib.size(); off += 64 * 1024) mh.update(ByteView(mib).subspan(off, 64 * 1024));
    benchmark::DoNotOptimize(mh.final());
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * (1 << 20));
}

// The bare signature operations over a 64-byte message (what `openssl speed ml-dsa-65`
// and `openssl speed rsa4096` time), per backend.  Botan reuses its per-thread signer /
// verifier, as a batch does.
void BM_RawSign(benchmark::State& st, KeyAlgo a, crypto::Backend backend) {
  const auto& s = signer(a);
  const Bytes msg = module_content(64);
  for (auto _ : st)
    benchmark::DoNotOptimize(crypto::sign_message(s.key, crypto::HashAlgo::sha512, msg, backend).value());
}

void BM_RawVerify(benchmark::State& st, KeyAlgo a, crypto::Backend backend) {
  const auto& s = signer(a);
  const Bytes msg = module_content(64);
  const Bytes sig = crypto::sign_message(s.key, crypto::HashAlgo::sha512, msg).value();
  for (auto _ : st)
    if (!crypto::verify_message(s.key.public_key(), crypto::HashAlgo::sha512, msg, sig, backend))
      st.SkipWithError("verify");
}

// The same on 2 threads at once (->Threads(2)->UseRealTime(): items_per_second is the
// machine's throughput over both cores, its "second-core factor" for the crypto floor of
// bench/sign-floor.sh).  The keys are made before the threads start.
void BM_RawSignThreads(benchmark::State& st, KeyAlgo a, crypto::Backend backend) {
  const auto& s = signer(a);
  const Bytes msg = module_content(64);
  for (auto _ : st)
    benchmark::DoNotOptimize(crypto::sign_message(s.key, crypto::HashAlgo::sha512, msg, backend).value());
  st.SetItemsProcessed(static_cast<std::int64_t>(st.iterations()));
}
void BM_Shake256Threads(benchmark::State& st) {
  const Bytes mib = module_content(1 << 20);
  const Bytes pk = signer(KeyAlgo::ml_dsa_65).cert.public_key().raw();
  for (auto _ : st) {
    crypto::MlDsaMu mu(pk);
    mu.update(mib);
    benchmark::DoNotOptimize(mu.final());
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations()) * (1 << 20));
}

// One pass over 256 MiB feeding SHA-256, SHA-512 and the ML-DSA-65 μ (SHAKE256) from
// the same 1 MiB chunks, against the three hashes one after another.
const Bytes& big() {
  static const Bytes b = module_content(256u << 20);
  return b;
}

void BM_OnePassThreeHashes(benchmark::State& st) {
  const Bytes& data = big();
  const Bytes pk = signer(KeyAlgo::ml_dsa_65).cert.public_key().raw();
  for (auto _ : st) {
    digest::MultiHash mh;
    mh.add(crypto::HashAlgo::sha256);
    mh.add(crypto::HashAlgo::sha512);
    crypto::MlDsaMu mu(pk);
    // 64 KiB pieces stay in L2 while every hash reads them (1 MiB pieces fall to L3).
    constexpr std::size_t kPiece = 64 * 1024;
    for (std::size_t off = 0; off < data.size(); off += kPiece) {
      ByteView chunk = ByteView(data).subspan(off, std::min<std::size_t>(kPiece, data.size() - off));
      mh.update(chunk);
      mu.update(chunk);
    }
    benchmark::DoNotOptimize(mh.final());
    benchmark::DoNotOptimize(mu.final());
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * data.size()));
}

// The same three hashes on two threads (the μ on one, SHA-256 + SHA-512 on the other),
// each reading the same in-memory chunks: what `--jobs 2` can reach on 2 cores.
void BM_ThreeHashesTwoThreads(benchmark::State& st) {
  const Bytes& data = big();
  const Bytes pk = signer(KeyAlgo::ml_dsa_65).cert.public_key().raw();
  for (auto _ : st) {
    Bytes mu_out;
    std::thread t([&] {
      crypto::MlDsaMu mu(pk);
      for (std::size_t off = 0; off < data.size(); off += 1 << 20)
        mu.update(ByteView(data).subspan(off, std::min<std::size_t>(1 << 20, data.size() - off)));
      mu_out = mu.final();
    });
    digest::MultiHash mh;
    mh.add(crypto::HashAlgo::sha256);
    mh.add(crypto::HashAlgo::sha512);
    for (std::size_t off = 0; off < data.size(); off += 1 << 20)
      mh.update(ByteView(data).subspan(off, std::min<std::size_t>(1 << 20, data.size() - off)));
    benchmark::DoNotOptimize(mh.final());
    t.join();
    benchmark::DoNotOptimize(mu_out);
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * data.size()));
}

void BM_ThreeSeparatePasses(benchmark::State& st) {
  const Bytes& data = big();
  const Bytes pk = signer(KeyAlgo::ml_dsa_65).cert.public_key().raw();
  for (auto _ : st) {
    benchmark::DoNotOptimize(crypto::digest(crypto::HashAlgo::sha256, data));
    benchmark::DoNotOptimize(crypto::digest(crypto::HashAlgo::sha512, data));
    crypto::MlDsaMu mu(pk);
    mu.update(data);
    benchmark::DoNotOptimize(mu.final());
  }
  st.SetBytesProcessed(static_cast<std::int64_t>(st.iterations() * data.size()));
}

}  // namespace

BENCHMARK(BM_OnePassThreeHashes)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ThreeSeparatePasses)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ThreeHashesTwoThreads)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_ParseCms);
BENCHMARK_CAPTURE(BM_ModuleSigCheck, rsa4096, KeyAlgo::rsa, crypto::Backend::openssl, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ModuleSigCheck, mldsa65_noattrs_openssl, KeyAlgo::ml_dsa_65, crypto::Backend::openssl, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ModuleSigCheck, mldsa65_noattrs_botan, KeyAlgo::ml_dsa_65, crypto::Backend::botan, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ModuleSigCheck, mldsa65_attrs_openssl, KeyAlgo::ml_dsa_65, crypto::Backend::openssl, true)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ModuleSigCheck, mldsa65_attrs_botan, KeyAlgo::ml_dsa_65, crypto::Backend::botan, true)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Digest, sha256, crypto::HashAlgo::sha256);
BENCHMARK_CAPTURE(BM_Digest, sha512, crypto::HashAlgo::sha512);
BENCHMARK_CAPTURE(BM_DigestBotan, sha256, crypto::HashAlgo::sha256);
BENCHMARK_CAPTURE(BM_DigestBotan, sha512, crypto::HashAlgo::sha512);
BENCHMARK_CAPTURE(BM_Shake256, openssl, false);
BENCHMARK_CAPTURE(BM_Shake256, botan, true);
BENCHMARK(BM_OnePassPerMiB);
BENCHMARK_CAPTURE(BM_RawSign, rsa4096, KeyAlgo::rsa, crypto::Backend::openssl)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RawSignThreads, mldsa65_botan, KeyAlgo::ml_dsa_65, crypto::Backend::botan)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RawSignThreads, rsa4096, KeyAlgo::rsa, crypto::Backend::openssl)
    ->Threads(1)
    ->Threads(2)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Shake256Threads)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK_CAPTURE(BM_RawVerify, rsa4096, KeyAlgo::rsa, crypto::Backend::openssl)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RawSign, ecdsa_p384, KeyAlgo::ecdsa_p384, crypto::Backend::openssl)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RawVerify, ecdsa_p384, KeyAlgo::ecdsa_p384, crypto::Backend::openssl)
    ->Unit(benchmark::kMicrosecond);
#define RAW(level, algo)                                                                                           \
  BENCHMARK_CAPTURE(BM_RawSign, level##_openssl, algo, crypto::Backend::openssl)->Unit(benchmark::kMicrosecond);   \
  BENCHMARK_CAPTURE(BM_RawSign, level##_botan, algo, crypto::Backend::botan)->Unit(benchmark::kMicrosecond);       \
  BENCHMARK_CAPTURE(BM_RawVerify, level##_openssl, algo, crypto::Backend::openssl)->Unit(benchmark::kMicrosecond); \
  BENCHMARK_CAPTURE(BM_RawVerify, level##_botan, algo, crypto::Backend::botan)->Unit(benchmark::kMicrosecond);
RAW(mldsa44, KeyAlgo::ml_dsa_44)
RAW(mldsa65, KeyAlgo::ml_dsa_65)
RAW(mldsa87, KeyAlgo::ml_dsa_87)
#undef RAW
BENCHMARK_CAPTURE(BM_Sign, rsa4096_noattrs, KeyAlgo::rsa, crypto::Backend::openssl, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, ecdsa_p384_noattrs, KeyAlgo::ecdsa_p384, crypto::Backend::openssl, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa44_noattrs_openssl, KeyAlgo::ml_dsa_44, crypto::Backend::openssl, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa44_noattrs_botan, KeyAlgo::ml_dsa_44, crypto::Backend::botan, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa65_noattrs_openssl, KeyAlgo::ml_dsa_65, crypto::Backend::openssl, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa65_noattrs_botan, KeyAlgo::ml_dsa_65, crypto::Backend::botan, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa65_attrs_openssl, KeyAlgo::ml_dsa_65, crypto::Backend::openssl, true)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa65_attrs_botan, KeyAlgo::ml_dsa_65, crypto::Backend::botan, true)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa44_attrs_botan, KeyAlgo::ml_dsa_44, crypto::Backend::botan, true)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa87_attrs_botan, KeyAlgo::ml_dsa_87, crypto::Backend::botan, true)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa87_noattrs_openssl, KeyAlgo::ml_dsa_87, crypto::Backend::openssl, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa87_noattrs_botan, KeyAlgo::ml_dsa_87, crypto::Backend::botan, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, rsa4096_attrs, KeyAlgo::rsa, crypto::Backend::openssl, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, rsa4096_noattrs, KeyAlgo::rsa, crypto::Backend::openssl, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, mldsa44_noattrs_openssl, KeyAlgo::ml_dsa_44, crypto::Backend::openssl, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, mldsa44_noattrs_botan, KeyAlgo::ml_dsa_44, crypto::Backend::botan, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, mldsa65_noattrs_openssl, KeyAlgo::ml_dsa_65, crypto::Backend::openssl, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, mldsa65_noattrs_botan, KeyAlgo::ml_dsa_65, crypto::Backend::botan, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, mldsa65_attrs_openssl, KeyAlgo::ml_dsa_65, crypto::Backend::openssl, true)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, mldsa65_attrs_botan, KeyAlgo::ml_dsa_65, crypto::Backend::botan, true)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, mldsa87_noattrs_openssl, KeyAlgo::ml_dsa_87, crypto::Backend::openssl, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, mldsa87_noattrs_botan, KeyAlgo::ml_dsa_87, crypto::Backend::botan, false)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
