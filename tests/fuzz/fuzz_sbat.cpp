// modsign — libFuzzer target: shim's SBAT data as modsign reads it (blacklist/sbat): .sbat
// CSV, SbatLevel text, a .sbatlevel section's layout, and the whole path through a PE
// image (sbat_level_of_shim, verify_efi_image with a level).  Invariants: nothing throws;
// every error is EINVAL (EBADMSG from the PE reader) with a message; a parsed .sbat has
// six non-empty fields a row; a level starts with its "sbat" row; a refusal names a
// component of both with the binary's generation below the level's.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "blacklist/sbat.hpp"
#include "modsign/efi_image.hpp"

using namespace modsign;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView in(data, size);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto rows = blacklist::sbat::parse_section(in);
  if (rows.ok()) {
    for (const auto& r : *rows)
      if (r.component.empty() || r.generation_text.empty() || r.vendor.empty() || r.package.empty() ||
          r.version.empty() || r.url.empty())
        std::abort();
  } else if (rows.error().code != KErr::einval || rows.error().message.empty()) {
    std::abort();
  }
  auto lv = blacklist::sbat::parse_level(text);
  if (lv.ok()) {
    if (lv->components.empty() || lv->components.front().first != "sbat") std::abort();
    if (rows.ok())
      for (const auto& x : blacklist::sbat::refusals(*rows, *lv)) {
        if (x.generation >= x.level_generation) std::abort();
      }
  } else if (lv.error().code != KErr::einval) {
    std::abort();
  }
  for (auto p : {SbatPolicy::latest, SbatPolicy::previous}) {
    auto s = blacklist::sbat::level_from_section(in, p);
    if (!s.ok() && s.error().code != KErr::einval) std::abort();
    auto shim = sbat_level_of_shim(in, p);
    if (!shim.ok() && shim.error().code != KErr::einval && shim.error().code != KErr::ebadmsg) std::abort();
  }
  EfiImagePolicy policy;
  policy.sbat_level = lv.ok() ? *lv : *blacklist::sbat::parse_level("sbat,1,2024010900\nshim,4\ngrub,3\n");
  auto v = verify_efi_image(in, "fuzz", policy);
  if (v.ok()) {
    if (!v->sbat_checked || !v->refused) std::abort();  // an empty db admits nothing
  } else if (v.error().code != KErr::ebadmsg) {
    std::abort();
  }
  return 0;
}
