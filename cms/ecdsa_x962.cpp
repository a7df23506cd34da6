// mirrors crypto/ecdsa-x962.c ecdsa_x962_verify (the ECDSA-Sig-Value decoding of crypto/ecdsasignature.asn1,
// ecdsa_get_signature_rs), Linux 7.2.13
#include "cms/ecdsa_x962.hpp"

#include <string>

#include "asn1/der.hpp"

namespace modsign::cms {

namespace {

// ecdsa_get_signature_rs: one leading zero may make the value bufsize + 1 bytes long.
Result<Bytes> get_signature_rs(ByteView v, std::size_t bufsize, const char* which) {
  if (v.empty()) return make_error(KErr::einval, std::string("ECDSA-Sig-Value: ") + which + " is an empty INTEGER");
  if (v.size() > bufsize + 1 || (v.size() == bufsize + 1 && v[0] != 0))
    return make_error(KErr::einval, std::string("ECDSA-Sig-Value: ") + which + " of " + std::to_string(v.size()) +
                                        " bytes, the curve takes " + std::to_string(bufsize));
  if (v.size() > bufsize) v = v.subspan(1);
  return Bytes(v.begin(), v.end());
}

}  // namespace

Result<EcdsaRawSig> ecdsa_x962_decode(ByteView sig, std::size_t bufsize) {
  EcdsaRawSig out;
  try {
    asn1::Reader top(sig, asn1::Rules::ber);
    asn1::Reader seq = top.enter(asn1::kSequence, "ECDSA-Sig-Value");
    auto r = get_signature_rs(seq.expect(asn1::kInteger, "r").content, bufsize, "r");
    if (!r) return r.error();
    out.r = std::move(r.value());
    auto s = get_signature_rs(seq.expect(asn1::kInteger, "s").content, bufsize, "s");
    if (!s) return s.error();
    out.s = std::move(s.value());
    seq.finish("ECDSA-Sig-Value");
  } catch (const asn1::DecodeError& ex) {
    return make_error(KErr::ebadmsg, std::string("malformed ECDSA-Sig-Value: ") + ex.what());
  }
  return out;
}

}  // namespace modsign::cms
