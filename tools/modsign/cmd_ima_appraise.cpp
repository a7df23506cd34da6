// `modsign ima appraise`: what an enforcing IMA appraise rule for MODULE_CHECK with
// appraise_type=imasig|modsig does with each module file (security/integrity/ima,
// kernel 7.2: process_measurement in ima_main.c, ima_check_blacklist and
// ima_appraise_measurement in ima_appraise.c, ima_modsig.c).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "blacklist/check.hpp"
#include "blacklist/sources.hpp"
#include "cli_common.hpp"
#include "module/module_signature.hpp"

namespace modsign::cli {

namespace {

/// Ends every no-modsig reason: nothing else can pass the rule either.
constexpr const char* kNoXattr = "; no security.ima either (IMA-signature-required)";

struct AppraiseArgs {
  std::vector<std::string> keyrings, blacklists, revoked, dbx, modules;
  std::string kernel = "v7.0", ima_hash = "sha256";
  bool waive = false, json = false;
  std::uint64_t max_size = module::kDefaultMaxDecompressed;
};

/// One module's appraisal.  cause: "" (passes), "decompress" (7.x: finit_module fails with
/// EINVAL before IMA appraises), "blacklisted", "no-modsig" or "invalid-signature".
struct Appraisal {
  std::string cause;
  KErr err = KErr::none;  ///< EINVAL (decompress), EPERM (blacklist), or the modsig's errno
  std::string reason;
  std::optional<blacklist::Stop> stop;
  std::vector<std::string> trusted_by;
};

Appraisal appraise(const LoadedModule& lm, const kernel::Keyring& keyring, const blacklist::Sources& sources,
                   const kernel::KernelProfile& profile, crypto::HashAlgo ima_hash) {
  Appraisal a;
  // 0. On 7.x, finit_module(MODULE_INIT_COMPRESSED_FILE) reads the file with
  //    READING_MODULE_COMPRESSED, for which process_measurement() only collects the hash and
  //    defers (ima_main.c:430-433); module_decompress() then fails with EINVAL before the
  //    image is ever appraised (kernel/module/main.c:3772-3779, init_module_from_file).
  //    Before 7.0 IMA appraised the compressed file first (below).
  if (profile.generation == kernel::Generation::v7_0 && !lm.m.kernel_decompress_problem.empty()) {
    a.cause = "decompress";
    a.err = KErr::einval;
    a.reason = "module_decompress: " + lm.m.kernel_decompress_problem + "; IMA never appraises the image";
    return a;
  }
  // 1. ima_check_blacklist(): the key an imasig|modsig rule looks up (the modsig digest, or
  //    IMA's file hash when there is no modsig).  A hit is EPERM, turned into EACCES.
  const auto v = blacklist::check_module(lm.stored, lm.m, sources, {}, profile, ima_hash);
  for (const auto& s : v.stops)
    if (s.ima_buffer && !s.imasig_only) {
      a.cause = "blacklisted";
      a.err = s.err;
      a.reason = "ima_check_blacklist: " + s.entry + " is listed";
      a.stop = s;
      return a;
    }
  // 2. ima_appraise_measurement(): without security.ima only the modsig can pass.  On 7.x a
  //    compressed module is appraised on its decompressed image; on v6 IMA sees the
  //    compressed file, which has no modsig.
  const bool image = lm.m.compression == module::Compression::none || profile.generation == kernel::Generation::v7_0;
  const ByteView seen = image ? ByteView(lm.m.image) : ByteView(lm.stored);
  // ima_read_modsig(): 40 bytes or fewer, or no marker: ENOENT; then mod_check_sig.
  if (seen.size() <= module::kMarker.size() + module::kModuleSignatureSize || !module::has_marker(seen)) {
    a.cause = "no-modsig";
    a.err = KErr::enoent;
    a.reason = std::string("ima_read_modsig: no appended signature") + kNoXattr;
    return a;
  }
  auto split = module::split(seen);
  if (!split) {
    a.cause = "no-modsig";
    a.err = split.error().code;
    a.reason = "ima_read_modsig: " + split.error().message + kNoXattr;
    return a;
  }
  const auto rep = kernel::ima_modsig_verify(split->content, split->cms, keyring, profile);
  if (rep.err != KErr::none) {
    // A message ima_read_modsig() cannot parse leaves IMA without a modsig; one it parses
    // but cannot verify is an invalid signature.  Both are refused.
    a.cause = kernel::pkcs7_parse_message(split->cms, profile, &keyring.blacklist) ? "invalid-signature" : "no-modsig";
    a.err = rep.err;
    a.reason = a.cause == "no-modsig" ? "ima_read_modsig: pkcs7_parse_message: " + rep.reason + kNoXattr
                                      : "ima_modsig_verify: " + rep.reason;
    return a;
  }
  a.trusted_by = rep.trusted_by;
  return a;
}

int cmd_appraise(const AppraiseArgs& a) {
  auto profile = kernel_profile(a.kernel);
  if (!profile) return kExitUsage;
  profile->waive_mldsa_authattrs = a.waive;
  if (a.waive && profile->generation != kernel::Generation::v7_0) {
    complain("", "--waive-mldsa-authattrs exists only for --kernel v7.0");
    return kExitUsage;
  }
  const auto ih = ima_hash_option(a.ima_hash, *profile);
  if (!ih) return kExitUsage;
  kernel::Keyring keyring;
  if (!load_keyring(a.keyrings, *profile, keyring)) return kExitInput;
  blacklist::Sources sources;
  if (!load_blacklist_sources(a.blacklists, a.revoked, a.dbx, *profile, sources)) return kExitInput;
  keyring.blacklist = sources.keyring;
  int worst = kExitOk;
  for (const auto& path : a.modules) {
    std::string why;
    // keep_bad_stream: a stream the kernel cannot decompress is a prediction (step 0 below).
    auto lm = read_module(path, a.max_size, &why, true);
    if (!lm) {
      worst = std::max(worst, kExitInput);
      // As verify --json: line N stays input N (the message is on stderr too).
      if (a.json)
        std::cout << dump({{"path", path}, {"kernel", profile->name()}, {"outcome", "error"}, {"errno", nullptr},
                           {"cause", nullptr}, {"check_errno", nullptr}, {"reason", why},
                           {"trusted_by", nlohmann::json::array()}})
                  << "\n";
      continue;
    }
    const Appraisal ap = appraise(*lm, keyring, sources, *profile, *ih);
    const bool pass = ap.cause.empty();
    if (!pass) worst = std::max(worst, kExitVerdict);
    // What finit_module returns: IMA's refusals are EACCES; a failed decompression its EINVAL.
    const char* refused_errno = ap.cause == "decompress" ? "EINVAL" : "EACCES";
    if (a.json) {
      nlohmann::json j{{"path", path},
                       {"kernel", profile->name()},
                       {"outcome", pass ? "pass" : "refused"},
                       {"errno", pass ? nlohmann::json(nullptr) : nlohmann::json(refused_errno)},
                       {"cause", pass ? nlohmann::json(nullptr) : nlohmann::json(ap.cause)},
                       {"check_errno", pass ? nlohmann::json(nullptr) : nlohmann::json(errno_name(ap.err))},
                       {"reason", ap.reason},
                       {"trusted_by", ap.trusted_by}};
      if (ap.stop) {
        j["blacklist_entry"] = ap.stop->entry;
        j["ima_record"] = blacklisted_hash_record_json(*ap.stop->ima_buffer, *ih);
      }
      std::cout << dump(j) << "\n";
    } else if (pass) {
      std::cout << printable(path) << ": passes: modsig verified"
                << (ap.trusted_by.empty() ? std::string() : " (trusted: " + printable(ap.trusted_by[0]) + ")") << "\n";
    } else {
      std::cout << printable(path) << ": refused (" << refused_errno << "): " << ap.cause << ": " << errno_name(ap.err) << ": "
                << printable(ap.reason) << "\n";
    }
  }
  return worst;
}

}  // namespace

void add_ima_appraise_command(CLI::App& ima, Commands& more) {
  auto a = std::make_shared<AppraiseArgs>();
  auto* c = ima.add_subcommand(
      "appraise",
      "would an enforcing 'appraise func=MODULE_CHECK appraise_type=imasig|modsig' rule let each module through");
  c->add_option("--keyring,--cert", a->keyrings, "IMA's .ima keyring: PEM bundle, DER file or directory; repeatable")
      ->allow_extra_args(false);
  add_kernel_option(c, a->kernel, "");
  c->add_option("--blacklist", a->blacklists, "CONFIG_SYSTEM_BLACKLIST_HASH_LIST file (bin: and tbs: entries); repeatable")
      ->allow_extra_args(false);
  c->add_option("--revoked", a->revoked, "revoked certificates (CONFIG_SYSTEM_REVOCATION_KEYS); repeatable")
      ->allow_extra_args(false);
  c->add_option("--dbx", a->dbx, "UEFI dbx / MokListXRT file; repeatable")->allow_extra_args(false);
  c->add_flag("--waive-mldsa-authattrs", a->waive, "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y (v7.0)");
  c->add_option("--ima-hash", a->ima_hash, "IMA's file hash (ima_hash=)")->capture_default_str();
  c->add_flag("--json", a->json, "one JSON object per module");
  add_bytes_option(c, "--max-size", a->max_size, "largest decompressed module, bytes");
  c->add_option("MODULE", a->modules, "modules")->required();
  more.emplace_back(c, [a] { return cmd_appraise(*a); });
}

}  // namespace modsign::cli
