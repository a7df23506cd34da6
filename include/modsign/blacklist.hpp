// modsign — the kernel's .blacklist keyring from the outside: CONFIG_SYSTEM_BLACKLIST_HASH_LIST
// files (parse, lint, merge, write), the bin:/tbs: keys that revoke a module or a
// certificate, and whether the blacklist of a TrustStore stops one.
//
// Mirrors certs/blacklist.c (blacklist_vet_description, mark_raw_hash_blacklisted,
// is_hash_blacklisted, is_binary_blacklisted, is_key_on_revocation_list),
// certs/check-blacklist-hashes.awk and certs/blacklist_hashes.c (the build's checks),
// crypto/asymmetric_keys/x509_public_key.c x509_get_sig_params() (tbs: lookups) and
// security/integrity/ima/ima_appraise.c ima_check_blacklist() (bin: lookups), Linux 7.2.13.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/module_image.hpp"  // kMaxModuleSize
#include "modsign/profile.hpp"
#include "modsign/result.hpp"
#include "modsign/trust.hpp"

namespace modsign {

// ---------------------------------------------------------------------------------------
// Hash-list files: comma-separated C string literals that the kernel build checks with
// certs/check-blacklist-hashes.awk and includes into `blacklist_hashes[] = { <file>, NULL }`.

/// One accepted entry: the description between the quotes, where its opening quote is
/// (1-based line and byte column) and its awk record number (NR).
struct HashListEntry {
  std::string description;
  std::size_t line = 0, column = 0, item = 0;
};

/// Which stage of the kernel build fails on a problem.
enum class HashListStage {
  awk,    ///< check-blacklist-hashes.awk rejects the file (its exit 1 stops the build)
  build,  ///< the awk check passes but the C array does not compile (empty file, trailing ',')
};

/// A problem at a precise place (1-based line, byte column; `item` = awk record number, 0
/// for whole-file problems).  `message` in modsign's words; `awk` the awk script's own
/// message ("Not a string (item 2)"), empty for build problems.
struct HashListProblem {
  std::size_t line = 0, column = 0, item = 0;
  HashListStage stage = HashListStage::awk;
  std::string message;
  std::string awk;
};

/// A parsed hash-list file.  The awk check accepts it exactly when no problem has stage
/// awk (the script stops at the first; every one is reported); the build succeeds when
/// `problems` is empty.  `duplicates` (stage awk, empty `awk`) are entries equal to an
/// earlier one: legal, but the kernel logs "Duplicate blacklisted hash" (-EEXIST) for each.
struct HashList {
  std::vector<HashListEntry> entries;     ///< accepted entries, file order, duplicates included
  std::vector<HashListProblem> problems;  ///< file order
  std::vector<HashListProblem> duplicates;
  MODSIGN_API bool awk_accepts() const;
};

/// Parse hash-list text with the awk script's rules (RS = ","; a record is [ \t\n\r]* "..."
/// [ \t\n\r]*; then ^(tbs|bin):, [0-9a-f]+, at most 128 characters, even length, checked in
/// that order), plus the two build failures the script misses: an empty file and a file
/// ending in ','.  Never fails.
MODSIGN_API HashList parse_hash_list(std::string_view text);
/// Read and parse a file (`modsign blacklist lint`).  Throws IoError when it cannot be read.
MODSIGN_API HashList read_hash_list(const std::string& path);
/// "<file>:<line>:<column>: <message>" plus " (awk: <awk>)" when the awk script has one.
MODSIGN_API std::string format_hash_list_problem(const std::string& file, const HashListProblem& p);

/// The text modsign writes for `descriptions`: one `"<description>"` a line, ',' after
/// every entry but the last, '\n' after each line; accepted by the awk check and compilable.
/// Errors (EINVAL): an empty list ("no entries: the kernel build cannot compile an empty
/// hash list"), or a description blacklist_vet_description() refuses ("entry \"<d>\":
/// <rule>"; ENOPKG for a hash over 128 hex digits).
MODSIGN_API Result<std::string> write_hash_list(const std::vector<std::string>& descriptions);

/// A merge of hash lists.
struct HashListMerge {
  std::vector<std::string> descriptions;  ///< first-seen order, each once
  std::size_t duplicates = 0;             ///< entries dropped because an earlier one was equal
};
/// Merge the accepted entries of `lists` in order (within and across lists).
MODSIGN_API HashListMerge merge_hash_lists(const std::vector<HashList>& lists);
/// Read, check and merge files (`modsign blacklist merge`).  Throws IoError when one cannot
/// be read; InputError with format_hash_list_problem() of the first problem of the first
/// file the build would refuse.
MODSIGN_API HashListMerge merge_hash_list_files(const std::vector<std::string>& files);

// ---------------------------------------------------------------------------------------
// The keys that revoke a module or a certificate.

/// The "bin:" key ima_check_blacklist() looks up for a module under a profile.
struct ModuleBlacklistEntry {
  enum class Source {
    d_modsig,  ///< the modsig digest (pkcs7_get_digest of the image without the signature trailer)
    ima_hash,  ///< no usable modsig: IMA's own hash of the whole file as stored on disk
    none,      ///< the lookup is "bin:" (no digest) or longer than any key: nothing can match
  };
  Source source = Source::none;
  std::optional<std::string> description;  ///< "bin:<hex>" (source d_modsig / ima_hash)
  std::string algo;                        ///< hash of `description` ("sha256", ...)
  std::string explanation;                 ///< one sentence: which bytes, why
  /// "bin:<hex>" of the side SHA-256 of the signed content (the proposal for ML-DSA modules
  /// under IMA); set for every module with a modsig IMA can parse.
  std::optional<std::string> side_sha256;
  bool compressed = false;
};

/// The "tbs:" key x509_get_sig_params() looks up for a certificate.
struct CertificateBlacklistEntry {
  /// "tbs:<hex>": 7.0 the SHA-256 of the TBSCertificate; v6 the TBS digest in the
  /// certificate signature's own hash.  nullopt when no lookup happens.
  std::optional<std::string> tbs;
  /// Without `tbs`: "no tbs: entry under <profile>: <why>" (the signature hash is
  /// unavailable, or x509_cert_parse() refuses the certificate with its errno); else "".
  std::string explanation;
  Bytes der;  ///< the certificate
};

/// One item of a file: a module, or one certificate of a certificate file.
struct BlacklistEntry {
  std::string label;  ///< the path; "<path>#<n>" (from 1) for a file of several certificates
  std::optional<ModuleBlacklistEntry> module;
  std::optional<CertificateBlacklistEntry> certificate;
};

/// The entry of a module (`stored` as on disk; compressed modules are decompressed, at most
/// `max_size` bytes).  Which bytes the kernel hashes: ima_check_blacklist() looks up the
/// modsig's pkcs7_get_digest() result when IMA can parse the modsig (signed module, 7.0
/// also when compressed: appraisal runs on the decompressed image), else IMA's hash of the
/// whole file as stored (`ima_hash`: "sha256", "sha512", "sha3-256", ...).
/// Throws InputError "<name>: <format>-compressed module: <what>" when a compressed module
/// does not decompress; std::invalid_argument for an unknown `ima_hash`.
MODSIGN_API ModuleBlacklistEntry blacklist_entry_for_module(ByteView stored, const KernelProfile& profile,
                                                            const std::string& ima_hash = "sha256",
                                                            std::uint64_t max_size = kMaxModuleSize,
                                                            const std::string& name = "module");
/// The entry of one DER certificate.  Throws InputError "<name>: <reason>" when `der` is
/// not one certificate.
MODSIGN_API CertificateBlacklistEntry blacklist_entry_for_certificate(ByteView der, const KernelProfile& profile,
                                                                      const std::string& name = "certificate");
/// The entries of every item of the file at `path` (`modsign blacklist entry`).  An ELF or
/// compressed file is a module; any other file of at most 16 MiB holding a PEM block
/// ("-----BEGIN", also after leading text) or starting like a DER SEQUENCE (30 81 / 30 82)
/// is certificates and must parse as such (trailing bytes, a PEM key or a damaged block are
/// refused); anything else is a module.
/// Throws IoError when the file cannot be read; InputError "<path>: <reason>" for a bad
/// certificate file or a module that does not decompress.
MODSIGN_API std::vector<BlacklistEntry> blacklist_entries_for_file(const std::string& path,
                                                                   const KernelProfile& profile,
                                                                   const std::string& ima_hash = "sha256",
                                                                   std::uint64_t max_size = kMaxModuleSize);

// ---------------------------------------------------------------------------------------
// Would the blacklist stop it?

/// One way the kernel stops an item, in the order the kernel meets them.
struct BlacklistStop {
  std::string entry;                 ///< "bin:<hex>", "tbs:<hex>", or "revoked certificate <subject>"
  std::vector<TrustOrigin> origins;  ///< where the entry came from (TrustSources files)
  std::string check;                 ///< kernel function and file:line that refuses
  KErr err = KErr::none;             ///< what that function returns (EPERM, EKEYREJECTED, ENOKEY)
  std::string condition;             ///< when it applies ("" = always), e.g. the IMA policy
  /// IMA stops only: the buffer of the "blacklisted-hash" ima-buf record
  /// ima_check_blacklist() measures when the rule also measures: the d-modsig digest when
  /// that was looked up, empty when IMA's file hash was (the kernel passes a NULL digest).
  std::optional<Bytes> ima_buffer;
  /// IMA stops only: met only by a rule requiring a signature without modsig (imasig).
  bool imasig_only = false;
};

/// The verdict for one module or certificate.
struct BlacklistVerdict {
  bool certificate = false;
  std::vector<BlacklistStop> stops;           ///< empty: nothing in the sources stops it
  std::vector<std::string> notes;             ///< e.g. "no bin: entry can stop it under v7.0 ..."
  std::optional<ModuleBlacklistEntry> entry;  ///< modules
  std::optional<std::string> tbs;             ///< certificates
  /// What the first stop means for loading, decided as module_sig_check() decides
  /// (kernel/module/signing.c): "not-stopped"; "loads-tainted" (ENOKEY: a tbs: key kept the
  /// signer's certificate out of the keyring, signatures not enforced); or "refused".
  std::string outcome = "not-stopped";
  /// The errno of `outcome`: none when not stopped, ENOKEY when tainted, else what
  /// init_module returns (the stop's errno; ENOKEY becomes EKEYREJECTED under enforce,
  /// EPERM under lockdown).
  KErr err = KErr::none;
  /// When a stop that only taints (ENOKEY) refuses the module instead, what made
  /// module_sig_check() refuse it: "signatures enforced" (sig_enforce / MODULE_SIG_FORCE,
  /// EKEYREJECTED; checked before lockdown) or "lockdown" (lockdown=integrity, EPERM).
  /// Empty otherwise.
  std::string soft_refusal;
  bool stopped() const { return !stops.empty(); }
};

/// A verdict with the item it is for.
struct BlacklistItemVerdict {
  std::string label;  ///< as BlacklistEntry::label
  BlacklistVerdict verdict;
};

/// Check a module against the .blacklist keyring of `trust` (its blacklists, revoked and
/// dbx sources) and its keyring certificates the profile's kernel can parse: IMA's bin:
/// lookups first (kernel_read_file, before load_module), then, for a signed image,
/// verify_pkcs7_signature: tbs: hits on certificates a signer's chain reaches
/// (EKEYREJECTED), revoked certificates vouching for a signer (EKEYREJECTED), and trusted
/// certificates a tbs: key keeps out of the keyring, leaving the signer without a key
/// (ENOKEY).  `profile` (enforce, lockdown) decides `outcome`.  Same errors as
/// blacklist_entry_for_module().
MODSIGN_API BlacklistVerdict check_module_blacklist(ByteView stored, const TrustStore& trust,
                                                    const KernelProfile& profile,
                                                    const std::string& ima_hash = "sha256",
                                                    std::uint64_t max_size = kMaxModuleSize,
                                                    const std::string& name = "module");
/// Check one DER certificate: its tbs: key (refused from every keyring, EKEYREJECTED) and
/// revoked certificates with its key and identifier (EKEYREJECTED for the signatures it
/// vouches for).  Throws InputError "<name>: <reason>" when `der` is not one certificate.
MODSIGN_API BlacklistVerdict check_certificate_blacklist(ByteView der, const TrustStore& trust,
                                                         const KernelProfile& profile,
                                                         const std::string& name = "certificate");
/// Check every item of the file at `path` (`modsign blacklist check`); items and errors as
/// blacklist_entries_for_file().
MODSIGN_API std::vector<BlacklistItemVerdict> check_blacklist_file(const std::string& path, const TrustStore& trust,
                                                                   const KernelProfile& profile,
                                                                   const std::string& ima_hash = "sha256",
                                                                   std::uint64_t max_size = kMaxModuleSize);

}  // namespace modsign
