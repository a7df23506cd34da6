// modsign — UEFI signature databases (db, dbx, MokListRT, MokListXRT) as the Linux kernel
// reads them: EFI variable files (bare EFI_SIGNATURE_LISTs, efivarfs copies, signed
// EFI_VARIABLE_AUTHENTICATION_2 updates), what the kernel's handlers make of every entry,
// and writing lists (merge, add-hash, add-cert).
//
// Mirrors security/integrity/platform_certs/efi_parser.c parse_efi_signature_list(),
// keyring_handler.c get_handler_for_db/_mok/_dbx() and load_uefi.c load_uefi_certs(),
// Linux 7.2.13.  Formats: UEFI 2.10 §8.2.2 (EFI_VARIABLE_AUTHENTICATION_2), §8.3
// (EFI_TIME), §32.4.1 (EFI_SIGNATURE_LIST); efivarfs (Documentation/filesystems/efivarfs.rst).
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/profile.hpp"
#include "modsign/result.hpp"

namespace modsign {

/// An EFI_GUID as stored in firmware variables: 16 bytes, the first three fields (u32,
/// u16, u16) little-endian, the last 8 bytes in order.  Compared bytewise, as the
/// kernel's efi_guidcmp() (memcmp) compares them.
struct EfiGuid {
  std::array<std::uint8_t, 16> bytes{};

