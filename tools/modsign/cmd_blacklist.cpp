// modsign blacklist entry|check|lint|merge — CONFIG_SYSTEM_BLACKLIST_HASH_LIST entries and
// the kernel's bin:/tbs:/revocation checks (src/blacklist/).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <set>

#include "blacklist/check.hpp"
#include "blacklist/description.hpp"
#include "blacklist/efi.hpp"
#include "blacklist/hash_list.hpp"
#include "cli_common.hpp"
#include "module/module_signature.hpp"
#include "options.hpp"
#include "registry.hpp"

namespace modsign::cli {

namespace {

/// One thing on the command line: a module, or one certificate of a PEM/DER file.
struct Item {
  std::string label;
  std::optional<LoadedModule> module;
  std::optional<crypto::Certificate> cert;
};

/// Modules are ELF or compressed files.  Any other file of at most 16 MiB that holds a PEM
/// block ("-----BEGIN", also after leading text such as `openssl x509 -text` output) or starts
/// like a DER SEQUENCE (30 81 / 30 82) is read as certificates, and must parse as such: a
/// DER certificate with trailing bytes, concatenated DER certificates, a PEM key or a
/// damaged PEM block is reported (as `--revoked` and `--keyring` report them) instead of
/// being hashed as if it were a module.  Anything else is a module.
/// Reports and returns false on an unreadable file or a broken certificate file (the
/// message also goes to `*why` when given).
bool load_items(const std::string& path, std::uint64_t max_size, std::vector<Item>& out, std::string* why = nullptr) {
  Bytes head;
  try {
    head = read_file(path, std::max<std::uint64_t>(max_size, kMaxModuleSize));
  } catch (const IoError& e) {
    complain("", e.what());
    if (why) *why = e.what();
    return false;
  }
  const bool elf = head.size() >= 4 && head[0] == 0x7f && head[1] == 'E' && head[2] == 'L' && head[3] == 'F';
  static constexpr std::string_view kPem = "-----BEGIN";
  // Certificate files are small: a larger non-ELF file is a module whatever it contains.
  const bool pem = head.size() <= kMaxSmallFileSize &&
                   std::search(head.begin(), head.end(), kPem.begin(), kPem.end()) != head.end();
  const bool der = head.size() >= 2 && head[0] == 0x30 && (head[1] == 0x82 || head[1] == 0x81);
  if (!elf && module::detect_compression(head) == module::Compression::none && (pem || der)) {
    auto certs = crypto::Certificate::from_bytes(head);
    if (!certs) {
      complain(path, certs.error().message);
      if (why) *why = path + ": " + certs.error().message;
      return false;
    }
    for (std::size_t i = 0; i < certs->size(); ++i)
      out.push_back(Item{certs->size() > 1 ? path + "#" + std::to_string(i + 1) : path, std::nullopt, (*certs)[i]});
    return true;
  }
  auto lm = read_module(path, max_size, why);
  if (!lm) return false;
  out.push_back(Item{path, std::move(lm), std::nullopt});
  return true;
}


std::string source_name(blacklist::ModuleEntry::Source s) {
  switch (s) {
    case blacklist::ModuleEntry::Source::d_modsig: return "d-modsig";
    case blacklist::ModuleEntry::Source::ima_hash: return "ima-hash";
    case blacklist::ModuleEntry::Source::none: break;
  }
  return "none";
}

nlohmann::json origins_json(const std::vector<blacklist::Origin>& os) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& o : os) a.push_back({{"file", o.file}, {"where", o.where}});
  return a;
}

std::string origins_text(const std::vector<blacklist::Origin>& os) {
  std::string t;
  for (const auto& o : os) t += (t.empty() ? "" : ", ") + o.file + (o.where.empty() ? "" : " " + o.where);
  return t;
}

