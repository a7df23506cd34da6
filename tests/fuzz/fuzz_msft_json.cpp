// modsign — libFuzzer target: the JSON reader (common/json) and Microsoft's dbx list on top
// of it (blacklist/msft_dbx).  Invariants: json::parse never throws and fails only with
// EBADMSG and a message; the dbx reader throws only InputError; every entry it returns is
// a 32-byte EFI_CERT_SHA256 (image hash or SVN record) with an origin; an SVN record
// decodes only with the SVN owner.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "blacklist/msft_dbx.hpp"
#include "common/json.hpp"

using namespace modsign;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto v = json::parse(text);
  if (!v.ok() && (v.error().code != KErr::ebadmsg || v.error().message.empty())) std::abort();
  for (const char* arch : {"", "x64", "arm"}) {
    try {
      // No certificate directory: certificates become notes, never entries.
      const EfiDatabase db = blacklist::msft_dbx::parse(text, arch, "fuzz.json", "/nonexistent-modsign-fuzz-dir");
      if (!v.ok()) std::abort();
      for (const auto& e : db.entries) {
        if (e.type != efi_guids::cert_sha256 || e.data.size() != 32 || e.origin.empty()) std::abort();
        if (blacklist::msft_dbx::svn_record(e.owner, e.data) && e.owner != efi_guids::svn_owner) std::abort();
      }
    } catch (const InputError&) {}
  }
  return 0;
}
