// The option groups of the modsign commands; see options.hpp.
#include "options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>

#include "cli_common.hpp"

namespace modsign::cli {

void add_keyring_option(CLI::App* cmd, std::vector<std::string>& keyrings) {
  cmd->add_option("--keyring,--cert", keyrings,
                  "trusted certificates: PEM bundle, DER file or directory of them; repeatable")
      ->allow_extra_args(false);
}

void add_trust_options(CLI::App* cmd, TrustOptions& t) {
  add_keyring_option(cmd, t.keyrings);
  cmd->add_option("--blacklist,--list", t.blacklists,
                  "CONFIG_SYSTEM_BLACKLIST_HASH_LIST file (bin: and tbs: entries); repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--revoked", t.revoked, "revoked certificates (CONFIG_SYSTEM_REVOCATION_KEYS); repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--dbx", t.dbx,
                  "UEFI dbx / MokListXRT file (EFI_SIGNATURE_LISTs; esl, efivarfs or auth-2): its EFI_CERT_X509 "
                  "entries are revoked keys; repeatable")
      ->allow_extra_args(false);
  cmd->add_flag("--strict", t.strict,
                "a --keyring directory entry that is not a certificate file (FIFO, subdirectory, dangling "
                "symlink, text), or a certificate of a key type the kernel cannot load (Ed25519), is an error "
                "instead of being skipped with a note");
}

void add_kernel_option(CLI::App* cmd, std::string& profile, const std::string& what) {
  cmd->add_option("--kernel", profile,
                  "kernel profile: v6.1 (6.1-6.6: md4/md5 digests, no SHA-3), v6 (before the ML-DSA series), v7.0, "
                  "v7.1 or v7.2 (v7.x alike for modules; for security.ima, sigv3 from v7.1, of ML-DSA keys from "
                  "v7.2)" +
                      (what.empty() ? std::string() : "; " + what))
      ->check(CLI::IsMember({"v6.1", "v6", "v7.0", "v7.1", "v7.2"}))
      ->capture_default_str();
}

void add_kernel_lacks_option(CLI::App* cmd, std::vector<std::string>& families, bool from_config) {
  cmd->add_option("--kernel-lacks", families,
                  std::string("crypto the kernel lacks: a signature algorithm (CONFIG_CRYPTO_RSA, _ECDSA, _MLDSA not "
                              "=y) rsa, ecdsa or mldsa, or a digest (CONFIG_CRYPTO_SM3, _STREEBOG neither =y nor =m) "
                              "sm3 or streebog; repeatable") +
                      (from_config ? " (--kernel-config reads it from the .config)" : ""))
      ->check(CLI::IsMember({"rsa", "ecdsa", "mldsa", "sm3", "streebog"}))
      ->allow_extra_args(false);
}

void add_signer_options(CLI::App* cmd, std::string& key, std::string& cert, std::string& pin_file,
                        const std::string& key_help) {
  cmd->add_option("--key", key, key_help);
  cmd->add_option("--cert", cert,
                  "the signer's certificate (PEM or DER); default: the certificate in the key file "
                  "(for a pkcs11: key, the token's)");
  cmd->add_option("--pin-file", pin_file, "read the token PIN or key passphrase from this file (first line)");
}

void add_waive_option(CLI::App* cmd, bool& waive) {
  cmd->add_flag("--waive-mldsa-authattrs", waive, "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y (v7.x)");
}

void add_enforce_options(CLI::App* cmd, bool& enforce, bool& lockdown) {
  cmd->add_flag("--enforce", enforce, "module.sig_enforce=1 / CONFIG_MODULE_SIG_FORCE=y");
  cmd->add_flag("--lockdown", lockdown, "kernel lockdown (integrity) active");
}

void add_ima_hash_option(CLI::App* cmd, std::string& ima_hash) {
  cmd->add_option("--ima-hash", ima_hash,
                  "IMA's file hash (ima_hash=): d-ng's digest, unless security.ima names another")
      ->capture_default_str();
}

void add_byte_order_options(CLI::App* cmd, ByteOrderOptions& o) {
  cmd->add_option(
         "--kernel-arch", o.arch,
         "the kernel's architecture: x86_64 (default), arm64 or s390x (CONFIG_S390=y): the default byte order, "
         "and (ima template) what a d-modsig past the kernel's stack buffer does, measured per architecture")
      ->check(CLI::IsMember({"x86_64", "arm64", "s390x"}));
  cmd->add_option("--byte-order", o.order,
                  "the kernel's byte order: little (x86_64, arm64) or big (s390x; CONFIG_CPU_BIG_ENDIAN=y): IMA hashes "
                  "each template field's length in it [default: the architecture's]")
      ->check(CLI::IsMember({"little", "big"}));
  cmd->add_flag("--ima-canonical-fmt", o.canonical,
                "the kernel boots with ima_canonical_fmt: little-endian IMA lengths on a big-endian kernel");
}

bool apply_byte_order(KernelProfile& profile, const ByteOrderOptions& o) {
  const Machine machine = parse_machine(o.arch).value_or(Machine::x86_64);  // "" and checked names
  const ByteOrder order = o.order.empty()    ? default_byte_order(machine)
                          : o.order == "big" ? ByteOrder::big
                                             : ByteOrder::little;
  // The default x86_64 (no --kernel-arch) may not be contradicted either.
  if (!byte_order_possible(machine, order)) {
    complain("", "--byte-order " + o.order + ": an " + std::string(machine_name(machine)) + " kernel is " +
                     std::string(byte_order_name(default_byte_order(machine))) +
                     (o.arch.empty() ? " (the default --kernel-arch; give --kernel-arch s390x or arm64)" : ""));
    return false;
  }
  profile.set_machine(machine);
  profile.set_byte_order(order);
  profile.set_ima_canonical_fmt(o.canonical);
  return true;
}

void add_bytes_option(CLI::App* cmd, const std::string& name, std::uint64_t& value, const std::string& help) {
  cmd->add_option(name, value, help)
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            std::uint64_t n = 0;
            const char* end = v.data() + v.size();
            const auto [p, ec] = std::from_chars(v.data(), end, n);
            if (v.empty() || ec != std::errc() || p != end ||
                !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
              return "'" + printable(v) + "' is not a number of bytes (decimal digits, at most 18446744073709551615)";
            return {};
          },
          "BYTES"))
      ->capture_default_str();
}