bool write_text(const std::string& out, const std::string& text) {
  if (out.empty() || out == "-") {
    std::cout << text;
    return true;
  }
  try {
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
  std::uint64_t max_size = module::kDefaultMaxDecompressed;
};

int cmd_entry(const EntryArgs& a) {
  auto profile = kernel_profile(a.kernel);
  if (!profile) return kExitUsage;
  auto ih = ima_hash_option(a.ima_hash, *profile);
  if (!ih) return kExitUsage;
  const bool esl = a.format == "esl";
  std::optional<blacklist::efi::Guid> owner;
  if (esl) {
    owner = blacklist::efi::Guid::parse(a.owner);
    if (!owner) {
      complain("", "--format esl needs --owner GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx), got '" + a.owner + "'");
      return kExitUsage;
    }
    if (a.out.empty() || a.out == "-") {
      complain("", "--format esl needs -o FILE");
      return kExitUsage;
    }
  }
  std::vector<blacklist::efi::FlatEntry> esl_entries;
  std::set<Bytes> esl_seen;
  // dbx can carry a bin: key only as EFI_CERT_SHA256 (32 bytes), and a certificate only as
  // EFI_CERT_X509 (the revocation list): the kernel's dbx handler passes all 48 bytes of an
  // EFI_CERT_X509_SHA256 element to mark_hash_blacklisted, so that form never matches.
  auto add_esl = [&](const blacklist::efi::Guid& type, Bytes data) {
    if (esl_seen.insert(data).second) esl_entries.push_back({type, *owner, std::move(data)});
  };
  auto add_esl_bin = [&](const std::string& label, const std::string& d) {
    const Bytes h = from_hex(std::string_view(d).substr(4));
    if (h.size() != 32) {
      complain(label, d + " is a " + std::to_string(h.size()) +
                          "-byte hash: dbx carries bin: keys only as EFI_CERT_SHA256 (32 bytes); the kernel "
                          "ignores other hash types");
      return false;
    }
    add_esl(blacklist::efi::guids::cert_sha256, h);
    return true;
  };
  std::vector<std::string> entries;
  std::set<std::string> seen;
  auto add = [&](const std::string& d) {
    if (seen.insert(d).second) entries.push_back(d);
  };
  int worst = kExitOk;
  for (const auto& path : a.items) {
    std::vector<Item> items;
    if (!load_items(path, a.max_size, items)) {
      worst = std::max(worst, kExitInput);
      continue;
    }
    for (const auto& it : items) {
      nlohmann::json j{{"path", it.label}, {"kernel", profile->name()}};
      if (it.cert) {
        auto tbs = blacklist::certificate_entry(*it.cert, *profile);
        j["kind"] = "certificate";
        j["entry"] = tbs ? nlohmann::json(*tbs) : nlohmann::json(nullptr);
        j["source"] = tbs ? "tbs" : "none";
        if (esl) {
          add_esl(blacklist::efi::guids::cert_x509, it.cert->der());
          j["esl"] = "EFI_CERT_X509";
        } else if (tbs) {
          add(*tbs);
        } else {
          const auto sup = kernel::x509_supported(*it.cert, *profile);
          const std::string why =
              "no tbs: entry under " + profile->name() +
              (sup ? std::string(": the certificate's signature hash is unavailable, x509_get_sig_params() skips the check")
                   : ": x509_cert_parse() refuses the certificate (" + std::string(errno_name(sup.error().code)) + ": " +
                         sup.error().message + "), so no key is ever looked up for it");
          j["explanation"] = why;
          complain(it.label, why);
          worst = std::max(worst, kExitVerdict);
        }
      } else {
        const auto& lm = *it.module;
        auto e = blacklist::module_entry(lm.stored, lm.m, *profile, *ih);
        j["kind"] = "module";
        j["entry"] = e.description ? nlohmann::json(*e.description) : nlohmann::json(nullptr);
        j["source"] = source_name(e.source);
        j["algo"] = e.algo.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.algo);
        j["explanation"] = e.explanation;
        j["side_sha256_entry"] = e.side_sha256 ? nlohmann::json(*e.side_sha256) : nlohmann::json(nullptr);
        if (e.description) {
          if (!esl)
            add(*e.description);
          else if (!add_esl_bin(it.label, *e.description))
            worst = std::max(worst, kExitVerdict);
        }
        if (!e.description) {
          std::string msg = "no bin: entry exists under " + profile->name() + ": " + e.explanation;
          if (e.side_sha256)
            msg += a.side ? "; writing the side SHA-256 entry (proposed behaviour)"
                          : "; the side SHA-256 entry " + *e.side_sha256 + " (--side-sha256) would stop it under the "
                                                                          "proposed behaviour";
          complain(it.label, msg);
          if (!(a.side && e.side_sha256)) worst = std::max(worst, kExitVerdict);
        }
        if (a.side && e.side_sha256) {
          if (esl)
            add_esl_bin(it.label, *e.side_sha256);
          else
            add(*e.side_sha256);
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
    const Bytes b = blacklist::efi::write_lists(blacklist::efi::group_entries(esl_entries));
    try {
      write_file_atomic(a.out, b, 0644, false);
    } catch (const IoError& e) {
      complain("", e.what());
      return kExitInput;
    }
    return worst;
  }
  if (entries.empty()) {
    complain("", "no entries to write");
    return std::max(worst, kExitVerdict);
  }
  auto text = blacklist::write_hash_list(entries);
  if (!text) {
    complain("", text.error().message);
    return kExitInput;
  }
  if (!write_text(a.out, *text)) return kExitInput;
  return worst;
}

// ------------------------------------------------------------------------------ check

struct CheckArgs {
  TrustOptions trust;
  std::vector<std::string> items;
  std::string kernel = "v7.0", ima_hash = "sha256";
  bool json = false, enforce = false, lockdown = false;
  std::uint64_t max_size = module::kDefaultMaxDecompressed;
};

/// What a verdict means for loading, as `verify` words it: "refused" (errno of the acting
/// stop), "loads-tainted" (the acting stop is ENOKEY — a listed tbs: key kept the signer's
/// certificate out of the keyring — and signatures are not enforced: module_sig_check()
/// lets the module load tainted) or "not-stopped".  Under --enforce ENOKEY becomes
/// EKEYREJECTED, under --lockdown EPERM (kernel/module/signing.c:105-131, Linux 7.2.13).
struct CheckOutcome {
  const char* outcome;  ///< "refused" | "loads-tainted" | "not-stopped"
  KErr err;             ///< errno the kernel returns (ENOKEY for loads-tainted; none when not stopped)
};
CheckOutcome check_outcome(const blacklist::Verdict& v, const kernel::KernelProfile& p) {
  if (!v.stopped()) return {"not-stopped", KErr::none};
  const KErr e = v.stops[0].err;
  if (e != KErr::enokey) return {"refused", e};
  if (p.enforce) return {"refused", KErr::ekeyrejected};
  if (p.lockdown) return {"refused", KErr::eperm};
  return {"loads-tainted", KErr::enokey};
}

int cmd_check(const CheckArgs& a) {
  auto profile = kernel_profile(a.kernel);
  if (!profile) return kExitUsage;
  auto ih = ima_hash_option(a.ima_hash, *profile);
  if (!ih) return kExitUsage;
  profile->enforce = a.enforce;
  profile->lockdown = a.lockdown;
  blacklist::Sources sources;
  if (!load_blacklist_sources(a.trust.blacklists, a.trust.revoked, a.trust.dbx, *profile, sources)) return kExitInput;
  std::vector<crypto::Certificate> trusted;
  if (!a.trust.keyrings.empty()) {
    kernel::Keyring kr;
    if (!load_keyring(a.trust.keyrings, *profile, kr)) return kExitInput;
    // The kernel never loads those it cannot parse (the note above names them).
    for (auto& c : kr.certificates)
      if (kernel::x509_supported(c, *profile)) trusted.push_back(std::move(c));
  }
  int worst = kExitOk;
  for (const auto& path : a.items) {
    std::vector<Item> items;
    std::string why;
    if (!load_items(path, a.max_size, items, &why)) {
      worst = std::max(worst, kExitInput);
      // As verify --json: an object for every input (the message is on stderr too).
      if (a.json)
        std::cout << dump({{"path", path}, {"kind", nullptr}, {"kernel", profile->name()}, {"stopped", false},
                           {"outcome", "error"}, {"errno", nullptr}, {"stops", nlohmann::json::array()},
                           {"entry", nullptr}, {"source", nullptr}, {"notes", nlohmann::json::array()},
                           {"reason", why}})
                  << "\n";
      continue;
    }
    for (const auto& it : items) {
      const blacklist::Verdict v = it.cert ? blacklist::check_certificate(*it.cert, sources, *profile)
                                           : blacklist::check_module(it.module->stored, it.module->m, sources, trusted,
                                                                     *profile, *ih);
      const CheckOutcome oc = check_outcome(v, *profile);
      if (v.stopped()) worst = std::max(worst, kExitVerdict);  // refused or loads tainted: 1
      if (a.json) {
        nlohmann::json j{{"path", it.label}, {"kind", v.certificate ? "certificate" : "module"},
                         {"kernel", profile->name()}, {"stopped", oc.err != KErr::none && oc.err != KErr::enokey},
                         {"outcome", oc.outcome},
                         {"errno", oc.err == KErr::none ? nlohmann::json(nullptr) : nlohmann::json(errno_name(oc.err))}};
        nlohmann::json stops = nlohmann::json::array();
        for (const auto& s : v.stops) {
          nlohmann::json js{{"entry", s.entry}, {"origins", origins_json(s.origins)}, {"check", s.check},
                            {"errno", errno_name(s.err)},
                            {"condition", s.condition.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.condition)}};
          if (s.ima_buffer) js["ima_record"] = blacklisted_hash_record_json(*s.ima_buffer, *ih);
          stops.push_back(std::move(js));
        }
        j["stops"] = stops;
        if (v.entry) {
          j["entry"] = v.entry->description ? nlohmann::json(*v.entry->description) : nlohmann::json(nullptr);
          j["source"] = source_name(v.entry->source);
          j["side_sha256_entry"] = v.entry->side_sha256 ? nlohmann::json(*v.entry->side_sha256) : nlohmann::json(nullptr);
        } else {
          j["entry"] = v.tbs ? nlohmann::json(*v.tbs) : nlohmann::json(nullptr);
          j["source"] = v.tbs ? "tbs" : "none";
        }
        j["notes"] = v.notes;
        std::cout << dump(j) << "\n";
        continue;
      }
      auto stop_text = [](const blacklist::Stop& s) {
        std::string t = s.entry;
        if (!s.origins.empty()) t += " (" + origins_text(s.origins) + ")";
        t += ": " + s.check + ": " + std::string(errno_name(s.err));
        if (!s.condition.empty()) t += " [" + s.condition + "]";
        return t;
      };
      if (v.stopped() && v.stops[0].err == KErr::enokey) {
        // The signer's key is kept out of the keyring: tainted unless signatures are enforced.
        const std::string how = std::string(oc.outcome) == "loads-tainted"
                                    ? "loads tainted"
                                    : "refused (" + std::string(errno_name(oc.err)) +
                                          (a.enforce ? ", signatures enforced" : ", lockdown") + ")";
        std::cout << printable(it.label) << ": " << how << ": signing key not loaded: " << printable(stop_text(v.stops[0]))
                  << "\n";
        for (std::size_t i = 1; i < v.stops.size(); ++i)
          std::cout << "  also: " << printable(stop_text(v.stops[i])) << "\n";
      } else if (v.stopped()) {
        std::cout << printable(it.label) << ": stopped by " << printable(stop_text(v.stops[0])) << "\n";
        for (std::size_t i = 1; i < v.stops.size(); ++i)
          std::cout << "  also: " << printable(stop_text(v.stops[i])) << "\n";
      } else {
        std::cout << printable(it.label) << ": not stopped\n";
      }
      for (const auto& n : v.notes) std::cout << "  note: " << printable(n) << "\n";
    }
  }
  return worst;
}

// ------------------------------------------------------------------------------ lint / merge

struct LintArgs {
  std::string file;
  bool awk_only = false, json = false;
};

nlohmann::json problem_json(const blacklist::ListProblem& p) {
  return {{"line", p.line},
          {"column", p.column},
          {"item", p.item},
          {"stage", p.stage == blacklist::ProblemStage::awk ? "awk" : "build"},
          {"message", p.message},
          {"awk", p.awk.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.awk)}};
}

int cmd_lint(const LintArgs& a) {
  blacklist::HashList l;
  try {
    l = blacklist::read_hash_list(a.file);
  } catch (const IoError& e) {
    complain("", e.what());
    return kExitInput;
  }
  if (a.json) {
    nlohmann::json probs = nlohmann::json::array(), dups = nlohmann::json::array();
    std::size_t n = 0;
    for (const auto& p : l.problems)
      if (!a.awk_only || p.stage == blacklist::ProblemStage::awk) {
        probs.push_back(problem_json(p));
        ++n;
      }
    for (const auto& d : l.duplicates) dups.push_back(problem_json(d));
    std::cout << dump({{"path", a.file}, {"awk_accepts", l.awk_accepts()}, {"build_accepts", l.problems.empty()},
                       {"entries", l.entries.size()}, {"problems", probs}, {"duplicates", dups}})
              << "\n";
    return n ? kExitVerdict : kExitOk;
  }
  std::size_t n = 0;
  for (const auto& p : l.problems) {
    if (a.awk_only && p.stage != blacklist::ProblemStage::awk) continue;
    std::cout << printable(blacklist::format_problem(a.file, p)) << "\n";
    ++n;
  }
  for (const auto& d : l.duplicates) std::cout << printable(blacklist::format_problem(a.file, d)) << " [warning]\n";
  if (n) return kExitVerdict;
  std::cout << printable(a.file) << ": ok, " << l.entries.size() << " entries, " << l.duplicates.size()
            << " duplicates\n";
  return kExitOk;
}

struct MergeArgs {
  std::vector<std::string> files;
  std::string out;
};

int cmd_merge(const MergeArgs& a) {
  std::vector<blacklist::HashList> lists;
  for (const auto& f : a.files) {
    try {
      lists.push_back(blacklist::read_hash_list(f));
    } catch (const IoError& e) {
      complain("", e.what());
      return kExitInput;
    }
    if (!lists.back().problems.empty()) {
      complain("", blacklist::format_problem(f, lists.back().problems.front()));
      return kExitInput;
    }
  }
  auto m = blacklist::merge_hash_lists(lists);
  auto text = blacklist::write_hash_list(m.descriptions);
  if (!text) {
    complain("", text.error().message);
    return kExitInput;
  }
  if (!write_text(a.out, *text)) return kExitInput;
  std::cerr << "modsign: " << m.descriptions.size() << " entries from " << a.files.size() << " files, " << m.duplicates
            << " duplicates dropped\n";
  return kExitOk;
}

}  // namespace

