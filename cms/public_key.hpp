// mirrors crypto/asymmetric_keys/public_key.c public_key_verify_signature (with crypto/rsassa-pkcs1.c
// rsassa_pkcs1_verify, the set_pub_key of crypto/rsa.c and crypto/mldsa.c; ECDSA in cms/ecdsa and cms/ecdsa_x962),
// Linux 7.2.13
#pragma once

#include <optional>
#include <string>

#include "cms/pkcs7_parser.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::cms {

/// The hash behind a kernel hash name (sig->hash_algo); nullopt for "none" and for the
/// hashes modsign cannot compute (sm3, streebog256, streebog512).
std::optional<crypto::HashAlgo> hash_of(const std::string& name);

/// crypto_sig_set_pubkey(): the key as the algorithm's set_pub_key parses it from the
/// bytes x509_extract_key_data kept (the subjectPublicKey BIT STRING without its
/// unused-bits octet).  RSA (rsa_set_pub_key in crypto/rsa.c, rsapubkey.asn1): the BER
/// SEQUENCE { n INTEGER, e INTEGER } (bytes after it ignored; a decoding error EBADMSG),
/// n not empty and e not empty nor longer than n (EINVAL), the modulus in 64-bit limbs
/// 512, 1024, 1536, 2048, 3072 or 4096 bits (EINVAL).  ECDSA (ecdsa_set_pub_key in
/// crypto/ecdsa.c): 04 || X || Y of the curve's size in 64-bit digits, on the curve
/// (EINVAL).  ML-DSA (crypto_mldsa_set_pub_key in crypto/mldsa.c): exactly 1312, 1952 or
/// 2592 bytes (EINVAL).  Returns a usable key: `key` itself when OpenSSL parsed it, else
/// the key rebuilt from what the kernel read (certificates embedded in a PKCS#7 message,
/// PublicKey::unparsed).  Found by the mutation campaign
/// (certificate.tbs.subjectPublicKeyInfo.* classes).
Result<crypto::PublicKey> crypto_sig_set_pubkey(const crypto::PublicKey& key);

/// public_key_verify_signature(key, sig) with sig->m = m (kernel-semantics §2.7, §3.3).
/// With `profile`, an algorithm its configuration leaves out (KernelModel::
/// absent_sig_algos) fails as crypto_alloc_sig() does when no such algorithm is
/// registered (crypto_alg_mod_lookup in crypto/api.c): ENOENT "crypto_alloc_sig(<name>):
/// no such algorithm (CONFIG_CRYPTO_<X> is not built in)", after the encoding and hash checks
/// of software_key_determine_akcipher().  Callers map it as the kernel does: EKEYREJECTED
/// in pkcs7_validate_trust_one(), x509_cert_parse() fails for a self-signed certificate.
Status public_key_verify_signature(const crypto::PublicKey& key, const SignedInfo& si, ByteView m,
                                   crypto::Backend backend = crypto::Backend::automatic,
                                   const Pkcs7Message* msg = nullptr, const KernelModel* profile = nullptr);

}  // namespace modsign::cms
