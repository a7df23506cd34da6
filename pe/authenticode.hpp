// pe/ layer (beside blacklist/; uses common/ and crypto/ only): the Authenticode image digest of a PE/COFF file.
// Follows Microsoft's "Windows Authenticode Portable Executable Signature Format",
// "Calculating the PE Image Hash" (steps 1-15), the value UEFI firmware compares with a
// db/dbx EFI_CERT_SHA256 entry (UEFI 2.10 §32.5.3.3).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "common/result.hpp"
#include "crypto/algorithms.hpp"
#include "pe/pe_image.hpp"

namespace modsign::pe {

/// A run of file bytes that goes into the hash.
struct Range {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

/// The byte runs the image hash covers, in hashing order:
///  1. offset 0 up to the CheckSum field; the 4-byte CheckSum is skipped;
///  2. from after CheckSum up to the Certificate Table entry (directory 4) of the data
///     directories; its 8 bytes are skipped (when NumberOfRvaAndSizes <= 4 there is no
///     such entry and this run reaches SizeOfHeaders);
///  3. from after that entry up to SizeOfHeaders;
///  4. each section with SizeOfRawData > 0, sorted by PointerToRawData (ties keep Section
///     Table order): SizeOfRawData bytes at PointerToRawData;
///  5. the extra data: SUM_OF_BYTES_HASHED = SizeOfHeaders + the sum of the sections'
///     SizeOfRawData; when FILE_SIZE > SUM_OF_BYTES_HASHED, the
///     FILE_SIZE - (Certificate Table size + SUM_OF_BYTES_HASHED) bytes at file offset
///     SUM_OF_BYTES_HASHED (step 14), absent when that count is 0.
/// Rule 5 is the specification's formula, and the one UEFI firmware (EDK2's
/// DxeImageVerificationLib) and `pesign -h` apply.  For the usual layout (sections
/// contiguous, Certificate Table at the end of the file) it is exactly the bytes between
/// the last section and the table.  Data after the Certificate Table is not treated
/// specially: the formula still counts FILE_SIZE minus the table's size from
/// SUM_OF_BYTES_HASHED on, so n bytes appended to a signed file make the hash cover the
/// first n bytes of the table instead (as the firmware computes it; the embedded signature
/// then no longer matches).  No padding is added: an unsigned image whose size is not a
/// multiple of 8 is hashed as it is (osslsigncode instead hashes it padded with zeros to
/// a multiple of 8, the image signing would produce).
/// Errors (KErr::ebadmsg): SUM_OF_BYTES_HASHED < FILE_SIZE < Certificate Table size + SUM_OF_BYTES_HASHED
/// ("headers and sections (SUM_OF_BYTES_HASHED N) and the Certificate Table (N bytes)
/// exceed the file size (N bytes)"; firmware refuses such an image too).
Result<std::vector<Range>> authenticode_ranges(const PeImage& img);

/// The four hashes an Authenticode signature or a db/dbx entry may use.
inline constexpr std::array<crypto::HashAlgo, 4> kAuthenticodeHashes = {
    crypto::HashAlgo::sha256, crypto::HashAlgo::sha1, crypto::HashAlgo::sha384, crypto::HashAlgo::sha512};

/// The image digest of `file` (the bytes `img` was parsed from) in each of `algos`, in
/// that order, in one pass over the ranges.  Errors as authenticode_ranges().
Result<std::vector<Bytes>> authenticode_digests(const PeImage& img, ByteView file,
                                                const std::vector<crypto::HashAlgo>& algos);

/// One image digest.  Errors as authenticode_ranges().
Result<Bytes> authenticode_digest(const PeImage& img, ByteView file, crypto::HashAlgo algo);

}  // namespace modsign::pe