  /// EFI_GUID(a, b, c, d0..d7) of include/linux/efi.h.
  static constexpr EfiGuid make(std::uint32_t a, std::uint16_t b, std::uint16_t c, std::array<std::uint8_t, 8> d) {
    EfiGuid g;
    g.bytes = {std::uint8_t(a),
               std::uint8_t(a >> 8),
               std::uint8_t(a >> 16),
               std::uint8_t(a >> 24),
               std::uint8_t(b),
               std::uint8_t(b >> 8),
               std::uint8_t(c),
               std::uint8_t(c >> 8),
               d[0],
               d[1],
               d[2],
               d[3],
               d[4],
               d[5],
               d[6],
               d[7]};
    return g;
  }
  /// The 16 stored bytes at `p` (the caller guarantees 16 readable bytes).
  MODSIGN_API static EfiGuid from_bytes(const std::uint8_t* p);
  /// The registry form "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (36 characters, hex of either
  /// case, dashes at 8/13/18/23); nullopt for any other text.
  MODSIGN_API static std::optional<EfiGuid> parse(std::string_view text);
  /// Lower-case registry form, e.g. "c1c41626-504c-4092-aca9-41f936934328".
  MODSIGN_API std::string str() const;
  MODSIGN_API bool is_zero() const;
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 flags a defaulted <=>
  auto operator<=>(const EfiGuid&) const = default;
};

/// Named GUIDs (docs/ecosystem.md §3.2; include/linux/efi.h for those the kernel has):
/// EFI_GLOBAL_VARIABLE, EFI_IMAGE_SECURITY_DATABASE, EFI_SHIM_LOCK, the EFI_CERT_* signature
/// types, EFI_CERT_TYPE_PKCS7 and Microsoft's SignatureOwner.
namespace efi_guids {
inline constexpr EfiGuid global_variable =
    EfiGuid::make(0x8be4df61, 0x93ca, 0x11d2, {0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c});
inline constexpr EfiGuid image_security_database =
    EfiGuid::make(0xd719b2cb, 0x3d3a, 0x4596, {0xa3, 0xbc, 0xda, 0xd0, 0x0e, 0x67, 0x65, 0x6f});
inline constexpr EfiGuid shim_lock =
    EfiGuid::make(0x605dab50, 0xe046, 0x4300, {0xab, 0xb6, 0x3d, 0xd8, 0x10, 0xdd, 0x8b, 0x23});
inline constexpr EfiGuid cert_sha256 =
    EfiGuid::make(0xc1c41626, 0x504c, 0x4092, {0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93, 0x43, 0x28});
inline constexpr EfiGuid cert_x509 =
    EfiGuid::make(0xa5c059a1, 0x94e4, 0x4aa7, {0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72});
inline constexpr EfiGuid cert_x509_sha256 =
    EfiGuid::make(0x3bd2a492, 0x96c0, 0x4079, {0xb4, 0x20, 0xfc, 0xf9, 0x8e, 0xf1, 0x03, 0xed});
inline constexpr EfiGuid cert_x509_sha384 =
    EfiGuid::make(0x7076876e, 0x80c2, 0x4ee6, {0xaa, 0xd2, 0x28, 0xb3, 0x49, 0xa6, 0x86, 0x5b});
inline constexpr EfiGuid cert_x509_sha512 =
    EfiGuid::make(0x446dbf63, 0x2502, 0x4cda, {0xbc, 0xfa, 0x24, 0x65, 0xd2, 0xb0, 0xfe, 0x9d});
inline constexpr EfiGuid cert_type_pkcs7 =
    EfiGuid::make(0x4aafd29d, 0x68df, 0x49ee, {0x8a, 0xa9, 0x34, 0x7d, 0x37, 0x56, 0x65, 0xa7});
inline constexpr EfiGuid cert_rsa2048 =
    EfiGuid::make(0x3c5766e8, 0x269c, 0x4e34, {0xaa, 0x14, 0xed, 0x77, 0x6e, 0x85, 0xb3, 0xb6});
inline constexpr EfiGuid cert_sha1 =
    EfiGuid::make(0x826ca512, 0xcf10, 0x4ac9, {0xb1, 0x87, 0xbe, 0x01, 0x49, 0x66, 0x31, 0xbd});
inline constexpr EfiGuid cert_sha224 =
    EfiGuid::make(0x0b6e5233, 0xa65c, 0x44c9, {0x94, 0x07, 0xd9, 0xab, 0x83, 0xbf, 0xc8, 0xbd});
inline constexpr EfiGuid cert_sha384 =
    EfiGuid::make(0xff3e5307, 0x9fd0, 0x48c9, {0x85, 0xf1, 0x8a, 0xd5, 0x6c, 0x70, 0x1e, 0x01});
inline constexpr EfiGuid cert_sha512 =
    EfiGuid::make(0x093e0fae, 0xa6c4, 0x4f50, {0x9f, 0x1b, 0xd4, 0x1e, 0x2b, 0x89, 0xc1, 0x9a});
/// Microsoft's SignatureOwner in its dbx updates.
inline constexpr EfiGuid microsoft_owner =
    EfiGuid::make(0x77fa9abd, 0x0359, 0x4d32, {0xbd, 0x60, 0x28, 0xf4, 0xe7, 0x8f, 0x78, 0x4b});
/// Owner of Microsoft's SVN records in dbx (an EFI_CERT_SHA256 entry that is no hash).
inline constexpr EfiGuid svn_owner =
    EfiGuid::make(0x9d132b6c, 0x59d5, 0x4388, {0xab, 0x1c, 0x18, 0x5c, 0xfc, 0xb2, 0xeb, 0x92});
/// EFI_BOOTMGR_DBXSVN_GUID: the Windows boot manager's SVN application GUID.
inline constexpr EfiGuid bootmgr_dbxsvn =
    EfiGuid::make(0x9d132b61, 0x59d5, 0x4388, {0xab, 0x1c, 0x18, 0x5c, 0x3c, 0xb2, 0xeb, 0x92});
}  // namespace efi_guids

/// EFI_TIME (UEFI 2.10 §8.3), 16 bytes little-endian: u16 Year, u8 Month, Day, Hour,
/// Minute, Second, Pad1, u32 Nanosecond, i16 TimeZone, u8 Daylight, Pad2.
struct EfiTime {
  std::uint16_t year = 0;
  std::uint8_t month = 0, day = 0, hour = 0, minute = 0, second = 0, pad1 = 0;
  std::uint32_t nanosecond = 0;
  std::int16_t time_zone = 0;  ///< minutes from UTC; 0x07FF = EFI_UNSPECIFIED_TIMEZONE
  std::uint8_t daylight = 0, pad2 = 0;

