// modsign — include/modsign/efi_image.hpp over blacklist/efi_image_verify (the firmware's
// rule), blacklist/sbat (shim's), blacklist/msft_dbx (Microsoft's JSON), pe/ and cms/.
#include "modsign/efi_image.hpp"
#include "modsign/tree.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "asn1/der.hpp"
#include "blacklist/efi_image_verify.hpp"
#include "blacklist/msft_dbx.hpp"
#include "blacklist/sbat.hpp"
#include "cms/spc_indirect_data.hpp"
#include "common/file.hpp"
#include "crypto/crypto.hpp"
#include "pe/pe_image.hpp"

namespace modsign {

namespace {
std::string err_text(const Error& e) { return std::string(errno_name(e.code)) + ": " + e.message; }

std::optional<ByteView> section_view(ByteView image, const std::vector<PeSection>& sections, std::string_view name) {
  for (const auto& s : sections) {
    if (s.name != name && s.long_name != name) continue;
    std::uint64_t n = s.size_of_raw_data;
    if (s.virtual_size != 0 && s.virtual_size < n) n = s.virtual_size;
    if (std::uint64_t{s.pointer_to_raw_data} + n > image.size()) return std::nullopt;  // the PE reader refuses this
    return image.subspan(s.pointer_to_raw_data, n);
  }
  return std::nullopt;
}

void describe_certificates(EfiDatabase& db) {
  for (auto& e : db.entries) {
    if (e.type != efi_guids::cert_x509) continue;
    auto c = crypto::Certificate::from_der(e.data);
    e.certificate = c ? c->subject_text() : "(not a certificate: " + c.error().message + ")";
  }
}
}  // namespace

std::optional<EfiSvnRecord> efi_svn_record(const EfiGuid& owner, ByteView data) {
  return blacklist::msft_dbx::svn_record(owner, data);
}
std::optional<std::string> msft_dbx_arch(std::string_view name) { return blacklist::msft_dbx::arch(name); }

EfiDatabase parse_msft_dbx_json(std::string_view text, const std::string& arch, const std::string& name,
                                const std::string& der_dir) {
  return blacklist::msft_dbx::parse(text, arch, name, der_dir);
}

EfiDatabase read_efi_database(const std::string& path, const std::string& arch) {
  const Bytes b = read_file(path, kMaxSmallFileSize);
  const auto first =
      std::find_if(b.begin(), b.end(), [](std::uint8_t c) { return c != ' ' && c != '\t' && c != '\n' && c != '\r'; });
  const bool bom = b.size() >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf;
  if (bom || (first != b.end() && *first == '{')) {
    const std::string dir = std::filesystem::path(path).parent_path().string();
    EfiDatabase db = parse_msft_dbx_json(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()), arch,
                                         path, dir.empty() ? "." : dir);
    describe_certificates(db);
    return db;
  }
  const EfiVariableFile vf = parse_efi_variable_file(b, EfiContainer::detect, path);
  if (vf.lists.error) throw InputError(path + ": " + err_text(*vf.lists.error));
  EfiDatabase db;
  db.file = path;
  db.form = std::string(efi_container_name(vf.form));
  for (std::size_t li = 0; li < vf.lists.lists.size(); ++li) {
    const auto& l = vf.lists.lists[li];
    for (std::size_t ei = 0; ei < l.entries.size(); ++ei) {
      const auto& e = l.entries[ei];
      db.entries.push_back({path, l.type, e.owner, e.data, li + 1, ei + 1, e.offset, "", ""});
    }
  }
  describe_certificates(db);
  return db;
}

Bytes efi_database_lists(const EfiDatabase& db) {
  std::vector<EfiEntry> entries;
  for (const auto& e : db.entries) entries.push_back({e.type, e.owner, e.data});
  return write_efi_lists(entries);
}

EfiDatabaseDiff diff_efi_databases(const EfiDatabase& a, const EfiDatabase& b) {
  using Key = std::pair<EfiGuid, Bytes>;
  auto keys = [](const EfiDatabase& d) {
    std::set<Key> k;
    for (const auto& e : d.entries) k.insert({e.type, e.data});
    return k;
  };
  const std::set<Key> ka = keys(a), kb = keys(b);
  EfiDatabaseDiff out;
  auto only = [](const EfiDatabase& d, const std::set<Key>& other, std::vector<EfiDatabaseEntry>& to) {
    std::set<Key> seen;
    for (const auto& e : d.entries) {
      Key k{e.type, e.data};
      if (!other.count(k) && seen.insert(k).second) to.push_back(e);
    }
  };
  only(a, kb, out.only_in_a);
  only(b, ka, out.only_in_b);
  for (const auto& k : ka) out.common += kb.count(k);
  return out;
}

Result<std::vector<SbatEntry>> parse_sbat_section(ByteView data) { return blacklist::sbat::parse_section(data); }
Result<SbatLevel> parse_sbat_level(std::string_view text) { return blacklist::sbat::parse_level(text); }

