// modsign blacklist entry|check|lint|merge — CONFIG_SYSTEM_BLACKLIST_HASH_LIST entries and
// the kernel's bin:/tbs:/revocation checks (src/blacklist/).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include <modsign/blacklist.hpp>
#include <modsign/dbx.hpp>
#include <modsign/output.hpp>

#include "cli_common.hpp"
#include "common/file.hpp"
#include "options.hpp"
#include "registry.hpp"
#include "report_render.hpp"

namespace modsign::cli {

namespace {

/// The files of `inputs` as refuse_output_over() names them.
std::vector<KeptFile> kept_inputs(const std::vector<std::string>& inputs) {
  std::vector<KeptFile> k;
  for (const auto& i : inputs) k.push_back({i, "the input"});
  return k;
}

bool write_text(const std::string& out, const std::string& text, const std::vector<std::string>& inputs) {
  if (out.empty() || out == "-") {
    std::cout << text;
    return true;
  }
  try {
    refuse_output_over(out, kept_inputs(inputs));
    write_file_atomic(out, ByteView(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), 0644, false);
  } catch (const IoError& e) {
    complain("", e.what());
    return false;
  }
  return true;
}

// ------------------------------------------------------------------------------ entry

struct EntryArgs {
  std::vector<std::string> items;
  std::string kernel = "v7.0", ima_hash = "sha256", format = "hashlist", out, owner;
  bool side = false, json = false;
  std::uint64_t max_size = kMaxModuleSize;
};

int cmd_entry(const EntryArgs& a) {
  auto profile = public_profile(a.kernel);
  (void)ima_hash_option(a.ima_hash, profile);
  const bool esl = a.format == "esl";
  if (a.json && a.out == "-") {  // both on standard output would interleave
    complain("", "--json and -o - both write to standard output: give -o FILE for the hash list");
    return kExitUsage;
  }
  std::optional<EfiGuid> owner;
  if (esl) {
    owner = EfiGuid::parse(a.owner);
    if (!owner) {
      complain("", "--format esl needs --owner GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx), got '" + a.owner + "'");
      return kExitUsage;
    }
    if (a.out.empty() || a.out == "-") {
      complain("", "--format esl needs -o FILE");
      return kExitUsage;
    }
  }
  std::vector<EfiEntry> esl_entries;
  std::set<Bytes> esl_seen;
  auto add_esl = [&](const EfiGuid& type, Bytes data) {
    if (esl_seen.insert(data).second) esl_entries.push_back({type, *owner, std::move(data)});
  };
  auto add_esl_bin = [&](const std::string& label, const std::string& d) {
    auto h = dbx_sha256_of_bin_key(d);
    if (!h) {
      complain(label, h.error().message);
      return false;
    }
    add_esl(efi_guids::cert_sha256, std::move(h).value());
    return true;
  };
  std::vector<std::string> entries;
  std::set<std::string> seen;
  auto add = [&](const std::string& d) {
    if (seen.insert(d).second) entries.push_back(d);
  };
  int worst = kExitOk;
  for (const auto& path : a.items) {
    const auto g = guarded(path, [&] { return blacklist_entries_for_file(path, profile, a.ima_hash, a.max_size); });
    if (!g.value) {
      if (a.json) std::cout << dump({{"path", path}, {"error", g.reason}}) << "\n";
      worst = std::max(worst, g.status);
      continue;
    }
    const std::vector<BlacklistEntry>& items = *g.value;
    for (const auto& it : items) {
      nlohmann::json j{{"path", it.label}, {"kernel", profile.name()}};
      if (it.certificate) {
        const auto& c = *it.certificate;
        j["kind"] = "certificate";
        j["entry"] = c.tbs ? nlohmann::json(*c.tbs) : nlohmann::json(nullptr);
        j["source"] = c.tbs ? "tbs" : "none";
        if (esl) {
          add_esl(efi_guids::cert_x509, c.der);
          j["esl"] = "EFI_CERT_X509";
        } else if (c.tbs) {
          add(*c.tbs);
        } else {
          j["explanation"] = c.explanation;
          complain(it.label, c.explanation);
          worst = std::max(worst, kExitVerdict);
        }
      } else {
        const auto& e = *it.module;
        j["kind"] = "module";
        j["entry"] = e.description ? nlohmann::json(*e.description) : nlohmann::json(nullptr);
        j["source"] = source_name(e.source);
        j["algo"] = e.algo.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.algo);
        j["explanation"] = e.explanation;
        j["side_sha256_entry"] = e.side_sha256 ? nlohmann::json(*e.side_sha256) : nlohmann::json(nullptr);
        if (e.description) {
          if (!esl) add(*e.description);
          else if (!add_esl_bin(it.label, *e.description)) worst = std::max(worst, kExitVerdict);
        }
        if (!e.description) {
          std::string msg = "no bin: entry exists under " + profile.name() + ": " + e.explanation;
          if (e.side_sha256)
            msg += a.side ? "; writing the side SHA-256 entry (proposed behaviour)"
                          : "; the side SHA-256 entry " + *e.side_sha256 +
                                " (--side-sha256) would stop it under the "
                                "proposed behaviour";
          complain(it.label, msg);
          if (!(a.side && e.side_sha256)) worst = std::max(worst, kExitVerdict);
        }
        if (a.side && e.side_sha256) {
          if (esl) add_esl_bin(it.label, *e.side_sha256);
          else add(*e.side_sha256);
        }
      }
      if (a.json) std::cout << dump(j) << "\n";
    }
  }
  if (a.json && a.out.empty()) return worst;
  if (worst == kExitInput) return worst;  // bad input: write nothing
  if (esl) {
    if (esl_entries.empty()) {
      complain("", "no entries to write");
      return std::max(worst, kExitVerdict);
    }
    refuse_output_over(a.out, kept_inputs(a.items));
    write_file_atomic(a.out, write_efi_lists(esl_entries), 0644, false);
    return worst;
  }
  if (entries.empty()) {
    complain("", "no entries to write");
    return std::max(worst, kExitVerdict);
  }
  auto text = write_hash_list(entries);
  if (!text) {
    complain("", text.error().message);
    return kExitInput;
  }
  if (!write_text(a.out, *text, a.items)) return kExitInput;
  return worst;
}

// ------------------------------------------------------------------------------ check

struct CheckArgs {
  TrustOptions trust;
  std::vector<std::string> items;
  std::string kernel = "v7.0", ima_hash = "sha256";
  bool json = false, enforce = false, lockdown = false;
  std::uint64_t max_size = kMaxModuleSize;
};

/// The trust store of `a`, with its notes on stderr as the CLI always printed them: the
/// .blacklist notes (hash lists, revoked certificates, dbx) first, then the keyring's.
/// A failure in the blacklist sources is reported before one in the keyring files (the
/// order the command has always read them in).  Throws the failure (IoError, InputError; main reports it).
TrustStore load_check_trust(const TrustOptions& t, const KernelProfile& profile) {
  const TrustSources blacklist_only{{}, t.blacklists, t.revoked, t.dbx};
  auto notes = [](const std::vector<std::string>& ns) {
    for (const auto& n : ns) complain("", "note: " + n);
  };
  std::vector<std::string> before;
  try {
    TrustStore s =
        TrustStore::load(TrustSources{t.keyrings, t.blacklists, t.revoked, t.dbx, t.strict}, profile, &before);
    notes(s.blacklist_notes());
    notes(s.keyring_notes());
    return s;
  } catch (const std::runtime_error&) {  // IoError, InputError: reported by main
    if (t.keyrings.empty()) throw;
    // Which failed: the blacklist sources alone tell (their own failure is thrown).
    notes(TrustStore::load(blacklist_only, profile).blacklist_notes());
    notes(before);
    throw;
  }
}

int cmd_check(const CheckArgs& a) {
  auto profile = public_profile(a.kernel);
  const std::string ih = ima_hash_option(a.ima_hash, profile);
  profile.set_enforce(a.enforce);
  profile.set_lockdown(a.lockdown);
  const TrustStore trust = load_check_trust(a.trust, profile);
  int worst = kExitOk;
  for (const auto& path : a.items) {
    const auto g = guarded(path, [&] { return check_blacklist_file(path, trust, profile, a.ima_hash, a.max_size); });
    if (!g.value) {  // as verify --json: an object for every input (the message is on stderr too)
      worst = std::max(worst, g.status);
      if (a.json) std::cout << dump(blacklist_error_json(path, profile, g.reason)) << "\n";
      continue;
    }
    for (const auto& [label, v] : *g.value) {
      if (v.stopped()) worst = std::max(worst, kExitVerdict);  // refused or loads tainted: 1
      std::cout << (a.json ? dump(to_json(v, label, profile, ih)) + "\n" : to_text(v, label));
    }
  }
  return worst;
}

// ------------------------------------------------------------------------------ lint / merge

struct LintArgs {
  std::string file;
  bool awk_only = false, json = false;
};

nlohmann::json problem_json(const HashListProblem& p) {
  return {{"line", p.line},       {"column", p.column},
          {"item", p.item},       {"stage", p.stage == HashListStage::awk ? "awk" : "build"},
          {"message", p.message}, {"awk", p.awk.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.awk)}};
}

