// mirrors security/integrity/ima/ima_fs.c ima_measurements_show (the binary measurement list) and, for the "ima" template hash, ima_crypto.c ima_calc_field_array_hash, Linux 7.2.13
// binary_runtime_measurements[_<bank>] as modsign reads it back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::digest {

/// One record of binary_runtime_measurements[_<bank>].
struct MeasurementRecord {
  std::uint32_t pcr = 0;
  Bytes digest;          ///< template hash as recorded (bank size)
  std::string template_name;
  Bytes data;            ///< template data (for "ima": digest ‖ u32 len ‖ name)
  std::uint64_t offset = 0;  ///< where the record starts in the file
  bool violation = false;    ///< all-zero digest: extended as all 0xFF
  Bytes recomputed;          ///< template hash recomputed from `data` (empty for violations)
};

/// Parse a binary measurement list whose record digests are `bank` sized (SHA-1 for the
/// classic file).  Field sizes are limited only by the record.  Errors: EBADMSG with the
/// record number and offset for truncated records, lengths beyond the file, template
/// names over 255 bytes; EINVAL for a template whose data cannot be recomputed ("ima"
/// with a bad layout).
Result<std::vector<MeasurementRecord>> parse_measurement_list(ByteView list, crypto::HashAlgo bank);

}  // namespace modsign::digest
