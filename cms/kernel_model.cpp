// modsign's own: the names of the kernel profiles (v6.1, v6, v7.0, v7.1, v7.2)
#include "cms/kernel_model.hpp"

namespace modsign::cms {

std::string KernelModel::name() const {
  if (generation == Generation::v6) return legacy_digests ? "v6.1" : "v6";
  return "v7." + std::to_string(release);
}

bool KernelModel::has_sig_algo(const std::string& pkey_algo) const {
  if (absent_sig_algos.empty()) return true;
  const std::string family = pkey_algo.rfind("mldsa", 0) == 0   ? "mldsa"
                             : pkey_algo.rfind("ecdsa", 0) == 0 ? "ecdsa"
                                                                : pkey_algo;
  return absent_sig_algos.count(family) == 0;
}

bool KernelModel::has_hash(const std::string& hash_algo) const {
  const std::string family = hash_algo.rfind("streebog", 0) == 0 ? "streebog" : hash_algo;
  return absent_hashes.count(family) == 0;
}

std::optional<KernelModel> KernelModel::parse(const std::string& n) {
  if (n == "v6.1" || n == "6.1") return v6_1();
  if (n == "v6" || n == "6") return v6();
  if (n == "v7.0" || n == "7.0" || n == "v7" || n == "7") return v7_0();
  if (n == "v7.1" || n == "7.1") return v7(1);
  if (n == "v7.2" || n == "7.2") return v7(2);
  return std::nullopt;
}

}  // namespace modsign::cms
