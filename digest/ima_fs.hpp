// mirrors security/integrity/ima/ima_fs.c ima_measurements_show (the binary measurement list) and, for the "ima" template hash, ima_crypto.c ima_calc_field_array_hash, Linux 7.2.13
// binary_runtime_measurements[_<bank>] as modsign reads it back.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "crypto/crypto.hpp"
#include "modsign/ima_types.hpp"

namespace modsign::digest {

/// One record of binary_runtime_measurements[_<bank>]: defined once, in the public
/// include/modsign/ima_types.hpp.
using MeasurementRecord = modsign::MeasurementRecord;

/// Parse a binary measurement list whose record digests are `bank` sized (SHA-1 for the
/// classic file).  Field sizes are limited only by the record.  Errors: EBADMSG with the
/// record number and offset for truncated records, lengths beyond the file, template
/// names over 255 bytes; EINVAL for a template whose data cannot be recomputed ("ima"
/// with a bad layout).
Result<std::vector<MeasurementRecord>> parse_measurement_list(ByteView list, crypto::HashAlgo bank);

/// The same records from the list in a file, one at a time: the file is read in 1 MiB
/// pieces (a larger record in one piece), so memory does not grow with the list.
class MeasurementListReader {
 public:
  /// Throws IoError "<path>: <reason>" when the file cannot be opened.
  MeasurementListReader(const std::string& path, crypto::HashAlgo bank);
  ~MeasurementListReader();
  MeasurementListReader(const MeasurementListReader&) = delete;
  MeasurementListReader& operator=(const MeasurementListReader&) = delete;
  /// The next record; nullopt at the end; the errors of parse_measurement_list().  Throws
  /// IoError when the file cannot be read or shrinks.
  Result<std::optional<MeasurementRecord>> next();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace modsign::digest
