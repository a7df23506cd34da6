// modsign — IMA and kernel modules (security/integrity/ima, Linux 7.2.13): the template
// entry IMA records for a file (ima_template_lib.c), a binary measurement list read back
// and replayed into PCRs (ima_fs.c, ima_queue.c), and what an enforcing
// "appraise func=MODULE_CHECK appraise_type=imasig|modsig" rule does with a module file
// that has no security.ima (ima_main.c process_measurement, ima_appraise.c
// ima_check_blacklist and ima_appraise_measurement, ima_modsig.c).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/ima_types.hpp"
#include "modsign/module_image.hpp"  // kMaxModuleSize
#include "modsign/profile.hpp"
#include "modsign/result.hpp"
#include "modsign/trust.hpp"

namespace modsign {

// ---- the ima_hash= boot parameter (ima_main.c) -------------------------------------------

/// The canonical name ("sha256", "sha3-256", ...) of the hash IMA uses for files when the
/// `profile` kernel boots with ima_hash=`name` (any case: md5, sha1, sha224, sha256,
/// sha384, sha512, sha3-256, sha3-384, sha3-512).  Linux 6.1-6.6 (profile "v6.1") have no
/// SHA-3 in hash_algo_name[] (SHA-3 came with 6.7), so there hash_setup() refuses
/// ima_hash=sha3-* and IMA keeps its default.
/// Mirrors hash_setup() in security/integrity/ima/ima_main.c, Linux 7.2.13.
/// Throws UsageError "unsupported --ima-hash 'X' (md5|sha1|sha224|sha256|sha384|sha512|
/// sha3-256|sha3-384|sha3-512)" for any other name, and "--ima-hash sha3-256 does not exist
/// under --kernel v6.1: Linux 6.1-6.6 have no SHA-3 in hash_algo_name[], so
/// ima_hash=sha3-256 is refused and IMA keeps its default" (the SHA-3 name and profile
/// named) for SHA-3 under v6.1.
MODSIGN_API std::string ima_hash_setup(std::string_view name, const KernelProfile& profile);

// ---- template entries (ima_template_lib.c, ima_template.c) -------------------------------

/// How the entry is computed.
struct TemplateOptions {
  /// IMA's file hash (the ima_hash= boot parameter): md5, sha1, sha224, sha256, sha384,
  /// sha512, sha3-256, sha3-384, sha3-512 (kernel names).  A security.ima value that names
  /// its own hash (signature v2, v3 from profile "v7.1" on, digest-ng) overrides it for
  /// d-ng (ima_get_hash_algo in ima_appraise.c of the profile's release).
  std::string ima_hash = "sha256";
  /// d-modsig from the side SHA-256 of the signed content instead of pkcs7_get_digest()
  /// (what IMA would record under the proposal for ML-DSA modules).
  bool side_sha256 = false;
  /// Largest file read into memory, bytes (at least 1 GiB; `ima template --max-size`).
  std::uint64_t max_size = kMaxModuleSize;
};

/// The entry of template `template_name` ("ima-ng" = d-ng|n-ng, "ima-sig" = +sig,
/// "ima-modsig" = +sig|d-modsig|modsig, "ima-ngv2" = d-ngv2|n-ng, "ima-sigv2" =
/// d-ngv2|n-ng|sig with d-ngv2 = "ima:<algo>:" '\0' H(file)) IMA records for a file holding `file`, recorded
/// under `recorded_path` (n-ng: spaces become '_', then a NUL), with `security_ima` the
/// file's security.ima value (nullopt: none).  d-ng = "<algo>:" '\0' H(file); sig =
/// security.ima when it is an IMA (0x03) or fs-verity (0x06) signature, else empty;
/// d-modsig = "<algo>:" '\0' pkcs7_get_digest(), empty without a modsig ima_read_modsig()
/// parses; modsig = the appended PKCS#7 DER or empty.  A compressed module under v7.0 is
/// taken as loaded with MODULE_INIT_COMPRESSED_FILE: d-ng hashes the file as stored,
/// d-modsig and modsig come from the decompressed image; under v6 IMA sees only the
/// compressed file (no modsig).  TemplateEntry::data holds each field's u32 length in
/// `profile`'s KernelProfile::ima_byte_order() (big-endian on a big-endian kernel without
/// ima_canonical_fmt, as ima_calc_field_array_hash_tfm in ima_crypto.c hashes it), so the
/// template hashes differ between the orders; the fields themselves do not.
/// Mirrors ima_eventdigest_ng_init, ima_eventname_ng_init, ima_eventsig_init,
/// ima_eventdigest_modsig_init, ima_eventmodsig_init (ima_template_lib.c), Linux 7.2.13.
/// Predictions (the returned Error): EINVAL when IMA records no entry: an appended
/// signature whose pkcs7_get_digest() gives no digest (7.0 ML-DSA without signedAttrs),
/// or a compressed file (v7.0) module_decompress() refuses; EMSGSIZE when the d-modsig
/// field exceeds the kernel's 201-byte stack buffer (7.0 ML-DSA with signedAttrs over 193
/// bytes) by more than the profile's machine survives: undefined behaviour, measured on
/// the 7.2.13 builds: x86_64 (and arm64, not measured) oopses at once, so there is no
/// record; s390x records fields of up to 265 bytes whole (TemplateEntry::notes says so)
/// and kills the task beyond (KernelProfile::machine()).
/// The file hash is the one security.ima names for the profile's release
/// (ima_get_hash_algo); when the value carries a hash_algo the kernel does not take (a
/// version 3 signature before 7.1, a value beyond HASH_ALGO__LAST, a signature of 9 bytes
/// or fewer), d-ng uses ima_hash and TemplateEntry::notes says so.  The kernel never falls
/// back from a hash it is named but lacks (ima_alloc_tfm in ima_crypto.c falls back only
/// beyond HASH_ALGO__LAST; crypto_alloc_shash fails and no entry is recorded), so a value
/// naming md4, rmd160, wp*, tgr*, sm3 or streebog* throws InputError "<recorded_path>:
/// security.ima names hash_algo 3 (rmd160): IMA hashes the file with it, with no fallback
/// to ima_hash ...; modsign cannot compute it" (ima_template_file: "<path>: ...").
/// Throws UsageError for an unknown template ("unknown template 'X' (ima-ng, ima-sig,
/// ima-modsig, ima-ngv2, ima-sigv2)") or an unknown ima_hash name.
MODSIGN_API Result<TemplateEntry> ima_template(const std::string& template_name, const std::string& recorded_path,
                                               ByteView file, const std::optional<Bytes>& security_ima,
                                               const KernelProfile& profile, const TemplateOptions& options = {});

/// The "ima-buf" entry (d-ng|n-ng|buf) process_buffer_measurement() records for a buffer
/// (ima_main.c): d-ng = "<algo>:" '\0' H(buf) with H = `ima_hash` (kernel name, any case),
/// n-ng = `event_name` and a NUL, buf = `buf` itself; e.g. the "blacklisted-hash" record
/// ima_check_blacklist() adds (Appraisal::ima_record, BlacklistStop::ima_buffer).
/// Mirrors ima_eventdigest_ng_init, ima_eventname_ng_init and ima_eventbuf_init
/// (ima_template_lib.c), Linux 7.2.13.  Field lengths in `profile`'s
/// KernelProfile::ima_byte_order(), as ima_template().  Throws UsageError "unknown IMA hash 'X'".
MODSIGN_API TemplateEntry ima_buffer_template(const std::string& event_name, ByteView buf,
                                              const std::string& ima_hash = "sha256",
                                              const KernelProfile& profile = KernelProfile());

/// The same for the file at `path`: its bytes and its security.ima extended attribute
/// (absent or unreadable: none); `recorded_path` empty means `path`.
/// Throws IoError when the file cannot be read; otherwise as above.
MODSIGN_API Result<TemplateEntry> ima_template_file(const std::string& template_name, const std::string& path,
                                                    const std::string& recorded_path, const KernelProfile& profile,
                                                    const TemplateOptions& options = {});

// ---- measurement lists (ima_fs.c, ima_queue.c) -------------------------------------------

/// The size in bytes of a PCR (and of a record digest) of `bank`, a hash name IMA knows
/// ("sha1": 20, "sha256": 32, any case); nullopt for any other name.
MODSIGN_API std::optional<std::size_t> pcr_bank_size(std::string_view bank);

/// Parse a binary measurement list whose record digests are `bank`-sized ("sha1" for
/// binary_runtime_measurements, "sha256" for ..._sha256, any hash name IMA knows), with its
/// u32 fields (PCR index, template name length, template data length, each field's length)
/// in `order`: the kernel's own byte order, or little-endian with ima_canonical_fmt
/// (KernelProfile::ima_byte_order()).  nullopt: the list says, unambiguously: the order in
/// which its first template name length is 1-255 bytes (in the other it is 2^24 or more);
/// every record is then read in that order (MeasurementRecord::byte_order).  The list
/// cannot say whether a little-endian list came from a little-endian kernel or a
/// big-endian one booted with ima_canonical_fmt; the records and template hashes are the
/// same either way.  Mirrors ima_measurements_show (ima_fs.c) and, for the legacy "ima"
/// template, ima_calc_field_array_hash (ima_crypto.c), Linux 7.2.13.
/// Errors (returned): EBADMSG "record N at offset O: <what>" for a truncated record, a
/// length beyond the list or the template data, a template name of 0 or over 255 bytes
/// (without `order`, for the first record: "template name length <hex> is 1-255 in neither
/// byte order (not a binary measurement list)").
/// Throws UsageError "unknown bank 'X'" for a name that is no hash.
MODSIGN_API Result<std::vector<MeasurementRecord>> parse_measurement_list(
    ByteView list, std::string_view bank, std::optional<ByteOrder> order = std::nullopt);

/// Expected PCR values (bank-sized, by PCR index) from text, one PCR a line:
/// "PCR-10: <hex>", "10: <hex>", "pcr10 <hex>", the TPM 1.2 sysfs form with spaced bytes
/// ("PCR-10: 2F 3A ..."), or tpm2_pcrread's "  10: 0x<hex>" under "sha1:"/"sha256:" bank
/// headers (only the section of `bank` counts).  Blank lines are skipped.
/// Errors (returned, EINVAL): "line N: not a PCR value: <line>", "line N: PCR I given
/// twice", "no PCR value for bank <bank> in this file", "PCR I: n bytes, a <bank> PCR has m".
/// Throws UsageError "unknown bank 'X'".
MODSIGN_API Result<std::map<std::uint32_t, Bytes>> parse_expected_pcrs(std::string_view text, std::string_view bank);

/// parse_expected_pcrs() of the file at `path`, read to its end whatever size it shows, so
/// that a sysfs file (TPM 1.2's /sys/class/tpm/tpm0/pcrs shows 4096 bytes) is read as is.
/// Throws IoError "<path>: <reason>" when it cannot be opened or read, is not a regular
/// file, or holds more than kMaxSmallFileSize bytes; UsageError "unknown bank 'X'".
MODSIGN_API Result<std::map<std::uint32_t, Bytes>> read_expected_pcrs(const std::string& path, std::string_view bank);

/// Replay `records` into PCRs reset to zero, as ima_pcr_extend() does: PCR = H(PCR ‖
/// template hash), all 0xFF for a violation (ima_queue.c ima_add_template_entry, Linux
/// 7.2.13).  Every PCR a record extends, plus every PCR of `expected` (one the list never
/// extends keeps its zero reset value), sorted by index.  Throws UsageError "unknown bank 'X'".
MODSIGN_API std::vector<PcrReplay> replay_pcrs(const std::vector<MeasurementRecord>& records, std::string_view bank,
                                               const std::map<std::uint32_t, Bytes>& expected = {});

/// What replay_measurement_list_file() read.
struct ListReplay {
  std::uint64_t records = 0;
  std::uint64_t violations = 0;
  std::uint64_t template_hash_mismatches = 0;
  std::vector<PcrReplay> pcrs;  ///< as replay_pcrs() gives them
  /// The order the list was read in (as given, else as its first record says); nullopt
  /// for an empty list.
  std::optional<ByteOrder> byte_order;
};

/// parse_measurement_list() and replay_pcrs() over the list in the file `path`, read one
/// record at a time: memory is one record plus a 1 MiB piece of the file, whatever the
/// list's size (parse_measurement_list() holds every record, about ten times the list).
/// Calls `each(index, record)` (index from 1) for every record, in order, when given.
/// `order` as for parse_measurement_list().
/// Errors (returned): those of parse_measurement_list(), for the first bad record; records
/// before it have been passed to `each`.  Throws IoError "<path>: <reason>" when the file
/// cannot be opened or read, UsageError "unknown bank 'X'".
MODSIGN_API Result<ListReplay> replay_measurement_list_file(
    const std::string& path, std::string_view bank, const std::map<std::uint32_t, Bytes>& expected = {},
    const std::function<void(std::uint64_t, const MeasurementRecord&)>& each = {},
    std::optional<ByteOrder> order = std::nullopt);

// ---- modsig appraisal (ima_appraise.c, ima_modsig.c) -------------------------------------

/// Options of an appraisal.
struct AppraiseOptions {
  std::string ima_hash = "sha256";          ///< IMA's file hash (see TemplateOptions::ima_hash)
  std::uint64_t max_size = kMaxModuleSize;  ///< bound on a decompressed module (bytes)
};

/// Appraise the module file at `path` (uncompressed, or xz/zstd/gzip) as IMA's
/// MODULE_CHECK hook does on `profile`, with `ima` the .ima keyring and its blacklist
/// (TrustStore: revoked certificates and bin:/tbs: entries): on 7.x a compressed module is
/// appraised on its decompressed image, and a stream module_decompress() refuses fails
/// with EINVAL first; then ima_check_blacklist() on the d-modsig digest (or IMA's file hash
/// when there is no modsig); then ima_read_modsig() and ima_modsig_verify() against `ima`.
/// On v6 IMA sees the compressed file as read, which has no appended signature.
/// Mirrors ima_appraise_measurement and ima_check_blacklist (security/integrity/ima/
/// ima_appraise.c), ima_read_modsig and ima_modsig_verify (ima_modsig.c), with the read of
/// kernel/module/main.c init_module_from_file, Linux 7.2.13.
/// Throws IoError when the file cannot be read; InputError "<path>: <reason>" for a
/// compressed module beyond modsign's own bounds (`max_size`, the zstd window limit);
/// UsageError for an unknown ima_hash name.
MODSIGN_API Appraisal ima_appraise_modsig(const std::string& path, const TrustStore& ima, const KernelProfile& profile,
                                          const AppraiseOptions& options = {});

}  // namespace modsign
