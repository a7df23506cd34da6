// `modsign ima template|replay|appraise`: the template data and hashes IMA records for a
// file, the replay of a binary measurement list, and what an enforcing IMA appraise rule
// for MODULE_CHECK with appraise_type=imasig|modsig does with each module file
// (security/integrity/ima, kernel 7.2: process_measurement in ima_main.c,
// ima_check_blacklist and ima_appraise_measurement in ima_appraise.c, ima_modsig.c).
#include <sys/xattr.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "blacklist/check.hpp"
#include "blacklist/sources.hpp"
#include "cli_common.hpp"
#include "common/file.hpp"
#include "crypto/crypto.hpp"
#include "digest/ima.hpp"
#include "module/module_signature.hpp"
#include "options.hpp"
#include "registry.hpp"

namespace modsign::cli {

namespace {

/// Ends every no-modsig reason: nothing else can pass the rule either.
constexpr const char* kNoXattr = "; no security.ima either (IMA-signature-required)";

struct AppraiseArgs {
  TrustOptions trust;
  std::vector<std::string> modules;
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
  if (!load_keyring(a.trust.keyrings, *profile, keyring)) return kExitInput;
  blacklist::Sources sources;
  if (!load_blacklist_sources(a.trust.blacklists, a.trust.revoked, a.trust.dbx, *profile, sources)) return kExitInput;
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

struct ImaArgs {
  std::string template_name = "ima-modsig", path, kernel = "v7.0", ima_hash = "sha256", bank = "sha1", pcrs;
  std::string file;
  bool side = false, json = false;
};

int cmd_ima_template(const ImaArgs& a) {
  auto profile = kernel_profile(a.kernel);
  if (!profile) return kExitUsage;
  auto h = ima_hash_option(a.ima_hash, *profile);
  if (!h) return kExitUsage;
  Bytes file;
  try {
    file = read_file(a.file);
  } catch (const IoError& e) {
    complain("", e.what());
    return kExitInput;
  }
  std::optional<Bytes> xattr;
  const ssize_t want = ::getxattr(a.file.c_str(), "security.ima", nullptr, 0);
  if (want > 0) {
    Bytes buf(static_cast<std::size_t>(want));
    const ssize_t n = ::getxattr(a.file.c_str(), "security.ima", buf.data(), buf.size());
    if (n > 0) xattr = Bytes(buf.begin(), buf.begin() + n);
  }
  auto e = digest::ima_template(a.template_name, a.path.empty() ? a.file : a.path, file, xattr, *profile, *h, a.side);
  if (!e) {
    complain(a.file, std::string(errno_name(e.error().code)) + ": " + e.error().message);
    return e.error().code == KErr::einval && e.error().message.rfind("unknown template", 0) == 0 ? kExitUsage : kExitVerdict;
  }
  if (a.json) {
    nlohmann::json f = nlohmann::json::array();
    for (const auto& fld : e->fields) f.push_back({{"name", fld.name}, {"hex", to_hex(fld.data)}, {"length", fld.data.size()}});
    std::cout << dump({{"template", e->name}, {"kernel", profile->name()}, {"fields", f}, {"template_data", to_hex(e->data)},
                       {"template_hash_sha1", to_hex(e->sha1)}, {"template_hash_sha256", to_hex(e->sha256)}})
              << "\n";
    return kExitOk;
  }
  std::cout << "template: " << e->name << " (kernel " << profile->name() << (a.side ? ", side SHA-256 d-modsig" : "") << ")\n";
  for (const auto& fld : e->fields)
    std::cout << "  " << fld.name << " (" << fld.data.size() << " bytes): "
              << (fld.data.size() > 48 ? to_hex(ByteView(fld.data).first(48)) + "..." : to_hex(fld.data)) << "\n";
  std::cout << "  template hash sha1:   " << to_hex(e->sha1) << "\n  template hash sha256: " << to_hex(e->sha256) << "\n";
  return kExitOk;
}

int cmd_ima_replay(const ImaArgs& a) {
  auto bank = crypto::hash_by_name(a.bank);
  if (!bank) {
    complain("", "unknown --bank '" + a.bank + "'");
    return kExitUsage;
  }
  Bytes list;
  try {
    list = read_file(a.file, kMaxModuleSize);
  } catch (const IoError& e) {
    complain("", e.what());
    return kExitInput;
  }
  auto recs = digest::parse_measurement_list(list, *bank);
  if (!recs) {
    complain(a.file, recs.error().message);
    return kExitInput;
  }
  std::size_t mismatches = 0, violations = 0;
  nlohmann::json bad = nlohmann::json::array();
  for (std::size_t i = 0; i < recs->size(); ++i) {
    const auto& r = (*recs)[i];
    if (r.violation) ++violations;
    else if (r.recomputed != r.digest) {
      ++mismatches;
      if (a.json) bad.push_back({{"record", i + 1}, {"offset", r.offset}, {"template", r.template_name},
                     {"recorded", to_hex(r.digest)}, {"recomputed", to_hex(r.recomputed)}});
      if (!a.json)
        std::cout << "record " << i + 1 << " (" << printable(r.template_name) << ", offset " << r.offset
                  << "): template hash " << to_hex(r.digest) << " != recomputed " << to_hex(r.recomputed) << "\n";
    }
  }
  auto pcrs = digest::replay_pcrs(*recs, *bank);
  // Expected PCRs, one per line: "PCR-10: <hex>", "10: <hex>", "pcr10 <hex>", the TPM 1.2
  // sysfs form with spaced bytes ("PCR-10: 2F 3A ..."), or tpm2_pcrread's "  10: 0x<hex>"
  // under "sha1:"/"sha256:" bank headers (only the --bank section counts).
  std::size_t pcr_mismatch = 0;
  nlohmann::json pj = nlohmann::json::object();
  std::map<std::uint32_t, std::string> expected;
  if (!a.pcrs.empty()) {
    std::string text;
    try {
      Bytes t = read_file(a.pcrs, kMaxSmallFileSize);
      text.assign(t.begin(), t.end());
    } catch (const IoError& e) {
      complain("", e.what());
      return kExitInput;
    }
    std::string section;  // current tpm2_pcrread bank header, if any
    std::size_t lineno = 0;
    for (std::size_t pos = 0; pos < text.size();) {
      std::size_t nl = text.find('\n', pos);
      std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      pos = nl == std::string::npos ? text.size() : nl + 1;
      ++lineno;
      std::string trimmed = line;
      trimmed.erase(0, trimmed.find_first_not_of(" \t"));
      while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\r' || trimmed.back() == '\t')) trimmed.pop_back();
      if (trimmed.empty()) continue;
      if (trimmed.back() == ':' && crypto::hash_by_name(trimmed.substr(0, trimmed.size() - 1))) {
        section = trimmed.substr(0, trimmed.size() - 1);
        continue;
      }
      std::size_t i = 0;
      while (i < trimmed.size() && !std::isdigit(static_cast<unsigned char>(trimmed[i]))) ++i;
      std::string digits;
      while (i < trimmed.size() && std::isdigit(static_cast<unsigned char>(trimmed[i]))) digits += trimmed[i++];
      while (i < trimmed.size() && (trimmed[i] == ':' || trimmed[i] == ' ' || trimmed[i] == '\t' || trimmed[i] == '=')) ++i;
      if (i + 1 < trimmed.size() && trimmed[i] == '0' && (trimmed[i + 1] == 'x' || trimmed[i + 1] == 'X')) i += 2;
      std::string hex;
      for (; i < trimmed.size(); ++i) {
        const char c = trimmed[i];
        if (c == ' ' || c == '\t') continue;
        if (!std::isxdigit(static_cast<unsigned char>(c))) {
          complain(a.pcrs, "line " + std::to_string(lineno) + ": not a PCR value: " + line);
          return kExitInput;
        }
        hex += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      if (digits.empty() || hex.empty() || digits.size() > 3) {
        complain(a.pcrs, "line " + std::to_string(lineno) + ": not a PCR value: " + line);
        return kExitInput;
      }
      if (!section.empty() && crypto::hash_by_name(section) != bank) continue;  // another bank
      const auto idx = static_cast<std::uint32_t>(std::stoul(digits));
      if (!expected.emplace(idx, hex).second) {
        complain(a.pcrs, "line " + std::to_string(lineno) + ": PCR " + digits + " given twice");
        return kExitInput;
      }
    }
    if (expected.empty()) {
      complain(a.pcrs, "no PCR value for bank " + a.bank + " in this file");
      return kExitInput;
    }
    for (const auto& [idx, hex] : expected) {
      if (hex.size() != 2 * crypto::hash_info(*bank).size) {
        complain(a.pcrs, "PCR " + std::to_string(idx) + ": " + std::to_string(hex.size() / 2) + " bytes, a " + a.bank +
                             " PCR has " + std::to_string(crypto::hash_info(*bank).size));
        return kExitInput;
      }
      // A PCR the list never extends keeps its reset value (zeros): compare with that.
      pcrs.try_emplace(idx, Bytes(crypto::hash_info(*bank).size, 0));
    }
  }
  for (const auto& [idx, v] : pcrs) {
    pj[std::to_string(idx)] = to_hex(v);
    auto it = expected.find(idx);
    const bool differs = it != expected.end() && it->second != to_hex(v);
    pcr_mismatch += differs;
    if (!a.json)
      std::cout << "PCR-" << idx << ": " << to_hex(v)
                << (it == expected.end() ? "" : differs ? "  MISMATCH (expected " + it->second + ")" : "  matches") << "\n";
  }
  if (a.json)
    std::cout << dump({{"list", a.file}, {"bank", a.bank}, {"records", recs->size()}, {"violations", violations},
                       {"template_hash_mismatches", bad}, {"pcrs", pj}, {"pcr_mismatches", pcr_mismatch}})
              << "\n";
  else
    std::cout << recs->size() << " records, " << violations << " violations, " << mismatches
              << " template hash mismatches\n";
  return mismatches || pcr_mismatch ? kExitVerdict : kExitOk;
}

Runner setup_ima(CLI::App& ima) {
  ima.require_subcommand(1);
  Commands subs;
  auto im = std::make_shared<ImaArgs>();
  auto* t = ima.add_subcommand("template", "the template data and hashes IMA records for a file");
  t->add_option("--template", im->template_name, "ima-modsig|ima-sig|ima-ng")->capture_default_str();
  t->add_option("--path", im->path, "the path IMA would record (n-ng); default: FILE");
  add_kernel_option(t, im->kernel);
  add_ima_hash_option(t, im->ima_hash);
  t->add_flag("--side-sha256", im->side, "d-modsig from the side SHA-256 (the proposal)");
  add_json_flag(t, im->json, "");
  t->add_option("FILE", im->file, "file")->required();
  subs.emplace_back(t, [im] { return cmd_ima_template(*im); });

  auto* r = ima.add_subcommand("replay", "recompute template hashes and replay PCRs of a binary measurement list");
  r->add_option("--bank", im->bank, "digest size of the list's records: sha1 (binary_runtime_measurements), sha256, ...")
      ->capture_default_str();
  r->add_option("--pcrs", im->pcrs, "expected PCR values (lines 'PCR-10: <hex>')");
  add_json_flag(r, im->json, "");
  r->add_option("LIST", im->file, "binary_runtime_measurements file")->required();
  subs.emplace_back(r, [im] { return cmd_ima_replay(*im); });

  auto ap = std::make_shared<AppraiseArgs>();
  auto* c = ima.add_subcommand(
      "appraise",
      "would an enforcing 'appraise func=MODULE_CHECK appraise_type=imasig|modsig' rule let each module through");
  add_trust_options(c, ap->trust);
  add_kernel_option(c, ap->kernel);
  add_waive_option(c, ap->waive);
  add_ima_hash_option(c, ap->ima_hash);
  add_json_flag(c, ap->json);
  add_module_inputs(c, ap->max_size);
  c->add_option("MODULE", ap->modules, "modules")->required();
  subs.emplace_back(c, [ap] { return cmd_appraise(*ap); });
  return run_selected(std::move(subs));
}

}  // namespace

const Registration kIma{{"ima", "IMA template data, measurement lists and modsig appraisal", setup_ima}};

}  // namespace modsign::cli
