// mirrors crypto/asymmetric_keys/x509_cert_parser.c x509_cert_parse, x509_note_sig_algo, x509_extract_key_data (algorithm acceptance), Linux 7.2.13
#include "cms/x509_cert_parser.hpp"

#include <algorithm>

#include "asn1/der.hpp"
#include "cms/x509_public_key.hpp"

namespace modsign::kernel {

X509Cert x509_cert_of(crypto::Certificate cert) {
  X509Cert x;
  x.cert = std::move(cert);
  x.id = x.cert.kernel_id();
  x.skid = x.cert.skid();
  x.akid_id = x.cert.akid_id();
  x.akid_skid = x.cert.akid_keyid();
  return x;
}

Status x509_supported(const crypto::Certificate& cert, const KernelProfile& profile) {
  const ByteView o = cert.signature_algorithm();
  bool ecdsa = false;
  auto ka = crypto::key_algo_by_signature_oid(o, &ecdsa);
  const bool mldsa_sig = ka && crypto::is_ml_dsa(*ka);
  static constexpr std::uint8_t rsa_sha3_prefix[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03};
  const bool rsa_sha3 = o.size() == 9 && std::equal(rsa_sha3_prefix, rsa_sha3_prefix + 8, o.begin()) && o[8] >= 0x0d && o[8] <= 0x10;
  const bool rsa_pkcs1 = cert.signature_hash().has_value() && !ecdsa;
  // id-ecdsa-with-sha3-* (2.16.840.1.101.3.4.3.10-12), as rsa_sha3 above.
  const bool ecdsa_sha3 = ecdsa && o.size() == 9 && std::equal(rsa_sha3_prefix, rsa_sha3_prefix + 8, o.begin()) &&
                          o[8] >= 0x0a && o[8] <= 0x0c;
  if (!(rsa_pkcs1 || rsa_sha3 || ecdsa || mldsa_sig) || (mldsa_sig && profile.generation == Generation::v6))
    return make_error(KErr::enopkg, "unsupported certificate signature algorithm " + asn1::oid_to_string(o));
  // 6.1-6.6 x509_note_sig_algo() knows no SHA-3 signature OIDs (they came with SHA-3 module
  // signing): x509_cert_parse() fails with ENOPKG.  Confirmed on Debian 12's 6.1
  // (tools/kernel-conformance sha3-rsa-cert-embedded, sha3-ecdsa-cert-embedded).
  if (profile.legacy_digests && (rsa_sha3 || ecdsa_sha3))
    return make_error(KErr::enopkg, "unsupported certificate signature algorithm " + asn1::oid_to_string(o) +
                                        " (no SHA-3 before Linux 6.7)");
  if (crypto::is_ml_dsa(cert.public_key().algo()) && profile.generation == Generation::v6)
    return make_error(KErr::enopkg, "ML-DSA keys need kernel 7.0");
  // x509_cert_parse() ends with x509_check_for_self_signed(), whose signature check fails
  // with crypto_alloc_sig()'s ENOENT when the kernel lacks the algorithm (only ENOPKG is
  // forgiven there): the certificate is not parsed, so not loaded.
  if (!profile.absent_sig_algos.empty()) {
    X509Cert x = x509_cert_of(cert);
    if (auto st = check_self_signed(x, profile); !st && st.error().code == KErr::enoent) return st;
  }
  return ok_status();
}

std::optional<std::string> x509_unloadable_note(const crypto::Certificate& cert, const KernelProfile& profile,
                                                const std::string& which) {
  auto st = x509_supported(cert, profile);
  if (st) return std::nullopt;
  return which + " is not loaded by a " + profile.name() + " kernel (" + std::string(errno_name(st.error().code)) +
         ": " + st.error().message + ")";
}

}  // namespace modsign::kernel
