// mirrors crypto/ecdsa.c (ecdsa_set_pub_key, ecdsa_verify and _ecdsa_verify) with the curve orders of
// crypto/ecc_curve_defs.h, Linux 7.2.13
#include "cms/ecdsa.hpp"

#include <algorithm>
#include <string>

#include "asn1/der.hpp"

namespace modsign::cms {

namespace {

// The base point orders n (FIPS 186-5 / SEC 2 §2).
const Bytes kOrderP192 = from_hex("FFFFFFFFFFFFFFFFFFFFFFFF99DEF836146BC9B1B4D22831");
const Bytes kOrderP256 = from_hex("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551");
const Bytes kOrderP384 = from_hex(
    "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"
    "C7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973");
const Bytes kOrderP521 = from_hex(
    "01FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"
    "FA51868783BF2F966B7FCC0148F709A5D03BB5C9B8899C47AEBB6FB71E91386409");

ByteView strip_zeros(ByteView v) {
  while (!v.empty() && v[0] == 0) v = v.subspan(1);
  return v;
}

// vli_cmp of two unsigned big-endian numbers.
int compare(ByteView a, ByteView b) {
  a = strip_zeros(a);
  b = strip_zeros(b);
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  const auto m = std::mismatch(a.begin(), a.end(), b.begin());
  if (m.first == a.end()) return 0;
  return *m.first < *m.second ? -1 : 1;
}

}  // namespace

std::size_t ecdsa_bufsize(crypto::KeyAlgo curve) {
  switch (curve) {
    case crypto::KeyAlgo::ecdsa_p192: return 24;
    case crypto::KeyAlgo::ecdsa_p256: return 32;
    case crypto::KeyAlgo::ecdsa_p384: return 48;
    default: return 72;
  }
}

ByteView ecdsa_curve_order(crypto::KeyAlgo curve) {
  switch (curve) {
    case crypto::KeyAlgo::ecdsa_p192: return ByteView(kOrderP192);
    case crypto::KeyAlgo::ecdsa_p256: return ByteView(kOrderP256);
    case crypto::KeyAlgo::ecdsa_p384: return ByteView(kOrderP384);
    default: return ByteView(kOrderP521);
  }
}

Result<crypto::PublicKey> ecdsa_set_pub_key(const crypto::PublicKey& key, ByteView k) {
  std::size_t field = 0;
  switch (key.algo()) {
    case crypto::KeyAlgo::ecdsa_p192: field = 24; break;
    case crypto::KeyAlgo::ecdsa_p256: field = 32; break;
    case crypto::KeyAlgo::ecdsa_p384: field = 48; break;
    default: field = 66; break;
  }
  if (k.empty() || (k.size() - 1) % 2 != 0)
    return make_error(KErr::einval, "EC point of " + std::to_string(k.size()) + " bytes");
  if (k[0] != 4) return make_error(KErr::einval, "EC point is not uncompressed (04)");
  const std::size_t digitlen = (k.size() - 1) / 2;
  if ((digitlen + 7) / 8 != (field + 7) / 8)
    return make_error(KErr::einval, "EC point coordinates of " + std::to_string(digitlen) + " bytes");
  if (key.usable()) return key;
  // Each coordinate as a big-endian number in ndigits 64-bit words, rewritten at the
  // curve's field size (a value that does not fit is beyond p: not a valid point).
  Bytes point{4};
  for (int c = 0; c < 2; ++c) {
    ByteView v = k.subspan(1 + c * digitlen, digitlen);
    std::size_t lead = 0;
    while (lead < v.size() && v[lead] == 0) ++lead;
    if (v.size() - lead > field) return make_error(KErr::einval, "EC point coordinate beyond the field");
    point.insert(point.end(), field - (v.size() - lead), 0);
    point.insert(point.end(), v.begin() + static_cast<std::ptrdiff_t>(lead), v.end());
  }
  auto rebuilt = crypto::PublicKey::from_ec_point(key.algo(), point);
  if (!rebuilt) return make_error(KErr::einval, "EC key: " + rebuilt.error().message);
  return rebuilt;
}

Status ecdsa_verify(const crypto::PublicKey& key, crypto::HashAlgo hash, ByteView digest, const EcdsaRawSig& sig) {
  // _ecdsa_verify: 0 < r < n and 0 < s < n, else the signature is malformed.
  const ByteView n = ecdsa_curve_order(key.algo());
  if (strip_zeros(sig.r).empty() || compare(sig.r, n) >= 0)
    return make_error(KErr::ebadmsg, "ECDSA-Sig-Value: r is not in [1, n-1]");
  if (strip_zeros(sig.s).empty() || compare(sig.s, n) >= 0)
    return make_error(KErr::ebadmsg, "ECDSA-Sig-Value: s is not in [1, n-1]");
  // The equation itself (OpenSSL wants strict DER: positive minimal INTEGERs).
  auto positive = [](ByteView v) {
    v = strip_zeros(v);
    Bytes out(v.begin(), v.end());
    if (out[0] & 0x80) out.insert(out.begin(), 0);
    return out;
  };
  asn1::Writer w;
  w.add(asn1::kSequence, [&](asn1::Writer& q) {
    q.tlv(asn1::kInteger, positive(sig.r));
    q.tlv(asn1::kInteger, positive(sig.s));
  });
  return crypto::verify_digest(key, hash, digest, w.take());
}

}  // namespace modsign::cms
