// mirrors security/integrity/digsig.c integrity_digsig_verify (the version dispatch), Linux 7.2.13
#include "digest/digsig.hpp"

#include <string>

namespace modsign::digest {

DigsigCheck integrity_digsig_verify(const std::vector<const crypto::Certificate*>& keys, ByteView sig, ByteView digest,
                                    std::uint8_t algo, const cms::KernelModel& profile, crypto::Backend backend) {
  if (sig.size() < 2) return {KErr::einval, std::to_string(sig.size()) + " byte: no version byte"};
  switch (sig[1]) {
    case 1: return {KErr::enokey, "digsig_verify: version 1 signatures need a key of type \"user\" on the keyring"};
    case 2: return asymmetric_verify(keys, sig, digest, profile);
    case 3: return asymmetric_verify_v3(keys, sig, digest, algo, profile, backend);
    default: return {KErr::eopnotsupp, "signature version " + std::to_string(sig[1]) + " is not known"};
  }
}

}  // namespace modsign::digest
