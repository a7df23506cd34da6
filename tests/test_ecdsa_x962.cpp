// cms/ecdsa_x962 and cms/ecdsa: the ECDSA-Sig-Value as Linux 7.2.13 decodes and checks it
// (crypto/ecdsa-x962.c, crypto/ecdsa.c).  Found by mutant 20261203:715 (a bit flipped in the
// length of s inside an embedded certificate's self-signature: the kernel's decoder meets
// bytes after s, EBADMSG, where OpenSSL's looser parse had verified and refused, EKEYREJECTED);
// the family is also cases of the fixed real-kernel suite (tools/conformance/cases_ecdsa.py),
// whose kernels gave the errnos asserted here.
#include <gtest/gtest.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/obj_mac.h>

#include "cms/ecdsa.hpp"
#include "cms/ecdsa_x962.hpp"
#include "cms/public_key.hpp"
#include "kernel_support.hpp"

using namespace modsign;
using namespace modsign::test::kernel_tests;

namespace {

constexpr std::size_t kP384 = 48;

Bytes integer(ByteView v) { return tlv(asn1::kInteger, v); }
Bytes seq(std::initializer_list<Bytes> parts, std::uint8_t tag = 0x30) { return tlv(tag, cat(parts)); }

// r = 0x01..0x30 and s = 0x80 0x02..0x30 as P-384 values: s has its high bit set.
Bytes r_bytes() {
  Bytes r(kP384);
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<std::uint8_t>(i + 1);
  return r;
}
Bytes s_bytes() {
  Bytes s = r_bytes();
  s[0] = 0x80;
  return s;
}
Bytes with_zero(Bytes v) {
  v.insert(v.begin(), 0);
  return v;
}

KErr decode(const Bytes& sig) {
  auto r = cms::ecdsa_x962_decode(sig, kP384);
  return r ? KErr::none : r.error().code;
}

}  // namespace

TEST(EcdsaX962, DecodesWhatTheKernelDecodes) {
  const Bytes r = r_bytes(), s = s_bytes(), s_der = with_zero(s_bytes());
  const Bytes valid = seq({integer(r), integer(s_der)});
  auto d = cms::ecdsa_x962_decode(valid, kP384);
  ASSERT_TRUE(d);
  EXPECT_EQ(d.value().r, r);
  EXPECT_EQ(d.value().s, s);  // the sign octet dropped
  // Accepted: bytes after the SEQUENCE, a primitive 0x10 for it, indefinite length with
  // its end-of-contents, a value with its high bit set and no sign octet, a long-form length.
  Bytes after = valid;
  after.insert(after.end(), {0, 0});
  EXPECT_EQ(decode(after), KErr::none);
  EXPECT_EQ(decode(seq({integer(r), integer(s_der)}, 0x10)), KErr::none);
  EXPECT_EQ(decode(cat({{0x30, 0x80}, integer(r), integer(s_der), {0, 0}})), KErr::none);
  auto unsigned_s = cms::ecdsa_x962_decode(seq({integer(r), integer(s)}), kP384);
  ASSERT_TRUE(unsigned_s);
  EXPECT_EQ(unsigned_s.value().s, s);
  EXPECT_EQ(decode(seq({cat({{0x02, 0x81, 0x30}, r}), integer(s_der)})), KErr::none);
}

TEST(EcdsaX962, RefusesInTheKernelsOrder) {
  const Bytes r = r_bytes(), s_der = with_zero(s_bytes());
  // The decoder (EBADMSG): bytes after s inside the SEQUENCE (mutant 715), no end-of-contents,
  // r alone, a constructed or indefinite INTEGER, three length octets, s not an INTEGER, nothing.
  EXPECT_EQ(decode(seq({integer(r), integer(s_der), {0x05, 0x00}})), KErr::ebadmsg);
  EXPECT_EQ(decode(cat({{0x30, 0x80}, integer(r), integer(s_der)})), KErr::ebadmsg);
  EXPECT_EQ(decode(seq({integer(r)})), KErr::ebadmsg);
  EXPECT_EQ(decode(seq({tlv(0x22, r), integer(s_der)})), KErr::ebadmsg);
  EXPECT_EQ(decode(seq({cat({{0x02, 0x80}, r, {0, 0}}), integer(s_der)})), KErr::ebadmsg);
  EXPECT_EQ(decode(seq({cat({{0x02, 0x83, 0, 0, 0x30}, r}), integer(s_der)})), KErr::ebadmsg);
  EXPECT_EQ(decode(seq({integer(r), tlv(asn1::kOctetString, s_der)})), KErr::ebadmsg);
  EXPECT_EQ(decode({}), KErr::ebadmsg);
  // ecdsa_get_signature_rs (EINVAL): empty, bufsize + 2, bufsize + 1 not led by 00.
  EXPECT_EQ(decode(seq({integer({}), integer(s_der)})), KErr::einval);
  EXPECT_EQ(decode(seq({integer(r), integer({})})), KErr::einval);
  EXPECT_EQ(decode(seq({integer(with_zero(with_zero(r))), integer(s_der)})), KErr::einval);
  Bytes led = r;
  led.insert(led.begin(), 0x01);
  EXPECT_EQ(decode(seq({integer(led), integer(s_der)})), KErr::einval);
  // The action on r runs before the SEQUENCE's end is checked: EINVAL, not EBADMSG.
  EXPECT_EQ(decode(seq({integer(with_zero(with_zero(r)))})), KErr::einval);
}

