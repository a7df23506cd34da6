// mirrors include/uapi/linux/hash_info.h enum hash_algo and crypto/hash_info.c hash_algo_name, hash_digest_size,
// Linux 7.2.13 The kernel's numbering of digest algorithms, as security.ima headers carry it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "cms/kernel_model.hpp"
#include "crypto/algorithms.hpp"

namespace modsign::digest {

/// HASH_ALGO__LAST: the first value that is no hash (Linux 6.7 and later).
inline constexpr std::uint8_t kHashAlgoLast = 23;
/// HASH_ALGO__LAST of Linux 6.1-6.6: the enum ended after HASH_ALGO_STREEBOG_512 (19); the
/// three SHA-3 values (20-22) came with 6.7.
inline constexpr std::uint8_t kHashAlgoLastLegacy = 20;
/// HASH_ALGO__LAST of the kernel `profile` models (kHashAlgoLastLegacy under v6.1).
std::uint8_t hash_algo_last(const cms::KernelModel& profile);

/// hash_algo_name[algo] ("md4", "sha256", "sha3-512", ...); "" for algo >= kHashAlgoLast.
std::string_view hash_algo_name(std::uint8_t algo);
/// hash_digest_size[algo] in bytes; 0 for algo >= kHashAlgoLast.
std::size_t hash_digest_size(std::uint8_t algo);
/// The enum hash_algo value of a hash modsign computes (HashInfo::kernel_hash_algo).
std::uint8_t hash_algo_of(crypto::HashAlgo h);
/// The hash behind an enum hash_algo value, when modsign can compute it (md5, sha1, the
/// SHA-2 and SHA-3 digests); nullopt for md4, RIPEMD, Whirlpool, Tiger, SM3, Streebog and
/// values >= kHashAlgoLast.
std::optional<crypto::HashAlgo> computable_hash(std::uint8_t algo);

}  // namespace modsign::digest
