// modsign — what a given Linux kernel does with a PKCS#7 message: parse, digest, verify,
// trust.  A mirror of crypto/asymmetric_keys/{pkcs7.asn1, pkcs7_parser.c,
// pkcs7_verify.c, pkcs7_trust.c, public_key.c} and certs/system_keyring.c, with the
// behaviour of each kernel generation chosen by a KernelProfile
// (docs/kernel-semantics.md; confirmed against Linux 7.2.13 where noted).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::kernel {

/// Kernel generations whose PKCS#7 behaviour differs.
enum class Generation {
  v6,    ///< before the 2026 ML-DSA series (6.x): no ML-DSA OIDs, TBS blacklist hash = cert's own hash
  v7_0,  ///< with it (7.0 and later): ML-DSA, algo_takes_data, SHA-256 TBS blacklist hash
};

/// The kernel being predicted, and the configuration that changes module-signature outcomes.
struct KernelProfile {
  Generation generation = Generation::v7_0;
  bool waive_mldsa_authattrs = false;  ///< CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA (7.0 only)
  bool enforce = false;                ///< module.sig_enforce=1 / CONFIG_MODULE_SIG_FORCE
  bool lockdown = false;               ///< lockdown=integrity (LOCKDOWN_MODULE_SIGNATURE refused)
  /// Linux 6.1-6.6 digest OIDs (profile "v6.1", generation v6): pkcs7_sig_note_digest_algo
  /// still maps md4 and md5 and knows no SHA-3 digest, and pkcs7_sig_note_pkey_algo knows no
  /// id-ecdsa-with-sha3-*.  Confirmed on Debian 12's 6.1.0-57 (tools/kernel-conformance:
  /// md5 is hashed and checked, EKEYREJECTED; sha3-256 is "Unsupported digest algo",
  /// ENOPKG); SHA-3 arrived and md4/md5 left in later 6.x kernels (6.12 behaves as "v6").
  bool legacy_digests = false;

  static KernelProfile v6() { return KernelProfile{Generation::v6}; }
  static KernelProfile v6_1() {
    KernelProfile p{Generation::v6};
    p.legacy_digests = true;
    return p;
  }
  static KernelProfile v7_0() { return KernelProfile{Generation::v7_0}; }
  /// "v6.1", "v6" or "v7.0"; parse accepts those and "6.1", "7.0", "v7", "6".
  std::string name() const;
  static std::optional<KernelProfile> parse(const std::string& name);
};

/// What the signature is being checked for (enum key_being_used_for).
enum class Usage { module, firmware, kexec_pe, unspecified, bpf, key_signature };

/// The system blacklist (certs/blacklist.c): "tbs:<hex>" and "bin:<hex>" descriptions and
/// revoked certificates (CONFIG_SYSTEM_REVOCATION_LIST).  The blacklist issue fills it.
struct Blacklist {
  std::set<std::string> descriptions;  ///< e.g. "tbs:3a4f..." (lower-case hex)
  std::vector<crypto::Certificate> revoked;
  bool is_tbs_blacklisted(const Bytes& hash) const { return descriptions.count("tbs:" + to_hex(hash)) != 0; }
};

/// The hash x509_get_sig_params() looks up as "tbs:<hex>" for a certificate
/// (crypto/asymmetric_keys/x509_public_key.c:38-45 in Linux 7.2.13): 7.0 and later,
/// SHA-256 of the TBSCertificate TLV for every certificate (32 bytes); before 7.0, the
/// TBSCertificate hashed with the certificate signature's own hash (e.g. 48 bytes for
/// sha384WithRSAEncryption), nullopt when that hash is not one modsign can compute
/// (ML-DSA-signed certificates, unknown OIDs) — the kernel then skips the check; and
/// nullopt under v6.1 for a SHA-3 signature, which that kernel cannot parse at all.
std::optional<Bytes> x509_tbs_blacklist_hash(const crypto::Certificate& cert, const KernelProfile& profile);

/// A keyring of trusted certificates (e.g. .builtin_trusted_keys + .secondary) and a blacklist.
struct Keyring {
  std::vector<crypto::Certificate> certificates;
  Blacklist blacklist;
  /// Add every certificate in `path`: a PEM bundle or DER file, or every regular file in a
  /// directory (non-recursive, sorted by name).  Errors: EBADMSG for a file holding no
  /// or a malformed certificate (message names the file).  Throws IoError if unreadable.
  Status add_path(const std::string& path);
};

