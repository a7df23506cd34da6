// mirrors EDK2 SecurityPkg/Library/DxeImageVerificationLib DxeImageVerificationHandler(), IsForbiddenByDbx(),
// IsAllowedByDb(), IsCertHashFoundInDbx(), IsSignatureFoundInDatabase(); UEFI 2.10 §32.5.3.3 The firmware's db/dbx
// decision for a PE image, over what api/efi_image.cpp extracts from the image (pe/ digests, cms/ Authenticode
// signatures).  Public shapes in include/modsign/efi_image.hpp.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "crypto/algorithms.hpp"
#include "modsign/efi_image.hpp"

namespace modsign::blacklist::efi_image {

/// One WIN_CERTIFICATE as the handler sees it.
struct Signature {
  std::size_t index = 0;                 ///< 1-based
  std::string error;                     ///< not a readable PKCS#7 Authenticode signature: why (then skipped)
  Bytes pkcs7;                           ///< bCertificate (DER ContentInfo, maybe with padding after it)
  Bytes content;                         ///< SpcIndirectDataContent contents octets (what PKCS7_verify hashes)
  std::optional<crypto::HashAlgo> algo;  ///< SpcIndirectDataContent digestAlgorithm
  std::string algo_name;
  Bytes signed_digest;              ///< SpcIndirectDataContent digest
  std::vector<Bytes> certificates;  ///< the SignedData's certificates (DER)
  std::string signer;               ///< the SignerInfo's issuer, for the report
};

/// The image: its Authenticode digests in sha256, sha1, sha384, sha512, and signatures.
struct Image {
  std::array<Bytes, 4> digests;
  bool has_certificate_table = false;
  std::vector<Signature> signatures;
};

/// The decision (EfiImageVerdict's refused, rule, entry, signatures, notes).
void decide(const Image& image, const EfiImagePolicy& policy, EfiImageVerdict& out);

}  // namespace modsign::blacklist::efi_image
