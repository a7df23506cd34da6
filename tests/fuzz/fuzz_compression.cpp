// modsign — libFuzzer target: compressed-module opening (src/module/compression.hpp).
// open_module() with a 256 KiB bound on the decompressed image, so decompression bombs
// end at the bound (EINVAL) instead of exhausting memory; a successful result never
// exceeds the bound and a plain input comes back unchanged.
#include <cstdint>
#include <cstdlib>

#include "module/compression.hpp"

using namespace modsign;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::uint64_t kMax = 256 * 1024;
  const ByteView in(data, size);
  auto m = module::open_module(in, kMax);
  if (!m.ok()) {
    if (m.error().code != KErr::einval) std::abort();
    return 0;
  }
  if (m->stored_size != size) std::abort();
  if (m->compression == module::Compression::none) {
    if (m->image != Bytes(in.begin(), in.end())) std::abort();
  } else if (m->image.size() > kMax) {
    std::abort();
  }
  return 0;
}