/// struct x509_certificate, as far as PKCS#7 handling needs it.
struct X509Cert {
  crypto::Certificate cert;
  Bytes id;    ///< serial contents ‖ issuer Name contents
  std::optional<Bytes> skid;  ///< subjectKeyIdentifier contents
  std::optional<Bytes> akid_id, akid_skid;  ///< sig->auth_ids[0], [1] from the AKID
  int index = 0;
  bool blacklisted = false;
  bool self_signed = false;
  bool unsupported_sig = false;
  std::optional<std::size_t> signer;  ///< issuing certificate in the message (chain walk)
  bool seen = false;
};

/// The kernel's X.509 acceptance (x509_cert_parse / x509_note_sig_algo / x509_extract_key_data
/// in 7.2): signature algorithms sha{1,224,256,384,512}WithRSAEncryption, RSA with SHA-3,
/// ecdsa-with-SHA1/SHA-2/SHA-3, id-ml-dsa-* (7.0 only); keys RSA, ECDSA P-192/256/384/521,
/// ML-DSA (7.0 only).  Errors: ENOPKG otherwise (e.g. RSASSA-PSS-signed certificates).
Status x509_supported(const crypto::Certificate& cert, const KernelProfile& profile);

/// struct pkcs7_signed_info with its public_key_signature.
struct SignedInfo {
  int index = 0;
  std::string hash_algo;    ///< kernel name ("sha256"), "none" (7.0 ML-DSA without authattrs)
  std::string pkey_algo;    ///< "rsa", "ecdsa", "ecrdsa", "mldsa44", "mldsa65", "mldsa87"
  std::string encoding;     ///< "pkcs1", "x962", "raw"
  bool algo_takes_data = false;
  Bytes signature;          ///< encryptedDigest contents
  Bytes auth_id;            ///< auth_ids[0]: serial ‖ issuer contents, or the SKID
  bool expect_skid = false;
  /// The signed attributes as the kernel keeps them: `authattrs` is the [0] element from
  /// its length octets on (the tag byte is not kept); nullopt if absent or in the
  /// [2] EXPLICIT SEQUENCE form, which the kernel does not record.
  std::optional<Bytes> authattrs;
  std::optional<Bytes> msgdigest;
  std::optional<std::int64_t> signing_time;  ///< seconds since the epoch
  unsigned aa_set = 0;
  std::optional<std::size_t> signer;  ///< index into Pkcs7Message::certs (pkcs7_find_key)
  bool blacklisted = false;
  bool unsupported_crypto = false;
  /// pkcs7_digest() result, cached as the kernel caches sig->m.  When !m_free (7.0
  /// ML-DSA without authattrs) sig->m points at the message data: `m` stays empty and
  /// `m_is_data` is set, so no copy of the module is made per signer.
  std::optional<Bytes> m;
  bool m_free = false;
  bool m_is_data = false;
};

/// struct pkcs7_message.
struct Pkcs7Message {
  int version = 0;
  std::vector<X509Cert> certs;
  std::vector<SignedInfo> signed_infos;
  Bytes data_type;                 ///< OID contents of eContentType
  std::optional<Bytes> data;       ///< embedded eContent, or supplied detached data
  bool data_embedded = false;
  bool have_authattrs = false;
  bool authattrs_rej_waivable = false;
  /// Subject CN of the trusted certificate that vouched for each signer (pkcs7_validate_trust).
  std::vector<std::string> trusted_by;
  /// H(data) per kernel hash name, computed once for all signers (the kernel hashes per
  /// signer; the values are the same).
  std::vector<std::pair<std::string, Bytes>> data_digests;
  /// For data that is not held in memory (supplied as digests): the ML-DSA μ of the data
  /// per raw public key, used where the kernel hands ML-DSA the data itself.
  std::vector<std::pair<Bytes, Bytes>> data_mu;
  /// Detached data was supplied as digests (data_digests / data_mu) instead of bytes.
  bool data_prehashed = false;
  /// Library that checks ML-DSA signatures (not a kernel property; both give the same verdicts).
  crypto::Backend backend = crypto::Backend::openssl;
};

/// pkcs7_parse_message(): run the pkcs7.asn1 grammar and its callbacks over BER input,
/// then pkcs7_check_authattrs().  Certificates are parsed (X.509; their TBS blacklisted
/// per `blacklist`).  Errors are the callbacks' (kernel-semantics §1): EINVAL (content
/// type, versions, no/inconsistent signers), EBADMSG (decoder, version mismatch,
/// attribute rules, certificate tags), ENOPKG (digest/signature/key OIDs), EKEYREJECTED
/// (repeated or Authenticode-only attributes).
Result<Pkcs7Message> pkcs7_parse_message(ByteView der, const KernelProfile& profile, const Blacklist* blacklist = nullptr);

