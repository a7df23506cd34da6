// modsign's own: the renderers of the reports `verify` and `info` print, one pair per report
// type: to_json (the --json line's object) and to_text (the line or lines without --json).
// The commands decide what to report; these only say it.
#pragma once

#include <modsign/modsign.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace modsign::cli {

/// verify: a module's verdict.  Keys: path, kernel, outcome, predicts, errno, reason, signers,
/// compressed, log, trusted_keys; notes when the verdict has some; warnings when `warnings`
/// is given (the --kernel-build configuration's, [] for none).
nlohmann::json to_json(const Verdict& v, const std::string& path, const std::string& kernel,
                       const std::vector<std::string>* warnings);
/// "<path>: <outcome> (<ERRNO>): <reason>[ [<compression>]][ [predicts module_sig_check, not
/// the ELF checks]]\n" (the last for a load: what follows the signature is not predicted).
std::string to_text(const Verdict& v, const std::string& path);
/// verify: an input it gave no verdict for (`outcome` "skipped" or "error"): a verdict's
/// keys, with errno and compressed null and the arrays empty.
nlohmann::json no_verdict_json(const std::string& path, const std::string& kernel, const char* outcome,
                               const std::string& reason);

/// verify --usage kexec: an image's verdict, or (`v` nullptr) the `error` that stopped it,
/// with the same keys: path, kernel, usage, arch, outcome ("error"), predicts, errno,
/// sig_errno and keyring (null when no signature was checked), load_errno, reason, signers,
/// digest_algo, signed_digest, image_digest, trusted_keys.
nlohmann::json to_json(const KexecVerdict* v, const std::string& path, const std::string& kernel, KexecArch arch,
                       const std::string& error);
/// "<path>: <outcome> (<ERRNO>): <reason>[ [predicts kimage_validate_signature, not the load]]\n".
std::string to_text(const KexecVerdict& v, const std::string& path);

/// info: the signatures of module `m` read from `path`, outermost first (describe_signatures;
/// one unsigned entry for an unsigned module).  Keys: path, size, compressed, signed, then for
/// a signed module what modinfo shows and more (sig_id ... accepted_by) and nested[] for the
/// signatures the outermost one covers; content_length alone for an unsigned one.
nlohmann::json to_json(const std::vector<SignatureInfo>& stack, const std::string& path, const ModuleImage& m);
/// The same as "key:<padding to column 21>value" lines (modinfo's layout), the signature cut
/// after 16 bytes, one "nested[N]" line per covered signature.
std::string to_text(const std::vector<SignatureInfo>& stack, const std::string& path, const ModuleImage& m);

}  // namespace modsign::cli
