// mirrors security/integrity/ima/ima_fs.c ima_measurements_show (the binary measurement list, in the kernel's byte
// order unless ima_canonical_fmt) and, for the "ima" template hash, ima_crypto.c ima_calc_field_array_hash,
// Linux 7.2.13 binary_runtime_measurements[_<bank>] as modsign reads it back.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cms/kernel_model.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"
#include "modsign/ima_types.hpp"

namespace modsign::digest {

/// One record of binary_runtime_measurements[_<bank>]: defined once, in the public
/// include/modsign/ima_types.hpp.
using MeasurementRecord = modsign::MeasurementRecord;

/// Whether IMA writes the u32 fields of the binary measurement list (PCR index, template
/// name length, template data length, each field's length) and hashes each field's length
/// into the template hash big-endian: on a big-endian kernel without ima_canonical_fmt.
/// ima_canonical_fmt makes them little-endian, and is a no-op on a little-endian kernel
/// (ima_fs.c default_canonical_fmt_setup, ima_measurements_show; ima_template_lib.c
/// ima_show_template_data_binary; ima_crypto.c ima_calc_field_array_hash_tfm).  The
/// template's own data is the same in both orders for every field modsign builds (d-ng,
/// d-ngv2, n-ng, sig, d-modsig, modsig, buf: bytes and strings; the numeric iuid/igid/
/// imode fields are not built).
bool ima_list_big_endian(const cms::KernelModel& profile);
/// Append `v` to `out`, big- or little-endian.
void put_ima_u32(Bytes& out, std::uint32_t v, bool big_endian);
/// The u32 at `b[off]` (4 bytes there, the caller checked), big- or little-endian.
std::uint32_t get_ima_u32(ByteView b, std::size_t off, bool big_endian);

/// Parse a binary measurement list whose record digests are `bank` sized (SHA-1 for the
/// classic file), its u32 fields in `order`; nullopt: the order whose first template name
/// length is 1-255 bytes (never both: the other reading is 2^24 or more), every record in
/// that order, each MeasurementRecord::byte_order saying it.  Field sizes are limited only
/// by the record.  Errors: EBADMSG with the record number and offset for truncated
/// records, lengths beyond the file, template names of 0 or over 255 bytes (for the first
/// record without `order`: in both orders); EINVAL for a template whose data cannot be
/// recomputed ("ima" with a bad layout).
Result<std::vector<MeasurementRecord>> parse_measurement_list(ByteView list, crypto::HashAlgo bank,
                                                              std::optional<ByteOrder> order = std::nullopt);

/// The same records from the list in a file, one at a time: the file is read in 1 MiB
/// pieces (a larger record in one piece), so memory does not grow with the list.
class MeasurementListReader {
 public:
  /// Throws IoError "<path>: <reason>" when the file cannot be opened.
  MeasurementListReader(const std::string& path, crypto::HashAlgo bank, std::optional<ByteOrder> order = std::nullopt);
  ~MeasurementListReader();
  MeasurementListReader(const MeasurementListReader&) = delete;
  MeasurementListReader& operator=(const MeasurementListReader&) = delete;
  /// The next record; nullopt at the end; the errors of parse_measurement_list().  Throws
  /// IoError when the file cannot be read or shrinks.
  Result<std::optional<MeasurementRecord>> next();
  /// The list's byte order: as given, else as the first record showed; nullopt before.
  std::optional<ByteOrder> byte_order() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace modsign::digest
