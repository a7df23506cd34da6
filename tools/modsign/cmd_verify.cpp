// `modsign verify`: what a kernel does when loading each module (module_sig_check and
// the PKCS#7 checks behind it: modsign::predict_module_file); a batch over many modules.
// With --usage kexec: what kexec_file_load does with each kernel image (modsign::kexec_verdict_file).
#include <modsign/modsign.hpp>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "batch.hpp"
#include "cli_common.hpp"
#include "options.hpp"
#include "registry.hpp"
#include "report_render.hpp"

namespace modsign::cli {

namespace {

/// One input's place in the outcome table: a LoadOutcome (its order: loads, loads-tainted,
/// refused), then kSkipped and kError; and its row label ("refused (EKEYREJECTED)").
struct OutcomeRow {
  static constexpr int kSkipped = 100, kError = 101, kNotHandled = 102;
  int order = kError;
  std::string label = "error";
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 flags a defaulted <=>
  auto operator<=>(const OutcomeRow&) const = default;
};

/// After the summary line of a batch, on stderr: how many inputs had each outcome and errno,
/// loads first, then loads-tainted, refused, skipped, error, and "not handled" for the entries
/// under -r DIR that were not checked (the summary's count):
///   modsign: verify: outcomes under kernel v7.0:
///     loads (OK)                 1204
///     refused (EKEYREJECTED)        1
void print_outcome_table(const std::string& kernel, const std::vector<OutcomeRow>& outcomes, std::size_t not_handled) {
  std::map<OutcomeRow, std::size_t> rows;
  for (const auto& o : outcomes) ++rows[o];
  if (not_handled) rows[{OutcomeRow::kNotHandled, "not handled"}] = not_handled;
  std::size_t width = 0;
  for (const auto& [o, n] : rows) width = std::max(width, o.label.size() + 1 + std::to_string(n).size());
  std::cerr << "modsign: verify: outcomes under kernel " << kernel << ":\n";
  for (const auto& [o, n] : rows) {
    const std::string count = std::to_string(n);
    std::cerr << "  " << o.label << std::string(width + 4 - o.label.size() - count.size(), ' ') << count << "\n";
  }
}

/// The note for a keyring without keys, said once at the first ENOKEY (a new user's trial:
/// every module said ENOKEY, and nothing said why).  --kernel-build reads no key: the build's
/// certs/signing_key.x509 is given with --keyring like any other (session 23's trial).
void no_trusted_key_note(std::once_flag& once, bool kexec = false) {
  std::call_once(once, [kexec] {
    complain("", std::string("note: the keyring holds no key (give them with --keyring/--cert FILE") +
                     (kexec ? ", the .platform keyring's with --platform-keyring" : "") +
                     "; a kernel build's own key is its certs/signing_key.x509), so every signature is predicted "
                     "ENOKEY");
  });
}

struct VerifyArgs {
  TrustOptions trust;
  std::vector<std::string> modules, dirs;
  std::uint64_t max_size = kMaxModuleSize;
  std::uint64_t stream_above = std::uint64_t{64} << 20;
  std::string kernel = "v7.0", backend = "auto";
  bool waive = false, enforce = false, lockdown = false, json = false;
  BatchOptions batch;
  KernelBuildOptions kernel_build;  // --kernel-build / --kernel-config: the profile from that kernel
  std::string usage = "module";
  bool kexec_sig_force = false;
  bool kexec_5level = false;              ///< --kexec-5level-paging (KexecOptions::five_level_paging)
  std::string kexec_arch;                 ///< --kexec-arch (KexecOptions::arch); "": x86_64 or the --kernel-config's
  std::string module_decompress;          ///< --module-decompress (KernelProfile::module_decompress)
  std::vector<std::string> platform;      ///< --platform-keyring
  std::vector<std::string> kernel_lacks;  ///< --kernel-lacks (KernelProfile::absent_sig_algos, absent_hashes)
};

/// The option of module loading given with --usage kexec, or nullptr: kexec_file_load has no
/// counterpart (its size bound is KEXEC_FILE_SIZE_MAX, it decompresses nothing).
const char* module_only_option(const VerifyArgs& a) {
  if (!a.dirs.empty()) return "-r";
  if (a.enforce) return "--enforce";
  if (a.waive) return "--waive-mldsa-authattrs";
  if (!a.module_decompress.empty()) return "--module-decompress";
  if (a.max_size != kMaxModuleSize) return "--max-size";
  if (a.stream_above != VerifyArgs{}.stream_above) return "--stream-above";
  return nullptr;
}

/// The profile and KexecOptions of --usage kexec: --kernel, or the --kernel-build /
/// --kernel-config's (its architecture and CONFIG_KEXEC_SIG_FORCE, kexec_options_of), then
/// --kernel-lacks, --lockdown, --kexec-arch, --kexec-sig-force and --platform-keyring (which a
/// configuration without CONFIG_INTEGRITY_PLATFORM_KEYRING refuses).  Exit status on failure.
int kexec_setup(const VerifyArgs& a, std::optional<KernelProfile>& profile, KexecOptions& ko) {
  const auto kconfig = load_kernel_config(a.kernel_build);
  if (kconfig) {
    auto from = kexec_options_of(*kconfig);
    if (!from) {
      complain("", from.error().message);
      return kExitInput;
    }
    ko = *from;
    profile = kernel_profile_of(*kconfig);
    // kexec_file_load knows none of module loading's switches (CONFIG_MODULE_SIG_FORCE, the
    // ML-DSA waiver, the module decompressor): they change no verdict, so no label names them.
    profile->set_enforce(false);
    profile->set_waive_mldsa_authattrs(false);
    profile->set_module_decompress("");
  } else {
    profile = public_profile(a.kernel);
  }
  profile->set_lockdown(a.lockdown);
  apply_kernel_lacks(*profile, a.kernel_lacks);
  if (!a.kexec_arch.empty()) {
    const KexecArch arch = a.kexec_arch == "arm64" ? KexecArch::arm64 : KexecArch::x86_64;
    if (kconfig && arch != ko.arch) {
      complain("", "--kexec-arch " + a.kexec_arch + ": " + kconfig->source + " is an " +
                       std::string(kexec_arch_name(ko.arch)) + " kernel's configuration");
      return kExitUsage;
    }
    ko.arch = arch;
  }
  if (a.kexec_sig_force && !kexec_sig_force_supported(ko.arch)) {
    complain("", "--kexec-sig-force: an " + std::string(kexec_arch_name(ko.arch)) +
                     " kernel cannot have CONFIG_KEXEC_SIG_FORCE (only x86 selects ARCH_SUPPORTS_KEXEC_SIG_FORCE); it "
                     "loads an image whose check failed unless locked down (--lockdown)");
    return kExitUsage;
  }
  if (a.kexec_5level && ko.arch != KexecArch::x86_64) {
    complain("", "--kexec-5level-paging: only the x86-64 loader (bzImage64_probe) checks the paging mode; an " +
                     std::string(kexec_arch_name(ko.arch)) + " image is probed by another loader");
    return kExitUsage;
  }
  ko.five_level_paging = a.kexec_5level;
  if (!a.platform.empty() && !ko.platform_keyring) {
    complain("", "--platform-keyring: " + kconfig->source +
                     " has no CONFIG_INTEGRITY_PLATFORM_KEYRING: kexec_file_load never consults a platform keyring");
    return kExitUsage;
  }
  ko.sig_force = ko.sig_force || a.kexec_sig_force;
  ko.backend = a.backend;
  return kExitOk;
}

/// One --usage kexec line (or JSON object); an error has the same JSON keys as a verdict.
void report_kexec(const VerifyArgs& a, const std::string& path, const KernelProfile& profile, const KexecOptions& ko,
                  const KexecVerdict* v, const std::string& error) {
  if (a.json) std::cout << dump(to_json(v, path, profile, ko, error)) << "\n";
  else if (v && !(a.batch.quiet && v->outcome == KexecOutcome::loads))
    std::cout << to_text(*v, path, profile, ko);  // -q: as modules
}

/// --usage kexec: each IMAGE on its own, in order; exit 0 only when every image loads verified.
int cmd_verify_kexec(const VerifyArgs& a) {
  if (const char* opt = module_only_option(a)) {
    complain("", std::string(opt) + " does not apply to --usage kexec" +
                     (a.enforce ? " (use --kexec-sig-force for CONFIG_KEXEC_SIG_FORCE)" : ""));
    return kExitUsage;
  }
  if (a.modules.empty()) {
    complain("", "no kernel images given (IMAGE...)");
    return kExitUsage;
  }
  std::optional<KernelProfile> profile;
  KexecOptions ko;
  if (const int st = kexec_setup(a, profile, ko); st != kExitOk) return st;
  const auto trust = load_trust(a.trust, *profile);
  std::optional<TrustStore> platform;
  if (!a.platform.empty()) {
    TrustOptions p;
    p.keyrings = a.platform;
    p.strict = a.trust.strict;
    platform = load_trust(p, *profile);
  }
  int status = kExitOk;
  std::once_flag keyless;
  for (const auto& path : a.modules) {
    const auto g =
        guarded(path, [&] { return kexec_verdict_file(path, trust, platform ? &*platform : nullptr, *profile, ko); });
    if (!g.value) {
      report_kexec(a, path, *profile, ko, nullptr, g.reason);
      status = std::max(status, g.status);
      continue;
    }
    report_kexec(a, path, *profile, ko, &*g.value, "");
    if (g.value->sig_errno == KErr::enokey && trust.size() == 0 && !platform) no_trusted_key_note(keyless, true);
    if (g.value->outcome != KexecOutcome::loads) status = std::max(status, kExitVerdict);
  }
  return status;
}

int cmd_verify(const VerifyArgs& a) {
  if (a.usage == "kexec") return cmd_verify_kexec(a);
  if (a.kexec_sig_force || a.kexec_5level || !a.platform.empty() || !a.kexec_arch.empty()) {
    complain("", std::string(a.kexec_sig_force     ? "--kexec-sig-force"
                             : a.kexec_5level      ? "--kexec-5level-paging"
                             : !a.platform.empty() ? "--platform-keyring"
                                                   : "--kexec-arch") +
                     " requires --usage kexec");
    return kExitUsage;
  }
  if (a.modules.empty() && a.dirs.empty()) {  // exit 0 would claim that every module loads
    complain("", "no modules given (MODULE... or -r DIR)");
    return kExitUsage;
  }
  const auto kconfig = load_kernel_config(a.kernel_build);
  if (kconfig) {
    if (auto modelled = module_sig_modelled(*kconfig); !modelled) {
      complain("", modelled.error().message);
      return kExitInput;
    }
  }
  auto profile = kconfig ? kernel_profile_of(*kconfig) : public_profile(a.kernel);
  if (a.waive && kconfig && !profile.name().starts_with("v7"))  // the profile is the configuration's, not --kernel's
    throw UsageError("--waive-mldsa-authattrs: " + kconfig->source + " configures Linux " + kconfig->version +
                     ", which has no ML-DSA waiver (7.0 and later)");
  // The configuration decides the waiver, as it decides the version (a hostile review: the
  // option turned on what the configuration leaves out, and the verdict was "loads").
  if (a.waive && kconfig && !profile.waive_mldsa_authattrs())
    throw UsageError("--waive-mldsa-authattrs: " + kconfig->source +
                     " does not set CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y, and the configuration decides "
                     "(leave out one of them)");
  if (a.waive) set_waive_option(profile, a.waive);
  if (a.enforce) profile.set_enforce(true);
  profile.set_lockdown(a.lockdown);
  if (!a.module_decompress.empty()) profile.set_module_decompress(a.module_decompress);
  apply_kernel_lacks(profile, a.kernel_lacks);
  const auto trust = load_trust(a.trust, profile);
  std::once_flag keyless;  // the note, at the first ENOKEY of a run without keys
  PredictOptions po;
  po.max_size = a.max_size;
  po.stream_above = a.stream_above;
  po.backend = a.backend;
  std::size_t dir_error = 0;  // entries under -r DIR not handled (reported)
  const auto inputs = expand_module_tree(a.modules, a.dirs, &dir_error);
  if (inputs.empty() && dir_error) return kExitInput;  // every -r DIR failed or was empty (reported)
  const auto duplicate = duplicate_of(inputs, a.dirs);
  std::vector<OutcomeRow> outcomes(inputs.size());  // each worker writes its own slot
  // Each module on its own: the trust store and profile are shared read-only by the workers.
  auto work = [&](std::size_t i, const OutputRoute&) {
    const std::string& path = inputs[i].path;
    ItemResult r;
    CaptureComplaints capture(r.err);
    auto finish = [&](int exit, ItemState state, std::string out) {
      r.exit = exit;
      r.state = state;
      r.out = std::move(out);
      if (state == ItemState::skipped) outcomes[i] = {OutcomeRow::kSkipped, "skipped"};
      return r;
    };
    // No verdict: the reason (also on stderr) in a record with a verdict's keys.
    auto no_verdict = [&](int exit, ItemState state, const char* outcome, const std::string& reason) {
      return finish(exit, state, a.json ? dump(no_verdict_json(path, profile, outcome, reason)) + "\n" : "");
    };
    if (!inputs[i].not_regular.empty()) {
      complain(path, "skipped: " + inputs[i].not_regular);
      // A verdict that does not cover a module found under -r is not a success: exit 3.
      return no_verdict(kExitInput, ItemState::skipped, "skipped", inputs[i].not_regular);
    }
    if (duplicate[i] != SIZE_MAX) {  // the same file named twice: verified once, as sign signs it once
      const std::string t = duplicate_text(inputs[duplicate[i]].path);
      complain(path, t);
      return no_verdict(kExitOk, ItemState::skipped, "skipped", t.substr(std::string("skipped: ").size()));
    }
    PredictOptions item = po;
    item.expect_file = walked_file(inputs[i], a.dirs);  // a walked entry: read from the file the walk found
    const auto g = guarded(path, [&] { return predict_module_file(path, trust, profile, item); });
    if (!g.value) return no_verdict(g.status, ItemState::failed, "error", g.reason);  // the reason names no file
    const Verdict& v = *g.value;
    std::error_code ec;
    r.bytes = std::filesystem::file_size(path, ec);
    for (const auto& n : v.notes) complain(path, n);
    if (v.err == KErr::enokey && trust.size() == 0) no_trusted_key_note(keyless);
    std::optional<std::vector<std::string>> warnings;
    if (kconfig) {  // what that kernel's configuration says about the signature it checks
      warnings.emplace();
      if (!v.signers.empty())
        warnings = kernel_config_warnings(*kconfig, "the module's signature", v.signers.front().sig_algo,
                                          v.signers.front().digest_algo, v.signers.front().signed_attrs);
      print_notes(*warnings);
    }
    outcomes[i] = {static_cast<int>(v.outcome),
                   std::string(outcome_name(v.outcome)) + " (" + std::string(errno_name(v.err)) + ")"};
    return finish(
        v.outcome == LoadOutcome::loads ? kExitOk : kExitVerdict,
        v.outcome == LoadOutcome::loads ? ItemState::done : ItemState::failed,
        a.json ? dump(to_json(v, path, profile, warnings ? &*warnings : nullptr)) + "\n" : to_text(v, path, profile));
  };
  BatchOptions bo = a.batch;
  bo.sync = "none";              // verify writes nothing
  bo.always_print_out = a.json;  // --quiet keeps the JSON lines (they are the result)
  bo.verdicts = true;
  bo.not_handled = dir_error;
  const bool many = inputs.size() > 1 || !a.dirs.empty();
  const int status = run_batch("verify", inputs.size(), work, bo, many, [&](std::size_t i) { return inputs[i].path; });
  if (many && !a.batch.quiet && !a.json) print_outcome_table(profile.label(), outcomes, dir_error);
  return dir_error ? std::max(status, kExitInput) : status;
}

Runner setup_verify(CLI::App& c) {
  auto a = std::make_shared<VerifyArgs>();
  add_trust_options(&c, a->trust);
  add_kernel_option(&c, a->kernel);
  add_waive_option(&c, a->waive);
  add_enforce_options(&c, a->enforce, a->lockdown);
  add_backend_option(&c, a->backend, "verification");
  add_batch_options(&c, a->batch, false, "modules",
                    "no progress bar, no summary, no table of outcomes, no line for modules that load (--json keeps "
                    "its lines)");
  add_json_flag(&c, a->json);
  add_module_inputs(&c, a->max_size, &a->stream_above, &a->dirs, "verify");
  const auto [kb, kc] =
      add_kernel_build_options(&c, a->kernel_build,
                               "the profile from that kernel (version, "
                               "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA, CONFIG_MODULE_SIG_FORCE; "
                               "instead of --kernel) and warnings when its settings refuse the module's signature");
  kb->excludes("--kernel");
  kc->excludes("--kernel");
  c.add_option("--usage", a->usage,
               "what the signature is checked for: module (init_module) or kexec (kexec_file_load of a kernel image)")
      ->check(CLI::IsMember({"module", "kexec"}))
      ->capture_default_str();
  c.add_option("--module-decompress", a->module_decompress,
               "the kernel's in-kernel module decompressor for compressed modules (finit_module with "
               "MODULE_INIT_COMPRESSED_FILE): none (no CONFIG_MODULE_DECOMPRESS), gzip, xz or zstd; default: the "
               "module's own format")
      ->check(CLI::IsMember({"none", "gzip", "xz", "zstd"}));
  add_kernel_lacks_option(&c, a->kernel_lacks, true);
  c.add_flag("--kexec-sig-force", a->kexec_sig_force, "CONFIG_KEXEC_SIG_FORCE=y (with --usage kexec; x86 only)");
  c.add_flag("--kexec-5level-paging", a->kexec_5level,
             "the x86-64 machine runs 5-level page tables (a CPU with LA57: /proc/cpuinfo lists la57), so an image "
             "without XLF_5LEVEL is refused with ENOEXEC (with --usage kexec); default 4-level");
  c.add_option("--kexec-arch", a->kexec_arch,
               "the kernel's architecture, whose loader probes the image (with --usage kexec): x86_64 (bzImage) or "
               "arm64 (Image); default x86_64, or the --kernel-build/--kernel-config's")
      ->check(CLI::IsMember({"x86_64", "arm64"}));
  c.add_option("--platform-keyring", a->platform,
               "certificates of the .platform keyring (UEFI db, MOK), tried on ENOKEY (with --usage kexec); repeatable")
      ->allow_extra_args(false);
  c.add_option("MODULE", a->modules, "modules (with --usage kexec: kernel images) to verify");
  return [a] { return cmd_verify(*a); };
}

}  // namespace

const Registration kVerify{{"verify", "predict what a kernel does when loading each module", setup_verify}};

}  // namespace modsign::cli
