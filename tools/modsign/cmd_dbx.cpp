// modsign dbx: list, merge and build UEFI signature databases (db, dbx, MokListRT,
// MokListXRT) as the kernel's security/integrity/platform_certs code reads them
// (hash: cmd_dbx_hash.cpp; check, import-json, diff: cmd_dbx_check.cpp).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <modsign/dbx.hpp>
#include <modsign/output.hpp>

#include "cli_common.hpp"
#include "cmd_dbx.hpp"
#include "common/file.hpp"
#include "options.hpp"
#include "registry.hpp"

namespace modsign::cli {

std::string svn_text(const EfiSvnRecord& r) {
  return r.application.str() + (r.application_name.empty() ? "" : " (" + r.application_name + ")") + ", version " +
         r.version();
}

nlohmann::json svn_json(const EfiSvnRecord& r) {
  return {
      {"application", r.application.str()},
      {"application_name", r.application_name.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.application_name)},
      {"major", r.major},
      {"minor", r.minor},
      {"version", r.version()}};
}

int write_dbx_output(const std::string& out, const Bytes& data, const std::vector<std::string>& inputs) {
  std::vector<KeptFile> kept;
  for (const auto& i : inputs) kept.push_back({i, "the input"});
  refuse_output_over(out, kept);
  write_file_atomic(out, data);
  return kExitOk;
}

