// modsign dbx hash: the Authenticode hash of EFI boot binaries (the value a dbx or db
// EFI_CERT_SHA256 entry holds) and the signatures they carry.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <modsign/authenticode.hpp>
#include <modsign/efi_image.hpp>

#include "cli_common.hpp"
#include "cmd_dbx.hpp"
#include "options.hpp"

namespace modsign::cli {

std::vector<std::string> pe_files_under(const std::vector<std::string>& dirs, bool* dir_error) {
  std::vector<std::string> out;
  for (const auto& d : dirs) {
    const auto entries = find_pe_files(d);
    for (const auto& e : entries) {
      if (e.kind == TreeEntry::Kind::regular) {
        out.push_back(e.path);
      } else {
        complain(e.path, tree_problem_text(e));
        *dir_error = true;
      }
    }
    if (entries.empty()) {
      complain(d, "no EFI binary (MZ) under it");
      *dir_error = true;
    }
  }
  return out;
}

namespace {

struct HashArgs {
  std::vector<std::string> files, dirs;
  bool json = false;
  std::string hash = "sha256";
};

const Bytes& chosen(const AuthenticodeInfo& i, const std::string& h) {
  if (h == "sha1") return i.sha1;
  if (h == "sha384") return i.sha384;
  if (h == "sha512") return i.sha512;
  return i.sha256;
}

nlohmann::json signature_json(const AuthenticodeSignature& s) {
  nlohmann::json certs = nlohmann::json::array();
  for (const auto& c : s.certificates)
    certs.push_back({{"subject", c.subject}, {"issuer", c.issuer}, {"serial", to_hex(c.serial)}});
  nlohmann::json j{{"offset", s.offset},
                   {"length", s.length},
                   {"revision", s.revision},
                   {"type", s.type},
                   {"error", s.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.error)},
                   {"signer_by_skid", s.signer_by_skid},
                   {"signer_issuer", s.signer_issuer},
                   {"signer_serial", to_hex(s.signer_serial)},
                   {"signer_skid", to_hex(s.signer_skid)},
                   {"digest_algorithm", s.digest_algorithm},
                   {"digest", to_hex(s.digest)},
                   {"matches", s.matches},
                   {"certificates", std::move(certs)}};
  return j;
}

void print_text(const std::string& file, const AuthenticodeInfo& info, const std::string& hash) {
  std::cout << to_hex(chosen(info, hash)) << "  " << printable(file) << "\n";
  std::cout << "  " << info.machine_name << ", " << (info.pe32_plus ? "PE32+" : "PE32") << ", " << info.file_size
            << " bytes, " << info.sections.size() << " section" << (info.sections.size() == 1 ? "" : "s") << "\n";
  if (info.signatures.empty()) std::cout << "  unsigned (no Attribute Certificate Table entry)\n";
  for (std::size_t i = 0; i < info.signatures.size(); ++i) {
    const auto& s = info.signatures[i];
    std::cout << "  signature " << i + 1 << ": WIN_CERTIFICATE at byte offset " << s.offset << ", " << s.length
              << " bytes";
    if (!s.error.empty()) {
      std::cout << ": " << printable(s.error) << "\n";
      continue;
    }
    // The SignerInfo names its signer by issuer and serial: print the certificate it names
    // (its subject) when the signature carries it, so the line is not read as the issuer.
    std::string signer;
    if (s.signer_by_skid) {
      signer = "subjectKeyIdentifier " + to_hex(s.signer_skid);
    } else {
      for (const auto& c : s.certificates)
        if (c.issuer == s.signer_issuer && c.serial == s.signer_serial) signer = c.subject + " (";
      signer += (signer.empty() ? "issuer " : "issued by ") + s.signer_issuer + ", serial " + to_hex(s.signer_serial) +
                (signer.empty() ? "; certificate not in the signature" : ")");
    }
    std::cout << "\n    signer: " << printable(signer) << "\n    SpcIndirectDataContent "
              << printable(s.digest_algorithm) << " " << to_hex(s.digest)
              << (s.matches ? " (matches the image)" : " (does NOT match the image)") << "\n";
    for (std::size_t c = 0; c < s.certificates.size(); ++c)
      std::cout << "    certificate " << c + 1 << ": " << printable(s.certificates[c].subject)
                << "\n      issuer: " << printable(s.certificates[c].issuer) << "\n";
  }
}

int cmd_hash(const HashArgs& a) {
  if (a.files.empty() && a.dirs.empty()) {
    complain("", "no EFI binary given (FILE... or -r DIR)");
    return kExitUsage;
  }
  bool dir_error = false;
  std::vector<std::string> files = a.files;
  const auto found = pe_files_under(a.dirs, &dir_error);
  files.insert(files.end(), found.begin(), found.end());
  int rc = dir_error ? kExitInput : kExitOk;
  // With --json, line N stays file N: a file not hashed has {"path", "error"} (the reason
  // without the path; the message is on stderr).
  auto failed = [&](const std::string& f, int status, const std::string& why) {
    rc = std::max(rc, status);
    if (a.json) std::cout << dump({{"path", f}, {"error", why}}) << "\n";
  };
  for (const auto& f : files) {
    const auto g = guarded(f, [&] { return authenticode_file(f); });
    if (!g.value) {
      failed(f, g.status, g.reason);
      continue;
    }
    const Result<AuthenticodeInfo>& r = *g.value;
    if (!r) {
      complain("", r.error().message);
      failed(f, kExitInput, without_path(f, r.error().message));
      continue;
    }
    const AuthenticodeInfo& info = *r;
    if (!a.json) {
      print_text(f, info, a.hash);
      continue;
    }
    nlohmann::json sigs = nlohmann::json::array();
    for (const auto& s : info.signatures) sigs.push_back(signature_json(s));
    nlohmann::json sections = nlohmann::json::array();
    for (const auto& s : info.sections)
      sections.push_back({{"name", s.name},
                          {"long_name", s.long_name.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.long_name)},
                          {"pointer_to_raw_data", s.pointer_to_raw_data},
                          {"size_of_raw_data", s.size_of_raw_data}});
    std::cout << dump({{"path", f},
                       {"hash", a.hash},
                       {"authenticode", to_hex(chosen(info, a.hash))},
                       {"sha256", to_hex(info.sha256)},
                       {"sha1", to_hex(info.sha1)},
                       {"sha384", to_hex(info.sha384)},
                       {"sha512", to_hex(info.sha512)},
                       {"file_size", info.file_size},
                       {"machine", info.machine_name},
                       {"pe32_plus", info.pe32_plus},
                       {"sections", std::move(sections)},
                       {"certificate_table_offset", info.certificate_table_offset},
                       {"certificate_table_size", info.certificate_table_size},
                       {"bytes_after_certificate_table", info.bytes_after_certificate_table},
                       {"signatures", std::move(sigs)}})
              << "\n";
  }
  return rc;
}

}  // namespace

void add_dbx_hash_command(CLI::App& dbx, Commands& subs) {
  auto a = std::make_shared<HashArgs>();
  auto* hash =
      dbx.add_subcommand("hash", "Authenticode hash of EFI binaries (the value of a dbx entry) and their signatures");
  add_json_flag(hash, a->json, "binary");
  hash->add_option("--hash", a->hash, "sha256|sha1|sha384|sha512: which Authenticode digest to print first")
      ->check(CLI::IsMember({"sha256", "sha1", "sha384", "sha512"}))
      ->capture_default_str();
  hash->add_option("-r", a->dirs, "also every PE file (MZ) under DIR, e.g. a mounted ESP (recursive, sorted)")
      ->allow_extra_args(false);
  hash->add_option("FILE", a->files, "EFI binaries (shim, GRUB, systemd-boot, a vmlinuz with the EFI stub)");
  subs.emplace_back(hash, [a] { return cmd_hash(*a); });
}

}  // namespace modsign::cli