void add_module_inputs(CLI::App* cmd, std::uint64_t& max_size, std::uint64_t* stream_above,
                       std::vector<std::string>* dirs, const char* verb) {
  add_bytes_option(cmd, "--max-size", max_size, "largest decompressed module, bytes");
  if (stream_above)
    add_bytes_option(cmd, "--stream-above", *stream_above,
                     std::string(verb) +
                         " uncompressed modules larger than this many bytes in one streaming pass (constant memory)");
  if (dirs)
    cmd->add_option("-r", *dirs, "also every *.ko, *.ko.xz, *.ko.zst, *.ko.gz under DIR (recursive, sorted)")
        ->allow_extra_args(false);
}

std::pair<CLI::Option*, CLI::Option*> add_kernel_build_options(CLI::App* cmd, KernelBuildOptions& k,
                                                               const std::string& what,
                                                               const std::string& config_what) {
  auto* b =
      cmd->add_option("--kernel-build", k.build,
                      "the target kernel's build or headers tree (its .config or include/config/auto.conf): " + what);
  auto* c = cmd->add_option("--kernel-config", k.config,
                            "the target kernel's .config alone: " + (config_what.empty() ? what : config_what))
                ->excludes(b);
  return {b, c};
}

void add_fs_options(CLI::App* cmd, FsOptions& o) {
  cmd->add_option("--fs", o.fs, "file system: ext4|xfs|btrfs|f2fs, optionally :SIZE (block size; btrfs: node size)");
  // What the superblock (--device) or the mount (--mount) says is not overridden: the
  // geometry options exclude them, except f2fs's inline_xattr_size= with --device (a mount
  // option, not in the superblock).
  auto* dev = cmd->add_option("--device", o.device, "read the geometry from this device or image's superblock");
  auto* mnt = cmd->add_option("--mount", o.mount, "read the geometry of the file system mounted here");
  cmd->add_option("--block-size", o.block_size, "block size in bytes (ext4: 4096, XFS: 4096 by default)")
      ->check(CLI::Range(1, 1 << 20))
      ->excludes(dev)
      ->excludes(mnt);
  cmd->add_option("--inode-size", o.inode_size, "inode size in bytes (ext4: 256, XFS: 512 by default)")
      ->check(CLI::Range(1, 1 << 20))
      ->excludes(dev)
      ->excludes(mnt);
  cmd->add_option("--extra-isize", o.extra_isize, "ext4 i_extra_isize of new inodes")
      ->capture_default_str()
      ->excludes(dev)
      ->excludes(mnt);
  cmd->add_flag("--ea-inode", o.ea_inode, "ext4 with the ea_inode feature")->excludes(dev)->excludes(mnt);
  cmd->add_option("--node-size", o.node_size, "btrfs node size in bytes (16384 by default)")
      ->check(CLI::Range(1, 1 << 20))
      ->excludes(dev)
      ->excludes(mnt);
  cmd->add_option("--inline-xattr-size", o.inline_words,
                  "f2fs inline xattr area in 4-byte words (0: noinline_xattr; 50 by default; with --device: the "
                  "mount option the superblock does not hold)")
      ->excludes(mnt);
  cmd->add_option("--xattr", o.xattrs, "another attribute the files carry, NAME=SIZE (repeatable)");
  cmd->add_option("--xattrs-of", o.xattrs_of, "the other attributes are those FILE carries");
}

