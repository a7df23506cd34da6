// UEFI signature databases as the Linux kernel reads them (see efi.hpp).
#include "blacklist/efi.hpp"

#include <cstdio>
#include <map>
#include <stdexcept>
#include <tuple>

#include "asn1/der.hpp"
#include "common/file.hpp"
#include "crypto/algorithms.hpp"

namespace modsign::blacklist::efi {

namespace {

std::uint32_t le32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}
std::uint16_t le16(const std::uint8_t* p) { return std::uint16_t(p[0] | p[1] << 8); }
void put32(Bytes& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(std::uint8_t(v >> (8 * i)));
}

constexpr std::uint64_t kListHeader = 28;  // sizeof(efi_signature_list_t)
constexpr std::uint64_t kOwner = 16;       // sizeof(efi_signature_data_t)

struct Named {
  Guid guid;
  std::string_view name;
};
constexpr Named kNames[] = {
    {guids::global_variable, "EFI_GLOBAL_VARIABLE_GUID"},
    {guids::image_security_database, "EFI_IMAGE_SECURITY_DATABASE_GUID"},
    {guids::shim_lock, "EFI_SHIM_LOCK_GUID"},
    {guids::cert_sha256, "EFI_CERT_SHA256_GUID"},
    {guids::cert_x509, "EFI_CERT_X509_GUID"},
    {guids::cert_x509_sha256, "EFI_CERT_X509_SHA256_GUID"},
    {guids::cert_x509_sha384, "EFI_CERT_X509_SHA384_GUID"},
    {guids::cert_x509_sha512, "EFI_CERT_X509_SHA512_GUID"},
    {guids::cert_type_pkcs7, "EFI_CERT_TYPE_PKCS7_GUID"},
    {guids::cert_rsa2048, "EFI_CERT_RSA2048_GUID"},
    {guids::cert_sha1, "EFI_CERT_SHA1_GUID"},
    {guids::cert_sha224, "EFI_CERT_SHA224_GUID"},
    {guids::cert_sha384, "EFI_CERT_SHA384_GUID"},
    {guids::cert_sha512, "EFI_CERT_SHA512_GUID"},
    {guids::microsoft_owner, "MICROSOFT_OWNER"},
};

Error at(std::uint64_t offset, const std::string& what) {
  return make_error(KErr::ebadmsg, "byte offset " + std::to_string(offset) + ": " + what);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Guid

Guid Guid::from_bytes(const std::uint8_t* p) {
  Guid g;
  for (int i = 0; i < 16; ++i) g.bytes[i] = p[i];
  return g;
}

std::optional<Guid> Guid::parse(std::string_view t) {
  if (t.size() != 36 || t[8] != '-' || t[13] != '-' || t[18] != '-' || t[23] != '-') return std::nullopt;
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::uint8_t v[16];  // registry (big-endian) order
  std::size_t n = 0;
  for (std::size_t i = 0; i < 36;) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      ++i;
      continue;
    }
    const int hi = nib(t[i]), lo = nib(t[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    v[n++] = std::uint8_t(hi << 4 | lo);
    i += 2;
  }
  Guid g;
  const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
  for (int i = 0; i < 16; ++i) g.bytes[i] = v[order[i]];
  return g;
}

std::string Guid::str() const {
  char buf[40];
  const auto& b = bytes;
  std::snprintf(buf, sizeof buf, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[3], b[2],
                b[1], b[0], b[5], b[4], b[7], b[6], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

bool Guid::is_zero() const {
  for (auto b : bytes)
    if (b) return false;
  return true;
}

std::string_view guid_name(const Guid& g) {
  for (const auto& n : kNames)
    if (n.guid == g) return n.name;
  return {};
}

std::string type_name(const Guid& type) {
  const std::string_view n = guid_name(type);
  if (n.starts_with("EFI_CERT_") && n.ends_with("_GUID")) return std::string(n.substr(0, n.size() - 5));
  return type.str();
}

bool is_known_signature_type(const Guid& type) {
  const std::string_view n = guid_name(type);
  return n.starts_with("EFI_CERT_") && type != guids::cert_type_pkcs7;
}

// ---------------------------------------------------------------------------------------
// EfiTime

EfiTime EfiTime::from_bytes(const std::uint8_t* p) {
  EfiTime t;
  t.year = le16(p);
  t.month = p[2];
  t.day = p[3];
  t.hour = p[4];
  t.minute = p[5];
  t.second = p[6];
  t.pad1 = p[7];
  t.nanosecond = le32(p + 8);
  t.time_zone = std::int16_t(le16(p + 12));
  t.daylight = p[14];
  t.pad2 = p[15];
  return t;
}

std::optional<EfiTime> EfiTime::parse(std::string_view text) {
  std::string s(text);
  if (!s.empty() && s.back() == 'Z') s.pop_back();
  if (s.size() != 19 || (s[10] != ' ' && s[10] != 'T')) return std::nullopt;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool sep = i == 4 || i == 7 || i == 10 || i == 13 || i == 16;
    if (!sep && (s[i] < '0' || s[i] > '9')) return std::nullopt;
  }
  if (s[4] != '-' || s[7] != '-' || s[13] != ':' || s[16] != ':') return std::nullopt;
  auto num = [&](std::size_t pos, std::size_t len) { return std::stoi(s.substr(pos, len)); };
  const int y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2), se = num(17, 2);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59) return std::nullopt;
  EfiTime t;
  t.year = std::uint16_t(y);
  t.month = std::uint8_t(mo);
  t.day = std::uint8_t(d);
  t.hour = std::uint8_t(h);
  t.minute = std::uint8_t(mi);
  t.second = std::uint8_t(se);
  return t;
}

std::array<std::uint8_t, EfiTime::kSize> EfiTime::bytes() const {
  const auto tz = std::uint16_t(time_zone);
  return {std::uint8_t(year), std::uint8_t(year >> 8), month, day, hour, minute, second, pad1,
          std::uint8_t(nanosecond), std::uint8_t(nanosecond >> 8), std::uint8_t(nanosecond >> 16),
          std::uint8_t(nanosecond >> 24), std::uint8_t(tz), std::uint8_t(tz >> 8), daylight, pad2};
}

std::string EfiTime::str() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04u-%02u-%02u %02u:%02u:%02u", unsigned(year), unsigned(month), unsigned(day),
                unsigned(hour), unsigned(minute), unsigned(second));
  return buf;
}

