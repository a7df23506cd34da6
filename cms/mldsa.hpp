// mirrors lib/crypto/mldsa.c mldsa_verify (the signature decoding: decode_z, decode_hint_vector), Linux 7.2.13
#pragma once

#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::cms {

/// The checks mldsa_verify() makes on a signature before any arithmetic (FIPS 204 sigDecode,
/// Algorithms 27 and 21): every coefficient of z, unpacked from 18 bits (ML-DSA-44) or 20 bits
/// (ML-DSA-65/87) little-endian as gamma1 - value, lies strictly within +-(gamma1 - beta); the
/// hint's cumulative counts (the last k bytes) never decrease nor exceed omega, the indexes
/// of each polynomial rise strictly, and the unused index bytes are zero.  A signature that
/// fails them is malformed: EBADMSG, where a well-formed but wrong one is EKEYREJECTED.
/// `level` must be an ML-DSA algorithm and `sig` of its signature size (2420, 3309 or 4627
/// bytes); other sizes are left to the length check (EBADMSG too).
Status mldsa_signature_decodes(crypto::KeyAlgo level, ByteView sig);

}  // namespace modsign::cms
