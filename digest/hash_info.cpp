// mirrors include/uapi/linux/hash_info.h enum hash_algo and crypto/hash_info.c hash_algo_name, hash_digest_size,
// Linux 7.2.13
#include "digest/hash_info.hpp"

#include <array>

namespace modsign::digest {

namespace {
struct Entry {
  std::string_view name;
  std::size_t size;
};
// Indexed by enum hash_algo.
constexpr std::array<Entry, kHashAlgoLast> kTable{{
    {"md4", 16},         {"md5", 16},         {"sha1", 20},     {"rmd160", 20},   {"sha256", 32},   {"sha384", 48},
    {"sha512", 64},      {"sha224", 28},      {"rmd128", 16},   {"rmd256", 32},   {"rmd320", 40},   {"wp256", 32},
    {"wp384", 48},       {"wp512", 64},       {"tgr128", 16},   {"tgr160", 20},   {"tgr192", 24},   {"sm3", 32},
    {"streebog256", 32}, {"streebog512", 64}, {"sha3-256", 32}, {"sha3-384", 48}, {"sha3-512", 64},
}};
}  // namespace

std::string_view hash_algo_name(std::uint8_t algo) { return algo < kHashAlgoLast ? kTable[algo].name : ""; }

std::size_t hash_digest_size(std::uint8_t algo) { return algo < kHashAlgoLast ? kTable[algo].size : 0; }

std::uint8_t hash_algo_of(crypto::HashAlgo h) {
  return static_cast<std::uint8_t>(crypto::hash_info(h).kernel_hash_algo);
}

std::optional<crypto::HashAlgo> computable_hash(std::uint8_t algo) {
  if (algo >= kHashAlgoLast) return std::nullopt;
  return crypto::hash_by_name(kTable[algo].name);
}

std::uint8_t hash_algo_last(const cms::KernelModel& profile) {
  return profile.legacy_digests ? kHashAlgoLastLegacy : kHashAlgoLast;
}

}  // namespace modsign::digest
