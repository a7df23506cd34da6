// modsign's own: the EFI variable containers (efivarfs attribute prefix, EFI_VARIABLE_AUTHENTICATION_2, EFI_TIME) and writing/merging EFI_SIGNATURE_LISTs; not a kernel file
// The containers a dbx arrives in (bare list, efivarfs dump, signed
// EFI_VARIABLE_AUTHENTICATION_2 update) and the writing side.  Formats: UEFI 2.10 §8.2.2
// (EFI_VARIABLE_AUTHENTICATION_2), §8.3 (EFI_TIME), §32.4.1; efivarfs
// (Documentation/filesystems/efivarfs.rst); dbxtool's guess_file_type().
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blacklist/efi_parser.hpp"
#include "common/result.hpp"

namespace modsign::blacklist::efi {

// ---------------------------------------------------------------------------------------
// EFI_TIME (UEFI 2.10 §8.3), 16 bytes, little-endian:
//   u16 Year, u8 Month, Day, Hour, Minute, Second, Pad1, u32 Nanosecond, i16 TimeZone,
//   u8 Daylight, Pad2.
struct EfiTime {
  std::uint16_t year = 0;
  std::uint8_t month = 0, day = 0, hour = 0, minute = 0, second = 0, pad1 = 0;
  std::uint32_t nanosecond = 0;
  std::int16_t time_zone = 0;  ///< minutes from UTC; 0x07FF = EFI_UNSPECIFIED_TIMEZONE
  std::uint8_t daylight = 0, pad2 = 0;

