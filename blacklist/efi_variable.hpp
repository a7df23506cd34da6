// modsign's own: the EFI variable containers (efivarfs attribute prefix, EFI_VARIABLE_AUTHENTICATION_2, EFI_TIME) and
// writing/merging EFI_SIGNATURE_LISTs; not a kernel file The containers a dbx arrives in (bare list, efivarfs dump,
// signed EFI_VARIABLE_AUTHENTICATION_2 update) and the writing side.  Formats: UEFI 2.10 §8.2.2
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
// EFI_TIME (UEFI 2.10 §8.3): the public modsign::EfiTime.
using EfiTime = modsign::EfiTime;

// ---------------------------------------------------------------------------------------
// Containers: bare list, efivarfs dump, EFI_VARIABLE_AUTHENTICATION_2

/// The container of a variable file (public modsign::EfiContainer).
using Container = modsign::EfiContainer;
/// "esl", "efivarfs", "auth2" ("detect" for Container::detect).
std::string_view container_name(Container c);
/// Inverse of container_name() ("auto" is accepted for detect); nullopt otherwise.
std::optional<Container> parse_container(std::string_view name);

/// EFI variable attributes (UEFI 2.10 §8.2).
inline constexpr std::uint32_t kAttrNonVolatile = 0x01, kAttrBootserviceAccess = 0x02, kAttrRuntimeAccess = 0x04,
                               kAttrHardwareErrorRecord = 0x08, kAttrAuthenticatedWriteAccess = 0x10,
                               kAttrTimeBasedAuthenticatedWriteAccess = 0x20, kAttrAppendWrite = 0x40;

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

/// EFI_VARIABLE_AUTHENTICATION_2 header and a whole variable file: the public plain data of
/// include/modsign/dbx.hpp.
using Auth2Header = modsign::EfiAuth2Header;
using VariableFile = modsign::EfiVariableFile;

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

/// One entry in flat form, with its list type (public modsign::EfiEntry).
using FlatEntry = modsign::EfiEntry;

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
  std::vector<FlatEntry> entries;  ///< unique (type, data), first seen kept, input order
  std::size_t duplicates = 0;      ///< entries dropped as identical (type, data)
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

/// What firmware makes of an EFI_VARIABLE_AUTHENTICATION_2 TimeStamp, as notes for a
/// listing (none for a well-formed one): UEFI 2.10 §8.2.2 requires Pad1, Nanosecond,
/// TimeZone, Daylight and Pad2 to be 0, and EDK2's VerifyTimeBasedPayload
/// (SecurityPkg/Library/AuthVariableLib/AuthService.c) refuses the update otherwise
/// (EFI_SECURITY_VIOLATION): "timestamp: Nanosecond 5, TimeZone 60 not 0: EDK2 refuses this
/// update (EFI_SECURITY_VIOLATION; UEFI 2.10 §8.2.2 requires Pad1, Nanosecond, TimeZone,
/// Daylight and Pad2 to be 0)"; a field outside EFI_TIME's ranges (§8.3: Month 1-12, Day
/// 1-31, Hour 0-23, Minute and Second 0-59): "timestamp: Month 13 is outside 1-12 (UEFI 2.10
/// §8.3)".  EDK2 compares, but does not range-check, the date.
std::vector<std::string> timestamp_notes(const EfiTime& t);

}  // namespace modsign::blacklist::efi
