// mirrors crypto/asymmetric_keys/x509_public_key.c x509_get_sig_params (the tbs: blacklist hash),
// x509_check_for_self_signed, and the certificate signature check, Linux 7.2.13
#pragma once

#include <optional>

#include "cms/kernel_model.hpp"
#include "cms/pkcs7_parser.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::cms {

/// The hash x509_get_sig_params() looks up as "tbs:<hex>" for a certificate
/// (crypto/asymmetric_keys/x509_public_key.c:38-45 in Linux 7.2.13): 7.0 and later,
/// SHA-256 of the TBSCertificate TLV for every certificate (32 bytes); before 7.0, the
/// TBSCertificate hashed with the certificate signature's own hash (e.g. 48 bytes for
/// sha384WithRSAEncryption), nullopt when that hash is not one modsign can compute
/// (ML-DSA-signed certificates, unknown OIDs) — the kernel then skips the check; and
/// nullopt under v6.1 for a SHA-3 signature, which that kernel cannot parse at all.
std::optional<Bytes> x509_tbs_blacklist_hash(const crypto::Certificate& cert, const KernelModel& profile);

/// True when `bl` holds "tbs:<hex>" of x509_tbs_blacklist_hash(c, p) (x509_get_sig_params
/// then marks the certificate blacklisted); false without a blacklist or a hash.
bool tbs_blacklisted(const crypto::Certificate& c, const KernelModel& p, const Blacklist* bl);

/// x509_check_for_self_signed (x509_public_key.c): same raw subject and issuer, an AKID (if
/// any) pointing at the certificate itself (both parts must agree when both exist), then
/// the signature checked with its own key; ENOPKG marks the signature unsupported; any other
/// error fails x509_cert_parse(), e.g. ENOENT for a self-signed ML-DSA certificate on a
/// kernel without CONFIG_CRYPTO_MLDSA (crypto_alloc_sig finds no "mldsa65").
Status check_self_signed(X509Cert& x, const KernelModel& profile);

/// Check `child`'s certificate signature with `issuer_key` as the kernel does: the TBS
/// hashed with the certificate signature's hash (x509_get_sig_params; ML-DSA: the TBS
/// itself), then public_key_verify_signature().  EBADMSG for a signature BIT STRING with
/// unused bits, ENOPKG for a hash modsign cannot compute, else public_key_verify_signature's
/// (ENOENT for an algorithm `profile` leaves out, when given).
Status verify_cert_signature(const crypto::Certificate& child, const crypto::PublicKey& issuer_key,
                             crypto::Backend backend = crypto::Backend::automatic,
                             const KernelModel* profile = nullptr);

}  // namespace modsign::cms
