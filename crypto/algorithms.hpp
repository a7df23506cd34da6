// modsign — algorithm identifiers: hashes and signature algorithms, with their OIDs,
// sizes, OpenSSL names and the kernel's names and hash_info.h numbering.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/result.hpp"

namespace modsign::crypto {

/// Digest algorithms a SignerInfo may name.
/// md5 exists only to mirror Linux 6.1-6.6, whose PKCS#7 parser still maps the md5
/// digestAlgorithm (kernel profile v6.1); modsign never signs with it.
enum class HashAlgo { sha1, sha224, sha256, sha384, sha512, sha3_256, sha3_384, sha3_512, md5 };

/// Facts about one HashAlgo.
struct HashInfo {
  HashAlgo algo;
  std::string_view name;          ///< kernel hash_algo_name[] string: "sha256", "sha3-256"
  std::string_view openssl_name;  ///< EVP_get_digestbyname name: "SHA256", "SHA3-256"
  ByteView oid;                   ///< DER contents octets of the OID
  std::size_t size;               ///< digest size in bytes
  int kernel_hash_algo;           ///< enum hash_algo in include/uapi/linux/hash_info.h
};

const HashInfo& hash_info(HashAlgo a);
/// Look up by kernel name ("sha512"), case-insensitive; nullopt if unknown.
std::optional<HashAlgo> hash_by_name(std::string_view name);
/// Look up by OID contents octets; nullopt if not a digest the kernel knows (RFC 5754,
/// FIPS 202 OIDs; kernel-semantics §1.7 minus SM3/Streebog, which modsign cannot compute).
std::optional<HashAlgo> hash_by_oid(ByteView oid);

/// Public-key algorithms (and, for ECDSA, the curve).  ecrdsa_256 / ecrdsa_512: GOST R
/// 34.10-2012 keys (id-tc26-gost3410-12-256/512), which x509_extract_key_data takes as
/// "ecrdsa": a certificate may hold one, modsign never signs or verifies with it.
enum class KeyAlgo {
  rsa,
  ecdsa_p256,
  ecdsa_p384,
  ml_dsa_44,
  ml_dsa_65,
  ml_dsa_87,
  ecdsa_p192,
  ecdsa_p521,
  ecrdsa_256,
  ecrdsa_512
};

bool is_ml_dsa(KeyAlgo a);
/// ECDSA on any curve (P-192, P-256, P-384, P-521: the curves the kernel supports).
bool is_ecdsa(KeyAlgo a);
/// Kernel pkey_algo name: "rsa", "ecdsa", "mldsa44", "mldsa65", "mldsa87".
std::string_view kernel_pkey_name(KeyAlgo a);
/// Display name: "RSA", "ECDSA-P256", "ML-DSA-65".
std::string_view key_algo_name(KeyAlgo a);
/// Parse a --algo value: "ml-dsa-44|65|87", "rsa-2048|3072|4096", "ecdsa-p256|p384|p521".
/// `rsa_bits` receives the RSA modulus size.  nullopt if unknown.
std::optional<KeyAlgo> key_algo_by_name(std::string_view name, int* rsa_bits = nullptr);
/// ML-DSA sizes (FIPS 204 Table 2): public key, signature.  0 for other algorithms.
std::size_t ml_dsa_public_key_size(KeyAlgo a);
std::size_t ml_dsa_signature_size(KeyAlgo a);

/// OIDs as DER contents octets.
namespace oid {
extern const ByteView rsa_encryption;          // 1.2.840.113549.1.1.1
extern const ByteView ec_public_key;           // 1.2.840.10045.2.1
extern const ByteView prime256v1;              // 1.2.840.10045.3.1.7
extern const ByteView secp384r1;               // 1.3.132.0.34
extern const ByteView ecdsa_with_sha1;         // 1.2.840.10045.4.1
extern const ByteView ecdsa_with_sha224;       // 1.2.840.10045.4.3.1
extern const ByteView ecdsa_with_sha3_256;     // 2.16.840.1.101.3.4.3.10
extern const ByteView ecdsa_with_sha3_384;     // 2.16.840.1.101.3.4.3.11
extern const ByteView ecdsa_with_sha3_512;     // 2.16.840.1.101.3.4.3.12
extern const ByteView ecdsa_with_sha256;       // 1.2.840.10045.4.3.2
extern const ByteView ecdsa_with_sha384;       // 1.2.840.10045.4.3.3
extern const ByteView ecdsa_with_sha512;       // 1.2.840.10045.4.3.4
extern const ByteView ml_dsa_44;               // 2.16.840.1.101.3.4.3.17
extern const ByteView ml_dsa_65;               // 2.16.840.1.101.3.4.3.18
extern const ByteView ml_dsa_87;               // 2.16.840.1.101.3.4.3.19
extern const ByteView signed_data;             // 1.2.840.113549.1.7.2
extern const ByteView data;                    // 1.2.840.113549.1.7.1
extern const ByteView content_type;            // 1.2.840.113549.1.9.3
extern const ByteView message_digest;          // 1.2.840.113549.1.9.4
extern const ByteView signing_time;            // 1.2.840.113549.1.9.5
extern const ByteView smime_capabilities;      // 1.2.840.113549.1.9.15
extern const ByteView common_name;             // 2.5.4.3
extern const ByteView subject_key_identifier;  // 2.5.29.14
}  // namespace oid

/// The SignerInfo signatureAlgorithm a kernel expects for this key and digest
/// (kernel-semantics §1.7): rsaEncryption for RSA, ecdsa-with-<digest> for ECDSA
/// (SHA-1, SHA-224/256/384/512, SHA3-256/384/512), id-ml-dsa-* for ML-DSA.
ByteView signature_oid(KeyAlgo key, HashAlgo digest);
/// Whether the AlgorithmIdentifier for signature_oid() carries NULL parameters
/// (rsaEncryption: yes, RFC 3279 §2.3.1; ECDSA: absent, RFC 5758; ML-DSA: absent, RFC 9882 §2).
bool signature_oid_has_null_params(KeyAlgo key);
/// The key algorithm a signatureAlgorithm OID implies, as the kernel maps it
/// (rsaEncryption -> rsa, ecdsa-with-* -> ecdsa (curve unknown: nullopt curve), id-ml-dsa-*).
/// `ecdsa` is set for any ECDSA OID.  nullopt if not a signature OID modsign supports.
std::optional<KeyAlgo> key_algo_by_signature_oid(ByteView oid, bool* ecdsa = nullptr);

}  // namespace modsign::crypto
