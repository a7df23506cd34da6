// modsign's own: the EFI variable containers (efivarfs attribute prefix, EFI_VARIABLE_AUTHENTICATION_2, EFI_TIME) and
// writing/merging EFI_SIGNATURE_LISTs; not a kernel file
#include "blacklist/efi_variable.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <tuple>

namespace modsign {

namespace {
std::uint16_t le16(const std::uint8_t* p) { return std::uint16_t(p[0] | p[1] << 8); }
}  // namespace

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
  t.nanosecond = blacklist::efi::detail::le32(p + 8);
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
  return {std::uint8_t(year),
          std::uint8_t(year >> 8),
          month,
          day,
          hour,
          minute,
          second,
          pad1,
          std::uint8_t(nanosecond),
          std::uint8_t(nanosecond >> 8),
          std::uint8_t(nanosecond >> 16),
          std::uint8_t(nanosecond >> 24),
          std::uint8_t(tz),
          std::uint8_t(tz >> 8),
          daylight,
          pad2};
}

std::string EfiTime::str() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04u-%02u-%02u %02u:%02u:%02u", unsigned(year), unsigned(month), unsigned(day),
                unsigned(hour), unsigned(minute), unsigned(second));
  return buf;
}

}  // namespace modsign

namespace modsign::blacklist::efi {

using detail::kListHeader;
using detail::kOwner;
using detail::le32;

namespace {

void put32(Bytes& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(std::uint8_t(v >> (8 * i)));
}

// The first 4 KiB (at least one byte) are printable ASCII, tab, CR or LF.
bool looks_like_text(ByteView d) {
  if (d.empty()) return false;
  const ByteView head = d.first(std::min<std::size_t>(d.size(), 4096));
  return std::all_of(head.begin(), head.end(),
                     [](std::uint8_t c) { return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\r' || c == '\n'; });
}

Error at(std::uint64_t offset, const std::string& what) {
  return make_error(KErr::ebadmsg, "byte offset " + std::to_string(offset) + ": " + what);
}

}  // namespace

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
        return at(
            0, "EFI_VARIABLE_AUTHENTICATION_2 needs 40 bytes (EFI_TIME + WIN_CERTIFICATE_UEFI_GUID header), file has " +
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
        std::snprintf(b, sizeof b, "wCertificateType 0x%04x, not WIN_CERT_TYPE_EFI_GUID 0x0ef1",
                      unsigned(a.certificate_type));
        return at(22, b);
      }
      if (a.cert_type != guids::cert_type_pkcs7)
        return at(24, "CertType " + a.cert_type.str() + ", not EFI_CERT_TYPE_PKCS7_GUID");
      const std::uint64_t dw = a.dw_length;
      if (dw < 24)
        return at(16,
                  "dwLength " + std::to_string(dw) + " is smaller than the 24-byte WIN_CERTIFICATE_UEFI_GUID header");
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
  // A bare list that fails at its first byte and is printable text (JSON, a hash list,
  // `dbx list` output): say so rather than quote the sizes its characters spell.
  if (vf.form == Container::esl && vf.lists.lists.empty() && vf.lists.error && looks_like_text(data))
    return make_error(KErr::ebadmsg,
                      "this is text, not an EFI signature list (EFI_SIGNATURE_LIST is binary: a "
                      "SignatureType GUID, then u32 sizes)");
  return vf;
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
        owner_conflicts.push_back(file + ": list " + std::to_string(li + 1) + " entry " + std::to_string(ei + 1) +
                                  ": " + type_name(l.type) + " already present with owner " + kept.owner.str() +
                                  "; owner " + e.owner.str() + " dropped");
    }
  }
}

Bytes Merge::serialize() const { return write_lists(group_entries(entries)); }

std::vector<std::string> timestamp_notes(const EfiTime& t) {
  std::vector<std::string> notes;
  std::string nonzero;
  auto must_be_zero = [&](const char* name, long v) {
    if (v != 0) nonzero += (nonzero.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(v);
  };
  must_be_zero("Pad1", t.pad1);
  must_be_zero("Nanosecond", static_cast<long>(t.nanosecond));
  must_be_zero("TimeZone", t.time_zone);
  must_be_zero("Daylight", t.daylight);
  must_be_zero("Pad2", t.pad2);
  if (!nonzero.empty())
    notes.push_back("timestamp: " + nonzero +
                    " not 0: EDK2 refuses this update (EFI_SECURITY_VIOLATION; UEFI 2.10 "
                    "§8.2.2 requires Pad1, Nanosecond, TimeZone, Daylight and Pad2 to be 0)");
  auto in_range = [&](const char* name, unsigned v, unsigned lo, unsigned hi) {
    if (v < lo || v > hi)
      notes.push_back("timestamp: " + std::string(name) + " " + std::to_string(v) + " is outside " +
                      std::to_string(lo) + "-" + std::to_string(hi) + " (UEFI 2.10 §8.3)");
  };
  in_range("Month", t.month, 1, 12);
  in_range("Day", t.day, 1, 31);
  in_range("Hour", t.hour, 0, 23);
  in_range("Minute", t.minute, 0, 59);
  in_range("Second", t.second, 0, 59);
  return notes;
}

}  // namespace modsign::blacklist::efi
