// modsign — public KernelProfile <-> cms::KernelModel (cms/kernel.hpp).
#include "api/internal.hpp"

#include <algorithm>

namespace modsign {

KernelProfile::KernelProfile() : generation_(cms::KernelModel::v7_0().name()) {}

std::optional<KernelProfile> KernelProfile::parse(std::string_view name) {
  auto p = cms::KernelModel::parse(std::string(name));
  if (!p) return std::nullopt;
  return KernelProfile(p->name());
}

std::string KernelProfile::name() const { return generation_; }

std::string KernelProfile::label() const {
  std::string l = generation_;
  if (waive_mldsa_authattrs_) l += "+waiver";
  if (enforce_) l += "+enforce";
  if (lockdown_) l += "+lockdown";
  if (!module_decompress_.empty()) l += "+decompress=" + module_decompress_;
  for (const auto& f : absent_sig_algos_) l += "+no-" + f;
  for (const auto& f : absent_hashes_) l += "+no-" + f;
  return l;
}

void KernelProfile::set_waive_mldsa_authattrs(bool on) {
  if (on && !cms::KernelModel::parse(generation_)->has_mldsa_authattrs_waiver())
    throw UsageError("--waive-mldsa-authattrs exists only for a v7.x --kernel (v7.0, v7.1, v7.2)");
  waive_mldsa_authattrs_ = on;
}

void KernelProfile::set_module_decompress(std::string_view format) {
  if (!format.empty() && format != "none" && format != "gzip" && format != "xz" && format != "zstd")
    throw UsageError("--module-decompress: unknown value " + std::string(format) + " (none, gzip, xz, zstd)");
  module_decompress_ = std::string(format);
}

void KernelProfile::set_absent_sig_algos(const std::vector<std::string>& families) {
  std::vector<std::string> out;
  for (const char* f : {"rsa", "ecdsa", "mldsa"}) {
    for (const auto& g : families)
      if (g != "rsa" && g != "ecdsa" && g != "mldsa")
        throw UsageError("unknown signature algorithm family " + g + " (rsa, ecdsa, mldsa)");
    if (std::find(families.begin(), families.end(), f) != families.end()) out.emplace_back(f);
  }
  absent_sig_algos_ = std::move(out);
}

void KernelProfile::set_absent_hashes(const std::vector<std::string>& families) {
  for (const auto& g : families)
    if (g != "sm3" && g != "streebog") throw UsageError("unknown digest family " + g + " (sm3, streebog)");
  std::vector<std::string> out;
  for (const char* f : {"sm3", "streebog"})
    if (std::find(families.begin(), families.end(), f) != families.end()) out.emplace_back(f);
  absent_hashes_ = std::move(out);
}

namespace api {

cms::KernelModel to_model(const KernelProfile& p) {
  cms::KernelModel k = *cms::KernelModel::parse(p.name());
  k.waive_mldsa_authattrs = p.waive_mldsa_authattrs();
  k.enforce = p.enforce();
  k.lockdown = p.lockdown();
  k.module_decompress = p.module_decompress();
  k.absent_sig_algos.insert(p.absent_sig_algos().begin(), p.absent_sig_algos().end());
  k.absent_hashes.insert(p.absent_hashes().begin(), p.absent_hashes().end());
  k.big_endian = p.byte_order() == ByteOrder::big;
  k.ima_canonical_fmt = p.ima_canonical_fmt();
  k.machine = p.machine();
  return k;
}

}  // namespace api
}  // namespace modsign
