// mirrors security/integrity/platform_certs/efi_parser.c parse_efi_signature_list (and the EFI_GUIDs of
// include/linux/efi.h), Linux 7.2.13 UEFI signature databases (db, dbx, MokListRT, MokListXRT) as the Linux kernel
// reads them: EFI GUIDs and EFI_SIGNATURE_LIST parsing with the kernel's validation.
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
#include "modsign/dbx.hpp"

namespace modsign::blacklist::efi {

// ---------------------------------------------------------------------------------------
// GUIDs

/// An EFI_GUID (the public modsign::EfiGuid, include/modsign/dbx.hpp).
using Guid = modsign::EfiGuid;

/// Named GUIDs: the public modsign::efi_guids (include/modsign/dbx.hpp).
namespace guids = modsign::efi_guids;

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

/// EFI_SIGNATURE_DATA, EFI_SIGNATURE_LIST and a variable's lists: the public plain data of
/// include/modsign/dbx.hpp.
using SignatureEntry = modsign::EfiSignatureEntry;
using SignatureList = modsign::EfiSignatureList;
using ParsedLists = modsign::EfiSignatureLists;

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
