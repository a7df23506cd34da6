// UEFI signature databases (db, dbx, MokListRT, MokListXRT) as the Linux kernel reads them:
// EFI GUIDs, EFI_SIGNATURE_LIST parsing with the kernel's validation, the containers a dbx
// arrives in (bare list, efivarfs dump, signed EFI_VARIABLE_AUTHENTICATION_2 update), the
// per-variable handlers of security/integrity/platform_certs, and writing/merging lists.
//
// Kernel references (Linux 7.2.13):
//   parse_efi_signature_list()       security/integrity/platform_certs/efi_parser.c:37-108
//   get_handler_for_db/_mok/_dbx()   security/integrity/platform_certs/keyring_handler.c:50-102
//   load_uefi_certs()                security/integrity/platform_certs/load_uefi.c:160-237
//   mark_hash_blacklisted()          certs/blacklist.c:205-217 (get_raw_hash 147-177)
//   add_key_to_revocation_list()     certs/blacklist.c:263-283
//   EFI_GUID(), efi_signature_list_t include/linux/efi.h:77-80, 611-623
// Formats: UEFI 2.10 §32.4.1 (EFI_SIGNATURE_LIST), §8.2.2 (EFI_VARIABLE_AUTHENTICATION_2),
// §8.3 (EFI_TIME); efivarfs (Documentation/filesystems/efivarfs.rst).
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blacklist/sources.hpp"
#include "cms/kernel.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"

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
// The kernel's handlers (keyring_handler.c)

/// The variables load_uefi_certs() reads and the handler each gets.
enum class Variable {
  db,          ///< get_handler_for_db: EFI_CERT_X509 -> .platform keyring
  dbx,         ///< get_handler_for_dbx
  MokListRT,   ///< get_handler_for_mok: EFI_CERT_X509 -> .machine (trusted MOK) or .platform
  MokListXRT,  ///< get_handler_for_dbx
};
std::string_view variable_name(Variable v);
/// "db", "dbx", "MokListRT", "MokListXRT" (exact spelling); nullopt otherwise.
std::optional<Variable> parse_variable(std::string_view name);

/// What one entry becomes in the kernel.
enum class EntryKind {
  binary_hash,           ///< dbx EFI_CERT_SHA256: mark_hash_blacklisted(BINARY) -> "bin:<hex>"
  tbs_hash,              ///< dbx EFI_CERT_X509_SHA256: mark_hash_blacklisted(X509_TBS) over all
                         ///< signature_size-16 bytes -> "tbs:<hex>" (96 hex for 48 bytes)
  revoked_certificate,   ///< dbx EFI_CERT_X509: add_key_to_revocation_list(), an "asymmetric" key in
                         ///< .blacklist; only with CONFIG_SYSTEM_REVOCATION_LIST (otherwise a stub
                         ///< that returns 0, include/keys/system_keyring.h:100-103)
  platform_certificate,  ///< db/MokListRT EFI_CERT_X509: add_to_platform_keyring()
                         ///< (MokListRT: add_to_machine_keyring() when MOK keys are trusted)
  ignored,               ///< no handler for the list's type in this variable
};
/// "bin", "tbs", "revoked", "platform", "ignored".
std::string_view entry_kind_name(EntryKind k);

/// One entry with the kernel's outcome.
struct EntryEffect {
  std::size_t list = 0, entry = 0;  ///< 0-based positions in ParsedLists::lists / entries
  EntryKind kind = EntryKind::ignored;
  /// binary_hash / tbs_hash: the key description mark_hash_blacklisted() builds
  /// (get_raw_hash: prefix ':' lower-case hex of every byte of the entry data).
  std::string description;
  /// binary_hash / tbs_hash: the description fails blacklist_vet_description() (data of 0
  /// bytes -> EINVAL, more than 64 bytes -> ENOPKG): the kernel logs "Problem blacklisting
  /// hash" and adds nothing.  Certificates: x509 parse failure (EBADMSG/ENOPKG; EINVAL for 0
  /// bytes): the kernel logs "Problem with revocation key (%ld)" / "Problem loading X.509
  /// certificate" and adds nothing.  none when the key is added.
  KErr key_error = KErr::none;
  /// Certificates refused by x509_supported() (the profile cannot load them, e.g. ML-DSA on
  /// v6: ENOPKG): its explanation, as `modsign verify --revoked` prints it; "" otherwise.
  std::string key_error_reason;
  /// tbs_hash whose data length no lookup of x509_get_sig_params() can have, so the entry
  /// blocks nothing: 7.0 looks up the SHA-256 of the TBS ("tbs:<64 hex>"), so any length
  /// but 32; v6 the TBS digest in the certificate's signature hash, so any length but 20,
  /// 28, 32, 48 or 64 (a 48-byte dbx EFI_CERT_X509_SHA256 entry is "never matches" for
  /// 7.0 only).
  bool never_matches = false;
  std::optional<crypto::Certificate> cert;  ///< parsed EFI_CERT_X509 data
  /// "bin:<hex>", "tbs:<96 hex> (never matches)", "revoked certificate",
  /// "platform keyring certificate", "ignored", with " (not added: EINVAL)" when refused.
  std::string text;
};

