// pe/ layer: the PE/COFF reader (pe/pe_image.hpp); Microsoft "PE Format" specification.
#include "pe/pe_image.hpp"

#include <algorithm>
#include <cstdio>

namespace modsign::pe {

namespace {

constexpr std::uint64_t kDosHeaderSize = 64;
constexpr std::uint64_t kLfanewOffset = 0x3c;
constexpr std::uint64_t kCoffHeaderSize = 20;
constexpr std::uint64_t kSectionHeaderSize = 40;
constexpr std::uint64_t kDataDirectorySize = 8;
/// Most WIN_CERTIFICATE entries read from one table (real images carry one to three).
constexpr std::size_t kMaxCertificates = 64;

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
std::string dec(std::uint64_t v) { return std::to_string(v); }

std::uint16_t le16(ByteView f, std::uint64_t off) { return static_cast<std::uint16_t>(f[off] | f[off + 1] << 8); }
std::uint32_t le32(ByteView f, std::uint64_t off) {
  return static_cast<std::uint32_t>(f[off]) | static_cast<std::uint32_t>(f[off + 1]) << 8 |
         static_cast<std::uint32_t>(f[off + 2]) << 16 | static_cast<std::uint32_t>(f[off + 3]) << 24;
}
std::uint64_t le64(ByteView f, std::uint64_t off) {
  return static_cast<std::uint64_t>(le32(f, off)) | static_cast<std::uint64_t>(le32(f, off + 4)) << 32;
}

Error bad(std::string msg) { return make_error(KErr::ebadmsg, std::move(msg)); }

std::string section_label(std::size_t index, const Section& s) {
  return "section " + dec(index + 1) + " \"" + s.name + "\"";
}

/// Section::long_name: the COFF string table entry a "/N" Name refers to, bounds-checked.
std::string string_table_name(ByteView f, const PeImage& img, const std::string& name) {
  if (name.size() < 2 || name[0] != '/' || img.pointer_to_symbol_table == 0) return "";
  std::uint64_t n = 0;
  for (std::size_t i = 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return "";
    n = n * 10 + static_cast<std::uint64_t>(name[i] - '0');
  }
  const std::uint64_t table = std::uint64_t{img.pointer_to_symbol_table} + std::uint64_t{img.number_of_symbols} * 18;
  if (table + 4 > f.size()) return "";
  const std::uint64_t table_end = std::min<std::uint64_t>(table + le32(f, table), f.size());
  if (n < 4 || table + n >= table_end) return "";
  std::string out;
  for (std::uint64_t k = table + n; k < table_end && f[k] != 0; ++k) {
    if (out.size() == 255) return "";
    out.push_back(static_cast<char>(f[k]));
  }
  return out;
}

}  // namespace

std::string machine_name(std::uint16_t machine) {
  switch (machine) {
    case kMachineAmd64: return "x86-64";
    case kMachineArm64: return "AArch64";
    case kMachineI386: return "IA-32";
    case kMachineArm: return "ARM";
    case kMachineArmNt: return "ARM Thumb-2";
    default: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "unknown (0x%04x)", machine);
      return buf;
    }
  }
}

