// modsign — libFuzzer target: the PE/COFF reader and the Authenticode digest (pe/) and the
// signatures in the Certificate Table (cms/spc_indirect_data.hpp), through
// authenticode_image().  Invariants: nothing throws; every error is EBADMSG; every
// section's raw data, the Certificate Table and each WIN_CERTIFICATE lie inside the input;
// the hashed ranges lie inside the input and the digests have their sizes; a signature
// that matches carries the image digest of its algorithm.
#include <cstdint>
#include <cstdlib>

#include "modsign/authenticode.hpp"
#include "pe/authenticode.hpp"
#include "pe/pe_image.hpp"

using namespace modsign;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView in(data, size);
  const auto img = pe::parse(in);
  if (!img.ok()) {
    if (img.error().code != KErr::ebadmsg || img.error().message.empty()) std::abort();
  } else {
    for (const auto& s : img->sections)
      if (s.size_of_raw_data && std::uint64_t{s.pointer_to_raw_data} + s.size_of_raw_data > size) std::abort();
    const auto& ct = img->certificate_table;
    if (ct.size && std::uint64_t{ct.virtual_address} + ct.size > size) std::abort();
    for (const auto& c : img->certificates)
      if (c.length < 8 || c.offset + c.length > std::uint64_t{ct.virtual_address} + ct.size) std::abort();
    if (const auto ranges = pe::authenticode_ranges(*img); ranges.ok()) {
      for (const auto& r : *ranges)
        if (r.offset + r.size > size || r.size == 0) std::abort();
    } else if (ranges.error().code != KErr::ebadmsg) {
      std::abort();
    }
  }
  const auto info = authenticode_image(in);
  if (info.ok() != (img.ok() && pe::authenticode_ranges(*img).ok())) std::abort();
  if (!info.ok()) return 0;
  if (info->sha256.size() != 32 || info->sha1.size() != 20 || info->sha384.size() != 48 || info->sha512.size() != 64)
    std::abort();
  for (const auto& s : info->signatures) {
    if (!s.error.empty() && (s.matches || !s.digest.empty())) std::abort();
    if (s.matches && s.digest != info->sha256 && s.digest != info->sha1 && s.digest != info->sha384 &&
        s.digest != info->sha512)
      std::abort();
  }
  return 0;
}
