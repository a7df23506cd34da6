// The option groups of the modsign commands, each declared once here: a command adds the
// group it needs with one call, so that the same option has the same names, aliases and
// help text in every command.  The batch group (--jobs/-j, --quiet/-q, --sync) is
// add_batch_options() of batch.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <modsign/profile.hpp>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace modsign::cli {

/// Where a command reads trust from: --keyring (alias --cert: trusted certificates, PEM
/// bundle, DER file or directory), --blacklist (alias --list: hash-list files), --revoked
/// (revoked certificates), --dbx (UEFI dbx / MokListXRT files); each repeatable; --strict
/// (a --keyring directory entry that is not a certificate file is an error, not skipped).
struct TrustOptions {
  std::vector<std::string> keyrings, blacklists, revoked, dbx;
  bool strict = false;
};
/// Adds the trust group (verify, ima appraise, blacklist check).
void add_trust_options(CLI::App* cmd, TrustOptions& t);
/// Only its --keyring (alias --cert) option (cms verify: trusted certificates, no .blacklist).
void add_keyring_option(CLI::App* cmd, std::vector<std::string>& keyrings);

/// Declares `--kernel` on cmd, bound to profile (its current value is the default): v6.1
/// (6.1-6.6), v6 (before the ML-DSA series), v7.0, v7.1 or v7.2 (alike for modules; they
/// differ for IMA file signatures), the canonical names KernelProfile::parse takes, the same
/// for every command.  `what` ends the help text (what the profile changes for this command).
void add_kernel_option(CLI::App* cmd, std::string& profile, const std::string& what = "");
/// --kernel-lacks FAMILY (repeatable): crypto the kernel's configuration leaves out, a
/// signature algorithm (rsa, ecdsa, mldsa) or a digest (sm3, streebog); see
/// apply_kernel_lacks().
void add_kernel_lacks_option(CLI::App* cmd, std::vector<std::string>& families, bool from_config = false);
/// The signer: --key (help text `key_help`), --cert, --pin-file (sign, ima sign).
void add_signer_options(CLI::App* cmd, std::string& key, std::string& cert, std::string& pin_file,
                        const std::string& key_help);
/// --waive-mldsa-authattrs (CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y).
void add_waive_option(CLI::App* cmd, bool& waive);
/// --enforce (module.sig_enforce=1) and --lockdown (kernel lockdown, integrity).
void add_enforce_options(CLI::App* cmd, bool& enforce, bool& lockdown);
/// --ima-hash, IMA's file hash (the ima_hash= boot parameter); read with ima_hash_option().
void add_ima_hash_option(CLI::App* cmd, std::string& ima_hash);
/// The kernel's machine, byte order and IMA's list format, for the commands that build
/// template data: --kernel-arch x86_64|arm64|s390x (KernelProfile::machine()), --byte-order
/// little|big (CONFIG_CPU_BIG_ENDIAN; by default the machine's: big for s390x) and
/// --ima-canonical-fmt (the boot parameter).
struct ByteOrderOptions {
  std::string arch;   // "" = x86_64
  std::string order;  // "" = the machine's
  bool canonical = false;
};
void add_byte_order_options(CLI::App* cmd, ByteOrderOptions& o);
/// `profile` with those settings; false (with the message) for an order the architecture
/// given cannot have (x86_64 big-endian, s390x little-endian): a usage error.
bool apply_byte_order(KernelProfile& profile, const ByteOrderOptions& o);

/// Declares an option taking a number of bytes (--max-size, --stream-above), with its default
/// shown.  Only decimal digits that fit in 64 bits are accepted: CLI11 2.1 alone turns "-1"
/// into 18446744073709551615 and "" into 0, which would lift or zero the bound silently.  A
/// bad value is a usage error (exit 2): "--max-size: '-1' is not a number of bytes (decimal
/// digits, at most 18446744073709551615)".
void add_bytes_option(CLI::App* cmd, const std::string& name, std::uint64_t& value, const std::string& help);
/// The options every module-reading command shares: --max-size, and where given
/// --stream-above (`verb` names the operation: "sign", "verify") and -r DIR.
void add_module_inputs(CLI::App* cmd, std::uint64_t& max_size, std::uint64_t* stream_above = nullptr,
                       std::vector<std::string>* dirs = nullptr, const char* verb = "");