  static constexpr std::size_t kSize = 16;
  /// Decode the 16 bytes at `p` (the caller guarantees them).
  MODSIGN_API static EfiTime from_bytes(const std::uint8_t* p);
  /// "YYYY-MM-DD HH:MM:SS" or "YYYY-MM-DDTHH:MM:SS" (optionally with a trailing "Z"); the
  /// other fields zero.  nullopt for other text or out-of-range fields.
  MODSIGN_API static std::optional<EfiTime> parse(std::string_view text);
  /// The 16 stored bytes.
  MODSIGN_API std::array<std::uint8_t, kSize> bytes() const;
  /// "YYYY-MM-DD HH:MM:SS" (fields as stored, even when out of range).
  MODSIGN_API std::string str() const;
  bool operator==(const EfiTime&) const = default;
};

/// One EFI_SIGNATURE_DATA: SignatureOwner, then SignatureSize - 16 bytes of data.
struct EfiSignatureEntry {
  EfiGuid owner;
  Bytes data;                ///< SignatureSize - 16 bytes: what the kernel's handler receives
  std::uint64_t offset = 0;  ///< byte offset of the entry (its owner GUID) in the input file
};

/// One EFI_SIGNATURE_LIST that passed the kernel's size checks.
struct EfiSignatureList {
  EfiGuid type;                      ///< SignatureType
  std::uint32_t list_size = 0;       ///< SignatureListSize (whole list, 28-byte header included)
  std::uint32_t header_size = 0;     ///< SignatureHeaderSize
  std::uint32_t signature_size = 0;  ///< SignatureSize (each EFI_SIGNATURE_DATA, owner included)
  Bytes header;                      ///< SignatureHeader bytes (normally empty)
  std::vector<EfiSignatureEntry> entries;
  std::uint64_t offset = 0;  ///< byte offset of the list in the input file
};

/// The lists of a variable, and the error that stopped parsing, if any.  The kernel's
/// handlers have already run on every entry of the lists before the failing one, so those
/// keys stay loaded: `lists` holds exactly the lists the kernel processed completely.
struct EfiSignatureLists {
  std::vector<EfiSignatureList> lists;
  /// EBADMSG, the only error parse_efi_signature_list() returns; message
  /// "EFI_SIGNATURE_LIST at byte offset N: <what>".
  std::optional<Error> error;
  std::uint64_t error_offset = 0;  ///< file offset of the list that failed
  /// The kernel's return value: 0 or -EBADMSG.
  Status status() const { return error ? Status(*error) : ok_status(); }
};

/// The container a variable file arrives in.
enum class EfiContainer {
  detect,    ///< chosen as dbxtool's guess_file_type() would (see parse_efi_variable)
  esl,       ///< the variable's data: EFI_SIGNATURE_LISTs only (what the kernel reads)
  efivarfs,  ///< /sys/firmware/efi/efivars/<name>-<guid>: u32 LE attributes, then the data
  auth2,     ///< signed update: EFI_VARIABLE_AUTHENTICATION_2, then the data
};

/// WIN_CERTIFICATE_UEFI_GUID of an EFI_VARIABLE_AUTHENTICATION_2 (UEFI 2.10 §8.2.2).
struct EfiAuth2Header {
  EfiTime timestamp;                   ///< bytes 0-15
  std::uint32_t dw_length = 0;         ///< bytes 16-19: header (8) + CertType (16) + CertData
  std::uint16_t revision = 0;          ///< bytes 20-21: 0x0200
  std::uint16_t certificate_type = 0;  ///< bytes 22-23: WIN_CERT_TYPE_EFI_GUID 0x0EF1
  EfiGuid cert_type;                   ///< bytes 24-39: EFI_CERT_TYPE_PKCS7_GUID
  Bytes pkcs7;                         ///< CertData: DER SignedData, dw_length - 24 bytes (not verified)
  std::uint64_t pkcs7_offset = 40;     ///< file offset of CertData
};

/// A whole variable file: its container and the lists of its payload.
struct EfiVariableFile {
  EfiContainer form = EfiContainer::esl;
  std::optional<std::uint32_t> attributes;  ///< efivarfs only
  std::optional<EfiAuth2Header> auth;       ///< auth2 only
  std::uint64_t payload_offset = 0;         ///< where the EFI_SIGNATURE_LISTs start
  EfiSignatureLists lists;                  ///< may carry the kernel's EBADMSG
};

/// The variables load_uefi_certs() reads, each with its handler.
enum class EfiVariable {
  db,          ///< get_handler_for_db: EFI_CERT_X509 -> .platform keyring
  dbx,         ///< get_handler_for_dbx
  MokListRT,   ///< get_handler_for_mok: EFI_CERT_X509 -> .machine (trusted MOK) or .platform
  MokListXRT,  ///< get_handler_for_dbx
};

/// What the kernel makes of one entry.
enum class EfiEntryKind {
  binary_hash,           ///< dbx EFI_CERT_SHA256: mark_hash_blacklisted(BINARY) -> "bin:<hex>"
  tbs_hash,              ///< dbx EFI_CERT_X509_SHA256: mark_hash_blacklisted(X509_TBS) over all
                         ///< SignatureSize-16 bytes -> "tbs:<hex>" (96 hex for 48 bytes)
  revoked_certificate,   ///< dbx EFI_CERT_X509: add_key_to_revocation_list() (.blacklist);
                         ///< only with CONFIG_SYSTEM_REVOCATION_LIST
  platform_certificate,  ///< db/MokListRT EFI_CERT_X509: add_to_platform_keyring()
                         ///< (MokListRT: add_to_machine_keyring() when MOK keys are trusted)
  ignored,               ///< no handler for the list's type in this variable
};

/// One entry with the kernel's outcome.
struct EfiEntryEffect {
  std::size_t list = 0, entry = 0;  ///< 0-based positions in EfiSignatureLists::lists / entries
  EfiEntryKind kind = EfiEntryKind::ignored;
  /// binary_hash / tbs_hash: the key description get_raw_hash() builds (prefix ':'
  /// lower-case hex of every byte of the entry data).
  std::string description;
  /// binary_hash / tbs_hash: blacklist_vet_description() refuses the description (0 bytes
  /// EINVAL, more than 64 bytes ENOPKG) and nothing is added.  Certificates: the X.509
  /// parse fails (EBADMSG/ENOPKG; EINVAL for 0 bytes), or its tbs: key is listed
  /// (EKEYREJECTED).  KErr::none when the key is added.
  KErr key_error = KErr::none;
  /// A certificate the profile's kernel cannot load (x509_cert_parse, e.g. ML-DSA before
  /// 7.0: ENOPKG): the reason; "" otherwise.
  std::string key_error_reason;
  /// tbs_hash whose length no x509_get_sig_params() lookup has (7.0 looks up 32 bytes; v6
  /// 20, 28, 32, 48 or 64): the entry blocks nothing.
  bool never_matches = false;
  /// "bin:<hex>", "tbs:<96 hex> (never matches)", "revoked certificate", "platform keyring
  /// certificate", "machine/platform keyring certificate", "ignored", with " (not added:
  /// EINVAL)" when refused.
  std::string text;
};

/// "esl", "efivarfs", "auth2" ("detect" for EfiContainer::detect).
MODSIGN_API std::string_view efi_container_name(EfiContainer c);
/// Inverse of efi_container_name() ("auto" is accepted for detect); nullopt otherwise.
MODSIGN_API std::optional<EfiContainer> parse_efi_container(std::string_view name);
/// "db", "dbx", "MokListRT", "MokListXRT".
MODSIGN_API std::string_view efi_variable_name(EfiVariable v);
/// Inverse of efi_variable_name() (exact spelling); nullopt otherwise.
MODSIGN_API std::optional<EfiVariable> parse_efi_variable(std::string_view name);
/// "bin", "tbs", "revoked", "platform", "ignored".
MODSIGN_API std::string_view efi_entry_kind_name(EfiEntryKind k);
/// Short name of a SignatureType ("EFI_CERT_SHA256", "EFI_CERT_X509"), or the GUID text.
MODSIGN_API std::string efi_type_name(const EfiGuid& type);
/// Macro-style name of a known GUID ("EFI_CERT_SHA256_GUID", "MICROSOFT_OWNER", ...), or "".
MODSIGN_API std::string_view efi_guid_name(const EfiGuid& g);

/// Split `data` per `form` and parse the payload as parse_efi_signature_list() does.
/// Detection (dbxtool's guess_file_type order): auth2 if at least 40 bytes and the CertType
/// at offset 24 is EFI_CERT_TYPE_PKCS7_GUID; efivarfs if byte 0 has no bit above 0x7f,
/// bytes 1-3 are zero, the file is longer than 32 bytes and the GUID at offset 4 is a known
/// signature type; esl otherwise (an empty file is an esl with no lists).
/// A payload error is not a failure: it is in `lists.error`, after the lists parsed before
/// it.  Throws InputError "<name>: EBADMSG: <what>" for a container error (efivarfs under
/// 4 bytes; auth2 under 40 bytes, wRevision != 0x0200, wCertificateType != 0x0EF1, CertType
/// != EFI_CERT_TYPE_PKCS7_GUID, dwLength < 24 or beyond the file); `name` names the input.
MODSIGN_API EfiVariableFile parse_efi_variable_file(ByteView data, EfiContainer form, const std::string& name);
/// The same for the file at `path` (at most 16 MiB).  Throws IoError when it cannot be read.
MODSIGN_API EfiVariableFile read_efi_variable_file(const std::string& path, EfiContainer form = EfiContainer::detect);

// ------------------------------------------------------------------------- SVN records

/// A Secure Version Number record: the 32 data bytes of an EFI_CERT_SHA256 entry owned by
/// efi_guids::svn_owner are 0x01 ‖ application GUID (16 bytes, EFI_GUID byte order) ‖
/// minor (u16 LE) ‖ major (u16 LE) ‖ 11 zero bytes.  Firmware compares no image hash with
/// it; the kernel still turns it into a "bin:" key that no file hash matches.
struct EfiSvnRecord {
  EfiGuid application;
  std::uint16_t major = 0, minor = 0;
  /// "EFI_BOOTMGR_DBXSVN_GUID" for efi_guids::bootmgr_dbxsvn, "" for other applications.
  std::string application_name;
  std::string version() const { return std::to_string(major) + "." + std::to_string(minor); }
};
/// The SVN record in `data` when `owner` is efi_guids::svn_owner, `data` is 32 bytes and
/// starts with 0x01; nullopt otherwise (also when the padding is not zero).
MODSIGN_API std::optional<EfiSvnRecord> efi_svn_record(const EfiGuid& owner, ByteView data);

/// An EFI_CERT_X509 entry's certificate (the first DER element of its data).
struct EfiCertificateInfo {
  std::string subject;     ///< the subject as modsign prints it ("CN=..., O=...")
  std::string sha256;      ///< SHA-256 of the certificate's DER (lower-case hex)
  std::string tbs_sha256;  ///< SHA-256 of its TBSCertificate (the 7.0 tbs: key's hex)
};

/// One entry of a listing.
struct EfiListedEntry {
  EfiEntryEffect effect;
  /// EFI_CERT_X509 lists only: the certificate, or why the data is not one
  /// ("EBADMSG: <reason>") in `certificate_error`.
  std::optional<EfiCertificateInfo> certificate;
  std::string certificate_error;
  /// EFI_CERT_SHA256 entries owned by efi_guids::svn_owner that hold an SVN record: the
  /// record.  Its bin: key (effect.text) is one no file hash matches.
  std::optional<EfiSvnRecord> svn;
};

/// Counts of a listing, per EfiEntryKind.
struct EfiListingSummary {
  std::size_t lists = 0, entries = 0, bin = 0, tbs = 0, tbs_never_matching = 0, revoked = 0, platform = 0, ignored = 0;
  std::size_t svn = 0;  ///< entries with EfiListedEntry::svn (counted in `bin` too)
};

/// What the kernel does with one variable file (`modsign dbx list`).
struct EfiListing {
  EfiVariableFile file;
  EfiVariable variable = EfiVariable::dbx;
  std::vector<EfiListedEntry> entries;  ///< every entry of every list, in file order
  std::vector<std::string> notes;       ///< e.g. never-matching tbs: entries, ignored trailing bytes
  EfiListingSummary summary;
};

/// Run the handler get_handler_for_{db,mok,dbx}() gives each list's type over every entry
/// of `file` (keyring_handler.c), the certificates checked as x509_key_preparse() of the
/// `profile` kernel checks them (0 bytes EINVAL, not a certificate EBADMSG, unsupported
/// algorithm ENOPKG).  Never throws.
MODSIGN_API EfiListing list_efi_variable(EfiVariableFile file, EfiVariable variable, const KernelProfile& profile);

/// A de-duplicating merge (`modsign dbx merge`).
struct EfiMerge {
  Bytes lists;                    ///< the EFI_SIGNATURE_LISTs written (no container)
  std::size_t entries = 0;        ///< entries written
  std::size_t list_count = 0;     ///< lists written
  std::size_t input_entries = 0;  ///< entries read from every file
  std::size_t duplicates = 0;     ///< entries dropped as identical (type, data) to an earlier one
  /// "<file>: list L entry E: <TYPE> already present with owner X; owner Y dropped", then
  /// "<file>: list L: N-byte SignatureHeader dropped".
  std::vector<std::string> notes;
};
/// Merge the entries of every file (each read as read_efi_variable_file(path, form)):
/// unique (type, data), the first owner kept, input order; EFI_CERT_X509 one certificate a
/// list, other types one list per (type, owner, data size).  Throws IoError when a file
/// cannot be read; InputError "<file>: EBADMSG: <what>" for a container or list error, and
/// "<file>: list L (<TYPE>, byte offset N): signature_size 16, entries without data; not
/// merged" for entries the kernel refuses (EINVAL) and no list can hold.
MODSIGN_API EfiMerge merge_efi_variable_files(const std::vector<std::string>& files,
                                              EfiContainer form = EfiContainer::detect);

/// One entry to write, with its list's SignatureType.
struct EfiEntry {
  EfiGuid type;
  EfiGuid owner;
  Bytes data;
};
/// EFI_SIGNATURE_LISTs of `entries`: EFI_CERT_X509 entries one certificate a list (as
/// efitools cert-to-efi-sig-list writes them), other types one list per (type, owner, data
/// size), lists in the order of each group's first entry, entries in input order.  Throws
/// InputError for no entry or an entry without data.
MODSIGN_API Bytes write_efi_lists(const std::vector<EfiEntry>& entries);

/// The EFI_CERT_SHA256 data of a "bin:<hex>" key: dbx carries bin: keys only as 32-byte
/// EFI_CERT_SHA256 entries (get_handler_for_dbx).  EINVAL for another size: "<key> is a
/// N-byte hash: dbx carries bin: keys only as EFI_CERT_SHA256 (32 bytes); the kernel
/// ignores other hash types"; std::invalid_argument for text that is not "bin:<hex>".
MODSIGN_API Result<Bytes> dbx_sha256_of_bin_key(const std::string& description);

/// One EFI_CERT_SHA256 list of `sha256` (32 bytes each), every entry owned by `owner`
/// (`modsign dbx add-hash`).  Throws InputError "not a SHA-256 hash (64 hex digits): <hex
/// of the value>" for a value of another size, or for no value.
MODSIGN_API Bytes efi_sha256_list(const std::vector<Bytes>& sha256, const EfiGuid& owner);
/// One EFI_CERT_X509 list per certificate, in order, owned by `owner` (as efitools
/// cert-to-efi-sig-list writes them; `modsign dbx add-cert`).  `certificates` are DER.
/// Throws InputError when there is none or one is empty.
MODSIGN_API Bytes efi_x509_lists(const std::vector<Bytes>& certificates, const EfiGuid& owner);
/// efi_x509_lists() of every certificate in `files` (PEM: every CERTIFICATE block; or one
/// DER certificate), in order.  Throws IoError when a file cannot be read; InputError
/// "<file>: <reason>" for a file that holds no certificate or a malformed one.
MODSIGN_API Bytes efi_x509_lists_from_files(const std::vector<std::string>& files, const EfiGuid& owner);

}  // namespace modsign
