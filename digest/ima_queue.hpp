// mirrors security/integrity/ima/ima_queue.c ima_add_template_entry, ima_pcr_extend (a violation extends 0xFF..FF,
// ima_init_digests), Linux 7.2.13
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "common/result.hpp"
#include "crypto/crypto.hpp"
#include "digest/ima_fs.hpp"

namespace modsign::digest {

/// PCR values after replaying `records` from all-zero PCRs: PCR = H(PCR ‖ digest), with
/// 0xFF..FF for violations.
std::map<std::uint32_t, Bytes> replay_pcrs(const std::vector<MeasurementRecord>& records, crypto::HashAlgo bank);

/// The same replay, one record at a time (a list read with MeasurementListReader).
class PcrReplayer {
 public:
  explicit PcrReplayer(crypto::HashAlgo bank) : bank_(bank) {}
  void extend(const MeasurementRecord& r);
  const std::map<std::uint32_t, Bytes>& pcrs() const { return pcrs_; }

 private:
  crypto::HashAlgo bank_;
  std::map<std::uint32_t, Bytes> pcrs_;
};

}  // namespace modsign::digest
