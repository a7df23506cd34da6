// mirrors lib/crypto/mldsa.c mldsa_verify (the signature decoding: decode_z, decode_hint_vector), Linux 7.2.13
#include "cms/mldsa.hpp"

#include <cstdint>
#include <string>

namespace modsign::cms {

namespace {

struct Params {
  int k, l, ctilde_len, omega, beta;
  std::int32_t gamma1;
  std::size_t sig_len;
};

// FIPS 204 Table 1 (the kernel's mldsa_parameter_sets).
Params params_of(crypto::KeyAlgo level) {
  switch (level) {
    case crypto::KeyAlgo::ml_dsa_44: return {4, 4, 32, 80, 78, 1 << 17, 2420};
    case crypto::KeyAlgo::ml_dsa_65: return {6, 5, 48, 55, 196, 1 << 19, 3309};
    default: return {8, 7, 64, 75, 120, 1 << 19, 4627};
  }
}

}  // namespace

Status mldsa_signature_decodes(crypto::KeyAlgo level, ByteView sig) {
  if (!crypto::is_ml_dsa(level)) return make_error(KErr::einval, "not an ML-DSA algorithm");
  const Params p = params_of(level);
  if (sig.size() != p.sig_len) return ok_status();  // the length check reports it
  const std::size_t bits = p.l == 4 ? 18 : 20;
  const std::uint8_t* z = sig.data() + p.ctilde_len;
  const std::uint8_t* end = sig.data() + sig.size();
  // decode_z: l polynomials of 256 coefficients, `bits` each, little-endian bit order: a
  // coefficient lies within the 4 bytes from its first bit's byte (bits + 7 <= 27).
  for (std::size_t c = 0; c < static_cast<std::size_t>(p.l) * 256; ++c) {
    const std::size_t bit = c * bits;
    const std::uint8_t* at = z + bit / 8;
    std::uint32_t word = 0;
    for (std::size_t i = 0; i < 4 && at + i < end; ++i) word |= static_cast<std::uint32_t>(at[i]) << (8 * i);
    const std::uint32_t v = (word >> (bit % 8)) & ((std::uint32_t{1} << bits) - 1);
    const std::int32_t x = p.gamma1 - static_cast<std::int32_t>(v);
    if (x <= -(p.gamma1 - p.beta) || x >= p.gamma1 - p.beta)
      return make_error(KErr::ebadmsg, "ML-DSA signature: z coefficient " + std::to_string(c) +
                                           " outside +-(gamma1 - beta) (sigDecode)");
  }
  // decode_hint_vector: omega index bytes, then k cumulative counts.
  const std::uint8_t* y = z + static_cast<std::size_t>(p.l) * 256 * bits / 8;
  int index = 0;
  for (int i = 0; i < p.k; ++i) {
    const int count = y[p.omega + i];
    if (count < index || count > p.omega)
      return make_error(KErr::ebadmsg, "ML-DSA signature: hint count of polynomial " + std::to_string(i) +
                                           " decreases or exceeds omega (HintBitUnpack)");
    for (int prev = -1; index < count; ++index) {
      if (prev >= y[index])
        return make_error(KErr::ebadmsg, "ML-DSA signature: hint indexes out of order (HintBitUnpack)");
      prev = y[index];
    }
  }
  for (int i = index; i < p.omega; ++i)
    if (y[i] != 0) return make_error(KErr::ebadmsg, "ML-DSA signature: unused hint bytes not zero (HintBitUnpack)");
  return ok_status();
}

}  // namespace modsign::cms