bool load_blacklist_sources(const std::vector<std::string>& lists, const std::vector<std::string>& revoked,
                            const std::vector<std::string>& dbx, const kernel::KernelProfile& profile,
                            blacklist::Sources& out) {
  for (const auto& f : lists) {
    blacklist::HashList l;
    try {
      l = blacklist::read_hash_list(f);
    } catch (const IoError& e) {
      complain("", e.what());
      return false;
    }
    if (auto st = blacklist::load_hash_list(out, f, l); !st) {
      complain("", st.error().message + " (run modsign blacklist lint)");
      return false;
    }
  }
  for (const auto& f : revoked) {
    auto certs = load_certs({f});
    if (!certs) return false;
    for (std::size_t i = 0; i < certs->size(); ++i) {
      const auto& c = (*certs)[i];
      const std::string which = f + " certificate " + std::to_string(i + 1);
      if (auto st = kernel::x509_supported(c, profile); !st) {
        out.notes.push_back(which + " is not loaded by a " + profile.name() + " kernel (" +
                            std::string(errno_name(st.error().code)) + ": " + st.error().message + ")");
        continue;
      }
      if (auto d = blacklist::certificate_entry(c, profile); d && out.keyring.descriptions.count(*d)) {
        out.notes.push_back(which + " is not loaded: its " + *d + " is listed (x509_key_preparse: EKEYREJECTED)");
        continue;
      }
      out.add_revoked(c, blacklist::Origin{f, "certificate " + std::to_string(i + 1)});
    }
  }
  for (const auto& f : dbx) {
    // dbx and MokListXRT share the kernel's handler (get_handler_for_dbx).
    try {
      if (auto st = blacklist::efi::load_dbx_file(f, out, blacklist::efi::Variable::dbx,
                                                  blacklist::efi::Container::detect, profile);
          !st) {
        complain(f, std::string(errno_name(st.error().code)) + ": " + st.error().message);
        return false;
      }
    } catch (const IoError& e) {
      complain("", e.what());
      return false;
    }
  }
  // Every note (--revoked certificates and --dbx entries alike) on stderr, for verify and
  // blacklist check the same way.
  for (const auto& n : out.notes) complain("", "note: " + n);
  return true;
}

