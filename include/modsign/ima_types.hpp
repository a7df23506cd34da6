// modsign — the data of include/modsign/ima.hpp: TemplateField, TemplateEntry,
// MeasurementRecord, PcrReplay, Appraisal.
// Plain data only (no KernelProfile, no functions but accessors), so that the library's
// internal layers can use these definitions without the facade's names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "modsign/result.hpp"

namespace modsign {

/// One template field: its name ("d-ng", "n-ng", "sig", "d-modsig", "modsig", "buf") and data.
struct TemplateField {
  std::string name;
  Bytes data;
};

/// A template entry: its fields, the template data as the kernel hashes and exports it
/// (per field: u32 little-endian length ‖ data; x86's native order, as ima_canonical_fmt),
/// and the template hashes of the SHA-1 (20 bytes) and SHA-256 (32 bytes) banks.
struct TemplateEntry {
  std::string name;  ///< "ima-ng", "ima-sig", "ima-modsig", "ima-buf"
  std::vector<TemplateField> fields;
  Bytes data;
  Bytes sha1, sha256;
};

/// One record of binary_runtime_measurements[_<bank>].
struct MeasurementRecord {
  std::uint32_t pcr = 0;
  Bytes digest;               ///< the template hash as recorded (bank-sized)
  std::string template_name;
  Bytes data;                 ///< template data (for "ima": digest ‖ u32 length ‖ name)
  std::uint64_t offset = 0;   ///< byte offset of the record in the list
  bool violation = false;     ///< all-zero digest: the PCR was extended with all 0xFF
  Bytes recomputed;           ///< template hash recomputed from `data` (empty for violations)
  /// The event name the record carries, without its NUL: the "n" field of template "ima",
  /// the second field ("n-ng") of ima-ng, ima-sig, ima-modsig and ima-buf (for a
  /// violation, the file whose open caused it: ima_add_violation()); "" for other templates.
  std::string file_name;
  /// The recorded template hash differs from the one recomputed from the data.
  bool template_hash_mismatch() const { return !violation && recomputed != digest; }
};

/// One PCR after a replay.
struct PcrReplay {
  std::uint32_t index = 0;
  Bytes value;                   ///< after replaying the list (bank-sized)
  std::optional<Bytes> expected; ///< from parse_expected_pcrs(), when given for this PCR
  bool matches() const { return !expected || *expected == value; }
};

/// What an enforcing "appraise func=MODULE_CHECK appraise_type=imasig|modsig" rule does
/// with one module file that has no security.ima.
struct Appraisal {
  /// "" (passes), "decompress" (7.x: module_decompress() refuses the stream, before IMA
  /// appraises), "blacklisted" (ima_check_blacklist), "no-modsig" (ima_read_modsig finds
  /// none, or its PKCS#7 does not parse) or "invalid-signature" (ima_modsig_verify fails).
  std::string cause;
  /// What finit_module returns: KErr::none (passes), EINVAL ("decompress"), EACCES (IMA's
  /// refusals).
  KErr err = KErr::none;
  /// The failing check's own errno: EINVAL (decompress), EPERM (blacklisted), ENOENT or the
  /// trailer's/parser's errno (no-modsig), ima_modsig_verify's errno (ENOKEY, EKEYREJECTED,
  /// EBADMSG ...); KErr::none when it passes.
  KErr check_err = KErr::none;
  std::string reason;  ///< the kernel function and why ("ima_modsig_verify: ..."); "" when it passes
  /// "blacklisted": the listed "bin:<hex>" entry, and the "blacklisted-hash" ima-buf record
  /// ima_check_blacklist() adds when the rule also measures (buf = the d-modsig digest).
  std::optional<std::string> blacklist_entry;
  std::optional<TemplateEntry> ima_record;
  std::vector<std::string> trusted_by;  ///< subject CN of the .ima keyring certificate(s) that vouched
  std::vector<std::string> log;         ///< kernel log lines pkcs7_verify() would print
  bool passes() const { return cause.empty(); }
};

}  // namespace modsign
