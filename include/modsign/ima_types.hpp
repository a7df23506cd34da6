// modsign — the data of include/modsign/ima.hpp: TemplateField, TemplateEntry,
// MeasurementRecord, PcrReplay, Appraisal; and of include/modsign/ima_sign.hpp:
// ImaSignatureHeader, ImaFileAppraisal.
// Plain data only (no KernelProfile, no functions but accessors), so that the library's
// internal layers can use these definitions without the facade's names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "modsign/byte_order.hpp"
#include "modsign/result.hpp"

namespace modsign {

/// One template field: its name ("d-ng", "n-ng", "sig", "d-modsig", "modsig", "buf") and data.
struct TemplateField {
  std::string name;
  Bytes data;
};

/// A template entry: its fields, the template data as the kernel hashes and exports it
/// (per field: u32 length ‖ data, the length in KernelProfile::ima_byte_order(): the
/// kernel's own byte order, little-endian with ima_canonical_fmt), and the template hashes
/// of the SHA-1 (20 bytes) and SHA-256 (32 bytes) banks.
struct TemplateEntry {
  std::string name;  ///< "ima-ng", "ima-sig", "ima-modsig", "ima-buf"
  std::vector<TemplateField> fields;
  Bytes data;
  Bytes sha1, sha256;
  /// What the entry rests on that the caller may not expect, e.g. "security.ima (type 3,
  /// version 3, hash_algo 6) names no hash for this kernel (ima_get_hash_algo ...): d-ng
  /// uses ima_hash, sha256".  Empty for most entries.
  std::vector<std::string> notes;
};

/// One record of binary_runtime_measurements[_<bank>].
struct MeasurementRecord {
  std::uint32_t pcr = 0;
  Bytes digest;  ///< the template hash as recorded (bank-sized)
  std::string template_name;
  Bytes data;                ///< template data (for "ima": digest ‖ u32 length ‖ name)
  std::uint64_t offset = 0;  ///< byte offset of the record in the list
  /// The order of the record's u32 fields (PCR index, lengths): the kernel's own, or
  /// little-endian with ima_canonical_fmt (KernelProfile::ima_byte_order()).
  ByteOrder byte_order = ByteOrder::little;
  bool violation = false;  ///< all-zero digest: the PCR was extended with all 0xFF
  Bytes recomputed;        ///< template hash recomputed from `data` (empty for violations)
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
  Bytes value;                    ///< after replaying the list (bank-sized)
  std::optional<Bytes> expected;  ///< from parse_expected_pcrs(), when given for this PCR
  bool extended = false;          ///< a record of the list extends it (false: only `expected` names it)
  bool matches() const { return !expected || *expected == value; }
};

/// What an enforcing "appraise func=MODULE_CHECK appraise_type=imasig|modsig" rule does
/// with one module file that has no security.ima.
struct Appraisal {
  /// "" (passes), "empty" (an empty file: kernel_read_file() refuses it before IMA is
  /// asked), "decompress" (7.x: module_decompress() refuses the stream, before IMA
  /// appraises), "blacklisted" (ima_check_blacklist), "no-modsig" (ima_read_modsig finds
  /// none, or its PKCS#7 does not parse) or "invalid-signature" (ima_modsig_verify fails).
  std::string cause;
  /// What finit_module returns: KErr::none (passes), EINVAL ("empty", "decompress"), EACCES
  /// (IMA's refusals).
  KErr err = KErr::none;
  /// The failing check's own errno: EINVAL (empty, decompress), EPERM (blacklisted), ENOENT or the
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

/// struct signature_v2_hdr of a security.ima value (security/integrity/integrity.h,
/// Linux 7.2.13), decoded: 9 bytes, multi-byte fields big-endian.
struct ImaSignatureHeader {
  std::uint8_t type = 0;       ///< enum evm_ima_xattr_type: 0x03 EVM_IMA_XATTR_DIGSIG
  std::uint8_t version = 0;    ///< 2 (signs the file digest) or 3 (signs struct ima_file_id)
  std::uint8_t hash_algo = 0;  ///< enum hash_algo (include/uapi/linux/hash_info.h): 4 sha256 ...
  std::uint32_t keyid = 0;     ///< the key's "id:%08x" (ima_keyid())
  std::uint16_t sig_size = 0;  ///< bytes of signature after the header
};

/// What an enforcing "appraise func=<func> appraise_type=<type>" rule does when a file is
/// opened (or executed) with a security.ima value, as ima_appraise_measurement() and
/// ima_check_blacklist() decide it (ima_appraise=enforce, no EVM HMAC key loaded, the file
/// not newly created).  JSON keys of `modsign ima verify --json` in brackets.
struct ImaFileAppraisal {
  std::string appraise_type;  ///< ["appraise_type"] "imasig", "sigv3" or "imasig|modsig"
  std::string func;           ///< ["func"] "FILE_CHECK", "BPRM_CHECK", ...
  /// ["status"] "pass", "fail", or "policy-refused" when the kernel refuses the rule
  /// itself (writing it to the policy file fails with policy_err).
  std::string status;
  KErr policy_err = KErr::none;  ///< ["policy_errno"] EINVAL for a refused rule
  KErr open_err = KErr::none;    ///< ["open"] "0" or "EACCES" (what open(2)/execve(2) returns)
  /// ["cause"] the audit cause integrity_audit_msg() logs: "IMA-signature-required",
  /// "IMA-sigv3-required", "invalid-signature", "invalid-signature-version",
  /// "unknown-ima-data", "unknown" (a version integrity_digsig_verify does not know:
  /// EOPNOTSUPP), "blacklisted" (modsign's name: ima_check_blacklist() refuses with EPERM
  /// and logs no cause); "" when it passes.
  std::string cause;
  /// ["digsig_errno"] integrity_digsig_verify()'s errno (KErr::none when it verified or was
  /// not called: then `digsig_called` is false); EPERM for "blacklisted".
  KErr digsig_err = KErr::none;
  bool digsig_called = false;
  std::string reason;                        ///< ["reason"] the failing check and why; "" when it passes
  std::optional<ImaSignatureHeader> header;  ///< of a type 0x03 value of at least 9 bytes
  /// ["hash_algo"] the hash IMA collected the file with (ima_get_hash_algo(): the header's
  /// when valid, else IMA's default ima_hash), kernel name; ["file_hash"] "<algo>:<hex>".
  std::string hash_algo;
  Bytes file_digest;
  std::optional<std::string> algorithm;        ///< ["algorithm"] of the key found: "rsa", "ecdsa-p384", "ml-dsa-65"
  std::optional<std::string> key;              ///< ["key"] "CN=..., SKID <hex>" of the key found
  std::optional<std::string> blacklist_entry;  ///< ["blacklist_entry"] "bin:<hex>" when blacklisted
  bool passes() const { return status == "pass"; }
};

}  // namespace modsign
