// Helpers shared by the modsign subcommands (tools/modsign/*.cpp): messages, exit
// statuses, key/certificate/module loading and module-tree expansion.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <modsign/ima.hpp>
#include <modsign/kernel_config.hpp>
#include <modsign/module.hpp>
#include <modsign/module_image.hpp>
#include <modsign/profile.hpp>
#include <modsign/sign.hpp>
#include <modsign/trust.hpp>

#include "options.hpp"

namespace modsign::cli {

/// modsign::ima_hash_setup(name, profile): the canonical name of the hash IMA uses for
/// files (`--ima-hash`, the ima_hash= boot parameter).  An unknown name, or a SHA-3 name
/// under v6.1, throws the library's UsageError (main: exit 2).
std::string ima_hash_option(const std::string& name, const KernelProfile& profile);

/// The "blacklisted-hash" ima-buf record ima_check_blacklist() adds (modsign::ima_buffer_template
/// of `buf` under `ima_hash`) as JSON: template, event, buf, template_data and the SHA-1 and
/// SHA-256 template hashes (hex).  Used by `blacklist check` and `ima appraise`.
nlohmann::json blacklisted_hash_record_json(ByteView buf, const std::string& ima_hash);
/// The same JSON for a record the library already built (modsign::Appraisal::ima_record).
nlohmann::json blacklisted_hash_record_json(const TemplateEntry& record);

/// Exit statuses of design.md: 0 success, 1 negative verdict, 2 usage, 3 input/I/O.
constexpr int kExitOk = 0, kExitVerdict = 1, kExitUsage = 2, kExitInput = 3;

/// Text safe for a terminal: the bytes of `in` with every control character written as
/// \xNN (lowercase hex, one per byte): C0 controls 0x00..0x1f and DEL 0x7f; C1 controls
/// U+0080..U+009F, whose UTF-8 form C2 80..C2 9F becomes "\xc2\x80".."\xc2\x9f"; and a
/// byte 0x80..0x9f that is not part of a well-formed UTF-8 sequence (an 8-bit C1 control,
/// e.g. 0x9b CSI).  Every other well-formed UTF-8 character ("é", "模") and every other
/// byte that is not UTF-8 (0xa0..0xff, e.g. 0xff) is copied as it is
/// (so a terminal not in UTF-8 mode still receives the continuation bytes of
/// well-formed characters, e.g. 0x9b of "ț" C8 9B).  Never fails.
std::string printable(const std::string& in);
/// Writes "modsign: <file>: <what>" (or "modsign: <what>" for an empty file) to stderr.
void complain(const std::string& file, const std::string& what);
/// Writes "Run 'modsign <command> --help' for more information." to stderr: the line after
/// a usage error's complaint.
void usage_hint(const std::string& command);
/// One JSON object per line; invalid UTF-8 is replaced by U+FFFD instead of aborting.
std::string dump(const nlohmann::json& j);

/// "1 entry", "2 entries": `n` and the word in the singular or the plural.
std::string counted(std::uint64_t n, const std::string& one, const std::string& many);
/// The CLI's one error mapping (main() runs every command through it; a batch, and a command
/// going on after a bad input, runs each item through it): runs `f` and returns its exit
/// status; what `f` throws is reported on stderr and becomes a status:
///   UsageError                        "modsign: <what>", kExitUsage;
///   InputError (SignError, ...), IoError  "modsign: <what>", kExitInput;
///   anything else (LibraryError, out of memory)
///                                     "modsign: [<item>: ]internal error: <what>", kExitInput.
/// Commands throw; they catch only the refusals they word themselves (SignError hints,
/// KeygenError, an option's name before a UsageError).  For an item (`item` its path),
/// `*reason` receives the reason its --json record gives: the message without the leading
/// "<item>: " the library's messages start with ("internal error: <what>" for an internal
/// error); left as it was when `f` returns.
int run_guarded(const std::function<int()>& f, std::string* reason = nullptr, const std::string& item = "");

/// What `f` (a library call on the input `item`) gave, under run_guarded(): its value, or
/// nothing with the status and the --json reason run_guarded() gave (the message is on
/// stderr already).
template <class T>
struct Guarded {
  std::optional<T> value;
  int status = 0;
  std::string reason;
};
template <class F>
Guarded<std::invoke_result_t<F&>> guarded(const std::string& item, F&& f) {
  Guarded<std::invoke_result_t<F&>> g;
  g.status = run_guarded(
      [&] {
        g.value.emplace(f());
        return 0;
      },
      &g.reason, item);
  return g;
}
/// At the end of a command: flushes standard output and, when a write to it failed (now or
/// before: a full disk, a closed pipe), writes "modsign: stdout: <strerror>" (e.g. "No space
/// left on device") to stderr and returns max(status, kExitInput); else `status`.
int finish_stdout(int status);
/// Flushes std::cout; false when a write to it failed, whose errno finish_stdout() reports.
bool flush_stdout();
/// Gives std::cout a buffer that writes descriptor 1 itself and keeps the errno of a failed
/// write (main() calls it first), and ignores SIGPIPE: a closed pipe is a failed write
/// (EPIPE, exit 3 from finish_stdout()), never a death between a temporary file and its
/// rename.  Everything the CLI prints to standard output goes through std::cout.
void install_stdout_buffer();

/// modsign::Signer::load(key, cert) with a passphrase typed at the terminal as the provider
/// ("Enter pass phrase for <path>:" on /dev/tty, echo off; none when stdin is not a terminal
/// or /dev/tty cannot be opened; KBUILD_SIGN_PIN first, as scripts/sign-file; never from the
/// command line); each of Signer::notes() is printed as "modsign: KEY: warning: permissions
/// 0644 let group or others access this private key (chmod 600 KEY)".  Throws what
/// Signer::load throws (InputError, IoError; UsageError for a PIN in a pkcs11: URI);
/// messages never contain key bytes.
Signer load_signer(const std::string& key, const std::string& cert, const KeyOptions& options = {});

/// A module read from disk: stored bytes and the image the kernel checks (the public
/// modsign::ModuleFile: path, stored, m).
using LoadedModule = modsign::ModuleFile;
/// "xz (CRC32 check), 12345 bytes stored" for reports.
std::string compression_text(const ModuleImage& m);
/// The "compression" JSON object (null for an uncompressed module).
nlohmann::json compression_json(const ModuleImage& m);

/// modsign::KernelProfile::parse(name); an unknown name throws UsageError "unknown --kernel
/// 'X' (v6.1|v6|v7.0|v7.1|v7.2)" (main: exit 2).
modsign::KernelProfile public_profile(const std::string& name);
/// profile.set_waive_mldsa_authattrs(on) (--waive-mldsa-authattrs); the profile's UsageError
/// when it refuses it (not v7.0).
void set_waive_option(modsign::KernelProfile& profile, bool on);
/// Adds each --kernel-lacks family to the profile: sm3 and streebog to absent_hashes(),
/// the others to absent_sig_algos().
void apply_kernel_lacks(modsign::KernelProfile& profile, const std::vector<std::string>& families);
/// modsign::TrustStore::load of the trust options; every note on stderr as "modsign: note:
/// ...".  On failure, the keyring notes gathered before it, then what TrustStore::load threw
/// (an unreadable or malformed file: InputError or IoError, main: exit 3).
modsign::TrustStore load_trust(const TrustOptions& t, const modsign::KernelProfile& profile);
/// modsign::read_kernel_build / read_kernel_config of --kernel-build / --kernel-config;
/// nullopt (no option given) or the configuration; an unreadable or malformed file throws
/// (InputError, IoError; main: exit 3).
std::optional<modsign::KernelConfig> load_kernel_config(const KernelBuildOptions& k);
/// Each warning on stderr as "modsign: <warning>".
void print_notes(const std::vector<std::string>& notes);
/// `message` without its leading "<path>: " (InputError messages name the file).
std::string without_path(const std::string& path, const std::string& message);

}  // namespace modsign::cli
