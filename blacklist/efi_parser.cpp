// mirrors security/integrity/platform_certs/efi_parser.c parse_efi_signature_list (and the EFI_GUIDs of
// include/linux/efi.h), Linux 7.2.13
#include "blacklist/efi_parser.hpp"

#include <cstdio>

namespace modsign {

// ---------------------------------------------------------------------------------------
// Guid

EfiGuid EfiGuid::from_bytes(const std::uint8_t* p) {
  EfiGuid g;
  for (int i = 0; i < 16; ++i) g.bytes[i] = p[i];
  return g;
}

std::optional<EfiGuid> EfiGuid::parse(std::string_view t) {
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
  EfiGuid g;
  const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
  for (int i = 0; i < 16; ++i) g.bytes[i] = v[order[i]];
  return g;
}

std::string EfiGuid::str() const {
  char buf[40];
  const auto& b = bytes;
  std::snprintf(buf, sizeof buf, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[3], b[2],
                b[1], b[0], b[5], b[4], b[7], b[6], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

bool EfiGuid::is_zero() const {
  for (auto b : bytes)
    if (b) return false;
  return true;
}

}  // namespace modsign

namespace modsign::blacklist::efi {

using detail::kListHeader;
using detail::kOwner;
using detail::le32;

namespace {

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

}  // namespace

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

}  // namespace modsign::blacklist::efi
