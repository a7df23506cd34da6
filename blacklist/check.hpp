// modsign's own: which blacklist key (bin:, tbs:, revoked certificate) stops a module or certificate, and where it came from, composed from the mirrors of certs/blacklist.c, x509_public_key.c and ima_appraise.c
// modsign — would the kernel's blacklist stop a module or a certificate, and where?
//
// Lookups follow Linux 7.2.13 (v7.0 profile) and the pre-ML-DSA kernels (v6 profile):
//  * bin: — IMA appraisal, ima_check_blacklist() (security/integrity/ima/ima_appraise.c:428-452)
//    calls is_binary_blacklisted() on the modsig's pkcs7_get_digest() result when the file
//    has a modsig IMA could parse, else on ima_hash (IMA's hash of the whole file).  Hit: EPERM.
//  * tbs: — x509_get_sig_params() (crypto/asymmetric_keys/x509_public_key.c:38-45) for every
//    certificate the kernel parses: a hit marks it blacklisted; x509_key_preparse() then
//    refuses it from any keyring (EKEYREJECTED, :189-191) and pkcs7_verify() refuses a
//    signer whose chain reaches it (EKEYREJECTED).
//  * revoked certificates — is_key_on_revocation_list() (certs/blacklist.c:289-299), called
//    by verify_pkcs7_message_sig() (certs/system_keyring.c:333-337) after pkcs7_verify(): a signer
//    that chains to a revoked key is refused with EKEYREJECTED.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "blacklist/sources.hpp"
#include "cms/kernel.hpp"
#include "crypto/crypto.hpp"
#include "module/decompress.hpp"

namespace modsign::blacklist {

/// The "bin:" key ima_check_blacklist() looks up for a module under a profile.
struct ModuleEntry {
  enum class Source {
    d_modsig,  ///< the modsig digest (pkcs7_get_digest of the image without the signature trailer)
    ima_hash,  ///< no usable modsig: IMA's own hash of the whole file as stored on disk
    none,      ///< the lookup is "bin:" (no digest) or longer than any key: nothing can match
  };
  Source source = Source::none;
  std::optional<std::string> description;  ///< "bin:<hex>" (source d_modsig / ima_hash)
  std::string algo;                        ///< hash of `description` ("sha256", ...)
  std::string explanation;                 ///< one sentence: which bytes, why
  /// "bin:<hex>" of the side SHA-256 of the signed content (the proposal for ML-DSA
  /// modules under IMA); set for every module with a modsig IMA can parse.
  std::optional<std::string> side_sha256;
  bool compressed = false;
};

/// The entry for one module.  `stored` is the file as on disk, `m` its image (decompressed
/// when compressed, module::open_module), `ima_hash` IMA's file hash algorithm (ima_hash=
/// boot parameter / CONFIG_IMA_DEFAULT_HASH; SHA-256 on current distributions).
///  * signed module, modsig parsed: the pkcs7_get_digest() bytes — H(image minus trailer)
///    with the SignerInfo digestAlgorithm when there are no signedAttrs; none when
///    pkcs7_get_digest fails (7.0 ML-DSA without signedAttrs: EINVAL; several signers:
///    EBADMSG; IMA then looks up "bin:"), or when the PKCS#7 carries its own content
///    (ima_collect_modsig: pkcs7_supply_detached_data fails with EINVAL and no digest is
///    taken), or when it returns more than 64 bytes (7.0 ML-DSA with signedAttrs: the
///    re-tagged attributes, longer than any key);
///  * no modsig IMA can use (unsigned; trailer or PKCS#7 refused, e.g. ML-DSA under v6):
///    ima_hash of `stored`;
///  * compressed: v7.0 — IMA's MODULE_CHECK runs on the decompressed image
///    (READING_MODULE_COMPRESSED defers appraisal, kernel/module/main.c:3765-3785,
///    ima_main.c:430-433) so a signed module gets the modsig rule on the image, while
///    ima_hash stays the hash of the compressed file read first; v6 — IMA sees only the
///    compressed file, which has no modsig: ima_hash of the file as stored.
ModuleEntry module_entry(ByteView stored, const module::ModuleImage& m, const kernel::KernelProfile& profile,
                         crypto::HashAlgo ima_hash = crypto::HashAlgo::sha256);

/// The "tbs:" key the kernel looks up for a certificate (kernel::x509_tbs_blacklist_hash),
/// nullopt under v6 when the signature hash is unavailable (the check is skipped).
std::optional<std::string> certificate_entry(const crypto::Certificate& cert, const kernel::KernelProfile& profile);

/// One way the kernel stops an item, in the order the kernel meets them.
struct Stop {
  std::string entry;            ///< "bin:<hex>", "tbs:<hex>", or "revoked certificate <subject>"
  std::vector<Origin> origins;  ///< where the entry came from
  std::string check;            ///< kernel function and file:line that refuses
  KErr err = KErr::none;        ///< what that function returns
  std::string condition;        ///< when it applies ("" = always), e.g. the IMA policy
  /// IMA stops only: the buffer of the "blacklisted-hash" record ima_check_blacklist() adds
  /// to the measurement list when the rule also measures (process_buffer_measurement,
  /// security/integrity/ima/ima_appraise.c:446-449; digest::ima_buffer_template gives the
  /// record).  It is the d-modsig digest when the modsig digest was looked up, and empty
  /// when IMA's file hash was: the kernel passes its modsig digest pointer, still NULL then
  /// (confirmed on 7.2.13 under qemu, tools/kernel-conformance mldsa-ima).
  std::optional<Bytes> ima_buffer;
  /// IMA stops only: true when only a rule that requires a signature without allowing
  /// modsig (appraise_type=imasig) meets it; an imasig|modsig rule looks up the modsig key.
  bool imasig_only = false;
};

/// Verdict for one item.
struct Verdict {
  bool certificate = false;
  std::vector<Stop> stops;          ///< empty: nothing in the sources stops it
  std::vector<std::string> notes;   ///< e.g. "no bin: entry can stop it under v7.0 ..."
  std::optional<ModuleEntry> entry; ///< modules
  std::optional<std::string> tbs;   ///< certificates
  bool stopped() const { return !stops.empty(); }
};

/// Check a module: IMA's bin: lookup first (the IMA hook runs in kernel_read_file, before
/// load_module) — the module_entry() key under a rule that allows modsig, and, for a
/// module with a modsig, also IMA's hash of the whole file as stored, which a rule
/// requiring a signature without modsig (appraise_type=imasig) looks up — then, for a signed image, module_sig_check's verify_pkcs7_signature:
/// tbs: hits on certificates in the PKCS#7 (pkcs7_verify: EKEYREJECTED), revoked
/// certificates that vouch for a signer (EKEYREJECTED), and — when `trusted` is given —
/// trusted certificates the tbs: entries keep out of the keyring, leaving the signer
/// without a key (ENOKEY: tainted, or refused when signatures are enforced).
Verdict check_module(ByteView stored, const module::ModuleImage& m, const Sources& sources,
                     const std::vector<crypto::Certificate>& trusted, const kernel::KernelProfile& profile,
                     crypto::HashAlgo ima_hash = crypto::HashAlgo::sha256);

/// Check a certificate: its tbs: key (refused from every keyring, EKEYREJECTED) and revoked
/// certificates with the same key and identifier (signatures it vouches for are refused by
/// is_key_on_revocation_list, EKEYREJECTED).
Verdict check_certificate(const crypto::Certificate& cert, const Sources& sources, const kernel::KernelProfile& profile);

}  // namespace modsign::blacklist
