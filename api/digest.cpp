// modsign — digest_module_file() (include/modsign/digest.hpp).
#include "modsign/digest.hpp"

#include "api/internal.hpp"
#include "digest/ima_appraise.hpp"
#include "digest/module_digest.hpp"
#include "module/kernel_read_file.hpp"

namespace modsign {

DigestView digest_module_file(const std::string& path, const KernelProfile& profile, std::uint64_t max_size) {
  auto r = digest::digest_module_file(path, api::to_model(profile), max_size);
  if (!r) throw InputError(path + ": " + r.error().message);
  DigestView v;
  v.digests = std::move(r.value());
  if (module::kernel_read_file_refusal(v.digests.file_size)) {  // an empty file: IMA never reads it (EINVAL first)
    v.bin_source = DigestView::BinSource::not_read;
    return v;
  }
  const auto key = digest::ima_blacklist_key(v.digests, v.digests.file_sha256);
  v.bin_source = key.source;
  v.bin_entry = key.entry;
  return v;
}

}  // namespace modsign
