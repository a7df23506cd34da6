// Rules of Linux 7.2.13 that the cases generated from the kernel's grammar found
// (tools/kernel-conformance --grammar, tools/conformance/gen_grammar.py): each test builds the
// smallest message or certificate that showed the rule and asserts the kernel's errno.  The
// generated case is named in the test; the family it belongs to runs on every kernel.
#include <gtest/gtest.h>

#include <algorithm>

#include "cms/x509_cert_parser.hpp"
#include "der_tree_support.hpp"

using namespace modsign;
using namespace modsign::test::kernel_tests;

namespace {

KErr parse(const Bytes& der) {
  auto r = cms::pkcs7_parse_message(der, KernelModel::v7_0());
  return r ? KErr::none : r.error().code;
}

KErr decode(const Node& cert) {
  auto r = cms::x509_decode(cert.enc(), KernelModel::v7_0());
  return r ? KErr::none : r.error().code;
}

/// The RSA signer's certificate with an authorityKeyIdentifier whose authorityCertIssuer
/// holds the one GeneralName `gn` (x509_akid.asn1).
Node cert_with_akid(const Node& gn) {
  Node c = tree(to_bytes(signer(KeyAlgo::rsa).cert.der()));
  Node akid{asn1::kSequence, {}, {Node{0xa1, {}, {gn}}}};
  Node ext{asn1::kSequence, {}, {Node{asn1::kOid, {0x55, 0x1d, 0x23}}, Node{asn1::kOctetString, akid.enc()}}};
  c.kids.at(0).kids.back().kids.at(0).kids.push_back(ext);  // extensions [3] { SEQUENCE OF Extension }
  return c;
}

Node directory_name() {
  const Bytes cn{0x55, 0x04, 0x03};
  return Node{asn1::kSequence,
              {},
              {Node{asn1::kSet, {}, {Node{asn1::kSequence, {}, {Node{asn1::kOid, cn}, Node{0x0c, {'C', 'A'}}}}}}}};
}

}  // namespace

// x509_akid:AuthorityKeyIdentifier.authorityCertIssuer[].constructed-bit: a GeneralName
// alternative the grammar makes constructed ([0] otherName, [3], [4] directoryName, [5]) also
// matches a primitive identifier, its contents read as the constructed type's; a primitive
// alternative ([1], [2], [6], [7], [8]) with the constructed bit matches nothing (EBADMSG).
TEST(KernelGrammar, GeneralNameConstructedBit) {
  const Bytes name = directory_name().enc();
  EXPECT_EQ(decode(cert_with_akid(Node{0xa4, {}, {directory_name()}})), KErr::none);
  EXPECT_EQ(decode(cert_with_akid(Node{0x84, name})), KErr::none);
  EXPECT_EQ(decode(cert_with_akid(Node{0x84, {0x05, 0x00}})), KErr::ebadmsg);  // the contents still a Name
  EXPECT_EQ(decode(cert_with_akid(Node{0x82, {'a'}})), KErr::none);
  EXPECT_EQ(decode(cert_with_akid(Node{0xa2, {}, {Node{0x05}}})), KErr::ebadmsg);
  EXPECT_EQ(decode(cert_with_akid(Node{0xa9, {}, {Node{0x05}}})), KErr::ebadmsg);  // no [9] alternative
}

// pkcs7:SignerInfo.authenticatedAttributes.add-aaSequence-empty: SET OF and SEQUENCE OF
// AuthenticatedAttribute match their first element without OR_SKIP, so an empty aaSequence
// [2] (whose contents no action checks) is EBADMSG, as an empty aaSet [0] is.
TEST(KernelGrammar, AuthenticatedAttributesNeedOne) {
  for (bool sequence : {false, true}) {
    Node ci = tree(build(one({}), content()));
    ASSERT_EQ(parse(ci.enc()), KErr::none);
    auto& si = signer_info(ci).kids;
    Node attrs = sequence ? Node{0xa2, {}, {Node{asn1::kSequence}}} : Node{0xa0};
    si.insert(si.begin() + 3, attrs);  // after digestAlgorithm
    EXPECT_EQ(parse(ci.enc()), KErr::ebadmsg) << sequence;
  }
}

