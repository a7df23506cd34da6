// Google Benchmark: the Authenticode image hash of Debian's grubx64.efi (about 4 MiB;
// tools/fetch-efi-binaries downloads it) against a plain SHA-256 of the same bytes.
// Part of build/bin/modsign_bench (bench_core.cpp has the main): run
//   build/bin/modsign_bench --benchmark_filter=Authenticode
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "common/file.hpp"
#include "crypto/crypto.hpp"
#include "modsign/authenticode.hpp"
#include "pe/authenticode.hpp"
#include "pe/pe_image.hpp"

using namespace modsign;

namespace {

/// grubx64.efi's bytes ($MODSIGN_EFI_GRUB, else the GRUB= line of tools/fetch-efi-binaries);
/// empty when neither gives a file.
const Bytes& grub() {
  static const Bytes b = [] {
    std::string path;
    if (const char* e = std::getenv("MODSIGN_EFI_GRUB")) path = e;
    if (path.empty()) {
      const std::string cmd = std::string("'") + MODSIGN_SOURCE_DIR + "/tools/fetch-efi-binaries' 2>/dev/null";
      if (FILE* p = popen(cmd.c_str(), "r")) {
        char line[4096];
        while (std::fgets(line, sizeof line, p))
          if (std::string l = line; l.rfind("GRUB=", 0) == 0) path = l.substr(5, l.find('\n') - 5);
        pclose(p);
      }
    }
    try {
      return path.empty() ? Bytes{} : read_file(path);
    } catch (const IoError&) { return Bytes{}; }
  }();
  return b;
}

#define NEED_GRUB(state)                                                           \
  if (grub().empty()) {                                                            \
    (state).SkipWithError("grubx64.efi not available (tools/fetch-efi-binaries)"); \
    return;                                                                        \
  }

void BM_AuthenticodeSha256(benchmark::State& state) {
  NEED_GRUB(state);
  for (auto _ : state) {
    auto img = pe::parse(grub());
    benchmark::DoNotOptimize(pe::authenticode_digest(*img, grub(), crypto::HashAlgo::sha256));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * grub().size()));
}

void BM_AuthenticodeImageAllFour(benchmark::State& state) {
  NEED_GRUB(state);
  for (auto _ : state) benchmark::DoNotOptimize(authenticode_image(grub()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * grub().size()));
}

void BM_PlainSha256SameBytes(benchmark::State& state) {
  NEED_GRUB(state);
  for (auto _ : state) benchmark::DoNotOptimize(crypto::digest(crypto::HashAlgo::sha256, grub()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * grub().size()));
}

}  // namespace

BENCHMARK(BM_AuthenticodeSha256)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AuthenticodeImageAllFour)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlainSha256SameBytes)->Unit(benchmark::kMillisecond);
