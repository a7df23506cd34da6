// mirrors crypto/asymmetric_keys/pkcs7_trust.c pkcs7_validate_trust, pkcs7_validate_trust_one, Linux 7.2.13
#pragma once

#include <vector>

#include "cms/kernel_model.hpp"
#include "cms/pkcs7_parser.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::cms {

/// pkcs7_validate_trust() against `trusted`: ENOKEY when no signer chains to it, ENOPKG
/// when all signers were unsupported, EKEYREJECTED when the trusted key's signature check
/// fails (every public-key error collapses to it).
Status pkcs7_validate_trust(Pkcs7Message& msg, const std::vector<crypto::Certificate>& trusted,
                            const KernelModel& profile);

}  // namespace modsign::cms
