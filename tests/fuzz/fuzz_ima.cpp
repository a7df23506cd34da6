// modsign — libFuzzer target: the IMA measurement-list parser (src/digest/ima.hpp).
// The first input byte picks the bank (even: SHA-1 as binary_runtime_measurements, odd:
// SHA-256); the rest is the list.  Parsed records must lie inside the input in order,
// carry bank-sized digests, and replay into bank-sized PCRs.
#include <cstdint>
#include <cstdlib>

#include "digest/ima.hpp"

using namespace modsign;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto bank = (data[0] & 1) ? crypto::HashAlgo::sha256 : crypto::HashAlgo::sha1;
  const std::size_t dlen = (data[0] & 1) ? 32 : 20;
  const ByteView list(data + 1, size - 1);
  auto r = digest::parse_measurement_list(list, bank);
  if (!r.ok()) {
    if (r.error().code != KErr::ebadmsg && r.error().code != KErr::einval) std::abort();
    return 0;
  }
  std::uint64_t prev = 0;
  for (std::size_t i = 0; i < r->size(); ++i) {
    const auto& rec = (*r)[i];
    if (rec.digest.size() != dlen || rec.offset >= list.size() || (i > 0 && rec.offset <= prev)) std::abort();
    if (!rec.violation && rec.recomputed.size() != dlen) std::abort();
    prev = rec.offset;
  }
  for (const auto& [pcr, value] : digest::replay_pcrs(*r, bank))
    if (value.size() != dlen) std::abort();
  return 0;
}