int cmd_lint(const LintArgs& a) {
  HashList l;
  l = read_hash_list(a.file);
  if (a.json) {
    nlohmann::json probs = nlohmann::json::array(), dups = nlohmann::json::array();
    std::size_t n = 0;
    for (const auto& p : l.problems)
      if (!a.awk_only || p.stage == HashListStage::awk) {
        probs.push_back(problem_json(p));
        ++n;
      }
    for (const auto& d : l.duplicates) dups.push_back(problem_json(d));
    std::cout << dump({{"path", a.file},
                       {"awk_accepts", l.awk_accepts()},
                       {"build_accepts", l.problems.empty()},
                       {"entries", l.entries.size()},
                       {"problems", probs},
                       {"duplicates", dups}})
              << "\n";
    return n ? kExitVerdict : kExitOk;
  }
  std::size_t n = 0;
  for (const auto& p : l.problems) {
    if (a.awk_only && p.stage != HashListStage::awk) continue;
    std::cout << printable(format_hash_list_problem(a.file, p)) << "\n";
    ++n;
  }
  for (const auto& d : l.duplicates) std::cout << printable(format_hash_list_problem(a.file, d)) << " [warning]\n";
  if (n) return kExitVerdict;
  std::cout << printable(a.file) << ": ok, " << counted(l.entries.size(), "entry", "entries") << ", "
            << counted(l.duplicates.size(), "duplicate", "duplicates") << "\n";
  return kExitOk;
}

