// mirrors security/integrity/platform_certs/efi_parser.c parse_efi_signature_list (and the EFI_GUIDs of include/linux/efi.h), Linux 7.2.13
// UEFI signature databases (db, dbx, MokListRT, MokListXRT) as the Linux kernel reads them:
// EFI GUIDs and EFI_SIGNATURE_LIST parsing with the kernel's validation.
//   parse_efi_signature_list()       security/integrity/platform_certs/efi_parser.c:37-108
//   EFI_GUID(), efi_signature_list_t include/linux/efi.h:77-80, 611-623
// Format: UEFI 2.10 §32.4.1 (EFI_SIGNATURE_LIST).
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace modsign::blacklist::efi {

// ---------------------------------------------------------------------------------------
// GUIDs

/// An EFI_GUID as stored in firmware variables: 16 bytes, the first three fields
/// (u32, u16, u16) little-endian, the last 8 bytes in order ("mixed-endian").  Compared
/// bytewise like the kernel's efi_guidcmp() (memcmp).
struct Guid {
  std::array<std::uint8_t, 16> bytes{};

  /// EFI_GUID(a, b, c, d0..d7) of include/linux/efi.h:77.
  static constexpr Guid make(std::uint32_t a, std::uint16_t b, std::uint16_t c,
                             std::array<std::uint8_t, 8> d) {
    Guid g;
    g.bytes = {std::uint8_t(a), std::uint8_t(a >> 8), std::uint8_t(a >> 16), std::uint8_t(a >> 24),
               std::uint8_t(b), std::uint8_t(b >> 8), std::uint8_t(c), std::uint8_t(c >> 8),
               d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]};
    return g;
  }
  /// The 16 stored bytes at `p` (caller guarantees 16 readable bytes).
  static Guid from_bytes(const std::uint8_t* p);
  /// Parse the registry form "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (36 chars, hex of
  /// either case, dashes at 8/13/18/23).  nullopt on any other text.
  static std::optional<Guid> parse(std::string_view text);
  /// Lower-case registry form, e.g. "c1c41626-504c-4092-aca9-41f936934328".
  std::string str() const;
  bool is_zero() const;
  auto operator<=>(const Guid&) const = default;
};

/// Named GUIDs (ecosystem.md §3.2; the kernel's include/linux/efi.h:367-403 for those it has).
namespace guids {
inline constexpr Guid global_variable = Guid::make(0x8be4df61, 0x93ca, 0x11d2, {0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c});
inline constexpr Guid image_security_database = Guid::make(0xd719b2cb, 0x3d3a, 0x4596, {0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f});
inline constexpr Guid shim_lock = Guid::make(0x605dab50, 0xe046, 0x4300, {0xab, 0xb6, 0x3d, 0xd8, 0x10, 0xdd, 0x8b, 0x23});
inline constexpr Guid cert_sha256 = Guid::make(0xc1c41626, 0x504c, 0x4092, {0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93, 0x43, 0x28});
inline constexpr Guid cert_x509 = Guid::make(0xa5c059a1, 0x94e4, 0x4aa7, {0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72});
inline constexpr Guid cert_x509_sha256 = Guid::make(0x3bd2a492, 0x96c0, 0x4079, {0xb4, 0x20, 0xfc, 0xf9, 0x8e, 0xf1, 0x03, 0xed});
inline constexpr Guid cert_x509_sha384 = Guid::make(0x7076876e, 0x80c2, 0x4ee6, {0xaa, 0xd2, 0x28, 0xb3, 0x49, 0xa6, 0x86, 0x5b});
inline constexpr Guid cert_x509_sha512 = Guid::make(0x446dbf63, 0x2502, 0x4cda, {0xbc, 0xfa, 0x24, 0x65, 0xd2, 0xb0, 0xfe, 0x9d});
inline constexpr Guid cert_type_pkcs7 = Guid::make(0x4aafd29d, 0x68df, 0x49ee, {0x8a, 0xa9, 0x34, 0x7d, 0x37, 0x56, 0x65, 0xa7});
inline constexpr Guid cert_rsa2048 = Guid::make(0x3c5766e8, 0x269c, 0x4e34, {0xaa, 0x14, 0xed, 0x77, 0x6e, 0x85, 0xb3, 0xb6});
inline constexpr Guid cert_sha1 = Guid::make(0x826ca512, 0xcf10, 0x4ac9, {0xb1, 0x87, 0xbe, 0x01, 0x49, 0x66, 0x31, 0xbd});
inline constexpr Guid cert_sha224 = Guid::make(0x0b6e5233, 0xa65c, 0x44c9, {0x94, 0x07, 0xd9, 0xab, 0x83, 0xbf, 0xc8, 0xbd});
inline constexpr Guid cert_sha384 = Guid::make(0xff3e5307, 0x9fd0, 0x48c9, {0x85, 0xf1, 0x8a, 0xd5, 0x6c, 0x70, 0x1e, 0x01});
inline constexpr Guid cert_sha512 = Guid::make(0x093e0fae, 0xa6c4, 0x4f50, {0x9f, 0x1b, 0xd4, 0x1e, 0x2b, 0x89, 0xc1, 0x9a});
/// Microsoft's SignatureOwner in its dbx updates.
inline constexpr Guid microsoft_owner = Guid::make(0x77fa9abd, 0x0359, 0x4d32, {0xbd, 0x60, 0x28, 0xf4, 0xe7, 0x8f, 0x78, 0x4b});
}  // namespace guids

