// modsign — libFuzzer target: the DER/BER reader (src/asn1/der.hpp).
// Walks the input as a tree in DER and in BER mode, descending into every constructed
// element, and checks the reader's invariants: every Element lies inside the input, its
// contents inside its TLV; a DER element re-encodes to the same identifier and length
// octets (asn1::header), so the reader accepts exactly minimal definite lengths.  Leaf
// values go through decode_time, oid_to_string and read_small_uint.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "asn1/der.hpp"

using namespace modsign;

namespace {

void check(bool cond) {
  if (!cond) std::abort();
}

void walk(asn1::Reader r, ByteView whole, int depth) {
  while (!r.empty()) {
    const auto e = r.next();
    check(e.tlv.data() >= whole.data() && e.tlv.data() + e.tlv.size() <= whole.data() + whole.size());
    check(e.content.data() >= e.tlv.data() && e.content.data() + e.content.size() <= e.tlv.data() + e.tlv.size());
    if (r.rules() == asn1::Rules::der) {
      const Bytes h = asn1::header(e.tag, e.content.size());
      check(h.size() == e.header_len() && std::memcmp(h.data(), e.tlv.data(), h.size()) == 0);
    }
    if (e.tag == asn1::kUtcTime || e.tag == asn1::kGeneralizedTime) (void)asn1::decode_time(e.tag, e.content);
    if (e.tag == asn1::kOid) check(!asn1::oid_to_string(e.content).empty());
    if (e.tag == asn1::kInteger) {
      asn1::Reader one(e.tlv, r.rules());
      try {
        (void)one.read_small_uint("integer");
      } catch (const asn1::DecodeError&) {}
    }
    // Recursion depth is bounded by the input size (2 bytes per level); cap it anyway so
    // the target's own stack stays small.
    if ((e.tag & 0x20) && depth < 200) {
      try {
        walk(r.inside(e), whole, depth + 1);
      } catch (const asn1::DecodeError&) {}
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView in(data, size);
  for (auto rules : {asn1::Rules::der, asn1::Rules::ber}) {
    try {
      walk(asn1::Reader(in, rules), in, 0);
    } catch (const asn1::DecodeError&) {}
  }
  // Typed access as the parsers use it: expect/maybe/enter/finish.
  try {
    asn1::Reader r(in, asn1::Rules::ber);
    auto seq = r.enter(asn1::kSequence, "outer");
    asn1::Element e;
    if (seq.maybe(asn1::kOid, e)) (void)asn1::oid_to_string(e.content);
    if (seq.peek(asn1::context_cons(0))) (void)seq.enter(asn1::context_cons(0), "[0]").next();
    r.finish("outer");
  } catch (const asn1::DecodeError&) {}
  return 0;
}
