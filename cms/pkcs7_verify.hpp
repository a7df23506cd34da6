// mirrors crypto/asymmetric_keys/pkcs7_verify.c pkcs7_digest, pkcs7_get_digest, pkcs7_find_key, pkcs7_verify_sig_chain,
// pkcs7_verify_one, pkcs7_verify, Linux 7.2.13
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cms/kernel_model.hpp"
#include "cms/pkcs7_parser.hpp"
#include "common/result.hpp"

namespace modsign::cms {

/// pkcs7_get_digest() result: the bytes IMA would measure and the hash_info.h index.
struct KernelDigest {
  Bytes buf;
  std::string hash_algo;               ///< kernel name of sig->hash_algo
  std::optional<int> hash_algo_index;  ///< enum hash_algo; nullopt = left unchanged
};

/// pkcs7_digest() for one signer (pkcs7_verify.c): 7.0 ML-DSA without authattrs hands the
/// data itself; otherwise H(data), then with authattrs the messageDigest checks (size
/// EBADMSG, value EKEYREJECTED) and H(0x31 ‖ authattrs) — for 7.0 ML-DSA the re-tagged
/// attributes themselves.  ENOPKG when the hash cannot be computed.
Status pkcs7_digest(Pkcs7Message& msg, std::size_t signer, const KernelModel& profile);

/// pkcs7_get_digest(): EBADMSG unless exactly one SignerInfo; pkcs7_digest errors; 7.0:
/// EINVAL ("No digest available") for ML-DSA without authattrs.
Result<KernelDigest> pkcs7_get_digest(Pkcs7Message& msg, const KernelModel& profile);

/// pkcs7_verify(): usage gates, then every signer (digest, find key among embedded
/// certificates, signingTime, signature, chain) with the kernel's aggregation: 0 if one
/// passed, EKEYREJECTED if none passed and one was blacklisted, ENOPKG if all unsupported;
/// any other error at once.  `warnings` receives kernel log lines (e.g. the waiver's).
Status pkcs7_verify(Pkcs7Message& msg, Usage usage, const KernelModel& profile,
                    std::vector<std::string>* warnings = nullptr);

/// sig->m: the digest (or attributes) pkcs7_digest() made, or the data itself.
ByteView signed_bytes(const Pkcs7Message& msg, const SignedInfo& si);

}  // namespace modsign::cms
