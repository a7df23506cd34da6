// mirrors crypto/asymmetric_keys/asymmetric_type.c find_asymmetric_key, asymmetric_key_cmp_partial (key id matching),
// Linux 7.2.13
#pragma once

#include <optional>
#include <vector>

#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::cms {

/// find_asymmetric_key(keyring, id_0, id_1, NULL, false) (asymmetric_type.c): the key
/// whose id (serial ‖ issuer) or SKID equals the first given id; when both ids are given,
/// the key's SKID must equal id_1 (EKEYREJECTED otherwise).  ENOKEY if none; EINVAL for an
/// empty id (the keyring search itself fails).
Result<const crypto::Certificate*> find_asymmetric_key(const std::vector<crypto::Certificate>& trusted,
                                                       const std::optional<Bytes>& id0,
                                                       const std::optional<Bytes>& id1);

/// The first of `trusted` a keyring search for "id:<hex of tail>" finds
/// (asymmetric_key_cmp_partial): the key whose id[0] (serial ‖ issuer contents) or id[1]
/// (SKID) ends with the bytes of `tail` (asymmetric_key_id_partial; id[2], the subject,
/// takes no part).  nullptr when none does.
const crypto::Certificate* find_key_by_partial_id(const std::vector<const crypto::Certificate*>& trusted,
                                                  ByteView tail);

}  // namespace modsign::cms