Result<PeImage> parse(ByteView f) {
  PeImage img;
  const std::uint64_t size = f.size();
  img.file_size = size;

  // MS-DOS header: "MZ" and e_lfanew.
  if (size < kDosHeaderSize)
    return bad("truncated MS-DOS header: the file is " + dec(size) + " bytes, the header needs " + dec(kDosHeaderSize));
  if (f[0] != 'M' || f[1] != 'Z') return bad("no MS-DOS header: the file does not start with \"MZ\"");
  img.pe_offset = le32(f, kLfanewOffset);
  const std::uint64_t pe = img.pe_offset;
  if (pe + 4 + kCoffHeaderSize > size)
    return bad("e_lfanew " + hex(pe) +
               " (at offset 0x3c) leaves no room for the PE signature and the COFF File Header "
               "(24 bytes) in a file of " +
               dec(size) + " bytes");
  if (f[pe] != 'P' || f[pe + 1] != 'E' || f[pe + 2] != 0 || f[pe + 3] != 0)
    return bad("no PE signature \"PE\\0\\0\" at offset " + hex(pe) + " (e_lfanew)");

  // COFF File Header.
  const std::uint64_t coff = pe + 4;
  img.machine = le16(f, coff);
  img.number_of_sections = le16(f, coff + 2);
  img.time_date_stamp = le32(f, coff + 4);
  img.pointer_to_symbol_table = le32(f, coff + 8);
  img.number_of_symbols = le32(f, coff + 12);
  img.size_of_optional_header = le16(f, coff + 16);
  img.characteristics = le16(f, coff + 18);

  // Optional Header.
  const std::uint64_t opt = coff + kCoffHeaderSize;
  img.optional_header_offset = opt;
  const std::uint64_t opt_size = img.size_of_optional_header;
  if (opt + opt_size > size)
    return bad("Optional Header (offset " + hex(opt) + ", SizeOfOptionalHeader " + dec(opt_size) +
               ") runs past the end of the file (" + dec(size) + " bytes)");
  if (opt_size < 2)
    return bad("SizeOfOptionalHeader " + dec(opt_size) + " (at offset " + hex(coff + 16) +
               ") leaves no room for the Optional Header magic");
  img.magic = le16(f, opt);
  if (img.magic != kMagicPe32 && img.magic != kMagicPe32Plus) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%x", img.magic);
    return bad(std::string("Optional Header magic ") + buf + " at offset " + hex(opt) +
               " is neither PE32 (0x10b) nor PE32+ (0x20b)");
  }
  const bool plus = img.pe32_plus();
  const std::uint64_t fixed = plus ? 112 : 96;  // up to and including NumberOfRvaAndSizes
  if (opt_size < fixed)
    return bad("SizeOfOptionalHeader " + dec(opt_size) + " (at offset " + hex(coff + 16) + ") is smaller than the " +
               (plus ? "PE32+" : "PE32") + " Optional Header's fixed part (" + dec(fixed) + " bytes)");
  img.entry_point = le32(f, opt + 16);
  img.image_base = plus ? le64(f, opt + 24) : le32(f, opt + 28);
  img.size_of_image = le32(f, opt + 56);
  img.size_of_headers = le32(f, opt + 60);
  img.checksum_offset = opt + 64;
  img.checksum = le32(f, opt + 64);
  img.subsystem = le16(f, opt + 68);
  const std::uint64_t nrva_off = opt + fixed - 4;
  img.number_of_rva_and_sizes = le32(f, nrva_off);
  const std::uint64_t dirs = opt + fixed;
  const std::uint64_t dirs_room = opt_size - fixed;
  if (std::uint64_t{img.number_of_rva_and_sizes} * kDataDirectorySize > dirs_room)
    return bad("NumberOfRvaAndSizes " + dec(img.number_of_rva_and_sizes) + " (at offset " + hex(nrva_off) + ") needs " +
               dec(std::uint64_t{img.number_of_rva_and_sizes} * kDataDirectorySize) +
               " bytes of data directories, SizeOfOptionalHeader leaves " + dec(dirs_room));
  for (std::uint32_t i = 0; i < img.number_of_rva_and_sizes; ++i) {
    const std::uint64_t d = dirs + std::uint64_t{i} * kDataDirectorySize;
    img.data_directories.push_back({le32(f, d), le32(f, d + 4)});
  }
  if (img.number_of_rva_and_sizes > kCertificateTableDirectory) {
    img.certificate_directory_offset = dirs + kCertificateTableDirectory * kDataDirectorySize;
    img.certificate_table = img.data_directories[kCertificateTableDirectory];
  }

  // Section Table, right after the Optional Header.
  img.section_table_offset = opt + opt_size;
  if (img.number_of_sections > kMaxSections)
    return bad("NumberOfSections " + dec(img.number_of_sections) + " (at offset " + hex(coff + 2) + ") exceeds " +
               dec(kMaxSections));
  const std::uint64_t st_end = img.section_table_offset + img.number_of_sections * kSectionHeaderSize;
  if (st_end > size)
    return bad("Section Table (offset " + hex(img.section_table_offset) + ", " + dec(img.number_of_sections) +
               " entries of 40 bytes) runs past the end of the file (" + dec(size) + " bytes)");
  if (img.size_of_headers > size)
    return bad("SizeOfHeaders " + dec(img.size_of_headers) + " (at offset " + hex(opt + 60) +
               ") exceeds the file size (" + dec(size) + " bytes)");
  if (img.size_of_headers < st_end)
    return bad("SizeOfHeaders " + dec(img.size_of_headers) + " (at offset " + hex(opt + 60) +
               ") ends before the end of the Section Table (offset " + hex(st_end) + ")");
  for (std::uint32_t i = 0; i < img.number_of_sections; ++i) {
    const std::uint64_t h = img.section_table_offset + i * kSectionHeaderSize;
    Section s;
    for (std::uint64_t k = 0; k < 8 && f[h + k] != 0; ++k) s.name.push_back(static_cast<char>(f[h + k]));
    s.virtual_size = le32(f, h + 8);
    s.virtual_address = le32(f, h + 12);
    s.size_of_raw_data = le32(f, h + 16);
    s.pointer_to_raw_data = le32(f, h + 20);
    s.characteristics = le32(f, h + 36);
    if (s.size_of_raw_data != 0 && std::uint64_t{s.pointer_to_raw_data} + s.size_of_raw_data > size)
      return bad(section_label(i, s) + " (Section Table entry at offset " + hex(h) + "): PointerToRawData " +
                 hex(s.pointer_to_raw_data) + " + SizeOfRawData " + dec(s.size_of_raw_data) +
                 " runs past the end of the file (" + dec(size) + " bytes)");
    s.long_name = string_table_name(f, img, s.name);
    img.sections.push_back(std::move(s));
  }

  // Attribute Certificate Table (directory entry 4; VirtualAddress is a file offset).
  const DataDirectory ct = img.certificate_table;
  if (ct.size == 0) return img;
  const std::string ct_label = "Certificate Table (directory entry 4 at offset " +
                               hex(*img.certificate_directory_offset) + ": file offset " + hex(ct.virtual_address) +
                               ", " + dec(ct.size) + " bytes)";
  const std::uint64_t ct_begin = ct.virtual_address, ct_end = ct_begin + ct.size;
  if (ct_begin == 0) return bad(ct_label + " has file offset 0");
  if (ct_end > size) return bad(ct_label + " runs past the end of the file (" + dec(size) + " bytes)");
  if (ct_begin < img.size_of_headers)
    return bad(ct_label + " overlaps the headers (SizeOfHeaders " + dec(img.size_of_headers) + ")");
  for (std::size_t i = 0; i < img.sections.size(); ++i) {
    const Section& s = img.sections[i];
    const std::uint64_t b = s.pointer_to_raw_data, e = b + s.size_of_raw_data;
    if (s.size_of_raw_data != 0 && ct_begin < e && b < ct_end)
      return bad(ct_label + " overlaps " + section_label(i, s) + " (file offset " + hex(b) + ", " +
                 dec(s.size_of_raw_data) + " bytes)");
  }
  std::uint64_t off = ct_begin;
  while (off < ct_end) {
    if (ct_end - off < kWinCertHeaderSize)
      return bad("Certificate Table: the " + dec(ct_end - off) + " bytes at offset " + hex(off) +
                 " are too few for a WIN_CERTIFICATE header (8 bytes)");
    if (img.certificates.size() == kMaxCertificates)
      return bad("Certificate Table holds more than " + dec(kMaxCertificates) + " WIN_CERTIFICATE entries");
    WinCertificate c;
    c.offset = off;
    c.length = le32(f, off);
    c.revision = le16(f, off + 4);
    c.type = le16(f, off + 6);
    if (c.length < kWinCertHeaderSize)
      return bad("WIN_CERTIFICATE at offset " + hex(off) + ": dwLength " + dec(c.length) +
                 " is smaller than its 8-byte header");
    if (c.length > ct_end - off)
      return bad("WIN_CERTIFICATE at offset " + hex(off) + ": dwLength " + dec(c.length) +
                 " runs past the end of the Certificate Table (offset " + hex(ct_end) + ")");
    img.certificates.push_back(c);
    off += (std::uint64_t{c.length} + 7) & ~std::uint64_t{7};  // entries are 8-byte aligned
  }
  return img;
}

}  // namespace modsign::pe
