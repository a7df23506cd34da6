// Helpers shared by the test_vectors_*.cpp files: both crypto backends, the three ML-DSA
// parameter sets with their FIPS 204 sizes, errno and message of a Result, and seed-form
// PKCS#8 written by hand.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "crypto/crypto.hpp"
#include "test_support.hpp"

namespace modsign::test::vectors_tests {

using crypto::Backend;
using crypto::HashAlgo;
using crypto::KeyAlgo;

inline constexpr std::array<Backend, 2> kBackends = {Backend::openssl, Backend::botan};

inline const char* backend_name(Backend b) { return b == Backend::openssl ? "openssl" : "botan"; }

/// One ML-DSA parameter set with its FIPS 204 sizes, written out here independently of src/.
struct Level {
  int n;  // 44, 65, 87
  KeyAlgo algo;
  std::size_t pk_size, sig_size;
  std::uint8_t oid_last;  // id-ml-dsa-NN = 2.16.840.1.101.3.4.3.{17,18,19}
};
inline constexpr std::array<Level, 3> kLevels = {{
    {44, KeyAlgo::ml_dsa_44, 1312, 2420, 0x11},
    {65, KeyAlgo::ml_dsa_65, 1952, 3309, 0x12},
    {87, KeyAlgo::ml_dsa_87, 2592, 4627, 0x13},
}};

template <class T>
inline KErr code_of(const Result<T>& r) {
  return r.ok() ? KErr::none : r.error().code;
}
template <class T>
inline std::string describe(const Result<T>& r) {
  return r.ok() ? std::string("OK") : std::string(errno_name(r.error().code)) + ": " + r.error().message;
}

/// RFC 9881 seed-form PKCS#8 written by hand (not by src/):
///   30 L 02 01 00 30 0b 06 09 <id-ml-dsa-NN> 04 (n+2) 80 n <seed>
/// A key's ML-DSA seed as plain bytes, to compare (crypto::PrivateKey::ml_dsa_seed()).
inline std::optional<Bytes> seed_of(const crypto::PrivateKey& k) {
  const auto s = k.ml_dsa_seed();
  return s ? std::optional<Bytes>(s->value()) : std::nullopt;
}

inline Bytes seed_pkcs8(const Level& lv, ByteView seed) {
  const auto n = static_cast<std::uint8_t>(seed.size());  // < 0x7e in every use here
  const std::array<std::uint8_t, 22> head = {0x30, static_cast<std::uint8_t>(n + 20),
                                             0x02, 0x01,
                                             0x00, 0x30,
                                             0x0b, 0x06,
                                             0x09, 0x60,
                                             0x86, 0x48,
                                             0x01, 0x65,
                                             0x03, 0x04,
                                             0x03, lv.oid_last,
                                             0x04, static_cast<std::uint8_t>(n + 2),
                                             0x80, n};
  Bytes der(head.size() + seed.size());
  std::copy(head.begin(), head.end(), der.begin());
  std::copy(seed.begin(), seed.end(), der.begin() + static_cast<std::ptrdiff_t>(head.size()));
  return der;
}

}  // namespace modsign::test::vectors_tests