// ---------------------------------------------------------------------------------------
// parse_efi_signature_list

ParsedLists parse_signature_lists(ByteView data, std::uint64_t base_offset) {
  ParsedLists out;
  const std::uint64_t size = data.size();
  std::uint64_t pos = 0;
  auto fail = [&](const std::string& what) {
    out.error = make_error(KErr::ebadmsg,
                           "EFI_SIGNATURE_LIST at byte offset " + std::to_string(base_offset + pos) + ": " + what);
    out.error_offset = base_offset + pos;
  };
  while (pos < size) {  // efi_parser.c:47
    const std::uint64_t left = size - pos;
    if (left < kListHeader) {  // :52
      fail(std::to_string(left) + " bytes left, fewer than the 28-byte header");
      return out;
    }
    const std::uint8_t* p = data.data() + pos;
    // The u32 fields widened to 64 bits: nothing below can wrap (efi_parser.c uses size_t).
    const std::uint64_t lsize = le32(p + 16), hsize = le32(p + 20), esize = le32(p + 24);
    if (lsize > left) {  // :66 "overrun"
      fail("signature_list_size " + std::to_string(lsize) + " exceeds the " + std::to_string(left) + " bytes left");
      return out;
    }
    // :72-76 "bad size combo", in the kernel's order.
    if (lsize < kListHeader) {
      fail("signature_list_size " + std::to_string(lsize) + " is smaller than the 28-byte header");
      return out;
    }
    if (lsize - kListHeader < hsize) {
      fail("signature_header_size " + std::to_string(hsize) + " exceeds the " + std::to_string(lsize - kListHeader) +
           " bytes after the list header");
      return out;
    }
    if (esize < kOwner) {
      fail("signature_size " + std::to_string(esize) + " is smaller than the 16-byte SignatureOwner");
      return out;
    }
    const std::uint64_t elsize = lsize - kListHeader - hsize;
    if (elsize < esize) {
      fail("the " + std::to_string(elsize) + " bytes of entries are fewer than signature_size " +
           std::to_string(esize));
      return out;
    }
    if (elsize % esize != 0) {
      fail("the " + std::to_string(elsize) + " bytes of entries are not a multiple of signature_size " +
           std::to_string(esize));
      return out;
    }
    SignatureList l;
    l.type = Guid::from_bytes(p);
    l.list_size = std::uint32_t(lsize);
    l.header_size = std::uint32_t(hsize);
    l.signature_size = std::uint32_t(esize);
    l.offset = base_offset + pos;
    l.header.assign(p + kListHeader, p + kListHeader + hsize);
    const std::uint64_t first = kListHeader + hsize, count = elsize / esize;
    l.entries.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint8_t* e = p + first + i * esize;
      SignatureEntry se;
      se.owner = Guid::from_bytes(e);
      se.data.assign(e + kOwner, e + esize);
      se.offset = base_offset + pos + first + i * esize;
      l.entries.push_back(std::move(se));
    }
    out.lists.push_back(std::move(l));
    pos += lsize;
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Containers

std::string_view container_name(Container c) {
  switch (c) {
    case Container::detect: return "detect";
    case Container::esl: return "esl";
    case Container::efivarfs: return "efivarfs";
    case Container::auth2: return "auth2";
  }
  return "?";
}

std::optional<Container> parse_container(std::string_view n) {
  if (n == "detect" || n == "auto") return Container::detect;
  if (n == "esl") return Container::esl;
  if (n == "efivarfs") return Container::efivarfs;
  if (n == "auth2") return Container::auth2;
  return std::nullopt;
}

Container detect_container(ByteView d) {
  constexpr std::size_t kAuth2Min = EfiTime::kSize + 24;  // sizeof(EFI_VARIABLE_AUTHENTICATION_2)
  if (d.size() >= kAuth2Min && Guid::from_bytes(d.data() + 24) == guids::cert_type_pkcs7) return Container::auth2;
  if (d.size() > 4 + kListHeader && (d[0] & ~0x7fu) == 0 && d[1] == 0 && d[2] == 0 && d[3] == 0 &&
      is_known_signature_type(Guid::from_bytes(d.data() + 4)))
    return Container::efivarfs;
  return Container::esl;
}

Result<VariableFile> parse_variable_file(ByteView data, Container form) {
  VariableFile vf;
  vf.form = form == Container::detect ? detect_container(data) : form;
  const std::uint64_t size = data.size();
  switch (vf.form) {
    case Container::detect:
    case Container::esl: vf.payload_offset = 0; break;
    case Container::efivarfs:
      if (size < 4) return at(0, "efivarfs file of " + std::to_string(size) + " bytes has no 4-byte attributes");
      vf.attributes = le32(data.data());
      vf.payload_offset = 4;
      break;
    case Container::auth2: {
      if (size < 40)
        return at(0, "EFI_VARIABLE_AUTHENTICATION_2 needs 40 bytes (EFI_TIME + WIN_CERTIFICATE_UEFI_GUID header), file has " +
                         std::to_string(size));
      Auth2Header a;
      a.timestamp = EfiTime::from_bytes(data.data());
      a.dw_length = le32(data.data() + 16);
      a.revision = le16(data.data() + 20);
      a.certificate_type = le16(data.data() + 22);
      a.cert_type = Guid::from_bytes(data.data() + 24);
      if (a.revision != 0x0200) {
        char b[64];
        std::snprintf(b, sizeof b, "wRevision 0x%04x, not 0x0200", unsigned(a.revision));
        return at(20, b);
      }
      if (a.certificate_type != 0x0EF1) {
        char b[80];
        std::snprintf(b, sizeof b, "wCertificateType 0x%04x, not WIN_CERT_TYPE_EFI_GUID 0x0ef1", unsigned(a.certificate_type));
        return at(22, b);
      }
      if (a.cert_type != guids::cert_type_pkcs7)
        return at(24, "CertType " + a.cert_type.str() + ", not EFI_CERT_TYPE_PKCS7_GUID");
      const std::uint64_t dw = a.dw_length;
      if (dw < 24) return at(16, "dwLength " + std::to_string(dw) + " is smaller than the 24-byte WIN_CERTIFICATE_UEFI_GUID header");
      if (16 + dw > size)
        return at(16, "dwLength " + std::to_string(dw) + " exceeds the " + std::to_string(size - 16) +
                          " bytes after the timestamp");
      a.pkcs7.assign(data.begin() + 40, data.begin() + static_cast<std::ptrdiff_t>(16 + dw));
      vf.auth = std::move(a);
      vf.payload_offset = 16 + dw;
      break;
    }
  }
  vf.lists = parse_signature_lists(data.subspan(vf.payload_offset), vf.payload_offset);
  return vf;
}

// ---------------------------------------------------------------------------------------
// Handlers

std::string_view variable_name(Variable v) {
  switch (v) {
    case Variable::db: return "db";
    case Variable::dbx: return "dbx";
    case Variable::MokListRT: return "MokListRT";
    case Variable::MokListXRT: return "MokListXRT";
  }
  return "?";
}

std::optional<Variable> parse_variable(std::string_view n) {
  for (Variable v : {Variable::db, Variable::dbx, Variable::MokListRT, Variable::MokListXRT})
    if (variable_name(v) == n) return v;
  return std::nullopt;
}

std::string_view entry_kind_name(EntryKind k) {
  switch (k) {
    case EntryKind::binary_hash: return "bin";
    case EntryKind::tbs_hash: return "tbs";
    case EntryKind::revoked_certificate: return "revoked";
    case EntryKind::platform_certificate: return "platform";
    case EntryKind::ignored: return "ignored";
  }
  return "?";
}

namespace {

// get_handler_for_db / _mok / _dbx (keyring_handler.c:50-102).
EntryKind handler_for(Variable v, const Guid& type) {
  if (v == Variable::db || v == Variable::MokListRT)
    return type == guids::cert_x509 ? EntryKind::platform_certificate : EntryKind::ignored;
  if (type == guids::cert_x509_sha256) return EntryKind::tbs_hash;
  if (type == guids::cert_sha256) return EntryKind::binary_hash;
  if (type == guids::cert_x509) return EntryKind::revoked_certificate;
  return EntryKind::ignored;
}

// blacklist_vet_description() (certs/blacklist.c:47-85) of the description get_raw_hash()
// builds from `len` bytes: "bin:"/"tbs:" + 2*len lower-case hex digits, so only the count
// can fail.  A minimal local check; the full vetting lives with the hash-list code.
KErr vet_hash_length(std::size_t len) {
  if (len == 0) return KErr::einval;   // i == 0
  if (len * 2 > 128) return KErr::enopkg;  // more than MAX_HASH_LEN hex characters
  return KErr::none;
}

std::string where(std::size_t l, std::size_t e, const Guid& type) {
  return "list " + std::to_string(l + 1) + " entry " + std::to_string(e + 1) + " (" + type_name(type) + ")";
}

}  // namespace

namespace {
// Whether a "tbs:" key of `len` bytes can equal a lookup x509_get_sig_params() makes: 7.0
// looks up the SHA-256 of the TBS (32 bytes); v6 the TBS digest in the certificate's own
// signature hash (sha1 20, sha224 28, sha256/sha3-256/sm3/streebog256 32, sha384/sha3-384
// 48, sha512/sha3-512/streebog512 64 bytes).
bool tbs_lookup_size(std::size_t len, const kernel::KernelProfile& p) {
  if (p.generation == kernel::Generation::v7_0) return len == 32;
  return len == 20 || len == 28 || len == 32 || len == 48 || len == 64;
}

}  // namespace

Result<crypto::Certificate> parse_entry_certificate(ByteView data, std::size_t& trailing) {
  trailing = 0;
  ByteView first = data;
  try {
    asn1::Reader r(data);
    first = r.next().tlv;
  } catch (const asn1::DecodeError&) {
    first = data;  // from_der reports the problem
  }
  auto c = crypto::Certificate::from_der(first);
  if (c) trailing = data.size() - first.size();
  return c;
}

namespace {

// x509_get_sig_params (crypto/asymmetric_keys/x509_public_key.c:38-46 in 7.2): the TBS
// lookup "tbs:<hex>"; before 7.0 with the signature's own hash (none if unknown).
bool tbs_listed(const crypto::Certificate& c, const kernel::KernelProfile& p, const kernel::Blacklist& bl) {
  if (p.generation == kernel::Generation::v7_0)
    return bl.is_tbs_blacklisted(crypto::digest(crypto::HashAlgo::sha256, c.tbs()));
  auto h = c.signature_hash();
  return h && bl.is_tbs_blacklisted(crypto::digest(*h, c.tbs()));
}
}  // namespace

VariableEffects apply_handlers(const ParsedLists& lists, Variable v, const kernel::KernelProfile& profile,
                               const kernel::Blacklist* blacklist) {
  VariableEffects out;
  out.variable = v;
  for (std::size_t li = 0; li < lists.lists.size(); ++li) {
    const SignatureList& l = lists.lists[li];
    const EntryKind kind = handler_for(v, l.type);
    for (std::size_t ei = 0; ei < l.entries.size(); ++ei) {
      const SignatureEntry& se = l.entries[ei];
      EntryEffect ef;
      ef.list = li;
      ef.entry = ei;
      ef.kind = kind;
      switch (kind) {
        case EntryKind::binary_hash:
        case EntryKind::tbs_hash: {
          ef.description = std::string(kind == EntryKind::binary_hash ? "bin:" : "tbs:") + to_hex(se.data);
          ef.key_error = vet_hash_length(se.data.size());
          ef.text = ef.description;
          if (kind == EntryKind::tbs_hash && ef.key_error == KErr::none && !tbs_lookup_size(se.data.size(), profile)) {
            ef.never_matches = true;
            ef.text += " (never matches)";
            out.notes.push_back(
                where(li, ei, l.type) + ": " + ef.description.substr(0, 20) + "... is keyed over all " +
                std::to_string(se.data.size()) + " bytes of the entry" +
                (se.data.size() == 48 ? " (32-byte TBS hash + 16-byte TimeOfRevocation)" : "") +
                (profile.generation == kernel::Generation::v7_0
                     ? ", so it never equals the tbs:<64 hex> SHA-256 lookup of x509_get_sig_params() and blocks "
                       "nothing"
                     : ", so it never equals the tbs: lookup of x509_get_sig_params() (the TBS digest in the "
                       "certificate's signature hash: 20, 28, 32, 48 or 64 bytes) and blocks nothing"));
          }
          break;
        }
        case EntryKind::revoked_certificate:
        case EntryKind::platform_certificate: {
          ef.text = kind == EntryKind::revoked_certificate
                        ? "revoked certificate"
                        : (v == Variable::MokListRT ? "machine/platform keyring certificate" : "platform keyring certificate");
          if (se.data.empty()) {
            ef.key_error = KErr::einval;  // asymmetric_key_preparse: datalen == 0
          } else {
            std::size_t trailing = 0;
            auto c = parse_entry_certificate(se.data, trailing);
            if (trailing)
              out.notes.push_back(where(li, ei, l.type) + ": the " + std::to_string(trailing) +
                                  " bytes after the certificate are ignored (the kernel's ASN.1 decoder does "
                                  "not check for trailing data)");
            Status sup = c ? kernel::x509_supported(*c, profile) : ok_status();
            if (c) ef.cert = *c;
            if (c && !sup) {
              ef.key_error = sup.error().code;
              ef.key_error_reason = sup.error().message;
            } else if (c && blacklist && tbs_listed(*c, profile, *blacklist)) {
              ef.key_error = KErr::ekeyrejected;
            } else if (c) {
              (kind == EntryKind::revoked_certificate ? out.revoked_certificates : out.keyring_certificates)
                  .push_back(*c);
            } else {
              ef.key_error = c.error().code;
            }
          }
          break;
        }
        case EntryKind::ignored: ef.text = "ignored"; break;
      }
      if (ef.key_error != KErr::none) ef.text += " (not added: " + std::string(errno_name(ef.key_error)) + ")";
      out.entries.push_back(std::move(ef));
    }
  }
  return out;
}

Status add_to_sources(const ParsedLists& lists, Variable v, const std::string& file, Sources& out,
                      const kernel::KernelProfile& profile) {
  if (v != Variable::dbx && v != Variable::MokListXRT)
    throw std::invalid_argument("add_to_sources: only dbx and MokListXRT feed the .blacklist keyring");
  const VariableEffects fx = apply_handlers(lists, v, profile);
  for (const auto& n : fx.notes) out.notes.push_back(file + ": " + n);
  for (const EntryEffect& ef : fx.entries) {
    const SignatureList& l = lists.lists[ef.list];
    Origin o{file, where(ef.list, ef.entry, l.type)};
    if (ef.key_error != KErr::none) {
      if (!ef.key_error_reason.empty())  // worded as for a --revoked certificate the profile cannot load
        out.notes.push_back(file + " " + o.where + " is not loaded by a " + profile.name() + " kernel (" +
                            std::string(errno_name(ef.key_error)) + ": " + ef.key_error_reason + ")");
      else if (ef.kind != EntryKind::ignored)
        out.notes.push_back(file + ": " + o.where + ": not added to .blacklist (" +
                            std::string(errno_name(ef.key_error)) + ")");
      continue;
    }
    if (ef.kind == EntryKind::binary_hash || ef.kind == EntryKind::tbs_hash) {
      out.add_description(ef.description, std::move(o));
    } else if (ef.kind == EntryKind::revoked_certificate && ef.cert) {
      if (tbs_listed(*ef.cert, profile, out.keyring)) {  // x509_key_preparse: -EKEYREJECTED
        out.notes.push_back(file + ": " + o.where + ": not added to .blacklist (EKEYREJECTED: its TBS is blacklisted)");
        continue;
      }
      bool dup = false;
      for (const auto& c : out.keyring.revoked) dup = dup || c.der() == ef.cert->der();
      if (dup) {
        out.notes.push_back(file + ": " + o.where + ": revoked certificate already loaded");
        continue;
      }
      out.add_revoked(*ef.cert, std::move(o));
    }
  }
  return lists.status();
}

Status load_dbx_file(const std::string& path, Sources& out, Variable v, Container form,
                     const kernel::KernelProfile& profile) {
  const Bytes b = read_file(path, kMaxSmallFileSize);
  auto vf = parse_variable_file(b, form);
  if (!vf) return vf.error();
  return add_to_sources(vf->lists, v, path, out, profile);
}

// ---------------------------------------------------------------------------------------
// Writing

Bytes write_lists(const std::vector<SignatureList>& lists) {
  Bytes out;
  for (const SignatureList& l : lists) {
    if (l.entries.empty()) throw std::invalid_argument("write_lists: a list without entries (the kernel rejects it)");
    const std::uint64_t esize = kOwner + l.entries.front().data.size();
    for (const auto& e : l.entries)
      if (kOwner + e.data.size() != esize)
        throw std::invalid_argument("write_lists: entries of one list differ in size");
    const std::uint64_t lsize = kListHeader + l.header.size() + esize * l.entries.size();
    if (lsize > 0xffffffffu) throw std::invalid_argument("write_lists: list larger than 4 GiB");
    out.insert(out.end(), l.type.bytes.begin(), l.type.bytes.end());
    put32(out, std::uint32_t(lsize));
    put32(out, std::uint32_t(l.header.size()));
    put32(out, std::uint32_t(esize));
    out.insert(out.end(), l.header.begin(), l.header.end());
    for (const auto& e : l.entries) {
      out.insert(out.end(), e.owner.bytes.begin(), e.owner.bytes.end());
      out.insert(out.end(), e.data.begin(), e.data.end());
    }
  }
  return out;
}

std::vector<SignatureList> group_entries(const std::vector<FlatEntry>& entries) {
  std::vector<SignatureList> out;
  std::map<std::tuple<Guid, Guid, std::size_t>, std::size_t> group;  // (type, owner, size) -> list
  for (const FlatEntry& fe : entries) {
    if (fe.data.empty()) throw std::invalid_argument("group_entries: an entry without data");
    SignatureEntry se{fe.owner, fe.data, 0};
    if (fe.type == guids::cert_x509) {
      SignatureList l;
      l.type = fe.type;
      l.entries.push_back(std::move(se));
      out.push_back(std::move(l));
      continue;
    }
    const auto key = std::make_tuple(fe.type, fe.owner, fe.data.size());
    auto it = group.find(key);
    if (it == group.end()) {
      group.emplace(key, out.size());
      SignatureList l;
      l.type = fe.type;
      l.entries.push_back(std::move(se));
      out.push_back(std::move(l));
    } else {
      out[it->second].entries.push_back(std::move(se));
    }
  }
  for (auto& l : out) {  // sizes as write_lists() will write them
    l.signature_size = std::uint32_t(kOwner + l.entries.front().data.size());
    l.list_size = std::uint32_t(kListHeader + std::uint64_t(l.signature_size) * l.entries.size());
  }
  return out;
}

Bytes x509_sha256_data(ByteView tbs_sha256, const EfiTime& t) {
  if (tbs_sha256.size() != 32) throw std::invalid_argument("x509_sha256_data: the TBS hash must be 32 bytes");
  Bytes d(tbs_sha256.begin(), tbs_sha256.end());
  const auto tb = t.bytes();
  d.insert(d.end(), tb.begin(), tb.end());
  return d;
}

void Merge::add(const ParsedLists& lists, const std::string& file) {
  // Index of the kept entries by (type, data), rebuilt lazily from `entries`.
  std::map<std::pair<Guid, Bytes>, std::size_t> seen;
  for (std::size_t i = 0; i < entries.size(); ++i) seen.emplace(std::make_pair(entries[i].type, entries[i].data), i);
  for (std::size_t li = 0; li < lists.lists.size(); ++li) {
    const SignatureList& l = lists.lists[li];
    if (!l.header.empty())
      dropped_headers.push_back(file + ": list " + std::to_string(li + 1) + ": " + std::to_string(l.header.size()) +
                                "-byte SignatureHeader dropped");
    for (std::size_t ei = 0; ei < l.entries.size(); ++ei) {
      const SignatureEntry& e = l.entries[ei];
      auto [it, fresh] = seen.emplace(std::make_pair(l.type, e.data), entries.size());
      if (fresh) {
        entries.push_back(FlatEntry{l.type, e.owner, e.data});
        continue;
      }
      ++duplicates;
      const FlatEntry& kept = entries[it->second];
      if (kept.owner != e.owner)
        owner_conflicts.push_back(file + ": list " + std::to_string(li + 1) + " entry " + std::to_string(ei + 1) + ": " +
                                  type_name(l.type) + " already present with owner " + kept.owner.str() + "; owner " +
                                  e.owner.str() + " dropped");
    }
  }
}

Bytes Merge::serialize() const { return write_lists(group_entries(entries)); }

}  // namespace modsign::blacklist::efi
