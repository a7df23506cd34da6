// modsign — the predicted outcome of loading a module: plain data (kernel/module/signing.c
// module_sig_check, mod_verify_sig, Linux 7.2.13).  verdict.hpp has the calls that give
// it; the library's module layer uses the same definitions.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/module_image.hpp"
#include "modsign/result.hpp"

namespace modsign {

/// What init_module does with the module (kernel/module/signing.c module_sig_check).
enum class LoadOutcome {
  loads,          ///< signature verified (sig_ok)
  loads_tainted,  ///< a soft failure (ENODATA, ENOPKG, ENOKEY) without enforcement or
                  ///< lockdown: TAINT_UNSIGNED_MODULE ('E')
  refused,        ///< init_module fails with Verdict::load_errno
};
/// "loads", "loads-tainted", "refused".
MODSIGN_API std::string_view outcome_name(LoadOutcome o);

/// What a Verdict predicts: the signature check that load_module runs first
/// (kernel/module/main.c calls module_sig_check before elf_validity_check, Linux 7.2.13).
/// A refusal is the kernel's whole answer; "loads" and "loads-tainted" mean that the module
/// passes that check: the ELF checks after it (elf_validity_check, section and symbol
/// resolution) are not predicted, so a signed file that is no valid module still fails
/// there (ENOEXEC and others).  `modsign verify --json` prints it as "predicts".
inline constexpr std::string_view kVerdictPredicts = "module_sig_check";
/// True when `name` is outcome_name(o) (so a verdict compares with "loads").
inline bool operator==(LoadOutcome o, std::string_view name) { return outcome_name(o) == name; }
/// Writes outcome_name(o).
inline std::ostream& operator<<(std::ostream& os, LoadOutcome o) { return os << outcome_name(o); }

/// One SignerInfo of the module's PKCS#7, as the kernel parsed it.
struct SignerSummary {
  std::string sid;          ///< "issuer+serial <hex>" or "skid <hex>"
  std::string digest_algo;  ///< the kernel's hash name ("sha256")
  std::string sig_algo;     ///< the kernel's pkey_algo ("rsa", "ecdsa", "mldsa65", ...)
  bool signed_attrs = false;
};

/// The trusted certificate that vouched for a signer (pkcs7_validate_trust), told apart
/// from others with the same CN by its subjectKeyIdentifier and serialNumber.
struct TrustedKey {
  std::string cn;      ///< subject CN
  std::string skid;    ///< subjectKeyIdentifier, lower-case hex ("" when it has none)
  std::string serial;  ///< serialNumber INTEGER contents octets, lower-case hex
};

/// The predicted outcome of loading one module (`modsign verify` prints every field).
/// Mirrors module_sig_check() in kernel/module/signing.c, Linux 7.2.13.
struct Verdict {
  LoadOutcome outcome = LoadOutcome::refused;
  /// The errno verify shows: none when the module loads, load_errno when it is refused,
  /// else (loads-tainted) sig_errno.
  KErr err = KErr::none;
  /// What mod_verify_sig returned (none = verified; EINVAL for a module the kernel cannot
  /// decompress, which is never checked).
  KErr sig_errno = KErr::none;
  /// What init_module returns: none when it loads; EKEYREJECTED for a soft failure under
  /// enforce, EPERM under lockdown, else the check's own errno.
  KErr load_errno = KErr::none;
  /// The kernel's log wording plus modsign's detail.
  std::string reason;
  std::vector<SignerSummary> signers;    ///< every SignerInfo (empty when none was parsed)
  std::vector<std::string> log;          ///< other kernel log lines (e.g. the authattrs waiver)
  std::vector<std::string> trusted_by;   ///< CN of the trusted certificate(s) that vouched
  std::vector<TrustedKey> trusted_keys;  ///< the same certificates: CN, SKID and serial
  /// How the module was stored, for a compressed module read into memory (image left
  /// empty); nullopt for an uncompressed module and for the streaming path.
  std::optional<ModuleImage> compression;
  /// modsign's notes beside the prediction: "note: 1 more signature under the one the
  /// kernel checks (it reads only the outermost; modsign info lists them)" for a stacked
  /// module read into memory (not on the streaming path).
  std::vector<std::string> notes;
};

}  // namespace modsign
