// mirrors crypto/asymmetric_keys/asymmetric_type.c find_asymmetric_key (key id matching), Linux 7.2.13
#pragma once

#include <optional>
#include <vector>

#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::kernel {

/// find_asymmetric_key(keyring, id_0, id_1, NULL, false) (asymmetric_type.c): the key
/// whose id (serial ‖ issuer) or SKID equals the first given id; when both ids are given,
/// the key's SKID must equal id_1 (EKEYREJECTED otherwise).  ENOKEY if none; EINVAL for an
/// empty id (the keyring search itself fails).
Result<const crypto::Certificate*> find_asymmetric_key(const std::vector<crypto::Certificate>& trusted,
                                                      const std::optional<Bytes>& id0, const std::optional<Bytes>& id1);

}  // namespace modsign::kernel
