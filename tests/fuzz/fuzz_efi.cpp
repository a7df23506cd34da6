// modsign — libFuzzer target: EFI_SIGNATURE_LIST and authenticated-variable parsing
// (src/blacklist/efi.hpp).  The first input byte picks the container (0 detect, 1 esl,
// 2 efivarfs, 3 auth2) and the variable whose handlers run (db, dbx, MokListRT,
// MokListXRT); the rest is the file.  Invariants: parse_signature_lists() never throws and
// every parsed list and entry lies inside the input with consistent sizes; only EBADMSG;
// a file of well-formed lists re-serializes (write_lists) to its own bytes.
#include <cstdint>
#include <cstdlib>

#include "blacklist/efi.hpp"

using namespace modsign;
namespace efi = modsign::blacklist::efi;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static constexpr efi::Container kForms[] = {efi::Container::detect, efi::Container::esl, efi::Container::efivarfs,
                                              efi::Container::auth2};
  static constexpr efi::Variable kVars[] = {efi::Variable::db, efi::Variable::dbx, efi::Variable::MokListRT,
                                            efi::Variable::MokListXRT};
  const ByteView in(data + 1, size - 1);

  const auto p = efi::parse_signature_lists(in);
  if (p.error && p.error->code != KErr::ebadmsg) std::abort();
  std::uint64_t total = 0;
  for (const auto& l : p.lists) {
    if (l.offset + l.list_size > in.size() || l.list_size < 28 || l.signature_size < 16) std::abort();
    if (28 + std::uint64_t{l.header_size} + l.entries.size() * std::uint64_t{l.signature_size} != l.list_size)
      std::abort();
    for (const auto& e : l.entries)
      if (e.data.size() + 16 != l.signature_size || e.offset + l.signature_size > in.size()) std::abort();
    total += l.list_size;
  }
  if (!p.error && total != in.size()) std::abort();
  if (!p.error && !p.lists.empty() && efi::write_lists(p.lists) != Bytes(in.begin(), in.end())) std::abort();

  auto f = efi::parse_variable_file(in, kForms[data[0] & 3]);
  if (!f.ok()) {
    if (f.error().code != KErr::ebadmsg) std::abort();
    return 0;
  }
  (void)efi::apply_handlers(f->lists, kVars[(data[0] >> 2) & 3]);
  return 0;
}