TEST(EcdsaX962, CurveOrdersAreOpenssls) {
  const std::pair<crypto::KeyAlgo, int> curves[] = {{crypto::KeyAlgo::ecdsa_p192, NID_X9_62_prime192v1},
                                                    {crypto::KeyAlgo::ecdsa_p256, NID_X9_62_prime256v1},
                                                    {crypto::KeyAlgo::ecdsa_p384, NID_secp384r1},
                                                    {crypto::KeyAlgo::ecdsa_p521, NID_secp521r1}};
  for (const auto& [algo, nid] : curves) {
    EC_GROUP* g = EC_GROUP_new_by_curve_name(nid);
    ASSERT_NE(g, nullptr);
    const BIGNUM* n = EC_GROUP_get0_order(g);
    Bytes want(static_cast<std::size_t>(BN_num_bytes(n)));
    BN_bn2bin(n, want.data());
    EC_GROUP_free(g);
    EXPECT_EQ(to_bytes(cms::ecdsa_curve_order(algo)), want) << nid;
  }
  EXPECT_EQ(cms::ecdsa_bufsize(crypto::KeyAlgo::ecdsa_p256), 32u);
  EXPECT_EQ(cms::ecdsa_bufsize(crypto::KeyAlgo::ecdsa_p521), 72u);
}

TEST(EcdsaX962, RangeCheckedBeforeTheEquation) {
  const Signer& sg = signer(crypto::KeyAlgo::ecdsa_p384);
  const Bytes digest = crypto::digest(crypto::HashAlgo::sha384, content());
  const Bytes sig = crypto::sign_digest(sg.key, crypto::HashAlgo::sha384, digest, true).value();
  auto rs = cms::ecdsa_x962_decode(sig, kP384);
  ASSERT_TRUE(rs);
  const crypto::PublicKey& pub = sg.key.public_key();
  auto verify = [&](const cms::EcdsaRawSig& v) {
    auto st = cms::ecdsa_verify(pub, crypto::HashAlgo::sha384, digest, v);
    return st ? KErr::none : st.error().code;
  };
  EXPECT_EQ(verify(rs.value()), KErr::none);
  const ByteView n = cms::ecdsa_curve_order(crypto::KeyAlgo::ecdsa_p384);
  // n - s is the other valid s (both kernels and OpenSSL accept it).
  BIGNUM* bn = BN_bin2bn(n.data(), static_cast<int>(n.size()), nullptr);
  BIGNUM* bs = BN_bin2bn(rs.value().s.data(), static_cast<int>(rs.value().s.size()), nullptr);
  BN_sub(bs, bn, bs);
  cms::EcdsaRawSig neg = rs.value();
  neg.s.assign(static_cast<std::size_t>(BN_num_bytes(bs)), 0);
  BN_bn2bin(bs, neg.s.data());
  BN_free(bn);
  BN_free(bs);
  EXPECT_EQ(verify(neg), KErr::none);
  cms::EcdsaRawSig bad = rs.value();
  bad.r = Bytes{0};
  EXPECT_EQ(verify(bad), KErr::ebadmsg);
  bad = rs.value();
  bad.s = to_bytes(n);
  EXPECT_EQ(verify(bad), KErr::ebadmsg);
  bad = rs.value();
  std::swap(bad.r, bad.s);
  EXPECT_EQ(verify(bad), KErr::ekeyrejected);
}

// x509_note_signature keeps a signature of no octets (an unused-bits octet alone); the
// algorithm then refuses it: on a kernel without ECDSA, crypto_alloc_sig's ENOENT (Debian
// 12's 6.1, case ecdsa-cert-sig-empty); with it, the decoder's EBADMSG.
TEST(EcdsaX962, EmptyCertificateSignatureGoesToTheAlgorithm) {
  const Signer& sg = signer(crypto::KeyAlgo::ecdsa_p384);
  Bytes der = to_bytes(sg.cert.der());
  // The certificate's last element is the signature BIT STRING: make it 03 01 00.
  asn1::Reader top(der);
  asn1::Reader c = top.enter(asn1::kSequence, "Certificate");
  asn1::Element tbs = c.next(), alg = c.next();
  Bytes edited =
      tlv(asn1::kSequence,
          cat({Bytes(tbs.tlv.begin(), tbs.tlv.end()), Bytes(alg.tlv.begin(), alg.tlv.end()), {0x03, 0x01, 0x00}}));
  MsgSpec m = one({.algo = crypto::KeyAlgo::ecdsa_p384});
  m.certs.push_back(edited);
  EXPECT_EQ(parse_err(m), KErr::ebadmsg);
  KernelModel no_ecdsa = KernelModel::v6_1();
  no_ecdsa.absent_sig_algos = {"ecdsa"};
  EXPECT_EQ(parse_err(m, no_ecdsa), KErr::enoent);
}
