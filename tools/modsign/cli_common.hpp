// Helpers shared by the modsign subcommands (tools/modsign/*.cpp): messages, exit
// statuses, key/certificate/module loading and module-tree expansion.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cms/kernel.hpp"
#include "cms/signed_data.hpp"
#include "common/file.hpp"
#include "crypto/crypto.hpp"
#include "modsign/ima.hpp"
#include "modsign/profile.hpp"
#include "module/compression.hpp"
#include "modsign/module.hpp"
#include "modsign/sign.hpp"
#include "modsign/trust.hpp"
#include "options.hpp"

namespace CLI { class App; }
namespace modsign::blacklist { struct Sources; }

namespace modsign::cli {

/// The hash IMA uses for files (`--ima-hash`, the ima_hash= boot parameter) under `profile`:
/// md5, sha1, sha224, sha256, sha384, sha512, sha3-256/384/512 (any case).  On an unknown
/// name "modsign: unsupported --ima-hash 'X' (md5|sha1|...|sha3-512)"; under v6.1 a SHA-3
/// name is refused too: 6.1-6.6 have no SHA-3 in hash_algo_name[] (they came with SHA-3
/// module signing in 6.7), so hash_setup() rejects ima_hash=sha3-256 and IMA keeps its
/// default.  Both on stderr, and nullopt (the caller exits kExitUsage).
std::optional<crypto::HashAlgo> ima_hash_option(const std::string& name, const kernel::KernelProfile& profile);

/// The same for the public KernelProfile (the facade calls).
std::optional<crypto::HashAlgo> ima_hash_option(const std::string& name, const KernelProfile& profile);

/// kernel::KernelProfile::parse(name); on an unknown name, "modsign: unknown --kernel 'X'
/// (v6.1|v6|v7.0)" on stderr and nullopt (the caller exits kExitUsage).
std::optional<kernel::KernelProfile> kernel_profile(const std::string& name);

/// The "blacklisted-hash" ima-buf record ima_check_blacklist() adds (digest::ima_buffer_template
/// of `buf` under `ima_hash`) as JSON: template, event, buf, template_data and the SHA-1 and
/// SHA-256 template hashes (hex).  Used by `blacklist check` and `ima appraise`.
nlohmann::json blacklisted_hash_record_json(ByteView buf, crypto::HashAlgo ima_hash);
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
/// One JSON object per line; invalid UTF-8 is replaced by U+FFFD instead of aborting.
std::string dump(const nlohmann::json& j);
/// "botan" -> Backend::botan, anything else -> Backend::openssl.
crypto::Backend backend_of(const std::string& s);
/// Certificates from every file; reports and returns nullopt on the first failure.
std::optional<std::vector<crypto::Certificate>> load_certs(const std::vector<std::string>& files);
/// A passphrase typed at the terminal: "Enter pass phrase for <path>:" on /dev/tty, read
/// from /dev/tty with echo off.  nullopt when stdin is not a terminal or /dev/tty cannot
/// be opened.  The caller cleanses the result.
std::optional<std::string> prompt_passphrase(const std::string& path);
/// modsign::Signer::load(key, cert) with prompt_passphrase() as the passphrase provider
/// (KBUILD_SIGN_PIN first, as scripts/sign-file; never from the command line); each of
/// Signer::notes() is printed as "modsign: KEY: warning: permissions 0644 let group or
/// others access this private key (chmod 600 KEY)".  Reports ("modsign: FILE: reason") and
/// returns nullopt on failure; messages never contain key bytes.
std::optional<Signer> load_signer(const std::string& key, const std::string& cert);

/// A module read from disk: stored bytes and the image the kernel checks (the public
/// modsign::ModuleFile: path, stored, m).
using LoadedModule = modsign::ModuleFile;
/// Read and, if compressed, decompress a module; reports and returns nullopt on failure
/// (the message also goes to `*why` when given).  (`ima appraise`, for which a stream the
/// kernel cannot decompress is a prediction, reads through the library instead.)
std::optional<LoadedModule> read_module(const std::string& path, std::uint64_t max_size, std::string* why = nullptr);
/// modsign::streamable_module_file(): true for an uncompressed regular file larger than
/// `threshold` bytes (--stream-above), which sign and verify read in one streaming pass.
bool streamable(const std::string& path, std::uint64_t threshold);
/// "xz (CRC32 check), 12345 bytes stored" for reports.
std::string compression_text(const module::ModuleImage& m);
/// The "compression" JSON object (null for an uncompressed module).
nlohmann::json compression_json(const module::ModuleImage& m);

/// modsign::KernelProfile::parse(name); on an unknown name, "modsign: unknown --kernel 'X'
/// (v6.1|v6|v7.0)" on stderr and nullopt (the caller exits kExitUsage).
std::optional<modsign::KernelProfile> public_profile(const std::string& name);
/// modsign::TrustStore::load of the trust options; every note on stderr as "modsign: note:
/// ..." (on failure, the keyring notes gathered before it), then the error.  nullopt on an
/// unreadable or malformed file (the caller exits kExitInput).
std::optional<modsign::TrustStore> load_trust(const TrustOptions& t, const modsign::KernelProfile& profile);
/// `message` without its leading "<path>: " (InputError messages name the file).
std::string without_path(const std::string& path, const std::string& message);

/// Trusted certificates (--keyring/--cert of verify, ima appraise and blacklist check) into
/// `out` with Keyring::add_path.  A certificate the `profile` kernel cannot load
/// (kernel::x509_supported: ML-DSA before 7.0, SHA-3 signatures before 6.7) stays in `out`
/// (the verifiers leave it out of the trust step) and is named on stderr as "modsign: note:
/// FILE certificate N is not loaded by a v6.1 kernel (ENOPKG: ...)", N counting within that
/// argument, as for --revoked.  Reports and returns false on the first unreadable or
/// malformed file.
bool load_keyring(const std::vector<std::string>& paths, const kernel::KernelProfile& profile, kernel::Keyring& out);

/// Fill `out` in the kernel's load order: hash-list files (blacklist_init at
/// device_initcall; each must pass `modsign blacklist lint`), revoked certificate files
/// (CONFIG_SYSTEM_REVOCATION_KEYS, late_initcall), dbx/MokListXRT files (load_uefi_certs).
/// Revoked certificates the `profile` kernel would refuse (x509_supported: ENOPKG, or a
/// listed tbs: key: EKEYREJECTED), whether given with --revoked or as EFI_CERT_X509 entries
/// of a --dbx file, are left out; every note in `out.notes` is printed on stderr as
/// "modsign: note: ..." once loading is done.  Reports and returns false on the first
/// unreadable or malformed file.
bool load_blacklist_sources(const std::vector<std::string>& lists, const std::vector<std::string>& revoked,
                            const std::vector<std::string>& dbx, const kernel::KernelProfile& profile,
                            blacklist::Sources& out);

}  // namespace modsign::cli