Result<SbatLevel> sbat_level_of_shim(ByteView image, SbatPolicy policy) {
  auto img = pe::parse(image);
  if (!img) return img.error();
  std::vector<PeSection> secs;
  for (const auto& s : img->sections)
    secs.push_back({s.name, s.virtual_size, s.virtual_address, s.size_of_raw_data, s.pointer_to_raw_data, s.long_name});
  const auto sec = section_view(image, secs, ".sbatlevel");
  if (!sec) return make_error(KErr::einval, "no .sbatlevel section");
  return blacklist::sbat::level_from_section(*sec, policy);
}

std::optional<Bytes> pe_section_data(ByteView image, const AuthenticodeInfo& info, std::string_view name) {
  const auto v = section_view(image, info.sections, name);
  if (!v) return std::nullopt;
  return Bytes(v->begin(), v->end());
}

std::string_view efi_image_rule_name(EfiImageRule r) {
  switch (r) {
    case EfiImageRule::hash_in_dbx: return "hash_in_dbx";
    case EfiImageRule::certificate_in_dbx: return "certificate_in_dbx";
    case EfiImageRule::certificate_hash_in_dbx: return "certificate_hash_in_dbx";
    case EfiImageRule::sbat_refused: return "sbat_refused";
    case EfiImageRule::allowed_by_db_certificate: return "allowed_by_db_certificate";
    case EfiImageRule::allowed_by_db_hash: return "allowed_by_db_hash";
    case EfiImageRule::not_allowed_by_db: return "not_allowed_by_db";
  }
  return "?";
}

Result<EfiImageVerdict> verify_efi_image(ByteView image, const std::string& file, const EfiImagePolicy& policy) {
  auto info = authenticode_image(image);
  if (!info) return make_error(info.error().code, file + ": " + info.error().message);
  EfiImageVerdict v;
  v.file = file;
  v.image = std::move(info).value();
  blacklist::efi_image::Image img;
  img.digests = {v.image.sha256, v.image.sha1, v.image.sha384, v.image.sha512};
  img.has_certificate_table = v.image.certificate_table_size != 0;
  for (std::size_t i = 0; i < v.image.signatures.size(); ++i) {
    const AuthenticodeSignature& as = v.image.signatures[i];
    blacklist::efi_image::Signature s;
    s.index = i + 1;
    s.error = as.error;
    s.signer = as.signer_by_skid ? "subjectKeyIdentifier " + to_hex(as.signer_skid) : as.signer_issuer;
    s.algo_name = as.digest_algorithm;
    s.signed_digest = as.digest;
    if (as.error.empty()) {
      const ByteView content = image.subspan(as.offset + pe::kWinCertHeaderSize, as.length - pe::kWinCertHeaderSize);
      auto sig = cms::parse_authenticode(content);
      if (sig && sig->signed_data.econtent) {
        s.pkcs7.assign(content.begin(), content.end());
        s.algo = sig->digest_algorithm;
        s.certificates = sig->signed_data.certificates;
        try {
          asn1::Reader r(*sig->signed_data.econtent);
          const asn1::Element e = r.next();
          s.content.assign(e.content.begin(), e.content.end());
        } catch (const asn1::DecodeError& e) { s.error = std::string("SpcIndirectDataContent: ") + e.what(); }
      } else {
        s.error = sig ? "no SpcIndirectDataContent" : sig.error().message;
      }
    }
    img.signatures.push_back(std::move(s));
  }
  blacklist::efi_image::decide(img, policy, v);

  if (policy.sbat_level) {
    v.sbat_checked = true;
    const auto sec = section_view(image, v.image.sections, ".sbat");
    if (!sec) {
      v.notes.push_back("no .sbat section: shim refuses to load an image without one");
      if (!v.refused) v.refused = true, v.rule = EfiImageRule::sbat_refused, v.entry.reset();
    } else if (auto rows = blacklist::sbat::parse_section(*sec); !rows) {
      v.notes.push_back(".sbat: " + rows.error().message + ": shim refuses the image");
      if (!v.refused) v.refused = true, v.rule = EfiImageRule::sbat_refused, v.entry.reset();
    } else {
      v.sbat = std::move(rows).value();
      v.sbat_refusals = blacklist::sbat::refusals(v.sbat, *policy.sbat_level);
      if (!v.sbat_refusals.empty() && !v.refused)
        v.refused = true, v.rule = EfiImageRule::sbat_refused, v.entry.reset();
    }
  }
  return v;
}

Result<EfiImageVerdict> verify_efi_image_file(const std::string& path, const EfiImagePolicy& policy) {
  const Bytes data = read_file(path);
  return verify_efi_image(data, path, policy);
}

std::vector<TreeEntry> find_pe_files(const std::string& dir) {
  std::vector<TreeEntry> out;
  for (auto& e : walk_tree(dir)) {
    if (e.kind == TreeEntry::Kind::regular) {
      std::FILE* f = std::fopen(e.path.c_str(), "rb");
      if (!f) {
        out.push_back({e.path, TreeEntry::Kind::error, errno});
        continue;
      }
      char mz[2] = {};
      const bool pe = std::fread(mz, 1, 2, f) == 2 && mz[0] == 'M' && mz[1] == 'Z';
      std::fclose(f);
      if (pe) out.push_back(std::move(e));
    } else if (e.kind == TreeEntry::Kind::error || e.kind == TreeEntry::Kind::moved) {
      out.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace modsign
