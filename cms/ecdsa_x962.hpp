// mirrors crypto/ecdsa-x962.c ecdsa_x962_verify (the ECDSA-Sig-Value decoding of crypto/ecdsasignature.asn1,
// ecdsa_get_signature_rs), Linux 7.2.13
#pragma once

#include <cstddef>

#include "common/result.hpp"

namespace modsign::cms {

/// r and s as ecdsa_get_signature_rs() leaves them: big-endian, at most `bufsize` bytes,
/// read as unsigned (a high bit does not make them negative).
struct EcdsaRawSig {
  Bytes r, s;
};

/// ecdsa_x962_verify()'s decoding of an ECDSA-Sig-Value (RFC 5480 §2.2, SEQUENCE { r
/// INTEGER, s INTEGER }) with the kernel's BER decoder, for a curve of `bufsize` bytes per
/// coordinate (ndigits * 8: 24 for P-192, 32 for P-256, 48 for P-384, 72 for P-521).
/// Errors, in the order the decoder meets them:
/// - EBADMSG: the decoder fails (the SEQUENCE's identifier, lengths, indefinite-length end,
///   an INTEGER identifier other than 0x02, bytes after s inside the SEQUENCE).  A
///   primitive 0x10 is taken for the SEQUENCE, and bytes after the SEQUENCE are ignored.
/// - EINVAL: the action on r (then on s), run as soon as that INTEGER is read, before
///   anything after it is decoded: an empty INTEGER, or one longer than `bufsize` unless it
///   is `bufsize` + 1 bytes starting with one 00.
Result<EcdsaRawSig> ecdsa_x962_decode(ByteView sig, std::size_t bufsize);

}  // namespace modsign::cms
