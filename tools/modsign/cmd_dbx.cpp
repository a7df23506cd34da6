// modsign dbx: list, merge and build UEFI signature databases (db, dbx, MokListRT,
// MokListXRT) as the kernel's security/integrity/platform_certs code reads them.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "blacklist/efi.hpp"
#include "cli_common.hpp"
#include "common/file.hpp"
#include "crypto/algorithms.hpp"
#include "crypto/crypto.hpp"
#include "options.hpp"
#include "registry.hpp"

namespace modsign::cli {

namespace efi = blacklist::efi;

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

/// Read and split one variable file; complains and returns nullopt on an I/O or container error.
std::optional<efi::VariableFile> load(const std::string& path, efi::Container form) {
  Bytes b;
  try {
    b = read_file(path, kMaxSmallFileSize);
  } catch (const IoError& e) {
    complain("", e.what());
    return std::nullopt;
  }
  auto vf = efi::parse_variable_file(b, form);
  if (!vf) {
    complain(path, err_text(vf.error()));
    return std::nullopt;
  }
  return std::move(vf).value();
}

std::string form_text(efi::Container c) {
  switch (c) {
    case efi::Container::auth2: return "auth2 (EFI_VARIABLE_AUTHENTICATION_2)";
    case efi::Container::efivarfs: return "efivarfs (attributes + data)";
    default: return "esl (EFI_SIGNATURE_LIST data)";
  }
}

std::string hex32(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

int cmd_list(const DbxArgs& a) {
  const auto form = efi::parse_container(a.form);
  const auto var = efi::parse_variable(a.variable);
  if (!form || !var) {
    complain("", !form ? "--form must be detect, esl, efivarfs or auth2" : "--variable must be db, dbx, MokListRT or MokListXRT");
    return kExitUsage;
  }
  const auto profile = kernel_profile(a.kernel);
  if (!profile) return kExitUsage;
  auto vf = load(a.file, *form);
  if (!vf) return kExitInput;
  const efi::ParsedLists& pl = vf->lists;
  const efi::VariableEffects fx = efi::apply_handlers(pl, *var, *profile);

  nlohmann::json j{{"file", a.file}, {"form", efi::container_name(vf->form)}, {"variable", efi::variable_name(*var)},
                   {"payload_offset", vf->payload_offset}};
  j["attributes"] = vf->attributes ? nlohmann::json(*vf->attributes) : nlohmann::json(nullptr);
  if (vf->auth) {
    const auto& au = *vf->auth;
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
  std::size_t counts[5] = {};
  std::size_t never = 0;
  nlohmann::json jl = nlohmann::json::array();
  std::vector<std::string> lines;
  std::size_t k = 0;  // index into fx.entries (same order as the lists' entries)
  for (std::size_t li = 0; li < pl.lists.size(); ++li) {
    const auto& l = pl.lists[li];
    nlohmann::json jlist{{"index", li + 1},
                         {"type", efi::type_name(l.type)},
                         {"type_guid", l.type.str()},
                         {"offset", l.offset},
                         {"list_size", l.list_size},
                         {"header_size", l.header_size},
                         {"signature_size", l.signature_size}};
    // Only the chosen output is kept: a 16 MiB file can hold a million entries.
    if (!a.json)
      lines.push_back("list " + std::to_string(li + 1) + ": " + efi::type_name(l.type) + ", byte offset " +
                    std::to_string(l.offset) + ", " + std::to_string(l.entries.size()) + " entr" +
                    (l.entries.size() == 1 ? "y" : "ies") + " of " + std::to_string(l.signature_size) + " bytes" +
                    (l.header_size ? ", header " + std::to_string(l.header_size) + " bytes" : ""));
    nlohmann::json je = nlohmann::json::array();
    for (std::size_t ei = 0; ei < l.entries.size(); ++ei, ++k) {
      const auto& e = l.entries[ei];
      const efi::EntryEffect& ef = fx.entries[k];
      ++counts[static_cast<int>(ef.kind)];
      if (ef.never_matches) ++never;
      nlohmann::json jent{{"index", ei + 1},
                          {"offset", e.offset},
                          {"owner", e.owner.str()},
                          {"data_length", e.data.size()},
                          {"kind", efi::entry_kind_name(ef.kind)},
                          {"kernel_key", ef.text},
                          {"never_matches", ef.never_matches}};
      jent["owner_name"] = std::string(efi::guid_name(e.owner));
      jent["key_error"] = ef.key_error == KErr::none ? nlohmann::json(nullptr) : nlohmann::json(errno_name(ef.key_error));
      jent["description"] = ef.description.empty() ? nlohmann::json(nullptr) : nlohmann::json(ef.description);
      std::string data;
      const bool is_x509 = l.type == efi::guids::cert_x509;
      if (is_x509) {
        std::size_t trailing = 0;
        auto c = ef.cert ? Result<crypto::Certificate>(*ef.cert) : efi::parse_entry_certificate(e.data, trailing);
        if (c) {
          const std::string fp = to_hex(crypto::digest(crypto::HashAlgo::sha256, c->der()));
          const std::string tbs = to_hex(crypto::digest(crypto::HashAlgo::sha256, c->tbs()));
          data = "X.509 \"" + c->subject_text() + "\", SHA-256 fingerprint " + fp;
          jent["certificate"] = {{"subject", c->subject_text()}, {"sha256", fp}, {"tbs_sha256", tbs}};
        } else {
          data = std::to_string(e.data.size()) + " bytes, not a certificate (" + err_text(c.error()) + ")";
          jent["certificate"] = nullptr;
          jent["certificate_error"] = err_text(c.error());
        }
      } else if (e.data.size() <= 64) {
        data = to_hex(e.data);
      } else {
        data = std::to_string(e.data.size()) + " bytes";
      }
      if (!is_x509) jent["data"] = to_hex(e.data);
      if (!a.json)
        lines.push_back("  entry " + std::to_string(li + 1) + "." + std::to_string(ei + 1) + ": owner " + e.owner.str() +
                      ": " + data + " -> " + ef.text);
      if (a.json) je.push_back(std::move(jent));
    }
    jlist["entries"] = std::move(je);
    jl.push_back(std::move(jlist));
  }
  j["lists"] = std::move(jl);
  j["notes"] = fx.notes;
  if (pl.error) {
    j["error"] = {{"errno", errno_name(pl.error->code)}, {"message", pl.error->message}, {"offset", pl.error_offset}};
  } else {
    j["error"] = nullptr;
  }
  j["kernel_status"] = pl.error ? -static_cast<int>(pl.error->code) : 0;
  const std::size_t nentries = fx.entries.size();
  j["summary"] = {{"lists", pl.lists.size()},
                  {"entries", nentries},
                  {"bin", counts[static_cast<int>(efi::EntryKind::binary_hash)]},
                  {"tbs", counts[static_cast<int>(efi::EntryKind::tbs_hash)]},
                  {"tbs_never_matching", never},
                  {"revoked", counts[static_cast<int>(efi::EntryKind::revoked_certificate)]},
                  {"platform", counts[static_cast<int>(efi::EntryKind::platform_certificate)]},
                  {"ignored", counts[static_cast<int>(efi::EntryKind::ignored)]}};

  if (a.json) {
    std::cout << dump(j) << "\n";
  } else {
    std::cout << "file: " << printable(a.file) << "\n";
    std::cout << "form: " << form_text(vf->form) << "\n";
    if (vf->attributes) std::cout << "attributes: " << hex32(*vf->attributes) << "\n";
    if (vf->auth) {
      std::cout << "timestamp: " << vf->auth->timestamp.str() << "\n";
      std::cout << "pkcs7: " << vf->auth->pkcs7.size() << " bytes at byte offset " << vf->auth->pkcs7_offset
                << " (dwLength " << vf->auth->dw_length << ", not verified)\n";
    }
    std::cout << "payload: byte offset " << vf->payload_offset << "\n";
    std::cout << "variable: " << efi::variable_name(*var) << "\n";
    // Subjects and messages come from the file: printed through printable() (C0/C1 controls).
    for (const auto& s : lines) std::cout << printable(s) << "\n";
    for (const auto& n : fx.notes) std::cout << "note: " << printable(n) << "\n";
    std::cout << "summary: " << pl.lists.size() << " list" << (pl.lists.size() == 1 ? "" : "s") << ", " << nentries
              << " entr" << (nentries == 1 ? "y" : "ies") << ": " << j["summary"]["bin"].get<std::size_t>() << " bin, "
              << j["summary"]["tbs"].get<std::size_t>() << " tbs (" << never << " never matching), "
              << j["summary"]["revoked"].get<std::size_t>() << " revoked, "
              << j["summary"]["platform"].get<std::size_t>() << " platform, "
              << j["summary"]["ignored"].get<std::size_t>() << " ignored\n";
  }
  if (pl.error) {
    complain(a.file, err_text(*pl.error) + (pl.lists.empty() ? " (the kernel stops here; nothing was loaded)"
                                                               : " (the kernel stops here; the entries above stay loaded)"));
    return kExitInput;
  }
  return kExitOk;
}

int write_out(const std::string& out, const Bytes& data) {
  try {
    write_file_atomic(out, data);
  } catch (const IoError& e) {
    complain("", e.what());
    return kExitInput;
  }
  return kExitOk;
}

int cmd_merge(const DbxArgs& a) {
  const auto form = efi::parse_container(a.form);
  if (!form) {
    complain("", "--form must be detect, esl, efivarfs or auth2");
    return kExitUsage;
  }
  efi::Merge m;
  std::size_t total = 0;
  for (const auto& f : a.files) {
    auto vf = load(f, *form);
    if (!vf) return kExitInput;
    if (vf->lists.error) {
      complain(f, err_text(*vf->lists.error));
      return kExitInput;
    }
    // An entry of signature_size 16 (no data) parses, but the kernel refuses it (EINVAL) and
    // group_entries()/efitools cannot write it: refuse the merge before OUT is touched.
    for (std::size_t li = 0; li < vf->lists.lists.size(); ++li) {
      const auto& l = vf->lists.lists[li];
      if (!l.entries.empty() && l.entries.front().data.empty()) {
        complain(f, "list " + std::to_string(li + 1) + " (" + efi::type_name(l.type) + ", byte offset " +
                        std::to_string(l.offset) + "): signature_size 16, entries without data; not merged");
        return kExitInput;
      }
      total += l.entries.size();
    }
    m.add(vf->lists, f);
  }
  const Bytes out = m.serialize();
  if (const int rc = write_out(a.out, out); rc != kExitOk) return rc;
  for (const auto& s : m.owner_conflicts) complain("", s);
  for (const auto& s : m.dropped_headers) complain("", s);
  const auto lists = efi::group_entries(m.entries).size();
  std::cerr << "modsign: " << printable(a.out) << ": " << m.entries.size() << " entries in " << lists << " list"
            << (lists == 1 ? "" : "s") << " from " << total << " in " << a.files.size() << " file"
            << (a.files.size() == 1 ? "" : "s") << "; " << m.duplicates << " duplicate"
            << (m.duplicates == 1 ? "" : "s") << " removed\n";
  return kExitOk;
}

std::optional<efi::Guid> owner_of(const std::string& s) {
  auto g = efi::Guid::parse(s);
  if (!g) complain("", "--owner: not a GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx): " + s);
  return g;
}

int cmd_add_hash(const DbxArgs& a) {
  const auto owner = owner_of(a.owner);
  if (!owner) return kExitUsage;
  std::vector<efi::FlatEntry> entries;
  for (const auto& h : a.hexes) {
    Bytes b;
    try {
      if (h.size() != 64) throw std::invalid_argument("size");
      b = from_hex(h);
    } catch (const std::exception&) {
      complain("", "not a SHA-256 hash (64 hex digits): " + h);
      return kExitUsage;
    }
    entries.push_back({efi::guids::cert_sha256, *owner, std::move(b)});
  }
  return write_out(a.out, efi::write_lists(efi::group_entries(entries)));
}

int cmd_add_cert(const DbxArgs& a) {
  const auto owner = owner_of(a.owner);
  if (!owner) return kExitUsage;
  auto certs = load_certs(a.files);
  if (!certs) return kExitInput;
  std::vector<efi::FlatEntry> entries;
  for (const auto& c : *certs) entries.push_back({efi::guids::cert_x509, *owner, c.der()});
  return write_out(a.out, efi::write_lists(efi::group_entries(entries)));
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
  add_hash->add_option("--type", a->type, "hash type (only sha256)")->check(CLI::IsMember({"sha256"}))->capture_default_str();
  add_out_option(add_hash, a->out, "output file", "--output")->required();
  add_hash->add_option("HEX", a->hexes, "SHA-256 hashes, 64 hex digits each")->required();
  subs.emplace_back(add_hash, [a] { return cmd_add_hash(*a); });

  auto* add_cert = dbx.add_subcommand("add-cert", "write one EFI_CERT_X509 list per certificate");
  add_cert->add_option("--owner", a->owner, "SignatureOwner GUID")->required();
  add_out_option(add_cert, a->out, "output file", "--output")->required();
  add_cert->add_option("CERT", a->files, "certificates (PEM or DER)")->required();
  subs.emplace_back(add_cert, [a] { return cmd_add_cert(*a); });
  return run_selected(std::move(subs));
}

}  // namespace

const Registration kDbx{{"dbx", "UEFI db/dbx/MokList EFI_SIGNATURE_LISTs as the kernel loads them", setup_dbx}};

}  // namespace modsign::cli
