// mirrors security/integrity/digsig.c integrity_digsig_verify (the version dispatch), Linux 7.2.13
#pragma once

#include <cstdint>
#include <vector>

#include "cms/kernel_model.hpp"
#include "digest/digsig_asymmetric.hpp"

namespace modsign::digest {

/// integrity_digsig_verify(INTEGRITY_KEYRING_IMA, sig, digest, algo): EINVAL for a value of
/// fewer than 2 bytes; by the version byte sig[1]: 1 the pre-X.509 digsig_verify() (RSA keys
/// of type "user" on the keyring, which modsign's keyring of certificates never holds:
/// ENOKEY), 2 asymmetric_verify(), 3 asymmetric_verify_v3(); any other EOPNOTSUPP.
/// `keys` is ima_keyring_keys() of the .ima keyring; `digest` the file's digest under
/// `algo` (enum hash_algo); `backend` the library of an ML-DSA check (modsign's choice, not
/// the kernel's: the same verdicts).
DigsigCheck integrity_digsig_verify(const std::vector<const crypto::Certificate*>& keys, ByteView sig, ByteView digest,
                                    std::uint8_t algo, const cms::KernelModel& profile,
                                    crypto::Backend backend = crypto::Backend::automatic);

}  // namespace modsign::digest
