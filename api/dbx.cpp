// modsign — UEFI signature database files (include/modsign/dbx.hpp) over blacklist/efi_*.
#include "modsign/dbx.hpp"

#include "api/internal.hpp"
#include "blacklist/efi.hpp"
#include "blacklist/msft_dbx.hpp"
#include "common/file.hpp"
#include "crypto/algorithms.hpp"

namespace modsign {

namespace efi = blacklist::efi;

namespace {
std::string err_text(const Error& e) { return std::string(errno_name(e.code)) + ": " + e.message; }
}  // namespace

std::string_view efi_container_name(EfiContainer c) { return efi::container_name(c); }
std::optional<EfiContainer> parse_efi_container(std::string_view name) { return efi::parse_container(name); }
std::string_view efi_variable_name(EfiVariable v) { return efi::variable_name(v); }
std::optional<EfiVariable> parse_efi_variable(std::string_view name) { return efi::parse_variable(name); }
std::string_view efi_entry_kind_name(EfiEntryKind k) { return efi::entry_kind_name(k); }
std::string efi_type_name(const EfiGuid& type) { return efi::type_name(type); }
std::string_view efi_guid_name(const EfiGuid& g) { return efi::guid_name(g); }

EfiVariableFile parse_efi_variable_file(ByteView data, EfiContainer form, const std::string& name) {
  auto vf = efi::parse_variable_file(data, form);
  if (!vf) throw InputError(name + ": " + err_text(vf.error()));
  return std::move(vf).value();
}

EfiVariableFile read_efi_variable_file(const std::string& path, EfiContainer form) {
  const Bytes b = read_file(path, kMaxSmallFileSize);
  return parse_efi_variable_file(b, form, path);
}

EfiListing list_efi_variable(EfiVariableFile file, EfiVariable variable, const KernelProfile& profile) {
  EfiListing out;
  efi::VariableEffects fx = efi::apply_handlers(file.lists, variable, api::to_model(profile));
  out.variable = variable;
  out.notes = fx.notes;
  if (file.auth)
    for (auto& n : efi::timestamp_notes(file.auth->timestamp)) out.notes.push_back(std::move(n));
  out.summary.lists = file.lists.lists.size();
  out.summary.entries = fx.entries.size();
  out.entries.reserve(fx.entries.size());
  for (std::size_t k = 0; k < fx.entries.size(); ++k) {
    // Moved, not copied: a 16 MiB list has 350,000 entries, each with its strings.
    EfiListedEntry le{std::move(static_cast<EfiEntryEffect&>(fx.entries[k])), std::nullopt, ""};
    const EfiEntryEffect& ef = le.effect;
    const efi::SignatureList& l = file.lists.lists[ef.list];
    switch (ef.kind) {
      case EfiEntryKind::binary_hash: ++out.summary.bin; break;
      case EfiEntryKind::tbs_hash: ++out.summary.tbs; break;
      case EfiEntryKind::revoked_certificate: ++out.summary.revoked; break;
      case EfiEntryKind::platform_certificate: ++out.summary.platform; break;
      case EfiEntryKind::ignored: ++out.summary.ignored; break;
    }
    if (ef.never_matches) ++out.summary.tbs_never_matching;
    if (l.type == efi::guids::cert_x509) {
      std::size_t trailing = 0;
      auto c = fx.entries[k].cert ? Result<crypto::Certificate>(*fx.entries[k].cert)
                                  : efi::parse_entry_certificate(l.entries[ef.entry].data, trailing);
      if (c)
        le.certificate =
            EfiCertificateInfo{c->subject_text(), to_hex(crypto::digest(crypto::HashAlgo::sha256, c->der())),
                               to_hex(crypto::digest(crypto::HashAlgo::sha256, c->tbs()))};
      else le.certificate_error = err_text(c.error());
    }
    if (l.type == efi::guids::cert_sha256) {
      const auto& e = l.entries[ef.entry];
      le.svn = blacklist::msft_dbx::svn_record(e.owner, e.data);
      if (le.svn) ++out.summary.svn;
    }
    out.entries.push_back(std::move(le));
  }
  std::vector<efi::EntryEffect>().swap(fx.entries);
  out.file = std::move(file);
  return out;
}

EfiMerge merge_efi_variable_files(const std::vector<std::string>& files, EfiContainer form) {
  efi::Merge m;
  EfiMerge out;
  for (const auto& f : files) {
    const EfiVariableFile vf = read_efi_variable_file(f, form);
    if (vf.lists.error) throw InputError(f + ": " + err_text(*vf.lists.error));
    // An entry of signature_size 16 (no data) parses, but the kernel refuses it (EINVAL) and
    // no list written by group_entries() can hold it: the whole merge is refused.
    for (std::size_t li = 0; li < vf.lists.lists.size(); ++li) {
      const auto& l = vf.lists.lists[li];
      if (!l.entries.empty() && l.entries.front().data.empty())
        throw InputError(f + ": list " + std::to_string(li + 1) + " (" + efi::type_name(l.type) + ", byte offset " +
                         std::to_string(l.offset) + "): signature_size 16, entries without data; not merged");
      out.input_entries += l.entries.size();
    }
    m.add(vf.lists, f);
  }
  const auto lists = efi::group_entries(m.entries);
  out.lists = efi::write_lists(lists);
  out.entries = m.entries.size();
  out.list_count = lists.size();
  out.duplicates = m.duplicates;
  out.notes = m.owner_conflicts;
  out.notes.insert(out.notes.end(), m.dropped_headers.begin(), m.dropped_headers.end());
  return out;
}

Bytes write_efi_lists(const std::vector<EfiEntry>& entries) {
  if (entries.empty()) throw InputError("no entries to write");
  for (const auto& e : entries)
    if (e.data.empty()) throw InputError("an EFI_SIGNATURE_DATA without data cannot be written");
  return efi::write_lists(efi::group_entries(entries));
}

Result<Bytes> dbx_sha256_of_bin_key(const std::string& d) {
  if (!d.starts_with("bin:")) throw std::invalid_argument("not a bin: key: " + d);
  Bytes h = from_hex(std::string_view(d).substr(4));
  if (h.size() != 32)
    return make_error(KErr::einval,
                      d + " is a " + std::to_string(h.size()) +
                          "-byte hash: dbx carries bin: keys only as EFI_CERT_SHA256 (32 bytes); the kernel "
                          "ignores other hash types");
  return h;
}

Bytes efi_sha256_list(const std::vector<Bytes>& sha256, const EfiGuid& owner) {
  if (sha256.empty()) throw InputError("no SHA-256 hash given");
  std::vector<efi::FlatEntry> entries;
  for (const auto& h : sha256) {
    if (h.size() != 32) throw InputError("not a SHA-256 hash (64 hex digits): " + to_hex(h));
    entries.push_back({efi::guids::cert_sha256, owner, h});
  }
  return write_efi_lists(entries);
}

Bytes efi_x509_lists(const std::vector<Bytes>& certificates, const EfiGuid& owner) {
  if (certificates.empty()) throw InputError("no certificate given");
  std::vector<efi::FlatEntry> entries;
  for (const auto& c : certificates) {
    if (c.empty()) throw InputError("an empty certificate cannot be an EFI_CERT_X509 entry");
    entries.push_back({efi::guids::cert_x509, owner, c});
  }
  return write_efi_lists(entries);
}

Bytes efi_x509_lists_from_files(const std::vector<std::string>& files, const EfiGuid& owner) {
  std::vector<Bytes> ders;
  for (const auto& f : files) {
    auto certs = crypto::Certificate::load_all(f);
    if (!certs) throw InputError(f + ": " + certs.error().message);
    for (const auto& c : *certs) ders.push_back(c.der());
  }
  return efi_x509_lists(ders, owner);
}

}  // namespace modsign
