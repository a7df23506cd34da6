// mirrors crypto/asymmetric_keys/public_key.c public_key_verify_signature (with crypto/rsassa-pkcs1.c rsassa_pkcs1_verify and crypto/ecdsa-x962.c's signature decoding), Linux 7.2.13
#pragma once

#include <optional>
#include <string>

#include "cms/pkcs7_parser.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::kernel {

/// The hash behind a kernel hash name (sig->hash_algo); nullopt for "none" and for the
/// hashes modsign cannot compute (sm3, streebog256, streebog512).
std::optional<crypto::HashAlgo> hash_of(const std::string& name);

/// public_key_verify_signature(key, sig) with sig->m = m (kernel-semantics §2.7, §3.3).
/// With `profile`, an algorithm its configuration leaves out (KernelProfile::
/// absent_sig_algos) fails as crypto_alloc_sig() does when no such algorithm is
/// registered (crypto_alg_mod_lookup in crypto/api.c): ENOENT "crypto_alloc_sig(<name>):
/// no such algorithm (CONFIG_CRYPTO_<X> is not set)", after the encoding and hash checks
/// of software_key_determine_akcipher().  Callers map it as the kernel does: EKEYREJECTED
/// in pkcs7_validate_trust_one(), x509_cert_parse() fails for a self-signed certificate.
Status public_key_verify_signature(const crypto::PublicKey& key, const SignedInfo& si, ByteView m,
                                   crypto::Backend backend = crypto::Backend::openssl, const Pkcs7Message* msg = nullptr,
                                   const KernelProfile* profile = nullptr);

}  // namespace modsign::kernel
