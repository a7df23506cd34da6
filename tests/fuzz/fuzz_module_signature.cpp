// modsign — libFuzzer target: the module trailer splitter (src/module/module_signature.hpp).
// split() on the whole input and parse_tail() on its last 40 bytes must agree exactly (same
// errno, same content/signature lengths), the pieces must tile the input, and
// detect_compression() must not read past short inputs.
#include <cstdint>
#include <cstdlib>

#include "module/module_signature.hpp"

using namespace modsign;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView in(data, size);
  (void)module::detect_compression(in);
  (void)module::has_marker(in);
  const auto s = module::split(in);
  const std::size_t tail_len = std::min<std::size_t>(size, module::kMarker.size() + module::kModuleSignatureSize);
  const auto t = module::parse_tail(in.last(tail_len), size);
  if (s.ok() != t.ok()) std::abort();
  if (!s.ok()) {
    if (s.error().code != t.error().code) std::abort();
    return 0;
  }
  if (s->content.data() != data || s->content.size() != t->content_len || s->cms.size() != t->sig_len ||
      s->cms.data() != data + s->content.size() ||
      s->content.size() + s->cms.size() + module::kModuleSignatureSize + module::kMarker.size() != size)
    std::abort();
  // Re-appending the same PKCS#7 reproduces the input when the trailer is the canonical one.
  if (s->trailer.algo == 0 && module::append_signature(s->content, s->cms) != Bytes(in.begin(), in.end())) std::abort();
  return 0;
}