/// The target kernel's settings: --kernel-build DIR (a kernel build or headers tree: its
/// .config or include/config/auto.conf, CONFIG_MODULE_SIG_KEY, certs/signing_key.x509) and
/// --kernel-config FILE (a .config alone), one of the two: `what` each takes from it
/// (`config_what` for --kernel-config when it takes less: no key, no certificate).  Returns
/// the two options (for excludes()).
struct KernelBuildOptions {
  std::string build, config;
  bool given() const { return !build.empty() || !config.empty(); }
};
std::pair<CLI::Option*, CLI::Option*> add_kernel_build_options(CLI::App* cmd, KernelBuildOptions& k,
                                                               const std::string& what,
                                                               const std::string& config_what = "");

/// The file-system options of ima fit and ima estimate: --fs TYPE[:SIZE] (ext4, xfs, btrfs,
/// f2fs; SIZE the block size, for btrfs the node size), --block-size, --inode-size,
/// --extra-isize, --ea-inode, --node-size, --inline-xattr-size (f2fs, words), --device
/// DEV|IMAGE and --mount DIR (read the geometry instead), --xattr NAME=SIZE (repeatable) and
/// --xattrs-of FILE (the other attributes a file carries).  0 means the file system's default.
struct FsOptions {
  std::string fs, device, mount, xattrs_of;
  std::uint32_t block_size = 0, inode_size = 0, extra_isize = 32, node_size = 0;
  std::optional<std::uint32_t> inline_words;  ///< --inline-xattr-size (f2fs; default 50)
  bool ea_inode = false;
  std::vector<std::string> xattrs;
};
/// --fs, --device, --mount, the geometry options and --xattr/--xattrs-of of `ima fit` and
/// `ima estimate`.  A geometry option (--block-size, --inode-size, --extra-isize,
/// --ea-inode, --node-size; --inline-xattr-size with --mount) excludes --device and --mount
/// (CLI11: "--block-size excludes --device", exit 2): the file system read says those.
void add_fs_options(CLI::App* cmd, FsOptions& o);

/// --json: "one JSON object per <per>" ("one JSON object" for an empty `per`).
void add_json_flag(CLI::App* cmd, bool& json, const std::string& per = "module");
/// The file inputs of `ima sign` and `ima verify`: FILE... (`what` is their help text) and
/// -r DIR (every regular file under DIR, recursive, sorted; symbolic links skipped).
void add_ima_file_inputs(CLI::App* cmd, std::vector<std::string>& files, std::vector<std::string>& dirs,
                         const std::string& what);
/// --backend auto|openssl|botan: the ML-DSA library for `what` ("signing", "verification").
void add_backend_option(CLI::App* cmd, std::string& backend, const std::string& what);
/// What sign and ima sign say (exit 2) for --backend botan with a key without its seed.
std::string backend_needs_seed_text();
/// The output file: -o/--out, plus the command's older spellings in `aliases` (e.g.
/// "--dest", "--output"; comma separated), which stay accepted.
/// One rule for "-" as an output (modsign(1), FILE HANDLING): with `stdout_ok` (a text
/// output) it is standard output; otherwise it is refused as a usage error (exit 2), never
/// a file named "-" ("./-" names that file).
CLI::Option* add_out_option(CLI::App* cmd, std::string& out, const std::string& help, const std::string& aliases = "",
                            bool stdout_ok = false);
/// Refuses "-" as the value of `o` (an output that is never standard output), as
/// add_out_option() does; returns `o`.
CLI::Option* not_stdout(CLI::Option* o);

}  // namespace modsign::cli
