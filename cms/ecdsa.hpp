// mirrors crypto/ecdsa.c (ecdsa_set_pub_key, ecdsa_verify and _ecdsa_verify) with the curve orders of
// crypto/ecc_curve_defs.h, Linux 7.2.13
#pragma once

#include <cstddef>

#include "cms/ecdsa_x962.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::cms {

/// Bytes per coordinate as the kernel holds it: the curve's 64-bit digits (g.ndigits) * 8,
/// i.e. 24 (P-192), 32 (P-256), 48 (P-384), 72 (P-521).  `curve` must be an ECDSA curve.
std::size_t ecdsa_bufsize(crypto::KeyAlgo curve);

/// The order n of the curve's base point, big-endian without leading zeros (FIPS 186-5 /
/// SEC 2; the kernel's ecc_curve_defs.h).  `curve` must be an ECDSA curve.
ByteView ecdsa_curve_order(crypto::KeyAlgo curve);

/// ecdsa_set_pub_key: the uncompressed point 04 || X || Y only, each coordinate filling the
/// curve's 64-bit digits, then ecc_is_pubkey_valid_full.  Errors: EINVAL (compressed or
/// odd-sized point, coordinates of another size or beyond the field, not on the curve).
/// `key` itself when OpenSSL parsed it, else the key rebuilt from the point.
Result<crypto::PublicKey> ecdsa_set_pub_key(const crypto::PublicKey& key, ByteView k);

/// ecdsa_verify(): r and s each in [1, n - 1], else EBADMSG; then the ECDSA equation over
/// `digest` (the kernel takes its first bufsize bytes, as FIPS 186-5 takes its leftmost
/// bits), EKEYREJECTED when it does not hold.
Status ecdsa_verify(const crypto::PublicKey& key, crypto::HashAlgo hash, ByteView digest, const EcdsaRawSig& sig);

}  // namespace modsign::cms