/// The kernel's view of one variable.
struct VariableEffects {
  Variable variable = Variable::dbx;
  std::vector<EntryEffect> entries;                  ///< every entry of every parsed list, in order
  std::vector<crypto::Certificate> keyring_certificates;  ///< db/MokListRT certificates the kernel loads
  std::vector<crypto::Certificate> revoked_certificates;  ///< dbx/MokListXRT revoked certificates
  std::vector<std::string> notes;                    ///< e.g. the never-matching tbs: entries
};

/// The certificate x509_cert_parse() finds in an EFI_CERT_X509 entry's data: the first DER
/// element, parsed by crypto::Certificate::from_der().  Bytes after it (padding) are
/// ignored, as lib/asn1_decoder.c ignores them (ASN1_OP_COMPLETE returns without checking
/// dp == datalen, Linux 7.2.13); `trailing` gets their count (0 on error).  Errors:
/// from_der()'s EBADMSG for data that is not a certificate (also when empty).
Result<crypto::Certificate> parse_entry_certificate(ByteView data, std::size_t& trailing);

/// Run the handler get_handler_for_{db,mok,dbx}() returns for each list's type over every
/// entry of `lists` (keyring_handler.c:50-102).  A certificate is refused (key_error) as
/// x509_key_preparse would refuse it: EINVAL for 0 bytes (asymmetric_key_preparse),
/// EBADMSG when it does not parse, ENOPKG for an algorithm `profile` does not support
/// (kernel::x509_supported), EKEYREJECTED when its TBS hash is in `blacklist` (7.0: SHA-256
/// of the TBS; v6: the signature's hash; x509_get_sig_params).  Not modelled: a
/// self-signed certificate whose own signature fails (x509_check_for_self_signed).  Bytes
/// after the certificate's DER element are ignored, as lib/asn1_decoder.c ignores them
/// (ASN1_OP_COMPLETE does not check for trailing data), with a note naming their count.
/// Never throws.
VariableEffects apply_handlers(const ParsedLists& lists, Variable v,
                               const kernel::KernelProfile& profile = kernel::KernelProfile::v7_0(),
                               const kernel::Blacklist* blacklist = nullptr);

/// Load a dbx / MokListXRT into `out` as load_uefi_certs() does: every bin:/tbs: key
/// (duplicates keep their first origin first, as mark_hash_blacklisted's -EEXIST does) and
/// every revoked certificate, with Origin{file, "list L entry E (TYPE)"} (1-based L, E).
/// Notes for never-matching tbs: entries go to out.notes.  Entries the kernel would refuse
/// are not added (a note says so); a revoked certificate is checked against `out.keyring`
/// as it stands when the entry is reached (the kernel loads dbx after the build-time
/// hash list, at late_initcall).  `v` must be dbx or MokListXRT (std::invalid_argument
/// otherwise).  Returns the variable's parse status (EBADMSG when parsing stopped; the
/// entries before it are added, as in the kernel).
Status add_to_sources(const ParsedLists& lists, Variable v, const std::string& file, Sources& out,
                      const kernel::KernelProfile& profile = kernel::KernelProfile::v7_0());

/// Read `path` (at most kMaxSmallFileSize, 16 MiB), parse it per `form` and add_to_sources().
/// Errors: EBADMSG for a container error or a payload error (message "byte offset N: ..."
/// or "EFI_SIGNATURE_LIST at byte offset N: ..." without the path, for complain(path, msg);
/// entries before a payload error are still added).  Throws IoError if unreadable.
Status load_dbx_file(const std::string& path, Sources& out, Variable v = Variable::dbx,
                     Container form = Container::detect,
                     const kernel::KernelProfile& profile = kernel::KernelProfile::v7_0());

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
