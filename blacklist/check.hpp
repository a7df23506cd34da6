// modsign's own: which blacklist key (bin:, tbs:, revoked certificate) stops a module or certificate, and where it came
// from, composed from the mirrors of certs/blacklist.c, x509_public_key.c and ima_appraise.c modsign — would the
// kernel's blacklist stop a module or a certificate, and where?
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
#include "modsign/blacklist.hpp"
#include "module/decompress.hpp"

namespace modsign::blacklist {

/// The "bin:" key ima_check_blacklist() looks up for a module (public modsign::ModuleBlacklistEntry).
using ModuleEntry = modsign::ModuleBlacklistEntry;

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
ModuleEntry module_entry(ByteView stored, const module::ModuleImage& m, const cms::KernelModel& profile,
                         crypto::HashAlgo ima_hash = crypto::HashAlgo::sha256);

/// The "tbs:" key the kernel looks up for a certificate (cms::x509_tbs_blacklist_hash),
/// nullopt under v6 when the signature hash is unavailable (the check is skipped).
std::optional<std::string> certificate_entry(const crypto::Certificate& cert, const cms::KernelModel& profile);

/// One way the kernel stops an item, and the verdict for one item: the public
/// modsign::BlacklistStop / BlacklistVerdict (check_module and check_certificate also set
/// its outcome, with module::decide()).
using Stop = modsign::BlacklistStop;
using Verdict = modsign::BlacklistVerdict;

/// The tbs: key of a certificate with, when there is none, why ("no tbs: entry under v6:
/// ..."), and its DER.
modsign::CertificateBlacklistEntry certificate_blacklist_entry(const crypto::Certificate& cert,
                                                               const cms::KernelModel& profile);

/// Check a module: IMA's bin: lookup first (the IMA hook runs in kernel_read_file, before
/// load_module) — the module_entry() key under a rule that allows modsig, and, for a
/// module with a modsig, also IMA's hash of the whole file as stored, which a rule
/// requiring a signature without modsig (appraise_type=imasig) looks up — then, for a signed image, module_sig_check's
/// verify_pkcs7_signature: tbs: hits on certificates in the PKCS#7 (pkcs7_verify: EKEYREJECTED), revoked certificates
/// that vouch for a signer (EKEYREJECTED), and — when `trusted` is given — trusted certificates the tbs: entries keep
/// out of the keyring, leaving the signer without a key (ENOKEY: tainted, or refused when signatures are enforced).
Verdict check_module(ByteView stored, const module::ModuleImage& m, const Sources& sources,
                     const std::vector<crypto::Certificate>& trusted, const cms::KernelModel& profile,
                     crypto::HashAlgo ima_hash = crypto::HashAlgo::sha256);

/// Check a certificate: its tbs: key (refused from every keyring, EKEYREJECTED) and revoked
/// certificates with the same key and identifier (signatures it vouches for are refused by
/// is_key_on_revocation_list, EKEYREJECTED).
Verdict check_certificate(const crypto::Certificate& cert, const Sources& sources, const cms::KernelModel& profile);

}  // namespace modsign::blacklist