/// The macro-style name of a known GUID ("EFI_CERT_SHA256_GUID", "EFI_SHIM_LOCK_GUID",
/// "MICROSOFT_OWNER", ...), or "" if unknown.
std::string_view guid_name(const Guid& g);
/// Short name of a signature type for listings ("EFI_CERT_SHA256"), or the GUID text.
std::string type_name(const Guid& type);
/// Known SignatureType GUIDs (every EFI_CERT_* above), used by container auto-detection.
bool is_known_signature_type(const Guid& type);

namespace detail {
/// sizeof(efi_signature_list_t) and of the SignatureOwner that starts each
/// EFI_SIGNATURE_DATA (include/linux/efi.h).
inline constexpr std::uint64_t kListHeader = 28;
inline constexpr std::uint64_t kOwner = 16;
/// The little-endian u32 at `p` (caller guarantees 4 bytes).
inline std::uint32_t le32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 | std::uint32_t(p[3]) << 24;
}
}  // namespace detail

// ---------------------------------------------------------------------------------------
// EFI_SIGNATURE_LIST parsing (parse_efi_signature_list)

/// One EFI_SIGNATURE_DATA: SignatureOwner then signature_size-16 bytes of data.
struct SignatureEntry {
  Guid owner;
  Bytes data;               ///< signature_size - 16 bytes (what the kernel handler receives)
  std::uint64_t offset = 0;  ///< byte offset of the entry (its owner GUID) in the input file
};

/// One EFI_SIGNATURE_LIST that passed the kernel's size checks.
struct SignatureList {
  Guid type;                        ///< SignatureType
  std::uint32_t list_size = 0;      ///< SignatureListSize (whole list, header included)
  std::uint32_t header_size = 0;    ///< SignatureHeaderSize
  std::uint32_t signature_size = 0; ///< SignatureSize (each EFI_SIGNATURE_DATA, owner included)
  Bytes header;                     ///< SignatureHeader bytes (normally empty)
  std::vector<SignatureEntry> entries;
  std::uint64_t offset = 0;         ///< byte offset of the list in the input file
};

/// The lists of a variable, and the error that stopped parsing, if any.  The kernel's
/// handlers have already run on every entry of every list before the failing one, so those
/// keys stay loaded: `lists` holds exactly the lists the kernel processed completely.
struct ParsedLists {
  std::vector<SignatureList> lists;
  std::optional<Error> error;            ///< EBADMSG (the only error the kernel returns)
  std::uint64_t error_offset = 0;        ///< file offset of the list that failed
  /// The kernel's return value: 0 or -EBADMSG.
  Status status() const { return error ? Status(*error) : ok_status(); }
};

/// Mirrors parse_efi_signature_list() (efi_parser.c:37-108) over `data`, with every
/// structurally valid list recorded (the kernel's per-type handler choice is applied
/// later by apply_handlers(): validation does not depend on the type, and a list whose type
/// has no handler is skipped whole).  For each list, in order:
///   bytes left < 28                                  -> EBADMSG (":52")
///   signature_list_size > bytes left                 -> EBADMSG ("overrun", :66)
///   signature_list_size < 28, list_size-28 < header_size, signature_size < 16,
///   elements size (list_size-28-header_size) < signature_size, or not a multiple of it
///                                                    -> EBADMSG ("bad size combo", :72-79)
/// All arithmetic is done in 64 bits on the u32 fields, so list_size 0xffffffff,
/// a huge header_size or signature_size cannot wrap.  Never throws for any input.
/// `base_offset` is added to every reported offset (the payload's position in the file).
/// Error messages: "EFI_SIGNATURE_LIST at byte offset N: <what>".
ParsedLists parse_signature_lists(ByteView data, std::uint64_t base_offset = 0);

}  // namespace modsign::blacklist::efi
