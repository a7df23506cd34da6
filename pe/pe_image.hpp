// pe/ layer (modsign's own, beside blacklist/; uses common/ and crypto/ only): the PE/COFF reader for EFI images.
// Follows Microsoft's "PE Format" specification (MS-DOS stub and signature, COFF File
// Header, Optional Header with its Windows-specific fields and data directories, Section
// Table, The Attribute Certificate Table) for PE32 and PE32+ images.  Every offset and
// size in the file is checked against the file before it is used (64-bit arithmetic, so
// no sum of 32-bit fields can wrap), counts are capped, and each error names the field and
// its file offset.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace modsign::pe {

// COFF File Header Machine values an EFI image carries (PE Format, "Machine Types").
inline constexpr std::uint16_t kMachineI386 = 0x014c;
inline constexpr std::uint16_t kMachineArm = 0x01c2;
inline constexpr std::uint16_t kMachineArmNt = 0x01c4;  ///< ARM Thumb-2
inline constexpr std::uint16_t kMachineAmd64 = 0x8664;
inline constexpr std::uint16_t kMachineArm64 = 0xaa64;
// Optional Header magic.
inline constexpr std::uint16_t kMagicPe32 = 0x010b;
inline constexpr std::uint16_t kMagicPe32Plus = 0x020b;
/// Index of the Certificate Table among the data directories.
inline constexpr std::uint32_t kCertificateTableDirectory = 4;
/// WIN_CERTIFICATE wRevision and wCertificateType values Authenticode uses.
inline constexpr std::uint16_t kWinCertRevision2 = 0x0200;
inline constexpr std::uint16_t kWinCertTypePkcsSignedData = 0x0002;
/// Size of the WIN_CERTIFICATE header (dwLength, wRevision, wCertificateType).
inline constexpr std::uint32_t kWinCertHeaderSize = 8;
/// Most sections accepted: the PE Format's limit for a loadable image (Windows loader, 96).
inline constexpr std::uint32_t kMaxSections = 96;

/// "x86-64", "AArch64", "IA-32", "ARM", "ARM Thumb-2"; "unknown (0x1234)" for others.
std::string machine_name(std::uint16_t machine);

/// One data directory entry (PE Format "Optional Header Data Directories").
struct DataDirectory {
  std::uint32_t virtual_address = 0;  ///< an RVA; for the Certificate Table a FILE offset
  std::uint32_t size = 0;             ///< bytes
};

/// One Section Table entry (40 bytes in the file).
struct Section {
  std::string name;  ///< the 8-byte Name field up to its first NUL ("/4"-style long names as stored)
  std::uint32_t virtual_size = 0;
  std::uint32_t virtual_address = 0;
  std::uint32_t size_of_raw_data = 0;
  std::uint32_t pointer_to_raw_data = 0;
  std::uint32_t characteristics = 0;
  /// For a "/N" Name (a name longer than 8 bytes, as GNU ld writes ".sbatlevel"): the
  /// NUL-terminated name at decimal offset N of the COFF string table (after the symbol
  /// table: PointerToSymbolTable + 18 * NumberOfSymbols; its first u32 is its size), at
  /// most 255 bytes; "" when the Name is not of that form or the string does not lie inside
  /// the table and the file (not an error: executables often have no string table).
  std::string long_name;
};

/// One WIN_CERTIFICATE entry of the Attribute Certificate Table.
struct WinCertificate {
  std::uint64_t offset = 0;    ///< file offset of its dwLength field
  std::uint32_t length = 0;    ///< dwLength: header (8 bytes) and bCertificate, without padding
  std::uint16_t revision = 0;  ///< wRevision (0x0200 for Authenticode)
  std::uint16_t type = 0;      ///< wCertificateType (0x0002 WIN_CERT_TYPE_PKCS_SIGNED_DATA)
  /// bCertificate: the `length - 8` bytes at offset + 8 (for type 2 a PKCS#7 SignedData,
  /// possibly followed by zero padding inside dwLength).
  std::uint64_t content_offset() const { return offset + kWinCertHeaderSize; }
  std::uint32_t content_size() const { return length - kWinCertHeaderSize; }
};

/// What parse() found.  All offsets are file offsets in bytes.
struct PeImage {
  std::uint64_t file_size = 0;
  std::uint32_t pe_offset = 0;  ///< e_lfanew: offset of the "PE\0\0" signature
  std::uint16_t machine = 0;    ///< COFF Machine
  std::uint16_t number_of_sections = 0;
  std::uint32_t time_date_stamp = 0;
  std::uint32_t pointer_to_symbol_table = 0;  ///< COFF PointerToSymbolTable (file offset, 0 if none)
  std::uint32_t number_of_symbols = 0;
  std::uint16_t size_of_optional_header = 0;
  std::uint16_t characteristics = 0;
  std::uint64_t optional_header_offset = 0;
  std::uint16_t magic = 0;  ///< kMagicPe32 or kMagicPe32Plus
  bool pe32_plus() const { return magic == kMagicPe32Plus; }
  std::uint64_t entry_point = 0;  ///< AddressOfEntryPoint (RVA)
  std::uint64_t image_base = 0;
  std::uint32_t size_of_image = 0;
  std::uint32_t size_of_headers = 0;
  std::uint64_t checksum_offset = 0;  ///< file offset of the 4-byte CheckSum field
  std::uint32_t checksum = 0;
  std::uint16_t subsystem = 0;  ///< 10 EFI application, 11 boot service driver, 12 runtime driver
  std::uint32_t number_of_rva_and_sizes = 0;
  /// The data directories present (NumberOfRvaAndSizes of them).
  std::vector<DataDirectory> data_directories;
  /// File offset of directory entry 4 (8 bytes), when NumberOfRvaAndSizes > 4.
  std::optional<std::uint64_t> certificate_directory_offset;
  /// Directory entry 4 (zeros when absent): VirtualAddress is the file offset of the
  /// Attribute Certificate Table, Size its length in bytes.
  DataDirectory certificate_table;
  std::uint64_t section_table_offset = 0;
  std::vector<Section> sections;             ///< in Section Table order
  std::vector<WinCertificate> certificates;  ///< in table order
};

/// Read the headers, the Section Table and the Attribute Certificate Table of the PE/COFF
/// image `file` (the whole file).  Refuses, with KErr::ebadmsg and a message that names the
/// field and its file offset (hex):
///  - a file shorter than the 64-byte MS-DOS header, no "MZ", an e_lfanew that leaves no room
///    for the signature and the COFF File Header, no "PE\0\0" signature;
///  - an Optional Header beyond the file or shorter than its fixed part, a magic other than
///    0x10b/0x20b, NumberOfRvaAndSizes whose directories do not fit SizeOfOptionalHeader;
///  - NumberOfSections above kMaxSections, a Section Table beyond the file or beyond
///    SizeOfHeaders, SizeOfHeaders beyond the file, a section's raw data beyond the file;
///  - a Certificate Table with offset 0, beyond the file, or overlapping the headers or
///    a section's raw data; a WIN_CERTIFICATE whose dwLength is below 8 or runs past the
///    table, or a remainder too short for another header.
/// Unknown machines, other WIN_CERTIFICATE revisions and types are reported, not refused.
Result<PeImage> parse(ByteView file);

}  // namespace modsign::pe
