// modsign dbx check | import-json | diff: the firmware's (and shim's SBAT) verdict for EFI
// binaries against db/dbx, Microsoft's published dbx list as an ESL, and the difference
// between two dbx files of any form.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <modsign/efi_image.hpp>
#include <modsign/output.hpp>

#include "cli_common.hpp"
#include "cmd_dbx.hpp"
#include "common/file.hpp"
#include "options.hpp"

namespace modsign::cli {

namespace {

struct CheckArgs {
  std::vector<std::string> dbx, db, mok, files, dirs;
  std::string arch, sbat_level, sbat_level_from, sbat_policy = "latest";
  bool json = false;
  std::string out, a, b;
};

/// "FILE list L entry E, byte offset N" or "FILE images.x64[3] (shim.efi)".
std::string where(const EfiDatabaseEntry& e) {
  if (!e.origin.empty()) return e.file + " " + e.origin;
  return e.file + " list " + std::to_string(e.list) + " entry " + std::to_string(e.entry) + ", byte offset " +
         std::to_string(e.offset);
}

nlohmann::json entry_json(const EfiDatabaseEntry& e) {
  nlohmann::json j{{"file", e.file},
                   {"type", efi_type_name(e.type)},
                   {"owner", e.owner.str()},
                   {"list", e.list},
                   {"entry", e.entry},
                   {"offset", e.offset},
                   {"origin", e.origin.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.origin)}};
  // A certificate by its subject (its DER is in the input file); anything else by its bytes.
  if (e.type == efi_guids::cert_x509) j["certificate"] = e.certificate;
  else j["data"] = to_hex(e.data);
  const auto svn = efi_svn_record(e.owner, e.data);
  j["svn"] = svn ? svn_json(*svn) : nlohmann::json(nullptr);
  return j;
}
nlohmann::json entry_json(const std::optional<EfiDatabaseEntry>& e) {
  return e ? entry_json(*e) : nlohmann::json(nullptr);
}

std::string verdict_text(const EfiImageVerdict& v) {
  const std::string at = v.entry ? " (" + where(*v.entry) + ")" : "";
  const EfiSignatureVerdict* s = nullptr;
  for (const auto& sv : v.signatures)
    if (sv.forbidden_by || sv.allowed_by) s = &sv;
  switch (v.rule) {
    case EfiImageRule::hash_in_dbx: return "refused: Authenticode hash in dbx as " + efi_type_name(v.entry->type) + at;
    case EfiImageRule::certificate_in_dbx:
      return "refused: signature " + std::to_string(s->index) + " verifies against a dbx EFI_CERT_X509 certificate \"" +
             s->forbidden_certificate + "\"" + at;
    case EfiImageRule::certificate_hash_in_dbx:
      return "refused: certificate \"" + s->forbidden_certificate + "\" of signature " + std::to_string(s->index) +
             " is in dbx as " + efi_type_name(v.entry->type) + ", revoked at " + s->revocation_time->str() + at;
    case EfiImageRule::sbat_refused: return "refused by shim's SBAT check";
    case EfiImageRule::allowed_by_db_certificate:
      return "allowed: signature " + std::to_string(s->index) + " verifies against db certificate \"" +
             s->allowed_certificate + "\"" + at;
    case EfiImageRule::allowed_by_db_hash:
      return "allowed: Authenticode hash in db as " + efi_type_name(v.entry->type) + at;
    case EfiImageRule::not_allowed_by_db:
      return "refused: not allowed by db (no signature verifies against a db certificate, hash not in db)";
  }
  return "?";
}

nlohmann::json verdict_json(const EfiImageVerdict& v) {
  nlohmann::json sigs = nlohmann::json::array();
  for (const auto& s : v.signatures)
    sigs.push_back(
        {{"index", s.index},
         {"signer", s.signer},
         {"digest_algorithm", s.digest_algorithm},
         {"digest_matches", s.digest_matches},
         {"forbidden_by", entry_json(s.forbidden_by)},
         {"forbidden_certificate", s.forbidden_certificate},
         {"revocation_time", s.revocation_time ? nlohmann::json(s.revocation_time->str()) : nlohmann::json(nullptr)},
         {"allowed_by", entry_json(s.allowed_by)},
         {"allowed_certificate", s.allowed_certificate}});
  nlohmann::json sbat = nullptr;
  if (v.sbat_checked) {
    nlohmann::json rows = nlohmann::json::array(), refused = nlohmann::json::array();
    for (const auto& r : v.sbat)
      rows.push_back({{"component", r.component},
                      {"generation", r.generation},
                      {"vendor", r.vendor},
                      {"package", r.package},
                      {"version", r.version},
                      {"url", r.url}});
    for (const auto& r : v.sbat_refusals)
      refused.push_back(
          {{"component", r.component}, {"generation", r.generation}, {"level_generation", r.level_generation}});
    sbat = {{"rows", std::move(rows)}, {"refused", std::move(refused)}};
  }
  return {{"path", v.file},
          {"sha256", to_hex(v.image.sha256)},
          {"verdict", v.refused ? "refused" : "allowed"},
          {"refused", v.refused},
          {"rule", efi_image_rule_name(v.rule)},
          {"entry", entry_json(v.entry)},
          {"signatures", std::move(sigs)},
          {"sbat", std::move(sbat)},
          {"notes", v.notes}};
}

std::optional<EfiImagePolicy> load_policy(const CheckArgs& a) {
  EfiImagePolicy p;
  for (const auto& f : a.dbx) p.dbx.push_back(read_efi_database(f, a.arch));
  for (const auto& f : a.db) p.db.push_back(read_efi_database(f, a.arch));
  for (const auto& f : a.mok) p.mok.push_back(read_efi_database(f, a.arch));
  for (const auto* set : {&p.dbx, &p.db, &p.mok})
    for (const auto& d : *set)
      for (const auto& n : d.notes) complain(d.file, "note: " + n);
  if (!a.sbat_level.empty()) {
    const Bytes t = read_file(a.sbat_level, kMaxSmallFileSize);
    auto lv = parse_sbat_level(std::string_view(reinterpret_cast<const char*>(t.data()), t.size()));
    if (!lv) throw InputError(a.sbat_level + ": " + lv.error().message);
    p.sbat_level = std::move(lv).value();
  } else if (!a.sbat_level_from.empty()) {
    const Bytes shim = read_file(a.sbat_level_from);
    auto lv = sbat_level_of_shim(shim, a.sbat_policy == "previous" ? SbatPolicy::previous : SbatPolicy::latest);
    if (!lv) throw InputError(a.sbat_level_from + ": " + lv.error().message);
    p.sbat_level = std::move(lv).value();
  }
  return p;
}

int cmd_check(const CheckArgs& a) {
  if (!a.arch.empty() && !msft_dbx_arch(a.arch)) {
    complain("", "--arch must be x64, ia32, aarch64 or arm (amd64, x86, arm64)");
    return kExitUsage;
  }
  if (a.files.empty() && a.dirs.empty()) {
    complain("", "no EFI binary given (EFI... or -r ESP)");
    return kExitUsage;
  }
  EfiImagePolicy policy;
  policy = *load_policy(a);
  bool dir_error = false;
  std::vector<std::string> files = a.files;
  const auto found = pe_files_under(a.dirs, &dir_error);
  files.insert(files.end(), found.begin(), found.end());
  bool refused = false, failed = dir_error;
  // With --json, line N stays file N: a file not checked has {"path", "error"} (the reason
  // without the path; the message is on stderr).
  auto not_checked = [&](const std::string& f, const std::string& why) {
    failed = true;
    if (a.json) std::cout << dump({{"path", f}, {"error", why}}) << "\n";
  };
  for (const auto& f : files) {
    const auto g = guarded(f, [&] { return verify_efi_image_file(f, policy); });
    if (!g.value) {
      not_checked(f, g.reason);
      continue;
    }
    const Result<EfiImageVerdict>& r = *g.value;
    if (!r) {
      complain("", r.error().message);
      not_checked(f, without_path(f, r.error().message));
      continue;
    }
    const EfiImageVerdict& v = *r;
    refused = refused || v.refused;
    if (a.json) {
      std::cout << dump(verdict_json(v)) << "\n";
      continue;
    }
    std::cout << printable(f) << ": " << printable(verdict_text(v)) << "\n";
    std::cout << "  authenticode-sha256: " << to_hex(v.image.sha256) << "\n";
    if (v.sbat_checked) {
      for (const auto& x : v.sbat_refusals)
        std::cout << "  sbat: " << printable(x.component) << " generation " << x.generation << " is below the level's "
                  << x.level_generation << ": refused\n";
      if (v.sbat_refusals.empty() && !v.sbat.empty())
        std::cout << "  sbat: " << v.sbat.size() << " component" << (v.sbat.size() == 1 ? "" : "s")
                  << ", none below the level\n";
    }
    for (const auto& n : v.notes) std::cout << "  note: " << printable(n) << "\n";
  }
  if (failed) return kExitInput;
  return refused ? kExitVerdict : kExitOk;
}

int cmd_import_json(const CheckArgs& a) {
  const auto arch = msft_dbx_arch(a.arch);
  if (!arch) {
    complain("", "--arch must be x64, ia32, aarch64 or arm (amd64, x86, arm64)");
    return kExitUsage;
  }
  EfiDatabase db;
  Bytes lists;
  const Bytes text = read_file(a.a, kMaxSmallFileSize);
  const std::string dir = std::filesystem::path(a.a).parent_path().string();
  db = parse_msft_dbx_json(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()), *arch, a.a,
                           dir.empty() ? "." : dir);
  lists = efi_database_lists(db);
  if (const int rc = write_dbx_output(a.out, lists, {a.a}); rc != kExitOk) return rc;
  std::size_t hashes = 0, svns = 0, certs = 0;
  for (const auto& e : db.entries) {
    if (e.type == efi_guids::cert_x509) ++certs;
    else if (efi_svn_record(e.owner, e.data)) ++svns;
    else ++hashes;
  }
  for (const auto& n : db.notes) complain(a.a, "note: " + n);
  std::cerr << "modsign: " << printable(a.out) << ": " << db.entries.size() << " entries for " << *arch << ": "
            << hashes << " EFI_CERT_SHA256 image hashes, " << svns << " SVN records, " << certs
            << " EFI_CERT_X509 certificates\n";
  return kExitOk;
}