void add_ima_file_inputs(CLI::App* cmd, std::vector<std::string>& files, std::vector<std::string>& dirs,
                         const std::string& what) {
  cmd->add_option("-r", dirs, "also every regular file under DIR (recursive, sorted; symbolic links skipped)")
      ->allow_extra_args(false);
  cmd->add_option("FILE", files, what);
}

void add_json_flag(CLI::App* cmd, bool& json, const std::string& per) {
  cmd->add_flag("--json", json, per.empty() ? std::string("one JSON object") : "one JSON object per " + per);
}

void add_backend_option(CLI::App* cmd, std::string& backend, const std::string& what) {
  const bool signing = what == "signing";
  cmd->add_option("--backend", backend,
                  "ML-DSA " + what + " library (auto: Botan, measured faster on the project's machine" +
                      (signing ? std::string(", for a key with its seed; OpenSSL for one without)") : std::string(")")))
      ->check(CLI::IsMember({"auto", "openssl", "botan"}))
      ->capture_default_str();
}

std::string backend_needs_seed_text() {
  return "--backend botan needs an ML-DSA key with its seed (RFC 9881 seed or both form); --backend auto signs "
         "with OpenSSL a key without it";
}

CLI::Option* not_stdout(CLI::Option* o) {
  return o->check(CLI::Validator(
      [](const std::string& v) {
        return v == "-" ? std::string("'-' is standard output, which this output cannot be; ./- names a file called -")
                        : std::string();
      },
      "FILE"));
}

CLI::Option* add_out_option(CLI::App* cmd, std::string& out, const std::string& help, const std::string& aliases,
                            bool stdout_ok) {
  auto* o = cmd->add_option(aliases.empty() ? std::string("-o,--out") : "-o,--out," + aliases, out, help);
  return stdout_ok ? o : not_stdout(o);
}

}  // namespace modsign::cli
