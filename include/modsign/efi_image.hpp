// modsign — what UEFI firmware (and shim) decide for a boot binary: the Authenticode hash
// and signatures against db and dbx (UEFI 2.10 §32.5.3.3, "Image Verification"; mirrors
// EDK2 SecurityPkg DxeImageVerificationLib DxeImageVerificationHandler()), shim's SBAT
// generation check (rhboot/shim sbat.c verify_sbat(), SBAT.md), dbx in every form modsign
// reads plus Microsoft's published list (dbx_info_msft_*.json of microsoft/secureboot_objects),
// and the SVN records of that list.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "modsign/authenticode.hpp"
#include "modsign/dbx.hpp"
#include "modsign/export.hpp"
#include "modsign/result.hpp"
#include "modsign/tree.hpp"

namespace modsign {

// efi_guids::svn_owner, efi_guids::bootmgr_dbxsvn, EfiSvnRecord and efi_svn_record() are in
// <modsign/dbx.hpp> (dbx listings show SVN records too).

// ------------------------------------------------------------------------- databases

/// One entry of a signature database, wherever it came from.
struct EfiDatabaseEntry {
  std::string file;  ///< the input it was read from
  EfiGuid type;      ///< SignatureType (EFI_CERT_SHA256, EFI_CERT_X509, ...)
  EfiGuid owner;
  Bytes data;
  /// Variable files: 1-based list and entry numbers and the byte offset of the entry (its
  /// owner GUID) in the file.  Microsoft JSON: 0, 0, 0 (see `origin`).
  std::size_t list = 0, entry = 0;
  std::uint64_t offset = 0;
  /// JSON only: where it is in the file ("images.x64[12]", "svns[0]", "certificates[0]"),
  /// with the entry's filename; "" for variable files.
  std::string origin;
  /// EFI_CERT_X509 entries: the certificate's subject ("CN = ...", as dbx list prints it),
  /// or "(not a certificate: <why>)"; "" for other types.
  std::string certificate;
};

/// A database read from one file (`read_efi_database`).
struct EfiDatabase {
  std::string file;
  /// "esl", "efivarfs", "auth2" or "msft-json".
  std::string form;
  std::vector<EfiDatabaseEntry> entries;  ///< file order
  std::vector<std::string> notes;         ///< e.g. JSON certificates whose DER file is missing
};

/// Architectures of Microsoft's JSON: "x64", "ia32", "aarch64", "arm"; the update folders'
/// names are aliases ("amd64" x64, "x86" ia32, "arm64" aarch64).  nullopt for other text.
MODSIGN_API std::optional<std::string> msft_dbx_arch(std::string_view name);

/// Microsoft's published dbx (dbx_info_msft_*.json): the entries a dbx update for `arch`
/// (a name msft_dbx_arch() accepts; "" = every architecture) carries, owner
/// efi_guids::microsoft_owner: images[arch][].authenticodeHash as EFI_CERT_SHA256 (32
/// bytes; hashType other than SHA256 refused), svns[].value as EFI_CERT_SHA256 SVN records
/// (owner efi_guids::svn_owner), certificates[].value as EFI_CERT_X509 when that DER file
/// exists in `der_dir` (else a note "certificates[N]: <value> (<subjectName>) not found
/// beside the JSON; not included").  flatHash (a plain SHA-256 of the file) is never used.
/// Throws InputError "<name>: <what>" for malformed JSON, a missing "images" object, an
/// unknown architecture, a hash that is not 64 hex digits, an SVN value that is not 64 hex
/// digits, or a DER file that does not hold one certificate.
MODSIGN_API EfiDatabase parse_msft_dbx_json(std::string_view text, const std::string& arch, const std::string& name,
                                            const std::string& der_dir);

/// Read a database in any form: Microsoft JSON (the first non-blank byte is '{'; `arch` as
/// above, certificates looked up beside the file), else read_efi_variable_file() with
/// detection (ESL, efivarfs copy, auth2 update).  Throws IoError / InputError as those do,
/// and InputError "<file>: EBADMSG: ..." for a list the kernel's parser refuses.
MODSIGN_API EfiDatabase read_efi_database(const std::string& path, const std::string& arch = "");

/// The EFI_SIGNATURE_LISTs of `db` (write_efi_lists(): one EFI_CERT_X509 list per
/// certificate, one list per (type, owner, size) otherwise).  Throws InputError when empty.
MODSIGN_API Bytes efi_database_lists(const EfiDatabase& db);

/// Entries of `a` and `b` compared by (SignatureType, data); owners are not compared.
struct EfiDatabaseDiff {
  std::vector<EfiDatabaseEntry> only_in_a, only_in_b;  ///< in file order, duplicates once
  std::size_t common = 0;                              ///< distinct entries in both
  bool equal() const { return only_in_a.empty() && only_in_b.empty(); }
};
MODSIGN_API EfiDatabaseDiff diff_efi_databases(const EfiDatabase& a, const EfiDatabase& b);

// ------------------------------------------------------------------------- SBAT

/// One row of a .sbat section (shim SBAT.md): component_name, component_generation,
/// vendor_name, vendor_package_name, vendor_version, vendor_url.
struct SbatEntry {
  std::string component;
  std::uint32_t generation = 0;  ///< atoi() of the field, as shim reads it (0 when not a number)
  std::string generation_text;
  std::string vendor, package, version, url;
};
/// Parse .sbat CSV data (up to the first NUL): one row per line ("\r\n" accepted), at least
/// six comma-separated fields, the sixth keeping any further commas.  Errors (EINVAL, as
/// shim's parse_sbat_section() returns EFI_INVALID_PARAMETER): "line N: M fields, 6 needed",
/// "line N: field K is empty", "no SBAT rows".
MODSIGN_API Result<std::vector<SbatEntry>> parse_sbat_section(ByteView data);

/// An SBAT level: the SbatLevel variable's text ("sbat,1,2024010900\nshim,4\ngrub,3\n").
struct SbatLevel {
  std::string datestamp;  ///< the "sbat,1,<date>" row's third field ("" when absent)
  std::vector<std::pair<std::string, std::uint32_t>> components;  ///< every row, "sbat" included
  std::string text;                                               ///< the text as read
};
/// Parse SbatLevel text: rows "component,generation[,...]" (an efivarfs copy's 4 attribute
/// bytes before "sbat," and a UTF-8 BOM are skipped).  Errors (EINVAL): "line N: not
/// component,generation", "no sbat,1 row first".
MODSIGN_API Result<SbatLevel> parse_sbat_level(std::string_view text);
/// Which of shim's two built-in levels (.sbatlevel: u32 format version 0, then u32 offsets
/// of the previous and the latest NUL-terminated SbatLevel text, counted from byte 4).
enum class SbatPolicy { latest, previous };
/// The level in the .sbatlevel section of the shim binary `image`.  Errors (EINVAL): "no
/// .sbatlevel section", "format version N, not 0", an offset beyond the section, no NUL;
/// and parse_sbat_level()'s errors; the PE reader's (EBADMSG).
MODSIGN_API Result<SbatLevel> sbat_level_of_shim(ByteView image, SbatPolicy policy);

/// A component the level refuses: the binary's generation is below the level's.
struct SbatRefusal {
  std::string component;
  std::uint32_t generation = 0;        ///< the binary's
  std::uint32_t level_generation = 0;  ///< the level's
};

// ------------------------------------------------------------------------- the verdict

/// Why firmware (or shim, for SBAT) decides as it does.
enum class EfiImageRule {
  hash_in_dbx,                ///< the Authenticode hash is an EFI_CERT_SHA256 (or SHA1/384/512) dbx entry
  certificate_in_dbx,         ///< the signature verifies against an EFI_CERT_X509 dbx certificate
  certificate_hash_in_dbx,    ///< a certificate of the signature is an EFI_CERT_X509_SHA256/384/512 dbx entry
  sbat_refused,               ///< allowed by db, but shim's SBAT level refuses a component generation
  allowed_by_db_certificate,  ///< a signature verifies (OpenSSL PKCS7_verify) against a db certificate
  allowed_by_db_hash,         ///< the Authenticode hash is a db entry
  not_allowed_by_db,          ///< no db certificate nor db hash admits it
};
/// "hash_in_dbx", "certificate_in_dbx", ... (the enumerator's name).
MODSIGN_API std::string_view efi_image_rule_name(EfiImageRule r);

/// One embedded signature as the firmware checks it.
struct EfiSignatureVerdict {
  std::size_t index = 0;                         ///< 1-based WIN_CERTIFICATE number
  std::string signer;                            ///< the signer's issuer ("CN=...") or "(unreadable: <why>)"
  std::string digest_algorithm;                  ///< SpcIndirectDataContent's ("sha256", ...)
  bool digest_matches = false;                   ///< equals the image's Authenticode digest in that algorithm
  std::optional<EfiDatabaseEntry> forbidden_by;  ///< dbx certificate / certificate hash
  std::string forbidden_certificate;             ///< subject of the certificate listed in dbx
  std::optional<EfiTime> revocation_time;        ///< EFI_CERT_X509_SHA256 TimeOfRevocation
  std::optional<EfiDatabaseEntry> allowed_by;    ///< the db (or MOK) certificate it verified against
  std::string allowed_certificate;               ///< its subject
};

/// The decision for one binary.
struct EfiImageVerdict {
  std::string file;
  AuthenticodeInfo image;
  bool refused = true;
  EfiImageRule rule = EfiImageRule::not_allowed_by_db;
  /// The deciding entry (hash_in_dbx, certificate_*_in_dbx, allowed_by_*).
  std::optional<EfiDatabaseEntry> entry;
  std::vector<EfiSignatureVerdict> signatures;
  /// SBAT: whether a level was given and the binary had a .sbat section, its rows, and the
  /// components the level refuses (every one; shim stops at the first).
  bool sbat_checked = false;
  std::vector<SbatEntry> sbat;
  std::vector<SbatRefusal> sbat_refusals;
  std::vector<std::string> notes;
};

/// The inputs of a check.  db_sources/mok entries both admit; mok entries are what shim
/// (not the firmware) accepts from MokListRT.
struct EfiImagePolicy {
  std::vector<EfiDatabase> dbx, db, mok;
  std::optional<SbatLevel> sbat_level;
};

/// Decide for the PE image `image` (named `file`) as DxeImageVerificationHandler() does:
/// unsigned: refused when its SHA-256 Authenticode hash is a dbx EFI_CERT_SHA256 entry,
/// allowed when it is a db one, refused otherwise.  Signed: per WIN_CERTIFICATE (in order), with the image hashed in
/// the signature's digest algorithm: refused when the signature verifies against a dbx EFI_CERT_X509 or one of its
/// certificates' TBSCertificate hash is an EFI_CERT_X509_SHA256/ 384/512 dbx entry (a non-zero TimeOfRevocation would
/// let an RFC 3161 timestamp before it pass; modsign does not evaluate timestamps and notes it); allowed when it
/// verifies against a db (or MOK) EFI_CERT_X509 with OpenSSL PKCS7_verify over the SpcIndirectDataContent and its
/// digest matches; refused when the image hash is in dbx; allowed when it is in db.  Then, when allowed and a level is
/// given, SBAT. Errors: the PE reader's (EBADMSG, message names the field).
MODSIGN_API Result<EfiImageVerdict> verify_efi_image(ByteView image, const std::string& file,
                                                     const EfiImagePolicy& policy);
/// verify_efi_image() of the file at `path` (at most 1 GiB).  Throws IoError.
MODSIGN_API Result<EfiImageVerdict> verify_efi_image_file(const std::string& path, const EfiImagePolicy& policy);

/// The raw data of the first section called `name` (".sbat"; a long name such as
/// ".sbatlevel" matches PeSection::long_name): min(VirtualSize,
/// SizeOfRawData) bytes (SizeOfRawData when VirtualSize is 0); nullopt when there is none.
MODSIGN_API std::optional<Bytes> pe_section_data(ByteView image, const AuthenticodeInfo& info, std::string_view name);

/// Every regular file under `dir` (walk_tree(), <modsign/tree.hpp>: recursively, symlinks
/// not followed) whose first two bytes are "MZ" (`-r ESP`), and every entry the walk could
/// not handle (TreeEntry::Kind::error: `dir` or a directory under it unreadable, a file
/// that cannot be opened, a path of PATH_MAX bytes or more; Kind::moved), sorted by path:
/// one unreadable directory does not hide the rest.  Never throws for file-system errors.
MODSIGN_API std::vector<TreeEntry> find_pe_files(const std::string& dir);

}  // namespace modsign
