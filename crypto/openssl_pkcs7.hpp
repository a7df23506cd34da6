// modsign's own: OpenSSL PKCS7_verify() of an Authenticode signature against one trusted
// certificate, configured as EDK2's CryptoPkg Pkcs7Verify() configures it (X509 store with
// the trusted certificate only, partial chains allowed, no time checks, any purpose), so
// that a firmware db/dbx X.509 decision is made by the same library code firmware uses.
#pragma once

#include <string>
#include <vector>

#include "common/result.hpp"

namespace modsign::crypto {

/// Verify the DER PKCS#7 ContentInfo `pkcs7` (a SignedData) over `content` (the signed
/// content bytes: for Authenticode the SpcIndirectDataContent without its SEQUENCE tag and
/// length) with `trusted` (one DER certificate) as the only trust anchor; the signature's
/// own certificates are the untrusted intermediates.  X509_V_FLAG_PARTIAL_CHAIN and
/// X509_V_FLAG_NO_CHECK_TIME are set and the purpose is X509_PURPOSE_ANY.
/// Errors: EBADMSG when `pkcs7` or `trusted` does not decode; EKEYREJECTED when the
/// signature does not verify or no chain to `trusted` is found (message: OpenSSL's reason).
Status pkcs7_verify_trusted(ByteView pkcs7, ByteView content, ByteView trusted);

}  // namespace modsign::crypto