namespace {

Runner setup_blacklist(CLI::App& bl) {
  bl.require_subcommand(1);
  Commands subs;

  auto en = std::make_shared<EntryArgs>();
  auto* entry = bl.add_subcommand("entry", "the bin:/tbs: entries that revoke modules and certificates");
  add_kernel_option(entry, en->kernel);
  add_ima_hash_option(entry, en->ima_hash);
  entry->add_flag("--side-sha256", en->side, "also write the side SHA-256 entry of every module with a modsig (proposal)");
  entry->add_option("--format", en->format, "hashlist, or esl (an EFI_SIGNATURE_LIST file for dbx/MokListX)")
      ->check(CLI::IsMember({"hashlist", "esl"}))->capture_default_str();
  entry->add_option("--owner", en->owner, "SignatureOwner GUID of the esl entries");
  add_out_option(entry, en->out, "write the hash list here instead of standard output");
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
  add_out_option(merge, mg->out, "output file")->required();
  merge->add_option("FILE", mg->files, "hash-list files")->required();
  subs.emplace_back(merge, [mg] { return cmd_merge(*mg); });
  return run_selected(std::move(subs));
}

}  // namespace

const Registration kBlacklist{
    {"blacklist", "bin:/tbs: entries, hash-list files and the kernel's blacklist checks", setup_blacklist}};

}  // namespace modsign::cli
