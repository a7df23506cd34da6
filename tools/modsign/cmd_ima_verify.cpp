// `modsign ima verify`: what an enforcing "appraise func=... appraise_type=imasig|sigv3"
// rule does with each file and its security.ima (include/modsign/ima_sign.hpp:
// read_security_ima, ima_appraise_file).  Flags, calls and printing only.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <modsign/ima_sign.hpp>
#include <modsign/output.hpp>
#include <modsign/profile.hpp>
#include <modsign/trust.hpp>

#include "batch.hpp"
#include "cli_common.hpp"
#include "cmd_ima.hpp"
#include "common/file.hpp"
#include "options.hpp"

namespace modsign::cli {

namespace {

struct ImaVerifyArgs {
  TrustOptions trust;
  std::string kernel = "v7.2", func = "FILE_CHECK", ima_hash = "sha256", xattr_hex, xattr_file, backend = "auto";
  std::vector<std::string> types, files, dirs, kernel_lacks;
  bool sigfile = false, xattr_user = false, json = false;
  BatchOptions batch;
};

nlohmann::json or_null(bool has, const nlohmann::json& v) { return has ? v : nlohmann::json(nullptr); }

std::string keyid_hex(std::uint32_t id) {
  char b[9];
  std::snprintf(b, sizeof b, "%08x", id);
  return b;
}

nlohmann::json verdict_json(const std::string& path, const std::string& kernel, const ImaFileAppraisal& v,
                            const std::optional<Bytes>& xattr) {
  const bool refused = v.status == "policy-refused";
  return {{"path", path},
          {"kernel", kernel},
          {"func", v.func},
          {"appraise_type", v.appraise_type},
          {"status", v.status},
          {"open",
           refused ? nlohmann::json(nullptr) : nlohmann::json(v.open_err == KErr::none ? "0" : errno_name(v.open_err))},
          {"cause", or_null(!v.cause.empty(), v.cause)},
          {"digsig_errno", or_null(v.digsig_called || v.digsig_err != KErr::none,
                                   v.digsig_err == KErr::none ? "0" : std::string(errno_name(v.digsig_err)))},
          {"policy_errno", or_null(v.policy_err != KErr::none, std::string(errno_name(v.policy_err)))},
          {"version", or_null(v.header.has_value(), v.header ? v.header->version : 0)},
          {"hash_algo", or_null(!v.hash_algo.empty(), v.hash_algo)},
          {"keyid", or_null(v.header.has_value(), v.header ? keyid_hex(v.header->keyid) : "")},
          {"algorithm", or_null(v.algorithm.has_value(), v.algorithm.value_or(""))},
          {"key", or_null(v.key.has_value(), v.key.value_or(""))},
          {"file_hash", or_null(!v.file_digest.empty(), v.hash_algo + ":" + to_hex(v.file_digest))},
          {"blacklist_entry", or_null(v.blacklist_entry.has_value(), v.blacklist_entry.value_or(""))},
          {"xattr_size", or_null(xattr.has_value(), xattr ? xattr->size() : 0)},
          {"reason", v.reason}};
}

/// The record of an input without a verdict ("error": unreadable, "skipped": not a regular
/// file): the keys of verdict_json(), null where there is no verdict.
nlohmann::json no_verdict_json(const std::string& path, const std::string& kernel, const std::string& func,
                               const std::string& type, const std::string& status, const std::string& reason) {
  nlohmann::json j{{"path", path}, {"kernel", kernel}, {"func", func}, {"appraise_type", type}, {"status", status}};
  for (const char* k : {"open", "cause", "digsig_errno", "policy_errno", "version", "hash_algo", "keyid", "algorithm",
                        "key", "file_hash", "blacklist_entry", "xattr_size"})
    j[k] = nullptr;
  j["reason"] = reason;
  return j;
}

std::string verdict_text(const std::string& path, const ImaFileAppraisal& v) {
  std::string s = printable(path) + ": " + v.appraise_type + ": ";
  if (v.status == "policy-refused")
    return s + "rule refused (" + std::string(errno_name(v.policy_err)) + "): " + printable(v.reason) + "\n";
  if (v.passes())
    return s + "pass (v" + std::to_string(v.header->version) + " " + v.hash_algo + " keyid " +
           keyid_hex(v.header->keyid) + ", " + v.algorithm.value_or("") + ", " + printable(v.key.value_or("")) + ")\n";
  s += "fail (" + std::string(errno_name(v.open_err)) + "): " + v.cause;
  if (v.digsig_called || v.digsig_err != KErr::none) s += ": " + std::string(errno_name(v.digsig_err));
  return s + ": " + printable(v.reason) + "\n";
}

int cmd_ima_verify(ImaVerifyArgs& a) {
  auto profile = public_profile(a.kernel);
  apply_kernel_lacks(profile, a.kernel_lacks);
  if (a.types.empty()) a.types = {"imasig"};
  for (const auto& t : a.types) {  // a typo is a usage error; a type the kernel refuses is a verdict
    try {
      check_ima_appraise_type(t);
    } catch (const UsageError& e) {
      complain("", std::string("--appraise-type: ") + e.what());
      return kExitUsage;
    }
  }
  try {
    check_ima_func(a.func);
  } catch (const UsageError& e) {
    complain("", std::string("--func: ") + e.what());
    return kExitUsage;
  }
  (void)ima_hash_option(a.ima_hash, profile);
  std::size_t dir_error = 0;  // entries under -r DIR not handled (reported)
  int no_inputs = kExitOk;
  const auto found = ima_file_inputs(a.files, a.dirs, a.sigfile, &dir_error, &no_inputs);
  if (!found) return no_inputs;
  const std::vector<BatchInput>& inputs = *found;
  std::optional<Bytes> given;
  if (!a.xattr_hex.empty() || !a.xattr_file.empty()) {
    if (inputs.size() != 1) {
      complain("", std::string(a.xattr_hex.empty() ? "--xattr-file" : "--xattr-hex") + " needs exactly one FILE");
      return kExitUsage;
    }
    try {
      given = a.xattr_hex.empty() ? read_file(a.xattr_file, kMaxSmallFileSize) : from_hex(a.xattr_hex);
    } catch (const IoError& e) {
      complain("", e.what());
      return kExitInput;
    } catch (const std::invalid_argument&) {
      complain("", "--xattr-hex: not hex: " + a.xattr_hex);
      return kExitUsage;
    }
  }
  const auto trust = load_trust(a.trust, profile);
  const std::string xattr_name = a.xattr_user ? "user.ima" : "security.ima";
  // With --json every input has its records, one per appraise type, as verify --json.
  auto no_verdict = [&](const std::string& path, const std::string& status, const std::string& reason) {
    std::string out;
    if (a.json)
      for (const auto& t : a.types)
        out += dump(no_verdict_json(path, profile.name(), a.func, t, status, reason)) + "\n";
    return out;
  };
  auto work = [&](std::size_t i, const OutputRoute&) {
    const BatchInput& in = inputs[i];
    ItemResult r;
    CaptureComplaints capture(r.err);
    if (!in.not_regular.empty()) {
      complain(in.path, "skipped: " + in.not_regular);
      r.out = no_verdict(in.path, "skipped", in.not_regular);
      r.state = ItemState::skipped;
      return r;
    }
    std::string why;
    r.exit = run_guarded(
        [&] {
          std::optional<Bytes> xattr = given;
          if (!given) {
            // FILE itself first: a missing or non-regular FILE is named as such, not as a
            // missing FILE.sig or a failed getxattr.
            (void)FileReader(in.path);
            xattr = a.sigfile ? std::optional<Bytes>(read_file(in.path + ".sig", kMaxSmallFileSize))
                              : read_security_ima(in.path, xattr_name);
          }
          int worst = kExitOk;
          for (const auto& t : a.types) {
            ImaAppraiseOptions o;
            o.appraise_type = t;
            o.func = a.func;
            o.ima_hash = a.ima_hash;
            o.backend = a.backend;
            o.expect_file = walked_file(in, a.dirs);  // a walked entry: hashed from the file the walk found
            const ImaFileAppraisal v = ima_appraise_file(in.path, xattr, trust, profile, o);
            if (!v.passes()) worst = kExitVerdict;
            r.out += a.json ? dump(verdict_json(in.path, profile.name(), v, xattr)) + "\n" : verdict_text(in.path, v);
          }
          std::error_code ec;
          r.bytes = std::filesystem::file_size(in.path, ec);  // for the summary
          return worst;
        },
        &why, in.path);
    if (!why.empty()) r.out = no_verdict(in.path, "error", why);
    r.state = r.exit == kExitOk ? ItemState::done : ItemState::failed;
    return r;
  };
  BatchOptions bo = a.batch;
  bo.quiet = bo.quiet || a.json;  // no progress or summary around the JSON lines
  bo.always_print_out = a.json;
  bo.not_handled = dir_error;
  bo.verdicts = true;
  const int status = run_batch("ima verify", inputs.size(), work, bo, inputs.size() > 1 || !a.dirs.empty(),
                               [&](std::size_t i) { return inputs[i].path; });
  return dir_error ? std::max(status, kExitInput) : status;
}

}  // namespace

void add_ima_verify_command(CLI::App& ima, Commands& subs) {
  auto a = std::make_shared<ImaVerifyArgs>();
  auto* c = ima.add_subcommand(
      "verify", "would an enforcing 'appraise func=FILE_CHECK appraise_type=imasig|sigv3' rule let each file through");
  add_trust_options(c, a->trust);
  add_kernel_option(c, a->kernel);
  add_kernel_lacks_option(c, a->kernel_lacks);
  c->add_option("--appraise-type", a->types, "imasig (default), sigv3 or imasig|modsig; repeatable: one verdict each")
      ->allow_extra_args(false);
  c->add_option("--func", a->func,
                "the rule's func: FILE_CHECK, BPRM_CHECK, MMAP_CHECK, MMAP_CHECK_REQPROT, CREDS_CHECK, FIRMWARE_CHECK, "
                "POLICY_CHECK, MODULE_CHECK, KEXEC_KERNEL_CHECK, KEXEC_INITRAMFS_CHECK (and every other word the "
                "kernel's policy parser takes)")
      ->capture_default_str();
  add_ima_hash_option(c, a->ima_hash);
  auto* sf = c->add_flag("--sigfile", a->sigfile, "read the value from FILE.sig (as written by ima sign --sigfile)");
  auto* xh = c->add_option("--xattr-hex", a->xattr_hex, "the security.ima value in hex (one FILE)")->excludes(sf);
  c->add_option("--xattr-file", a->xattr_file, "read the security.ima value from this file (one FILE)")
      ->excludes(sf)
      ->excludes(xh);
  c->add_flag("--xattr-user", a->xattr_user, "read user.ima instead of security.ima (as evmctl --xattr-user)");
  add_backend_option(c, a->backend, "verification");
  add_json_flag(c, a->json, "file and appraise type");
  add_batch_options(c, a->batch, false, "files",
                    "no progress bar, no summary, no line for files that pass or are skipped without failing "
                    "(symbolic links under -r, a file named twice)");
  add_ima_file_inputs(c, a->files, a->dirs, "files to appraise");
  subs.emplace_back(c, [a] { return cmd_ima_verify(*a); });
}

}  // namespace modsign::cli
