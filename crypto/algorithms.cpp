#include "crypto/algorithms.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace modsign::crypto {

namespace oid {
#define MODSIGN_OID(name, ...)                                  \
  static constexpr std::uint8_t name##_bytes[] = {__VA_ARGS__}; \
  const ByteView name{name##_bytes};
MODSIGN_OID(rsa_encryption, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01)
MODSIGN_OID(ec_public_key, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01)
MODSIGN_OID(prime256v1, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07)
MODSIGN_OID(secp384r1, 0x2b, 0x81, 0x04, 0x00, 0x22)
MODSIGN_OID(ecdsa_with_sha1, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x01)
MODSIGN_OID(ecdsa_with_sha224, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x01)
MODSIGN_OID(ecdsa_with_sha3_256, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x0a)
MODSIGN_OID(ecdsa_with_sha3_384, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x0b)
MODSIGN_OID(ecdsa_with_sha3_512, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x0c)
MODSIGN_OID(ecdsa_with_sha256, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02)
MODSIGN_OID(ecdsa_with_sha384, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03)
MODSIGN_OID(ecdsa_with_sha512, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x04)
MODSIGN_OID(ml_dsa_44, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x11)
MODSIGN_OID(ml_dsa_65, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x12)
MODSIGN_OID(ml_dsa_87, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x13)
MODSIGN_OID(signed_data, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02)
MODSIGN_OID(data, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01)
MODSIGN_OID(content_type, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x03)
MODSIGN_OID(message_digest, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x04)
MODSIGN_OID(signing_time, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x05)
MODSIGN_OID(smime_capabilities, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x0f)
MODSIGN_OID(common_name, 0x55, 0x04, 0x03)
MODSIGN_OID(subject_key_identifier, 0x55, 0x1d, 0x0e)
#undef MODSIGN_OID
}  // namespace oid

namespace {

constexpr std::uint8_t sha1_oid[] = {0x2b, 0x0e, 0x03, 0x02, 0x1a};
constexpr std::uint8_t sha256_oid[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01};
constexpr std::uint8_t sha384_oid[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02};
constexpr std::uint8_t sha512_oid[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03};
constexpr std::uint8_t sha224_oid[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x04};
constexpr std::uint8_t sha3_256_oid[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x08};
constexpr std::uint8_t sha3_384_oid[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x09};
constexpr std::uint8_t sha3_512_oid[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x0a};
constexpr std::uint8_t md5_oid[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x05};

const std::array<HashInfo, 9> kHashes{{
    {HashAlgo::sha1, "sha1", "SHA1", sha1_oid, 20, 2},
    {HashAlgo::sha224, "sha224", "SHA224", sha224_oid, 28, 7},
    {HashAlgo::sha256, "sha256", "SHA256", sha256_oid, 32, 4},
    {HashAlgo::sha384, "sha384", "SHA384", sha384_oid, 48, 5},
    {HashAlgo::sha512, "sha512", "SHA512", sha512_oid, 64, 6},
    {HashAlgo::sha3_256, "sha3-256", "SHA3-256", sha3_256_oid, 32, 20},
    {HashAlgo::sha3_384, "sha3-384", "SHA3-384", sha3_384_oid, 48, 21},
    {HashAlgo::sha3_512, "sha3-512", "SHA3-512", sha3_512_oid, 64, 22},
    {HashAlgo::md5, "md5", "MD5", md5_oid, 16, 1},
}};

bool same(ByteView a, ByteView b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}
}  // namespace

const HashInfo& hash_info(HashAlgo a) { return kHashes[static_cast<std::size_t>(a)]; }

std::optional<HashAlgo> hash_by_name(std::string_view name) {
  const std::string n = lower(name);
  for (const auto& h : kHashes)
    if (n == h.name) return h.algo;
  if (n == "sha3_256") return HashAlgo::sha3_256;
  if (n == "sha3_384") return HashAlgo::sha3_384;
  if (n == "sha3_512") return HashAlgo::sha3_512;
  return std::nullopt;
}

std::optional<HashAlgo> hash_by_oid(ByteView o) {
  for (const auto& h : kHashes)
    if (same(o, h.oid)) return h.algo;
  return std::nullopt;
}

bool is_ecdsa(KeyAlgo a) {
  return a == KeyAlgo::ecdsa_p192 || a == KeyAlgo::ecdsa_p256 || a == KeyAlgo::ecdsa_p384 || a == KeyAlgo::ecdsa_p521;
}

bool is_ml_dsa(KeyAlgo a) { return a == KeyAlgo::ml_dsa_44 || a == KeyAlgo::ml_dsa_65 || a == KeyAlgo::ml_dsa_87; }

std::string_view kernel_pkey_name(KeyAlgo a) {
  switch (a) {
    case KeyAlgo::rsa: return "rsa";
    case KeyAlgo::ecdsa_p192:
    case KeyAlgo::ecdsa_p256:
    case KeyAlgo::ecdsa_p384:
    case KeyAlgo::ecdsa_p521: return "ecdsa";
    case KeyAlgo::ml_dsa_44: return "mldsa44";
    case KeyAlgo::ml_dsa_65: return "mldsa65";
    case KeyAlgo::ml_dsa_87: return "mldsa87";
    case KeyAlgo::ecrdsa_256:
    case KeyAlgo::ecrdsa_512: return "ecrdsa";
  }
  return "?";
}

std::string_view key_algo_name(KeyAlgo a) {
  switch (a) {
    case KeyAlgo::rsa: return "RSA";
    case KeyAlgo::ecdsa_p256: return "ECDSA-P256";
    case KeyAlgo::ecdsa_p384: return "ECDSA-P384";
    case KeyAlgo::ecdsa_p192: return "ECDSA-P192";
    case KeyAlgo::ecdsa_p521: return "ECDSA-P521";
    case KeyAlgo::ml_dsa_44: return "ML-DSA-44";
    case KeyAlgo::ml_dsa_65: return "ML-DSA-65";
    case KeyAlgo::ml_dsa_87: return "ML-DSA-87";
    case KeyAlgo::ecrdsa_256: return "GOST-2012-256";
    case KeyAlgo::ecrdsa_512: return "GOST-2012-512";
  }
  return "?";
}

std::optional<KeyAlgo> key_algo_by_name(std::string_view name, int* rsa_bits) {
  const std::string n = lower(name);
  if (n == "ml-dsa-44" || n == "mldsa44") return KeyAlgo::ml_dsa_44;
  if (n == "ml-dsa-65" || n == "mldsa65") return KeyAlgo::ml_dsa_65;
  if (n == "ml-dsa-87" || n == "mldsa87") return KeyAlgo::ml_dsa_87;
  if (n == "ecdsa-p256") return KeyAlgo::ecdsa_p256;
  if (n == "ecdsa-p384") return KeyAlgo::ecdsa_p384;
  if (n == "ecdsa-p521") return KeyAlgo::ecdsa_p521;
  for (int bits : {2048, 3072, 4096})
    if (n == "rsa-" + std::to_string(bits)) {
      if (rsa_bits) *rsa_bits = bits;
      return KeyAlgo::rsa;
    }
  return std::nullopt;
}

std::size_t ml_dsa_public_key_size(KeyAlgo a) {
  switch (a) {
    case KeyAlgo::ml_dsa_44: return 1312;
    case KeyAlgo::ml_dsa_65: return 1952;
    case KeyAlgo::ml_dsa_87: return 2592;
    default: return 0;
  }
}

std::size_t ml_dsa_signature_size(KeyAlgo a) {
  switch (a) {
    case KeyAlgo::ml_dsa_44: return 2420;
    case KeyAlgo::ml_dsa_65: return 3309;
    case KeyAlgo::ml_dsa_87: return 4627;
    default: return 0;
  }
}

ByteView signature_oid(KeyAlgo key, HashAlgo digest) {
  switch (key) {
    case KeyAlgo::rsa: return oid::rsa_encryption;
    case KeyAlgo::ecdsa_p192:
    case KeyAlgo::ecdsa_p256:
    case KeyAlgo::ecdsa_p384:
    case KeyAlgo::ecdsa_p521:
      // ecdsa-with-<digest>, as OpenSSL's CMS writes it (RFC 5758 §3.2, RFC 5753 §7.1.3;
      // NIST CSOR for the SHA-3 forms).
      switch (digest) {
        case HashAlgo::sha1: return oid::ecdsa_with_sha1;
        case HashAlgo::sha224: return oid::ecdsa_with_sha224;
        case HashAlgo::sha256: return oid::ecdsa_with_sha256;
        case HashAlgo::sha384: return oid::ecdsa_with_sha384;
        case HashAlgo::sha512: return oid::ecdsa_with_sha512;
        case HashAlgo::sha3_256: return oid::ecdsa_with_sha3_256;
        case HashAlgo::sha3_384: return oid::ecdsa_with_sha3_384;
        case HashAlgo::sha3_512: return oid::ecdsa_with_sha3_512;
        case HashAlgo::md5: break;  // no ecdsa-with-MD5
      }
      return oid::ecdsa_with_sha256;
    case KeyAlgo::ml_dsa_44: return oid::ml_dsa_44;
    case KeyAlgo::ml_dsa_65: return oid::ml_dsa_65;
    case KeyAlgo::ml_dsa_87: return oid::ml_dsa_87;
    case KeyAlgo::ecrdsa_256:
    case KeyAlgo::ecrdsa_512: break;  // never a signer's key
  }
  return {};
}

bool signature_oid_has_null_params(KeyAlgo key) { return key == KeyAlgo::rsa; }

std::optional<KeyAlgo> key_algo_by_signature_oid(ByteView o, bool* ecdsa) {
  if (ecdsa) *ecdsa = false;
  if (same(o, oid::rsa_encryption)) return KeyAlgo::rsa;
  if (same(o, oid::ml_dsa_44)) return KeyAlgo::ml_dsa_44;
  if (same(o, oid::ml_dsa_65)) return KeyAlgo::ml_dsa_65;
  if (same(o, oid::ml_dsa_87)) return KeyAlgo::ml_dsa_87;
  if (same(o, oid::ecdsa_with_sha1) || same(o, oid::ecdsa_with_sha224) || same(o, oid::ecdsa_with_sha256) ||
      same(o, oid::ecdsa_with_sha384) || same(o, oid::ecdsa_with_sha512) || same(o, oid::ecdsa_with_sha3_256) ||
      same(o, oid::ecdsa_with_sha3_384) || same(o, oid::ecdsa_with_sha3_512)) {
    if (ecdsa) *ecdsa = true;
    return KeyAlgo::ecdsa_p256;  // curve comes from the key
  }
  return std::nullopt;
}

}  // namespace modsign::crypto
