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
Status public_key_verify_signature(const crypto::PublicKey& key, const SignedInfo& si, ByteView m,
                                   crypto::Backend backend = crypto::Backend::openssl, const Pkcs7Message* msg = nullptr);

}  // namespace modsign::kernel
