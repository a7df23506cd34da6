// mirrors crypto/asymmetric_keys/x509_cert_parser.c x509_cert_parse, x509_note_sig_algo, x509_extract_key_data (algorithm acceptance), Linux 7.2.13
#pragma once

#include <optional>
#include <string>

#include "cms/kernel_profile.hpp"
#include "cms/pkcs7_parser.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::kernel {

/// The kernel's X.509 acceptance (x509_cert_parse / x509_note_sig_algo / x509_extract_key_data
/// in 7.2): signature algorithms sha{1,224,256,384,512}WithRSAEncryption, RSA with SHA-3,
/// ecdsa-with-SHA1/SHA-2/SHA-3, id-ml-dsa-* (7.0 only); keys RSA, ECDSA P-192/256/384/521,
/// ML-DSA (7.0 only).  Errors: ENOPKG otherwise (e.g. RSASSA-PSS-signed certificates);
/// the error of x509_check_for_self_signed() (which x509_cert_parse() ends with) when the
/// self-signature's algorithm is one `profile` leaves out (KernelProfile::absent_sig_algos):
/// ENOENT "self-signature: crypto_alloc_sig(mldsa65): no such algorithm (CONFIG_CRYPTO_MLDSA
/// is not set)" — such a certificate never reaches a keyring.
Status x509_supported(const crypto::Certificate& cert, const KernelProfile& profile);

/// The certificate as x509_cert_parse() keeps it: id (serial ‖ issuer), SKID and AKID
/// parts; index, blacklisted and the chain fields left for the caller.
X509Cert x509_cert_of(crypto::Certificate cert);

/// modsign's note for a certificate x509_supported() refuses, so that the kernel of
/// `profile` never loads it: "<which> is not loaded by a <profile> kernel (<ERRNO>:
/// <reason>)", e.g. which = "keys.pem certificate 2".  nullopt when it is supported.
std::optional<std::string> x509_unloadable_note(const crypto::Certificate& cert, const KernelProfile& profile,
                                                const std::string& which);

}  // namespace modsign::kernel