void print_entries(const std::string& title, const std::string& file, const std::vector<EfiDatabaseEntry>& es) {
  std::cout << title << " (" << printable(file) << "): " << es.size() << "\n";
  for (const auto& e : es) {
    std::string what;
    if (const auto svn = efi_svn_record(e.owner, e.data)) what = "SVN record " + svn_text(*svn);
    else if (e.type == efi_guids::cert_x509) what = "\"" + e.certificate + "\"";
    else what = to_hex(e.data);
    std::cout << "  " << efi_type_name(e.type) << " " << what << " (" << printable(where(e)) << ")\n";
  }
}

int cmd_diff(const CheckArgs& a) {
  if (!a.arch.empty() && !msft_dbx_arch(a.arch)) {
    complain("", "--arch must be x64, ia32, aarch64 or arm (amd64, x86, arm64)");
    return kExitUsage;
  }
  EfiDatabaseDiff d;
  d = diff_efi_databases(read_efi_database(a.a, a.arch), read_efi_database(a.b, a.arch));
  if (a.json) {
    nlohmann::json ja = nlohmann::json::array(), jb = nlohmann::json::array();
    for (const auto& e : d.only_in_a) ja.push_back(entry_json(e));
    for (const auto& e : d.only_in_b) jb.push_back(entry_json(e));
    std::cout << dump({{"a", a.a},
                       {"b", a.b},
                       {"equal", d.equal()},
                       {"common", d.common},
                       {"only_in_a", std::move(ja)},
                       {"only_in_b", std::move(jb)}})
              << "\n";
  } else {
    print_entries("only in A", a.a, d.only_in_a);
    print_entries("only in B", a.b, d.only_in_b);
    std::cout << "in both: " << d.common << "\n";
  }
  return d.equal() ? kExitOk : kExitVerdict;
}

}  // namespace