struct MergeArgs {
  std::vector<std::string> files;
  std::string out;
};

int cmd_merge(const MergeArgs& a) {
  HashListMerge m;
  m = merge_hash_list_files(a.files);
  auto text = write_hash_list(m.descriptions);
  if (!text) {
    complain("", text.error().message);
    return kExitInput;
  }
  if (!write_text(a.out, *text, {})) return kExitInput;  // merging into an input is allowed
  std::cerr << "modsign: " << counted(m.descriptions.size(), "entry", "entries") << " from "
            << counted(a.files.size(), "file", "files") << ", " << counted(m.duplicates, "duplicate", "duplicates")
            << " dropped\n";
  return kExitOk;
}

}  // namespace

namespace {

Runner setup_blacklist(CLI::App& bl) {
  bl.require_subcommand(1);
  Commands subs;

  auto en = std::make_shared<EntryArgs>();
  auto* entry = bl.add_subcommand("entry", "the bin:/tbs: entries that revoke modules and certificates");
  add_kernel_option(entry, en->kernel);
  add_ima_hash_option(entry, en->ima_hash);
  entry->add_flag("--side-sha256", en->side,
                  "also write the side SHA-256 entry of every module with a modsig (proposal)");
  entry->add_option("--format", en->format, "hashlist, or esl (an EFI_SIGNATURE_LIST file for dbx/MokListX)")
      ->check(CLI::IsMember({"hashlist", "esl"}))
      ->capture_default_str();
  entry->add_option("--owner", en->owner, "SignatureOwner GUID of the esl entries");
  add_out_option(entry, en->out, "write the hash list here instead of standard output ('-': standard output)", "",
                 true);
  add_json_flag(entry, en->json, "item (the hash list only with -o)");
  add_module_inputs(entry, en->max_size);
  entry->add_option("ITEM", en->items, "modules and certificates (PEM or DER)")->required();
  subs.emplace_back(entry, [en] { return cmd_entry(*en); });

  auto ck = std::make_shared<CheckArgs>();
  auto* check = bl.add_subcommand("check", "would the kernel's blacklist stop each module or certificate");
  add_kernel_option(check, ck->kernel);
  add_trust_options(check, ck->trust);
  add_ima_hash_option(check, ck->ima_hash);
  add_json_flag(check, ck->json, "item");
  add_enforce_options(check, ck->enforce, ck->lockdown);
  add_module_inputs(check, ck->max_size);
  check->add_option("ITEM", ck->items, "modules and certificates")->required();
  subs.emplace_back(check, [ck] { return cmd_check(*ck); });

  auto li = std::make_shared<LintArgs>();
  auto* lint = bl.add_subcommand("lint", "check a hash-list file as the kernel build does");
  lint->add_flag("--awk-only", li->awk_only, "report only what certs/check-blacklist-hashes.awk rejects");
  add_json_flag(lint, li->json, "");
  lint->add_option("FILE", li->file, "hash-list file")->required();
  subs.emplace_back(lint, [li] { return cmd_lint(*li); });

  auto mg = std::make_shared<MergeArgs>();
  auto* merge = bl.add_subcommand("merge", "merge hash-list files, first-seen order, duplicates dropped");
  add_out_option(merge, mg->out, "output file ('-': standard output)", "", true)->required();
  merge->add_option("FILE", mg->files, "hash-list files")->required();
  subs.emplace_back(merge, [mg] { return cmd_merge(*mg); });
  return run_selected(std::move(subs));
}

}  // namespace

const Registration kBlacklist{
    {"blacklist", "bin:/tbs: entries, hash-list files and the kernel's blacklist checks", setup_blacklist}};

}  // namespace modsign::cli
