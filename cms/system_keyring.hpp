// mirrors certs/system_keyring.c verify_pkcs7_signature, verify_pkcs7_message_sig (verify_with),
// load_system_certificate_list (load_keyring_path), Linux 7.2.13
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cms/kernel_model.hpp"
#include "cms/pkcs7_parser.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"
#include "modsign/load_verdict.hpp"

namespace modsign::cms {

/// Add every certificate of `path` to `out` (Keyring::add_path: a PEM bundle, a DER file or
/// a directory's regular files, sorted), as load_system_certificate_list() hands the
/// built-in certificates to x509_load_certificate_list().  A certificate the kernel of
/// `profile` cannot parse (x509_supported) stays in `out` — verify_with() leaves it out of
/// the trust step, which gives the kernel's verdicts — and gets a note in `notes`:
/// "<path> certificate <n> is not loaded by a <profile> kernel (<ERRNO>: <reason>)", n
/// counting from 1 over every certificate `path` adds.  A directory entry that is not a
/// certificate file is skipped with add_path's note "<dir>/<entry>: skipped: <why> (not a
/// certificate)" in `notes`, or is an error when `strict`.  Errors: add_path's (EBADMSG,
/// message "<file>: <reason>"); throws IoError if unreadable.
Status load_keyring_path(Keyring& out, const std::string& path, const KernelModel& profile,
                         std::vector<std::string>& notes, bool strict = false);

/// Summary of one SignerInfo, for reports: public data (include/modsign/verdict.hpp).
using SignerSummary = modsign::SignerSummary;

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
  std::vector<std::string> trusted_by;            ///< CN of the trusted certificate(s) used
  std::vector<modsign::TrustedKey> trusted_keys;  ///< the same: CN, SKID and serial
};
VerifyReport verify_pkcs7_signature(ByteView data, ByteView pkcs7, const Keyring& keyring, Usage usage,
                                    const KernelModel& profile, crypto::Backend backend = crypto::Backend::automatic);

/// verify_pkcs7_message_sig() on a message pkcs7_parse_message() parses from `pkcs7`: the
/// data step is `supply` (its failure: EBADMSG "PKCS#7 signature with non-detached data"),
/// then pkcs7_verify(usage), the revocation check and pkcs7_validate_trust(keyring), each
/// as described at verify_pkcs7_signature(), then, when given, `view_content` (the
/// kernel's view_content callback, e.g. mscode_parse for kexec: its error is the verdict).
/// Shared by verify_pkcs7_signature(), verify_pkcs7_signature_prehashed(), IMA's
/// digest::ima_modsig_verify() and verify_pefile_signature().
VerifyReport verify_with(ByteView pkcs7, const Keyring& keyring, Usage usage, const KernelModel& profile,
                         crypto::Backend backend, const std::function<Status(Pkcs7Message&)>& supply,
                         const std::function<Status(Pkcs7Message&)>& view_content = {});

/// The same for detached data that is not in memory: `digests` holds H(data) for each
/// kernel hash name the signers use and `mus` the ML-DSA μ of the data per raw public key
/// (ML-DSA without signedAttrs verifies through external μ; same verdicts).
VerifyReport verify_pkcs7_signature_prehashed(const std::vector<std::pair<std::string, Bytes>>& digests,
                                              const std::vector<std::pair<Bytes, Bytes>>& mus, ByteView pkcs7,
                                              const Keyring& keyring, Usage usage, const KernelModel& profile);

}  // namespace modsign::cms
