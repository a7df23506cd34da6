// modsign's own: the renderers of the reports `verify`, `info` and `digest` print, one pair per report
// type: to_json (the --json line's object) and to_text (the line or lines without --json).
// The commands decide what to report; these only say it.
#pragma once

#include <modsign/modsign.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace modsign::cli {

/// verify: a module's verdict under `profile`.  Keys: path, kernel (profile.name()), profile
/// (profile.label(): with the switches, "v7.0+waiver"), outcome, predicts, errno, reason, signers,
/// compressed, log, trusted_keys; notes when the verdict has some; warnings when `warnings`
/// is given (the --kernel-build configuration's, [] for none).
nlohmann::json to_json(const Verdict& v, const std::string& path, const KernelProfile& profile,
                       const std::vector<std::string>* warnings);
/// "<path>: <outcome> (<ERRNO>): <reason>[ [<compression>]] [kernel <label>[; predicts
/// module_sig_check, not the ELF checks]]\n": the kernel predicted (profile.label(), with its
/// switches), and for a load that what follows the signature is not predicted.
std::string to_text(const Verdict& v, const std::string& path, const KernelProfile& profile);
/// verify: an input it gave no verdict for (`outcome` "skipped" or "error"): a verdict's
/// keys, with errno and compressed null and the arrays empty.
nlohmann::json no_verdict_json(const std::string& path, const KernelProfile& profile, const char* outcome,
                               const std::string& reason);

/// verify --usage kexec: the kernel predicted, profile.label() with the kexec switches that
/// change a verdict: "+arm64" (an arch other than x86_64), "+kexec-sig-force", "+5level".
std::string kexec_label(const KernelProfile& profile, const KexecOptions& ko);
/// verify --usage kexec: an image's verdict, or (`v` nullptr) the `error` that stopped it,
/// with the same keys: path, kernel, profile (kexec_label()), usage, arch, outcome ("error"),
/// predicts, errno, sig_errno and keyring (null when no signature was checked), load_errno,
/// reason, signers, digest_algo, signed_digest, image_digest, trusted_keys.
nlohmann::json to_json(const KexecVerdict* v, const std::string& path, const KernelProfile& profile,
                       const KexecOptions& ko, const std::string& error);
/// "<path>: <outcome> (<ERRNO>): <reason> [kernel <kexec_label()>[; predicts
/// kimage_validate_signature, not the load]]\n".
std::string to_text(const KexecVerdict& v, const std::string& path, const KernelProfile& profile,
                    const KexecOptions& ko);

/// info: the signatures of module `m` read from `path`, outermost first (describe_signatures;
/// one unsigned entry for an unsigned module).  Keys: path, size, compressed, signed, then for
/// a signed module what modinfo shows and more (sig_id ... accepted_by) and nested[] for the
/// signatures the outermost one covers; content_length alone for an unsigned one.
nlohmann::json to_json(const std::vector<SignatureInfo>& stack, const std::string& path, const ModuleImage& m);
/// The same as "key:<padding to column 21>value" lines (modinfo's layout), the signature cut
/// after 16 bytes, one "nested[N]" line per covered signature.
std::string to_text(const std::vector<SignatureInfo>& stack, const std::string& path, const ModuleImage& m);

/// digest: the kernel's pkcs7_get_digest result as IMA takes it, the side SHA-256, the
/// d-modsig field and the bin: entry that can stop the module.  Keys: path, kernel, signed,
/// content_length, kernel_digest (status "ok" or the errno name, algo, hex, reason when not
/// ok), side_sha256, d_modsig, blacklist_visible, bin_entry, bin_source ("d-modsig",
/// "ima-hash", "not-read" or null), file_sha256, side_bin_entry.
nlohmann::json to_json(const DigestView& v, const std::string& path, const std::string& kernel);
/// "<path> (kernel <profile>):" and the lines kernel_digest, side_sha256, d_modsig, blacklist.
std::string to_text(const DigestView& v, const std::string& path, const std::string& kernel);

// In report_render_checks.cpp:

/// ima appraise: the modsig appraisal of `path`.  Keys: path, kernel, outcome ("pass",
/// "refused"), errno, cause, check_errno (null on a pass), reason, trusted_by; blacklist_entry
/// and ima_record (with field_length_order) when a .blacklist entry stopped it.
nlohmann::json to_json(const Appraisal& ap, const std::string& path, const KernelProfile& profile);
/// ima appraise: an input with no appraisal (outcome "error"; `reason` names no file), the
/// same keys, null or empty.
nlohmann::json appraisal_error_json(const std::string& path, const KernelProfile& profile, const std::string& reason);
/// "<path>: passes: modsig verified[ (trusted: <key>)]\n" or "<path>: refused (<ERRNO>):
/// <cause>: <check ERRNO>: <reason>\n".
std::string to_text(const Appraisal& ap, const std::string& path);

/// "d-modsig", "ima-hash" or "none".
std::string source_name(ModuleBlacklistEntry::Source s);
/// [{file, where}] of a .blacklist entry's origins.
nlohmann::json origins_json(const std::vector<TrustOrigin>& os);
/// blacklist check: the verdict of the module or certificate `label`.  Keys: path, kind,
/// kernel, stopped, outcome, errno, stops (entry, origins, check, errno, condition,
/// ima_record with `ima_hash`), entry, source, side_sha256_entry (modules), notes.
nlohmann::json to_json(const BlacklistVerdict& v, const std::string& label, const KernelProfile& profile,
                       const std::string& ima_hash);
/// blacklist check: an input with no verdict (outcome "error"), the same keys and reason.
nlohmann::json blacklist_error_json(const std::string& path, const KernelProfile& profile, const std::string& reason);
/// "<label>: stopped by <stop>", "<label>: loads-tainted (ENOKEY): signing key not loaded:
/// <stop>", "<label>: refused (<ERRNO>, <why>): signing key not loaded: <stop>" or "<label>:
/// not stopped", then "  also: <stop>" and "  note: <note>" lines.
std::string to_text(const BlacklistVerdict& v, const std::string& label);

}  // namespace modsign::cli