  static constexpr std::size_t kSize = 16;
  /// Decode 16 bytes at `p` (caller guarantees them).
  static EfiTime from_bytes(const std::uint8_t* p);
  /// Parse "YYYY-MM-DD HH:MM:SS" or "YYYY-MM-DDTHH:MM:SS" (optionally with a trailing
  /// "Z"); other fields zero.  nullopt for other text or out-of-range fields.
  static std::optional<EfiTime> parse(std::string_view text);
  /// The 16 stored bytes.
  std::array<std::uint8_t, kSize> bytes() const;
  /// "YYYY-MM-DD HH:MM:SS" (fields printed as stored, even when out of range).
  std::string str() const;
  bool operator==(const EfiTime&) const = default;
};

// ---------------------------------------------------------------------------------------
// Containers: bare list, efivarfs dump, EFI_VARIABLE_AUTHENTICATION_2

enum class Container {
  detect,    ///< choose as described at detect_container()
  esl,       ///< the variable's data: EFI_SIGNATURE_LISTs only (what the kernel reads)
  efivarfs,  ///< /sys/firmware/efi/efivars/<name>-<guid>: u32 LE attributes, then the data
  auth2,     ///< signed update: EFI_VARIABLE_AUTHENTICATION_2, then the data
};
/// "esl", "efivarfs", "auth2" ("detect" for Container::detect).
std::string_view container_name(Container c);
/// Inverse of container_name() ("auto" is accepted for detect); nullopt otherwise.
std::optional<Container> parse_container(std::string_view name);

/// EFI variable attributes (UEFI 2.10 §8.2).
inline constexpr std::uint32_t kAttrNonVolatile = 0x01, kAttrBootserviceAccess = 0x02,
                               kAttrRuntimeAccess = 0x04, kAttrHardwareErrorRecord = 0x08,
                               kAttrAuthenticatedWriteAccess = 0x10,
                               kAttrTimeBasedAuthenticatedWriteAccess = 0x20,
                               kAttrAppendWrite = 0x40;

/// The container dbxtool's guess_file_type() would see (rhboot/dbxtool src/dbxtool.c), in
/// this order:
///  1. auth2 if at least 40 bytes and the CertType GUID at offset 24 is
///     EFI_CERT_TYPE_PKCS7_GUID (dbxtool also accepts EFI_CERT_TYPE_RSA2048_SHA256, which
///     modsign does not parse);
///  2. efivarfs if byte 0 has no bits above 0x7f, bytes 1-3 are zero, the file is longer
///     than 32 bytes and the GUID at offset 4 is a known signature type;
///  3. esl otherwise (dbxtool reports "unknown" unless the first GUID is a known type;
///     modsign parses such data as the kernel would, which fails with EBADMSG or skips
///     lists of unknown type).
/// An empty file is an esl with no lists (the kernel returns 0 for it).
Container detect_container(ByteView data);

/// WIN_CERTIFICATE_UEFI_GUID of an EFI_VARIABLE_AUTHENTICATION_2 (UEFI 2.10 §8.2.2, §32.2.4).
struct Auth2Header {
  EfiTime timestamp;               ///< bytes 0-15
  std::uint32_t dw_length = 0;     ///< bytes 16-19: header (8) + CertType (16) + CertData
  std::uint16_t revision = 0;      ///< bytes 20-21: 0x0200
  std::uint16_t certificate_type = 0;  ///< bytes 22-23: WIN_CERT_TYPE_EFI_GUID 0x0EF1
  Guid cert_type;                  ///< bytes 24-39: EFI_CERT_TYPE_PKCS7_GUID
  Bytes pkcs7;                     ///< CertData: DER SignedData, dw_length - 24 bytes (not verified)
  std::uint64_t pkcs7_offset = 40; ///< file offset of CertData
};

/// A whole variable file: the container, and the lists of its payload.
struct VariableFile {
  Container form = Container::esl;
  std::optional<std::uint32_t> attributes;  ///< efivarfs only
  std::optional<Auth2Header> auth;          ///< auth2 only
  std::uint64_t payload_offset = 0;         ///< where the EFI_SIGNATURE_LISTs start
  ParsedLists lists;                        ///< may carry the kernel's EBADMSG
};

/// Split `data` per `form` (detect: detect_container()) and parse the payload with
/// parse_signature_lists().  Container errors (the value is not returned; EBADMSG):
///   efivarfs shorter than 4 bytes;
///   auth2 shorter than 40 bytes, wRevision != 0x0200, wCertificateType != 0x0EF1,
///   CertType != EFI_CERT_TYPE_PKCS7_GUID, dwLength < 24 or 16 + dwLength > file size.
/// Messages name the byte offset: "byte offset 16: dwLength 99999 exceeds ...".  A payload
/// error is not a failure of this function: it is in `lists.error` next to the lists
/// parsed before it.  Never throws.
Result<VariableFile> parse_variable_file(ByteView data, Container form = Container::detect);

// ---------------------------------------------------------------------------------------
// Writing

/// One entry in flat form, with its list type.
struct FlatEntry {
  Guid type;
  Guid owner;
  Bytes data;
};

/// Serialize lists exactly as given (header bytes kept; list/header/signature sizes
/// recomputed from the content).  Every entry of a list must have signature_size-16 bytes
/// of data (std::invalid_argument otherwise, also for an empty list or sizes above
/// 0xffffffff).  parse_signature_lists() of the result gives back the same lists, and
/// serializing a parsed well-formed file gives back the same bytes.
Bytes write_lists(const std::vector<SignatureList>& lists);

/// Build lists from flat entries: EFI_CERT_X509 entries one certificate per list (as
/// efitools cert-to-efi-sig-list and sbsiglist do); other types grouped one list per
/// (type, owner, data size), lists in order of each group's first entry and entries in
/// input order (efitools/sbsiglist put one owner in a list).  Throws std::invalid_argument
/// for an entry with no data.
std::vector<SignatureList> group_entries(const std::vector<FlatEntry>& entries);

/// EFI_CERT_X509_SHA256 entry data: the 32-byte SHA-256 of a TBSCertificate, then the
/// 16-byte EFI_TIME TimeOfRevocation (UEFI 2.10 §32.4.1).  std::invalid_argument if
/// `tbs_sha256` is not 32 bytes.
Bytes x509_sha256_data(ByteView tbs_sha256, const EfiTime& time_of_revocation);

/// De-duplicating merge of entries from several files.
struct Merge {
  std::vector<FlatEntry> entries;   ///< unique (type, data), first seen kept, input order
  std::size_t duplicates = 0;       ///< entries dropped as identical (type, data)
  /// Duplicates whose owner differs from the kept entry's:
  /// "<file>: list L entry E: <TYPE> already present with owner X; owner Y dropped".
  std::vector<std::string> owner_conflicts;
  /// Lists whose SignatureHeader bytes were dropped (non-zero header_size).
  std::vector<std::string> dropped_headers;

  /// Add every entry of `lists` (ignoring lists.error; callers refuse errored files).
  void add(const ParsedLists& lists, const std::string& file);
  /// write_lists(group_entries(entries)).
  Bytes serialize() const;
};

}  // namespace modsign::blacklist::efi
