// mirrors security/integrity/ima/ima_main.c hash_setup(), Linux 7.2.13
#include "digest/ima_main.hpp"

#include <string>

namespace modsign::digest {

crypto::HashAlgo ima_hash_setup(std::string_view name, const cms::KernelModel& profile) {
  const auto h = crypto::hash_by_name(name);
  if (!h)
    throw UsageError("unsupported --ima-hash '" + std::string(name) +
                     "' (md5|sha1|sha224|sha256|sha384|sha512|sha3-256|sha3-384|sha3-512)");
  // 6.1-6.6: hash_algo_name[] ends before the SHA-3 entries, so match_string() fails.
  const bool sha3 =
      *h == crypto::HashAlgo::sha3_256 || *h == crypto::HashAlgo::sha3_384 || *h == crypto::HashAlgo::sha3_512;
  if (profile.legacy_digests && sha3) {
    const std::string canonical(crypto::hash_info(*h).name);
    throw UsageError("--ima-hash " + canonical + " does not exist under --kernel " + profile.name() +
                     ": Linux 6.1-6.6 have no SHA-3 in hash_algo_name[], so ima_hash=" + canonical +
                     " is refused and IMA keeps its default");
  }
  return *h;
}

}  // namespace modsign::digest
