// modsign — Authenticode hashes of EFI boot binaries (shim, GRUB, systemd-boot, a kernel
// with the EFI stub): the PE/COFF image digest that UEFI firmware compares with a db or
// dbx EFI_CERT_SHA256 entry (UEFI 2.10 §32.5.3.3), and the Authenticode signatures the
// image carries.  Follows Microsoft's "PE Format" specification (headers, Section Table,
// The Attribute Certificate Table) and "Windows Authenticode Portable Executable Signature
// Format" (Calculating the PE Image Hash; SpcIndirectDataContent).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/result.hpp"

namespace modsign {

/// One Section Table entry.  Offsets and sizes in bytes.
struct PeSection {
  std::string name;  ///< the 8-byte Name up to its first NUL (".text")
  std::uint32_t virtual_size = 0;
  std::uint32_t virtual_address = 0;      ///< RVA
  std::uint32_t size_of_raw_data = 0;     ///< bytes in the file (hashed when > 0)
  std::uint32_t pointer_to_raw_data = 0;  ///< file offset
  /// A name longer than 8 bytes (Name "/N", as GNU ld writes ".sbatlevel"), read from the
  /// COFF string table; "" otherwise or when the image has no such table entry.
  std::string long_name;
};

/// One certificate of a signature's embedded chain (SignedData certificates).
struct AuthenticodeCertificate {
  /// One line in encoded order, "C=US, O=Example, CN=Signer": C, ST, L, O, OU, CN,
  /// emailAddress, serialNumber, DC, UID by these names, other attributes by dotted OID,
  /// values as encoded, the attributes of a multi-valued RDN joined with " + ".
  /// "(certificate N not readable: <reason>)" when the certificate does not parse.
  std::string subject;
  std::string issuer;  ///< the same form (empty when not readable)
  Bytes serial;        ///< serialNumber INTEGER contents (big-endian, as encoded)
};

/// One WIN_CERTIFICATE entry of the Attribute Certificate Table and, for a PKCS#7 one,
/// the Authenticode signature in it.
struct AuthenticodeSignature {
  std::uint64_t offset = 0;    ///< file offset of the entry (its dwLength field)
  std::uint32_t length = 0;    ///< dwLength: 8-byte header + bCertificate, without padding
  std::uint16_t revision = 0;  ///< wRevision (0x0200)
  std::uint16_t type = 0;      ///< wCertificateType (0x0002 WIN_CERT_TYPE_PKCS_SIGNED_DATA)
  /// Empty when the signature was read; otherwise why not, and the fields below are empty:
  /// "wRevision 0x0100 is not 0x0200", "wCertificateType 0x0001 is not
  /// WIN_CERT_TYPE_PKCS_SIGNED_DATA (0x0002)", "malformed Authenticode PKCS#7: ...",
  /// "eContentType is ..., not SPC_INDIRECT_DATA_OBJID ...", "no SignerInfo", or another
  /// PKCS#7 parser message.
  std::string error;
  /// How the (first) SignerInfo names its signer: issuerAndSerialNumber (signer_issuer in
  /// the form of AuthenticodeCertificate::issuer, signer_serial the INTEGER contents) or,
  /// when signer_by_skid, subjectKeyIdentifier (signer_skid).
  bool signer_by_skid = false;
  std::string signer_issuer;
  Bytes signer_serial;
  Bytes signer_skid;
  /// The certificates the signature carries, in the order it carries them.
  std::vector<AuthenticodeCertificate> certificates;
  /// SpcIndirectDataContent messageDigest: its digestAlgorithm ("sha256", "sha1",
  /// "sha384", "sha512", another kernel hash name, or the dotted OID when unknown) and
  /// digest (the signed image hash).
  std::string digest_algorithm;
  Bytes digest;
  /// True when `digest` equals this image's Authenticode digest in `digest_algorithm`
  /// (sha256, sha1, sha384 or sha512; false for any other algorithm).  Only the digest is
  /// compared: the signature itself is not verified here.
  bool matches = false;
};

/// What authenticode_image() finds.  Digest sizes: sha256 32, sha1 20, sha384 48,
/// sha512 64 bytes (to_hex() gives the form a dbx entry, pesign -h and sbverify show).
struct AuthenticodeInfo {
  std::uint64_t file_size = 0;  ///< bytes
  std::uint16_t machine = 0;    ///< COFF Machine: 0x8664, 0xaa64, 0x14c, 0x1c2, 0x1c4, ...
  /// "x86-64", "AArch64", "IA-32", "ARM", "ARM Thumb-2", or "unknown (0x....)".
  std::string machine_name;
  bool pe32_plus = false;           ///< Optional Header magic 0x20b (else PE32, 0x10b)
  std::uint16_t subsystem = 0;      ///< 10 EFI application, 11/12 boot/runtime driver
  std::uint32_t checksum = 0;       ///< the CheckSum field (not verified)
  std::vector<PeSection> sections;  ///< in Section Table order
  /// The Attribute Certificate Table (data directory 4): file offset and size in bytes,
  /// both 0 when the image has none.
  std::uint32_t certificate_table_offset = 0;
  std::uint32_t certificate_table_size = 0;
  /// Bytes of the file after the end of the Certificate Table (0 normally; see the
  /// hashing rule for what they do to the digest).
  std::uint64_t bytes_after_certificate_table = 0;
  /// The Authenticode image digest ("Calculating the PE Image Hash"): the file from offset
  /// 0 without the CheckSum field and without the Certificate Table entry of the data
  /// directories up to SizeOfHeaders; then every section with raw data, sorted by
  /// PointerToRawData; then FILE_SIZE - (Certificate Table size + SUM_OF_BYTES_HASHED)
  /// bytes at file offset SUM_OF_BYTES_HASHED (SizeOfHeaders + the sections' sizes), which
  /// for the usual layout is all data between the last section and the Certificate Table.
  /// This is the specification's formula, applied as EDK2 firmware and `pesign -h` do,
  /// also when data follows the table; no padding is added to an image whose size is not
  /// a multiple of 8 (osslsigncode pads it to one).
  Bytes sha256, sha1, sha384, sha512;
  /// Every WIN_CERTIFICATE entry, in table order.
  std::vector<AuthenticodeSignature> signatures;
};

/// Read the PE/COFF image `image` (a whole PE32 or PE32+ file) and compute its
/// Authenticode digests and embedded signatures.  Errors (KErr::ebadmsg; the message names
/// the field and its file offset): a truncated or missing MS-DOS header, e_lfanew beyond
/// the file, no "PE\0\0", a bad Optional Header (beyond the file, too small, magic not
/// 0x10b/0x20b, data directories beyond SizeOfOptionalHeader), NumberOfSections above 96,
/// a Section Table or SizeOfHeaders beyond the file or SizeOfHeaders before the end of the
/// Section Table, a section's raw data beyond the file, a Certificate Table at offset 0,
/// beyond the file, or overlapping the headers or a section, a WIN_CERTIFICATE with
/// dwLength below 8 or past the table, a remainder of the table too short for an entry,
/// more than 64 entries, or headers, sections and table that exceed the file.
/// A signature that cannot be read is not an error of the call (AuthenticodeSignature::error).
MODSIGN_API Result<AuthenticodeInfo> authenticode_image(ByteView image);

/// authenticode_image() of the file at `path` (at most 1 GiB).  Throws IoError when it
/// cannot be read; errors as authenticode_image(), the message prefixed "<path>: ".
MODSIGN_API Result<AuthenticodeInfo> authenticode_file(const std::string& path);

}  // namespace modsign
