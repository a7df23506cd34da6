// mirrors crypto/asymmetric_keys/x509_cert_parser.c x509_cert_parse, x509_note_sig_algo, x509_extract_key_data
// (algorithm acceptance), x509_note_signature, x509_process_extension and the x509.asn1 / x509_akid.asn1 grammar,
// Linux 7.2.13
#pragma once

#include <optional>
#include <string>

#include "cms/kernel_model.hpp"
#include "cms/pkcs7_parser.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::cms {

/// The kernel's X.509 acceptance (x509_cert_parse / x509_note_sig_algo / x509_extract_key_data
/// in 7.2): signature algorithms sha{1,224,256,384,512}WithRSAEncryption, RSA with SHA-3,
/// ecdsa-with-SHA1/SHA-2/SHA-3, id-ml-dsa-* (7.0 only); keys RSA, ECDSA P-192/256/384/521 (P-521 from 6.10, not under
/// v6.1), ML-DSA (7.0 only).  Errors: ENOPKG otherwise (e.g. RSASSA-PSS-signed certificates); the error of
/// x509_check_for_self_signed() (which x509_cert_parse() ends with) when the self-signature's algorithm is one
/// `profile` leaves out (KernelModel::absent_sig_algos): ENOENT "self-signature: crypto_alloc_sig(mldsa65): no such
/// algorithm (CONFIG_CRYPTO_MLDSA is not built in)" — such a certificate never reaches a keyring.
Status x509_supported(const crypto::Certificate& cert, const KernelModel& profile);

/// The certificate as x509_cert_parse() keeps it: id (serial ‖ issuer), SKID and AKID
/// parts; index, blacklisted and the chain fields left for the caller.
X509Cert x509_cert_of(crypto::Certificate cert);

/// x509_note_sig_algo's acceptance of a certificate signature algorithm OID (the part of
/// x509_supported() that depends on it).  Errors: ENOPKG.
Status x509_note_sig_algo(ByteView sig_oid, const KernelModel& profile);

/// The hash of a GOST R 34.10-2012 signature algorithm OID, as x509_note_sig_algo names it
/// (pkey_algo "ecrdsa"): "streebog256" for gost2012Signature256 (1.2.643.7.1.1.3.2),
/// "streebog512" for gost2012Signature512 (1.2.643.7.1.1.3.3); nullopt for other OIDs.
std::optional<std::string> gost2012_signature_hash(ByteView sig_oid);

/// What asn1_ber_decoder(&x509_decoder) and its callbacks, then the AuthorityKeyIdentifier
/// decoder, make of a certificate's bytes in x509_cert_parse (before the signature checks):
/// the x509.asn1 grammar under the kernel's BER rules (every SEQUENCE ends where its last
/// element does, Names and extensions hold at least one element, Time is UTCTime or
/// GeneralizedTime, an absent optional parameters field of an indefinite-length
/// AlgorithmIdentifier is an error); x509_note_sig_algo on tbsCertificate.signature (ENOPKG);
/// x509_extract_key_data's key algorithms (rsaEncryption, GOST 2012, id-ecPublicKey on
/// P-192/256/384/521, ML-DSA from 7.0; else ENOPKG; a BIT STRING with unused bits EBADMSG);
/// x509_process_extension's shapes of subjectKeyIdentifier (one only), keyUsage and
/// basicConstraints (EBADMSG); x509_note_signature (the two algorithm OIDs equal, else
/// EINVAL; no unused bits, else EBADMSG); x509_akid.asn1 (EBADMSG).  Found necessary by the
/// mutation campaign (tools/conformance/mutate.py, certificate.* classes).
Status x509_decode(ByteView der, const KernelModel& profile);

/// modsign's note for a certificate x509_supported() refuses, so that the kernel of
/// `profile` never loads it: "<which> is not loaded by a <profile> kernel (<ERRNO>:
/// <reason>)", e.g. which = "keys.pem certificate 2".  nullopt when it is supported.
std::optional<std::string> x509_unloadable_note(const crypto::Certificate& cert, const KernelModel& profile,
                                                const std::string& which);

}  // namespace modsign::cms