// pkcs7:DigestEncryptionAlgorithmIdentifier.parameters.any-indefinite-long-tag-inside and
// -length-4-octets-inside: an indefinite ANY is measured by asn1_find_indefinite_length,
// which skips high-tag-number octets and takes lengths of up to 7 octets (the decoder's
// own elements take at most 2): RSA's NULL parameters so re-encoded still load.
TEST(KernelGrammar, IndefiniteAnyMeasuredLoosely) {
  auto with_params = [](const Bytes& inside) {
    Node ci = tree(build(one({}), content()));
    Node& alg = signer_info(ci).kids.at(3);  // digestEncryptionAlgorithm { OID, NULL }
    Bytes v{0x05, 0x00};                     // SEQUENCE (indefinite) { NULL, inside }: the bytes as they are
    v.insert(v.end(), inside.begin(), inside.end());
    alg.kids.at(1) = Node{0x30, v};
    alg.kids.at(1).indef = true;
    return parse(ci.enc());
  };
  EXPECT_EQ(with_params({}), KErr::none);
  EXPECT_EQ(with_params({0x1f, 0x81, 0x01, 0x00}), KErr::none);  // [UNIVERSAL 129], empty
  EXPECT_EQ(with_params({0x04, 0x84, 0x00, 0x00, 0x00, 0x01, 0x00}), KErr::none);
  EXPECT_EQ(with_params({0x04, 0x88, 0, 0, 0, 0, 0, 0, 0, 1, 0}), KErr::ebadmsg);  // 8 octets: too long
  EXPECT_EQ(with_params({0x04, 0x80, 0x00, 0x00}), KErr::ebadmsg);                 // indefinite primitive
  EXPECT_EQ(with_params({0x00, 0x01}), KErr::ebadmsg);                             // a wrong end-of-contents
}

// x509:AlgorithmIdentifier.algorithm.oid-1.2.643.7.1.1.1.1 in the SubjectPublicKeyInfo: a
// GOST R 34.10-2012 key is "ecrdsa" to x509_extract_key_data, and an RSA signature by it is
// refused by public_key_verify_signature's algorithm check (EKEYREJECTED), not unsupported.
// x509:Extension.extnid.oid-2.5.29.35: only the last authorityKeyIdentifier is decoded.
TEST(KernelGrammar, GostKeyAndLastAuthorityKeyIdentifier) {
  auto signed_with = [](const std::function<void(Node&)>& edit) {
    MsgSpec m = one({});
    Node c = tree(to_bytes(signer(KeyAlgo::rsa).cert.der()));
    edit(c);
    m.certs.push_back(c.enc());
    return verify_usage(m, Usage::module);
  };
  EXPECT_EQ(signed_with([](Node&) {}), KErr::none);
  const Bytes gost256{0x2a, 0x85, 0x03, 0x07, 0x01, 0x01, 0x01, 0x01};
  EXPECT_EQ(signed_with([&](Node& c) { c.kids.at(0).kids.at(6).kids.at(0).kids.at(0).val = gost256; }),
            KErr::ekeyrejected);
  // An extension renamed authorityKeyIdentifier before a real one: the real one is read.
  Node akid = cert_with_akid(Node{0xa4, {}, {directory_name()}});
  auto& exts = akid.kids.at(0).kids.back().kids.at(0).kids;
  const Bytes skid_oid{0x55, 0x1d, 0x0e};
  auto skid = std::find_if(exts.begin(), exts.end(), [&](const Node& e) { return e.kids.at(0).val == skid_oid; });
  ASSERT_NE(skid, exts.end());
  Node early = *skid;  // subjectKeyIdentifier's value (an OCTET STRING) is no AuthorityKeyIdentifier
  early.kids.at(0).val = {0x55, 0x1d, 0x23};
  exts.insert(exts.begin(), early);
  EXPECT_EQ(decode(akid), KErr::none);
  EXPECT_TRUE(crypto::Certificate::from_der(akid.enc(), asn1::Rules::ber).ok());
}