namespace {

struct DbxArgs {
  bool json = false;
  std::string variable = "dbx";
  std::string form = "detect";
  std::string kernel = "v7.0";
  std::string file;
  std::vector<std::string> files;
  std::string out;
  std::string owner;
  std::string type = "sha256";
  std::vector<std::string> hexes;
};

std::string err_text(const Error& e) { return std::string(errno_name(e.code)) + ": " + e.message; }

std::string form_text(EfiContainer c) {
  switch (c) {
    case EfiContainer::auth2: return "auth2 (EFI_VARIABLE_AUTHENTICATION_2)";
    case EfiContainer::efivarfs: return "efivarfs (attributes + data)";
    default: return "esl (EFI_SIGNATURE_LIST data)";
  }
}

std::string hex32(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

/// Stands for the "lists" array in the JSON of `dbx list` until it is streamed in its place.
const char* const kListsMarker = "\x01lists";

/// One entry of `dbx list --json`.
nlohmann::json entry_json(const EfiSignatureEntry& e, const EfiListedEntry& le, std::size_t ei) {
  const EfiEntryEffect& ef = le.effect;
  nlohmann::json jent{{"index", ei + 1},
                      {"offset", e.offset},
                      {"owner", e.owner.str()},
                      {"data_length", e.data.size()},
                      {"kind", efi_entry_kind_name(ef.kind)},
                      {"kernel_key", ef.text},
                      {"never_matches", ef.never_matches}};
  jent["owner_name"] = std::string(efi_guid_name(e.owner));
  jent["key_error"] = ef.key_error == KErr::none ? nlohmann::json(nullptr) : nlohmann::json(errno_name(ef.key_error));
  jent["description"] = ef.description.empty() ? nlohmann::json(nullptr) : nlohmann::json(ef.description);
  jent["svn"] = le.svn ? svn_json(*le.svn) : nlohmann::json(nullptr);
  jent["matches_no_file_hash"] = le.svn.has_value();
  const bool is_x509 = le.certificate || !le.certificate_error.empty();
  if (le.certificate) {
    const auto& c = *le.certificate;
    jent["certificate"] = {{"subject", c.subject}, {"sha256", c.sha256}, {"tbs_sha256", c.tbs_sha256}};
  } else if (is_x509) {
    jent["certificate"] = nullptr;
    jent["certificate_error"] = le.certificate_error;
  }
  if (!is_x509) jent["data"] = to_hex(e.data);
  return jent;
}

/// One entry of `dbx list` (text): "  entry L.E: owner GUID: DATA -> KEY".
std::string entry_line(const EfiSignatureEntry& e, const EfiListedEntry& le, std::size_t li, std::size_t ei) {
  const EfiEntryEffect& ef = le.effect;
  std::string data;
  if (le.certificate) {
    data = "X.509 \"" + le.certificate->subject + "\", SHA-256 fingerprint " + le.certificate->sha256;
  } else if (!le.certificate_error.empty()) {
    data = std::to_string(e.data.size()) + " bytes, not a certificate (" + le.certificate_error + ")";
  } else if (le.svn) {
    data = "SVN record: " + svn_text(*le.svn);
  } else if (e.data.size() <= 64) {
    data = to_hex(e.data);
  } else {
    data = std::to_string(e.data.size()) + " bytes";
  }
  return "  entry " + std::to_string(li + 1) + "." + std::to_string(ei + 1) + ": owner " + e.owner.str() + ": " + data +
         " -> " + ef.text + (le.svn ? " (matches no file hash)" : "");
}

int cmd_list(const DbxArgs& a) {
  const auto form = parse_efi_container(a.form);
  const auto var = parse_efi_variable(a.variable);
  if (!form || !var) {
    complain("", !form ? "--form must be detect, esl, efivarfs or auth2"
                       : "--variable must be db, dbx, MokListRT or MokListXRT");
    return kExitUsage;
  }
  const auto profile = public_profile(a.kernel);
  EfiListing ls;
  ls = list_efi_variable(read_efi_variable_file(a.file, *form), *var, profile);
  const EfiVariableFile& vf = ls.file;
  const EfiSignatureLists& pl = vf.lists;
  const EfiListingSummary& sum = ls.summary;

  nlohmann::json j{{"path", a.file},
                   {"form", efi_container_name(vf.form)},
                   {"variable", efi_variable_name(*var)},
                   {"payload_offset", vf.payload_offset}};
  j["attributes"] = vf.attributes ? nlohmann::json(*vf.attributes) : nlohmann::json(nullptr);
  if (vf.auth) {
    const auto& au = *vf.auth;
    j["auth2"] = {{"timestamp", au.timestamp.str()},
                  {"timestamp_hex", to_hex(au.timestamp.bytes())},
                  {"dw_length", au.dw_length},
                  {"revision", au.revision},
                  {"certificate_type", au.certificate_type},
                  {"cert_type", au.cert_type.str()},
                  {"pkcs7_offset", au.pkcs7_offset},
                  {"pkcs7_length", au.pkcs7.size()}};
  } else {
    j["auth2"] = nullptr;
  }
  // The lists and entries are written as they are rendered (a 16 MiB file holds 350,000
  // entries: a JSON tree of them took over 1 GB): JSON as the sorted keys of `j` with the
  // "lists" array streamed in its place, text as lines between the header and the notes.
  auto emit_lists = [&] {
    std::size_t k = 0;  // index into ls.entries (same order as the lists' entries)
    for (std::size_t li = 0; li < pl.lists.size(); ++li) {
      const auto& l = pl.lists[li];
      if (a.json) {
        const nlohmann::json jlist{{"index", li + 1},
                                   {"type", efi_type_name(l.type)},
                                   {"type_guid", l.type.str()},
                                   {"offset", l.offset},
                                   {"list_size", l.list_size},
                                   {"header_size", l.header_size},
                                   {"signature_size", l.signature_size}};
        std::cout << (li ? "," : "") << "{\"entries\":[";
        for (std::size_t ei = 0; ei < l.entries.size(); ++ei, ++k)
          std::cout << (ei ? "," : "") << dump(entry_json(l.entries[ei], ls.entries[k], ei));
        std::cout << "]," << dump(jlist).substr(1);  // "entries" sorts first
      } else {
        std::cout << printable("list " + std::to_string(li + 1) + ": " + efi_type_name(l.type) + ", byte offset " +
                               std::to_string(l.offset) + ", " + std::to_string(l.entries.size()) + " entr" +
                               (l.entries.size() == 1 ? "y" : "ies") + " of " + std::to_string(l.signature_size) +
                               " bytes" + (l.header_size ? ", header " + std::to_string(l.header_size) + " bytes" : ""))
                  << "\n";
        for (std::size_t ei = 0; ei < l.entries.size(); ++ei, ++k)
          std::cout << printable(entry_line(l.entries[ei], ls.entries[k], li, ei)) << "\n";
      }
    }
  };
  j["lists"] = kListsMarker;
  j["notes"] = ls.notes;
  if (pl.error) {
    j["error"] = {{"errno", errno_name(pl.error->code)}, {"message", pl.error->message}, {"offset", pl.error_offset}};
  } else {
    j["error"] = nullptr;
  }
  j["kernel_status"] = pl.error ? -static_cast<int>(pl.error->code) : 0;
  j["summary"] = {{"lists", sum.lists},
                  {"entries", sum.entries},
                  {"bin", sum.bin},
                  {"tbs", sum.tbs},
                  {"tbs_never_matching", sum.tbs_never_matching},
                  {"revoked", sum.revoked},
                  {"platform", sum.platform},
                  {"ignored", sum.ignored},
                  {"svn", sum.svn}};

  if (a.json) {
    // Every quote inside a string value is escaped, so the key and marker occur once.
    const std::string text = dump(j), key = ",\"lists\":" + dump(kListsMarker);
    const std::size_t at = text.find(key);
    std::cout << text.substr(0, at) << ",\"lists\":[";
    emit_lists();
    std::cout << "]" << text.substr(at + key.size()) << "\n";
  } else {
    std::cout << "file: " << printable(a.file) << "\n";
    std::cout << "form: " << form_text(vf.form) << "\n";
    if (vf.attributes) std::cout << "attributes: " << hex32(*vf.attributes) << "\n";
    if (vf.auth) {
      std::cout << "timestamp: " << vf.auth->timestamp.str() << "\n";
      std::cout << "pkcs7: " << vf.auth->pkcs7.size() << " bytes at byte offset " << vf.auth->pkcs7_offset
                << " (dwLength " << vf.auth->dw_length << ", not verified)\n";
    }
    std::cout << "payload: byte offset " << vf.payload_offset << "\n";
    std::cout << "variable: " << efi_variable_name(*var) << "\n";
    // Subjects and messages come from the file: printed through printable() (C0/C1 controls).
    emit_lists();
    for (const auto& n : ls.notes) std::cout << "note: " << printable(n) << "\n";
    std::cout << "summary: " << sum.lists << " list" << (sum.lists == 1 ? "" : "s") << ", " << sum.entries << " entr"
              << (sum.entries == 1 ? "y" : "ies") << ": " << sum.bin << " bin, " << sum.tbs << " tbs ("
              << sum.tbs_never_matching << " never matching), " << sum.revoked << " revoked, " << sum.platform
              << " platform, " << sum.ignored << " ignored"
              << (sum.svn ? "; " + std::to_string(sum.svn) + " of the bin entries are SVN records" : std::string())
              << "\n";
  }
  if (pl.error) {
    complain(a.file,
             err_text(*pl.error) + (pl.lists.empty() ? " (the kernel stops here; nothing was loaded)"
                                                     : " (the kernel stops here; the entries above stay loaded)"));
    return kExitInput;
  }
  return kExitOk;
}

int cmd_merge(const DbxArgs& a) {
  const auto form = parse_efi_container(a.form);
  if (!form) {
    complain("", "--form must be detect, esl, efivarfs or auth2");
    return kExitUsage;
  }
  EfiMerge m;
  m = merge_efi_variable_files(a.files, *form);
  if (const int rc = write_dbx_output(a.out, m.lists) /* merging into an input is allowed */; rc != kExitOk) return rc;
  for (const auto& s : m.notes) complain("", s);
  std::cerr << "modsign: " << printable(a.out) << ": " << counted(m.entries, "entry", "entries") << " in "
            << counted(m.list_count, "list", "lists") << " from " << m.input_entries << " in "
            << counted(a.files.size(), "file", "files") << "; " << counted(m.duplicates, "duplicate", "duplicates")
            << " removed\n";
  return kExitOk;
}

std::optional<EfiGuid> owner_of(const std::string& s) {
  auto g = EfiGuid::parse(s);
  if (!g) complain("", "--owner: not a GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx): " + s);
  return g;
}

int cmd_add_hash(const DbxArgs& a) {
  const auto owner = owner_of(a.owner);
  if (!owner) return kExitUsage;
  std::vector<Bytes> hashes;
  for (const auto& h : a.hexes) {
    try {
      if (h.size() != 64) throw std::invalid_argument("size");
      hashes.push_back(from_hex(h));
    } catch (const std::exception&) {
      complain("", "not a SHA-256 hash (64 hex digits): " + h);
      return kExitUsage;
    }
  }
  return write_dbx_output(a.out, efi_sha256_list(hashes, *owner));
}

int cmd_add_cert(const DbxArgs& a) {
  const auto owner = owner_of(a.owner);
  if (!owner) return kExitUsage;
  Bytes lists;
  lists = efi_x509_lists_from_files(a.files, *owner);
  return write_dbx_output(a.out, lists, a.files);
}

}  // namespace

namespace {

Runner setup_dbx(CLI::App& dbx) {
  auto a = std::make_shared<DbxArgs>();
  dbx.require_subcommand(1);
  Commands subs;

  auto* list = dbx.add_subcommand("list", "every list and entry, and the kernel key each becomes");
  add_json_flag(list, a->json, "");
  list->add_option("--variable", a->variable, "db|dbx|MokListRT|MokListXRT: which kernel handler applies")
      ->capture_default_str();
  list->add_option("--form", a->form, "detect|esl|efivarfs|auth2: the file's container")->capture_default_str();
  add_kernel_option(list, a->kernel, "which certificates the kernel's X.509 parser accepts");
  list->add_option("FILE", a->file, "signature database file")->required();
  subs.emplace_back(list, [a] { return cmd_list(*a); });

  auto* merge = dbx.add_subcommand("merge", "merge files into one de-duplicated EFI_SIGNATURE_LIST file");
  add_out_option(merge, a->out, "output file (bare EFI_SIGNATURE_LISTs)", "--output")->required();
  merge->add_option("--form", a->form, "detect|esl|efivarfs|auth2: the inputs' container")->capture_default_str();
  merge->add_option("FILE", a->files, "input files")->required();
  subs.emplace_back(merge, [a] { return cmd_merge(*a); });

  auto* add_hash = dbx.add_subcommand("add-hash", "write an EFI_CERT_SHA256 list of the given hashes");
  add_hash->add_option("--owner", a->owner, "SignatureOwner GUID")->required();
  add_hash->add_option("--type", a->type, "hash type (only sha256)")
      ->check(CLI::IsMember({"sha256"}))
      ->capture_default_str();
  add_out_option(add_hash, a->out, "output file", "--output")->required();
  add_hash->add_option("HEX", a->hexes, "SHA-256 hashes, 64 hex digits each")->required();
  subs.emplace_back(add_hash, [a] { return cmd_add_hash(*a); });

  auto* add_cert = dbx.add_subcommand("add-cert", "write one EFI_CERT_X509 list per certificate");
  add_cert->add_option("--owner", a->owner, "SignatureOwner GUID")->required();
  add_out_option(add_cert, a->out, "output file", "--output")->required();
  add_cert->add_option("CERT", a->files, "certificates (PEM or DER)")->required();
  subs.emplace_back(add_cert, [a] { return cmd_add_cert(*a); });
  add_dbx_hash_command(dbx, subs);
  add_dbx_check_commands(dbx, subs);
  return run_selected(std::move(subs));
}

}  // namespace

const Registration kDbx{{"dbx", "UEFI db/dbx/MokList EFI_SIGNATURE_LISTs as the kernel loads them", setup_dbx}};

}  // namespace modsign::cli