/// pkcs7_supply_detached_data(): EINVAL "Data already supplied" if the message has data.
Status pkcs7_supply_detached_data(Pkcs7Message& msg, ByteView data);

/// pkcs7_get_digest() result: the bytes IMA would measure and the hash_info.h index.
struct KernelDigest {
  Bytes buf;
  std::string hash_algo;  ///< kernel name of sig->hash_algo
  std::optional<int> hash_algo_index;  ///< enum hash_algo; nullopt = left unchanged
};

/// pkcs7_digest() for one signer (pkcs7_verify.c): 7.0 ML-DSA without authattrs hands the
/// data itself; otherwise H(data), then with authattrs the messageDigest checks (size
/// EBADMSG, value EKEYREJECTED) and H(0x31 ‖ authattrs) — for 7.0 ML-DSA the re-tagged
/// attributes themselves.  ENOPKG when the hash cannot be computed.
Status pkcs7_digest(Pkcs7Message& msg, std::size_t signer, const KernelProfile& profile);

/// pkcs7_get_digest(): EBADMSG unless exactly one SignerInfo; pkcs7_digest errors; 7.0:
/// EINVAL ("No digest available") for ML-DSA without authattrs.
Result<KernelDigest> pkcs7_get_digest(Pkcs7Message& msg, const KernelProfile& profile);

/// pkcs7_verify(): usage gates, then every signer (digest, find key among embedded
/// certificates, signingTime, signature, chain) with the kernel's aggregation: 0 if one
/// passed, EKEYREJECTED if none passed and one was blacklisted, ENOPKG if all unsupported;
/// any other error at once.  `warnings` receives kernel log lines (e.g. the waiver's).
Status pkcs7_verify(Pkcs7Message& msg, Usage usage, const KernelProfile& profile,
                    std::vector<std::string>* warnings = nullptr);

/// pkcs7_validate_trust() against `trusted`: ENOKEY when no signer chains to it, ENOPKG
/// when all signers were unsupported, EKEYREJECTED when the trusted key's signature check
/// fails (every public-key error collapses to it).
Status pkcs7_validate_trust(Pkcs7Message& msg, const std::vector<crypto::Certificate>& trusted,
                            const KernelProfile& profile);

/// Summary of one SignerInfo, for reports.
struct SignerSummary {
  std::string sid;          ///< "issuer+serial <hex>" or "skid <hex>"
  std::string digest_algo;  ///< kernel name
  std::string sig_algo;     ///< kernel pkey_algo
  bool signed_attrs = false;
};

/// verify_pkcs7_signature() (certs/system_keyring.c): parse, supply detached data
/// (failure: EBADMSG), pkcs7_verify(usage), revocation list check (EKEYREJECTED if a
/// revoked certificate vouches for it: is_key_on_revocation_list, certs/blacklist.c:289-299),
/// pkcs7_validate_trust(keyring).  Keyring certificates whose "tbs:" hash is in
/// keyring.blacklist are left out of the trust step: the kernel never adds them to a
/// keyring (x509_key_preparse, x509_public_key.c:189-191, EKEYREJECTED), so a signer that
/// only they vouch for gets ENOKEY.  The same holds for revoked certificates.
struct VerifyReport {
  KErr err = KErr::none;
  std::string reason;
  std::vector<SignerSummary> signers;
  std::vector<std::string> log;
  std::vector<std::string> trusted_by;  ///< CN of the trusted certificate(s) used
};
VerifyReport verify_pkcs7_signature(ByteView data, ByteView pkcs7, const Keyring& keyring, Usage usage,
                                    const KernelProfile& profile, crypto::Backend backend = crypto::Backend::openssl);

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
VerifyReport ima_modsig_verify(ByteView data, ByteView pkcs7, const Keyring& keyring, const KernelProfile& profile,
                               crypto::Backend backend = crypto::Backend::openssl);

/// The same for detached data that is not in memory: `digests` holds H(data) for each
/// kernel hash name the signers use and `mus` the ML-DSA μ of the data per raw public key
/// (ML-DSA without signedAttrs verifies through external μ; same verdicts).
VerifyReport verify_pkcs7_signature_prehashed(const std::vector<std::pair<std::string, Bytes>>& digests,
                                              const std::vector<std::pair<Bytes, Bytes>>& mus, ByteView pkcs7,
                                              const Keyring& keyring, Usage usage, const KernelProfile& profile);

}  // namespace modsign::kernel
