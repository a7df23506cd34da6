// mirrors security/integrity/ima/ima_modsig.c ima_collect_modsig, ima_modsig_verify, Linux 7.2.13
#pragma once

#include "cms/kernel_model.hpp"
#include "cms/system_keyring.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::digest {

/// IMA's check of an appended signature (security/integrity/ima/ima_modsig.c, Linux 7.2.13),
/// on a message ima_read_modsig() parsed (a parse failure leaves IMA without a modsig):
/// ima_collect_modsig() supplies `data` (the file without the PKCS#7, struct
/// module_signature and marker) as detached data and ignores a failure (a message that
/// carries its own content: EINVAL); when the data was supplied it calls pkcs7_get_digest()
/// for the d-modsig field, whose pkcs7_digest() leaves the content digest in sig->m even
/// when a messageDigest check fails.  ima_modsig_verify() then calls
/// verify_pkcs7_message_sig(NULL, 0, ...) with usage module on that same message:
/// pkcs7_verify() over whatever content the message holds, the revocation check and
/// pkcs7_validate_trust(keyring) (IMA's .ima keyring).  Consequences, unlike
/// verify_pkcs7_signature() (the module loader): a message with embedded content is
/// verified over that content, not the file (the loader refuses it: EBADMSG); and under
/// the ML-DSA waiver an ML-DSA signer whose messageDigest is wrong is verified over the
/// content digest instead of its signedAttrs (the loader refuses it: EKEYREJECTED).
/// Errors: those of pkcs7_parse_message, pkcs7_verify and pkcs7_validate_trust (ENOKEY
/// when no signer chains to `keyring`); EKEYREJECTED for a revoked signer.
cms::VerifyReport ima_modsig_verify(ByteView data, ByteView pkcs7, const cms::Keyring& keyring,
                                    const cms::KernelModel& profile,
                                    crypto::Backend backend = crypto::Backend::automatic);

}  // namespace modsign::digest