void add_dbx_check_commands(CLI::App& dbx, Commands& subs) {
  auto a = std::make_shared<CheckArgs>();
  const std::string arch_help =
      "x64|ia32|aarch64|arm (amd64, x86, arm64): the architecture taken from a Microsoft JSON list";

  auto* check = dbx.add_subcommand("check", "what UEFI firmware (and shim's SBAT check) decides for EFI binaries");
  check
      ->add_option("--dbx", a->dbx,
                   "forbidden signature database (ESL, efivarfs copy, auth2 update or Microsoft JSON; repeatable)")
      ->required()
      ->allow_extra_args(false);
  check->add_option("--db", a->db, "allowed signature database (same forms; repeatable)")->allow_extra_args(false);
  check->add_option("--mok", a->mok, "MokListRT: what shim also admits (same forms; repeatable)")
      ->allow_extra_args(false);
  check->add_option("--arch", a->arch, arch_help + " (default: every architecture)");
  auto* lvl = check->add_option("--sbat-level", a->sbat_level,
                                "SbatLevel variable text (sbat,1,DATE then component,generation lines)");
  check
      ->add_option("--sbat-level-from", a->sbat_level_from,
                   "take the SBAT level from this shim binary's .sbatlevel section")
      ->excludes(lvl);
  check->add_option("--sbat-policy", a->sbat_policy, "latest|previous: which .sbatlevel level --sbat-level-from takes")
      ->check(CLI::IsMember({"latest", "previous"}))
      ->capture_default_str();
  check->add_option("-r", a->dirs, "also every PE file (MZ) under ESP (recursive, sorted)")->allow_extra_args(false);
  add_json_flag(check, a->json, "binary");
  check->add_option("EFI", a->files, "EFI binaries");
  subs.emplace_back(check, [a] { return cmd_check(*a); });

  auto* imp =
      dbx.add_subcommand("import-json", "write Microsoft's dbx_info_msft_*.json list as an EFI_SIGNATURE_LIST file");
  imp->add_option("--arch", a->arch, arch_help)->required();
  add_out_option(imp, a->out, "output file (bare EFI_SIGNATURE_LISTs)")->required();
  imp->add_option("JSON", a->a, "dbx_info_msft_*.json")->required();
  subs.emplace_back(imp, [a] { return cmd_import_json(*a); });

  auto* diff = dbx.add_subcommand("diff", "entries only in A and only in B (exit 1 when they differ)");
  diff->add_option("--arch", a->arch, arch_help + " (default: every architecture)");
  add_json_flag(diff, a->json, "");
  diff->add_option("A", a->a, "signature database (any form)")->required();
  diff->add_option("B", a->b, "signature database (any form)")->required();
  subs.emplace_back(diff, [a] { return cmd_diff(*a); });
}

}  // namespace modsign::cli
