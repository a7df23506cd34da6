// Google Benchmark: the per-module building blocks of signing and verification.
// Run: build/bin/modsign_bench  (results with machine and date go to bench/RESULTS.md)
#include <benchmark/benchmark.h>

#include <map>
#include <thread>

#include "cms/signed_data.hpp"
#include "digest/module_digest.hpp"
#include "crypto/crypto.hpp"
#include "module/module_signature.hpp"

using namespace modsign;
using crypto::KeyAlgo;

namespace {

struct Signer {
  crypto::PrivateKey key;
  crypto::Certificate cert;
};

const Signer& signer(KeyAlgo a) {
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
  const Bytes signed_module = module::append_signature(content, cms::build_detached(s.key, s.cert, content, opt).value());
  const std::vector<crypto::Certificate> certs{s.cert};
  for (auto _ : st) {
    auto split = module::split(signed_module).value();
    auto sd = cms::parse(split.cms).value();
    benchmark::DoNotOptimize(cms::verify(sd, split.content, certs, backend).value());
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
BENCHMARK_CAPTURE(BM_Digest, sha256, crypto::HashAlgo::sha256);
BENCHMARK_CAPTURE(BM_Digest, sha512, crypto::HashAlgo::sha512);
BENCHMARK_CAPTURE(BM_Sign, rsa4096_noattrs, KeyAlgo::rsa, crypto::Backend::openssl, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, ecdsa_p384_noattrs, KeyAlgo::ecdsa_p384, crypto::Backend::openssl, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa44_noattrs_openssl, KeyAlgo::ml_dsa_44, crypto::Backend::openssl, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa44_noattrs_botan, KeyAlgo::ml_dsa_44, crypto::Backend::botan, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa65_noattrs_openssl, KeyAlgo::ml_dsa_65, crypto::Backend::openssl, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa65_noattrs_botan, KeyAlgo::ml_dsa_65, crypto::Backend::botan, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa65_attrs_openssl, KeyAlgo::ml_dsa_65, crypto::Backend::openssl, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa87_noattrs_openssl, KeyAlgo::ml_dsa_87, crypto::Backend::openssl, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Sign, mldsa87_noattrs_botan, KeyAlgo::ml_dsa_87, crypto::Backend::botan, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, rsa4096_noattrs, KeyAlgo::rsa, crypto::Backend::openssl, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, mldsa44_noattrs_openssl, KeyAlgo::ml_dsa_44, crypto::Backend::openssl, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, mldsa44_noattrs_botan, KeyAlgo::ml_dsa_44, crypto::Backend::botan, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, mldsa65_noattrs_openssl, KeyAlgo::ml_dsa_65, crypto::Backend::openssl, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, mldsa65_noattrs_botan, KeyAlgo::ml_dsa_65, crypto::Backend::botan, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, mldsa65_attrs_openssl, KeyAlgo::ml_dsa_65, crypto::Backend::openssl, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, mldsa87_noattrs_openssl, KeyAlgo::ml_dsa_87, crypto::Backend::openssl, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Verify, mldsa87_noattrs_botan, KeyAlgo::ml_dsa_87, crypto::Backend::botan, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
