// mirrors security/integrity/ima/ima_queue.c ima_add_template_entry, ima_pcr_extend (a violation extends 0xFF..FF,
// ima_init_digests), Linux 7.2.13
#include "digest/ima_queue.hpp"

namespace modsign::digest {

void PcrReplayer::extend(const MeasurementRecord& r) {
  const std::size_t n = crypto::hash_info(bank_).size;
  auto& v = pcrs_.try_emplace(r.pcr, Bytes(n, 0)).first->second;
  Bytes buf = v;
  const Bytes ext = r.violation ? Bytes(n, 0xff) : r.digest;
  buf.insert(buf.end(), ext.begin(), ext.end());
  v = crypto::digest(bank_, buf);
}

std::map<std::uint32_t, Bytes> replay_pcrs(const std::vector<MeasurementRecord>& records, crypto::HashAlgo bank) {
  PcrReplayer p(bank);
  for (const auto& r : records) p.extend(r);
  return p.pcrs();
}

}  // namespace modsign::digest
