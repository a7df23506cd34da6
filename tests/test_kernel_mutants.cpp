// Rules of Linux 7.2.13 the mutation campaign (tools/kernel-conformance --mutants,
// tools/conformance/mutate.py) found where modsign disagreed with the real kernels: each
// test builds the smallest message that showed it and asserts the kernel's errno.  The
// mutation class that found each rule is named in the test; the same situations are cases
// of the fixed real-kernel suite (tools/conformance/cases_mutants.py).
#include <gtest/gtest.h>

#include <algorithm>

#include "cms/mldsa.hpp"
#include "cms/public_key.hpp"
#include "cms/signed_data.hpp"
#include "cms/x509_cert_parser.hpp"
#include "der_tree_support.hpp"
#include "kernel_support.hpp"

using namespace modsign;
using namespace modsign::test::kernel_tests;

namespace {

KErr parse(const Bytes& der, const KernelModel& p = KernelModel::v7_0()) {
  auto r = cms::pkcs7_parse_message(der, p);
  return r ? KErr::none : r.error().code;
}

Bytes cert_der(KeyAlgo a) { return to_bytes(signer(a).cert.der()); }

/// A message with the signer's certificate embedded, its certificate edited by `edit`.
Bytes with_cert(KeyAlgo a, const std::function<void(Node&)>& edit) {
  MsgSpec m = one({.algo = a});
  Node c = tree(cert_der(a));
  edit(c);
  m.certs.push_back(c.enc());
  return build(m, content());
}

}  // namespace

// contentinfo.content.value.append-null, signeddata.duplicate: [0] EXPLICIT holds exactly
// one SignedData; anything after it is a length mismatch at the end of the [0].
TEST(KernelMutants, ExplicitContentHoldsOneSignedData) {
  Node ci = tree(build(one({}), content()));
  ASSERT_EQ(parse(ci.enc()), KErr::none);
  ci.kids.at(1).kids.push_back(Node{0x05});
  EXPECT_EQ(parse(ci.enc()), KErr::ebadmsg);
  Node twice = tree(build(one({}), content()));
  twice.kids.at(1).kids.push_back(twice.kids.at(1).kids.at(0));
  EXPECT_EQ(parse(twice.enc()), KErr::ebadmsg);
}

// signerinfo.digestAlgorithm.length.indefinite: an indefinite-length AlgorithmIdentifier
// without parameters (the end-of-contents octets are taken as the optional ANY).  With
// parameters it is fine.
TEST(KernelMutants, IndefiniteAlgorithmIdentifierNeedsParameters) {
  for (int which : {0, 1, 2}) {  // SignedData digestAlgorithms, SignerInfo digestAlgorithm, signatureAlgorithm
    Node ci = tree(build(one({.algo = KeyAlgo::ml_dsa_65}), content()));
    Node& alg = which == 0 ? signed_data(ci).kids.at(1).kids.at(0) : signer_info(ci).kids.at(which == 1 ? 2 : 3);
    ASSERT_EQ(alg.kids.size(), 1u) << which;  // OID only
    alg.indef = true;
    EXPECT_EQ(parse(ci.enc()), KErr::ebadmsg) << which;
    alg.kids.push_back(Node{0x05});
    EXPECT_EQ(parse(ci.enc()), KErr::none) << which;
  }
  // RSA's signatureAlgorithm carries NULL parameters: indefinite is accepted.
  Node ci = tree(build(one({}), content()));
  signer_info(ci).kids.at(3).indef = true;
  EXPECT_EQ(parse(ci.enc()), KErr::none);
}

// signeddata.certificates.value.drop-last: certSet's element type is a CHOICE, so an empty
// certificates [0] is accepted (the kernel loads the module); certSequence [2] and the CRL
// lists are SEQUENCE/SET OF plain types, empty ones are decoder errors.
TEST(KernelMutants, EmptyCertificateSet) {
  for (std::uint8_t tag : {0xa0, 0xa2, 0xa1}) {
    Node ci = tree(build(one({}), content()));
    auto& kids = signed_data(ci).kids;
    kids.insert(kids.end() - 1, Node{tag});
    EXPECT_EQ(parse(ci.enc()), tag == 0xa0 ? KErr::none : KErr::ebadmsg) << int(tag);
  }
}

// pkcs7.zeroes in an ML-DSA signature: mldsa_verify's sigDecode refuses a z coefficient out
// of range or a malformed hint vector with EBADMSG; a well-formed wrong signature is
// EKEYREJECTED.  pkcs7_verify_one passes the errno on when the signer's certificate is in the
// message; pkcs7_validate_trust_one (signer only in the trusted keyring) turns every failure
// into EKEYREJECTED (both confirmed on the 7.2.13 kernel: mut-mldsa-z-out-of-range*).
TEST(KernelMutants, MlDsaSignatureThatDoesNotDecode) {
  const Signer& s = signer(KeyAlgo::ml_dsa_65);
  const Bytes good = crypto::sign_message(s.key, HashAlgo::sha512, content()).value();
  ASSERT_EQ(good.size(), 3309u);
  EXPECT_TRUE(cms::mldsa_signature_decodes(KeyAlgo::ml_dsa_65, good).ok());
  auto verify = [&](Bytes sig, bool embed) {
    MsgSpec m = one({.algo = KeyAlgo::ml_dsa_65, .signature = sig});
    if (embed) m.certs.push_back(cert_der(KeyAlgo::ml_dsa_65));
    return verify_module_sig(build(m, content()), keyring_of({&s})).err;
  };
  EXPECT_EQ(verify(good, true), KErr::none);
  EXPECT_EQ(verify(good, false), KErr::none);
  Bytes z0 = good;  // first z coefficient encoded as 0: z = gamma1, outside +-(gamma1 - beta)
  z0[48] = z0[49] = 0;
  z0[50] &= 0xf0;
  EXPECT_EQ(cms::mldsa_signature_decodes(KeyAlgo::ml_dsa_65, z0).error().code, KErr::ebadmsg);
  EXPECT_EQ(verify(z0, true), KErr::ebadmsg);
  EXPECT_EQ(verify(z0, false), KErr::ekeyrejected);
  Bytes hint = good;  // the last cumulative hint count above omega (55)
  hint.back() = 56;
  EXPECT_EQ(verify(hint, true), KErr::ebadmsg);
  Bytes ctilde = good;  // the commitment hash changed: decodes, does not verify
  ctilde[0] ^= 1;
  EXPECT_EQ(verify(ctilde, true), KErr::ekeyrejected);
}

// sigDecode's z range at every parameter set, for coefficients at each bit alignment and the
// last one of the vector (the decoder reads a coefficient as a 4-byte window): FIPS 204
// Alg. 27 line 6 / Table 1 (gamma1, beta), bits = 1 + bitlen(gamma1 - 1).
TEST(KernelMutants, MlDsaZRangeAtEveryCoefficientPosition) {
  struct Set {
    KeyAlgo algo;
    std::size_t ctilde, l, bits;
    std::uint32_t gamma1, beta;
  };
  for (const Set p :
       {Set{KeyAlgo::ml_dsa_44, 32, 4, 18, 1u << 17, 78}, Set{KeyAlgo::ml_dsa_65, 48, 5, 20, 1u << 19, 196},
        Set{KeyAlgo::ml_dsa_87, 64, 7, 20, 1u << 19, 120}}) {
    const Bytes good = crypto::sign_message(signer(p.algo).key, HashAlgo::sha512, content()).value();
    // z coefficient c encoded as v (x = gamma1 - v), every other bit as signed
    auto with = [&](std::size_t c, std::uint32_t v) {
      Bytes b = good;
      for (std::size_t i = 0; i < p.bits; ++i) {
        const std::size_t at = p.ctilde * 8 + c * p.bits + i;
        b[at / 8] = static_cast<std::uint8_t>((b[at / 8] & ~(1u << (at % 8))) | (((v >> i) & 1u) << (at % 8)));
      }
      return cms::mldsa_signature_decodes(p.algo, b);
    };
    const std::size_t last = p.l * 256 - 1;
    for (const std::size_t c : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{255},
                                std::size_t{257}, last - 1, last}) {
      EXPECT_TRUE(with(c, p.beta + 1).ok()) << c;                 // x = gamma1 - beta - 1
      EXPECT_TRUE(with(c, 2 * p.gamma1 - p.beta - 1).ok()) << c;  // x = -(gamma1 - beta) + 1
      const auto low = with(c, p.beta);                           // x = gamma1 - beta
      ASSERT_FALSE(low.ok()) << c;
      EXPECT_EQ(low.error().code, KErr::ebadmsg);
      EXPECT_EQ(low.error().message,
                "ML-DSA signature: z coefficient " + std::to_string(c) + " outside +-(gamma1 - beta) (sigDecode)");
      EXPECT_FALSE(with(c, 2 * p.gamma1 - p.beta).ok()) << c;  // x = -(gamma1 - beta)
      EXPECT_FALSE(with(c, (1u << p.bits) - 1).ok()) << c;     // all ones
    }
  }
}

// certificate.tag (20261202:2901 on Debian 12's 6.1): pkcs7_extract_cert wants the identifier
// octet 0x30 itself; the primitive form 0x10, which the grammar would take for a SEQUENCE,
// is EBADMSG before the certificate is parsed (so before 6.1's ENOPKG for an ML-DSA one).
TEST(KernelMutants, CertificateMustBeAConstructedSequence) {
  for (KeyAlgo a : {KeyAlgo::rsa, KeyAlgo::ml_dsa_44}) {
    EXPECT_EQ(parse(with_cert(a, [](Node& c) { c.tag = 0x10; })), KErr::ebadmsg);
    EXPECT_EQ(parse(with_cert(a, [](Node& c) { c.tag = 0x10; }), KernelModel::v6_1()), KErr::ebadmsg);
  }
  EXPECT_EQ(parse(with_cert(KeyAlgo::ml_dsa_44, [](Node&) {}), KernelModel::v6_1()), KErr::enopkg);
}

// certificate.tbs.subjectPublicKeyInfo.inner.value.truncate (20261202:8460 on 7.2.13): the
// curve OID of an EC key goes through parse_OID, which wants a short-form OID TLV with at
// least one contents octet (EBADMSG); an unknown but well-formed curve is ENOPKG.
TEST(KernelMutants, EcCurveParametersThroughParseOid) {
  auto curve = [](const std::function<void(Node&)>& f) {
    return with_cert(KeyAlgo::ecdsa_p384, [=](Node& c) { f(c.kids.at(0).kids.at(6).kids.at(0).kids.at(1)); });
  };
  EXPECT_EQ(parse(curve([](Node&) {})), KErr::none);
  EXPECT_EQ(parse(curve([](Node& o) { o.val.clear(); })), KErr::ebadmsg);
  EXPECT_EQ(parse(curve([](Node& o) { o.val.pop_back(); })), KErr::enopkg);
  EXPECT_EQ(parse(curve([](Node& o) { o.tag = 0x04; })), KErr::ebadmsg);
}

// certificate.*: the x509.asn1 grammar and x509_process_extension / x509_note_signature.
TEST(KernelMutants, EmbeddedCertificateGrammar) {
  for (KeyAlgo a : {KeyAlgo::rsa, KeyAlgo::ml_dsa_65}) {
    EXPECT_EQ(parse(with_cert(a, [](Node&) {})), KErr::none);
    EXPECT_TRUE(cms::x509_decode(cert_der(a), KernelModel::v7_0()).ok());
    // certificate.tbs.value.append-null: TBSCertificate must end after the extensions.
    EXPECT_EQ(parse(with_cert(a, [](Node& c) { c.kids.at(0).kids.push_back(Node{0x05}); })), KErr::ebadmsg);
    // certificate.signatureAlgorithm.params.duplicate: AlgorithmIdentifier is { OID, ANY OPTIONAL }.
    EXPECT_EQ(parse(with_cert(a,
                              [](Node& c) {
                                auto& alg = c.kids.at(1).kids;
                                alg.push_back(Node{0x05});
                                alg.push_back(Node{0x05});
                              })),
              KErr::ebadmsg);
    // certificate.tbs.validity.inner.remove: notAfter (a CHOICE) may be absent at the end of
    // Validity; the certificate parses and its self-signature (over the changed TBS) fails.
    // certificate.tbs.validity.value.empty: an empty Validity is a decoder error.
    EXPECT_EQ(parse(with_cert(a, [](Node& c) { c.kids.at(0).kids.at(4).kids.pop_back(); })), KErr::ekeyrejected);
    EXPECT_EQ(parse(with_cert(a, [](Node& c) { c.kids.at(0).kids.at(4).kids.clear(); })), KErr::ebadmsg);
    // certificate.tbs.subject.value.empty: a Name is a SEQUENCE OF with at least one RDN.
    EXPECT_EQ(parse(with_cert(a, [](Node& c) { c.kids.at(0).kids.at(5).kids.clear(); })), KErr::ebadmsg);
    // certificate.signatureAlgorithm.oid.oid-swap: both algorithm identifiers must agree (EINVAL).
    EXPECT_EQ(parse(with_cert(a,
                              [&](Node& c) {
                                c.kids.at(1).kids.at(0).val = to_bytes(
                                    a == KeyAlgo::rsa ? crypto::oid::ecdsa_with_sha256 : crypto::oid::ml_dsa_87);
                              })),
              KErr::einval);
    // certificate.tbs.signature.oid.value.leading-zero: an unknown tbsCertificate.signature
    // is ENOPKG at once (the module then loads tainted on a permissive kernel).
    EXPECT_EQ(parse(with_cert(a,
                              [](Node& c) {
                                auto& v = c.kids.at(0).kids.at(2).kids.at(0).val;
                                v.insert(v.begin(), 0);
                              })),
              KErr::enopkg);
  }
}

TEST(KernelMutants, EmbeddedCertificateExtensions) {
  // certificate.tbs.extensions.inner.value.random: keyUsage and basicConstraints are read
  // with shape checks (EBADMSG); the generated certificate has both.
  auto edit_ext = [](const Bytes& ext_oid, const std::function<void(Bytes&)>& f) {
    return [=](Node& c) {
      for (auto& ext : c.kids.at(0).kids.back().kids.at(0).kids)
        if (ext.kids.at(0).val == ext_oid) f(ext.kids.back().val);
    };
  };
  const Bytes key_usage{0x55, 0x1d, 0x0f}, basic{0x55, 0x1d, 0x13}, skid{0x55, 0x1d, 0x0e};
  EXPECT_EQ(parse(with_cert(KeyAlgo::rsa, edit_ext(key_usage,
                                                   [](Bytes& v) {
                                                     v = {0x0f, 0x97, 0xb0, 0x92};
                                                   }))),
            KErr::ebadmsg);
  EXPECT_EQ(parse(with_cert(KeyAlgo::rsa, edit_ext(basic,
                                                   [](Bytes& v) {
                                                     v = {0x30, 0x03, 0x01, 0x01, 0x00};
                                                   }))),
            KErr::ebadmsg);
  EXPECT_EQ(parse(with_cert(KeyAlgo::rsa, edit_ext(skid, [](Bytes& v) { v.push_back(0); }))), KErr::ebadmsg);
  // 6.1 did not read keyUsage or basicConstraints (they came with 6.4's key flags): the
  // certificate parses, and its self-signature (over the changed TBS) fails.
  EXPECT_EQ(parse(with_cert(KeyAlgo::rsa, edit_ext(key_usage,
                                                   [](Bytes& v) {
                                                     v = {0x0f, 0x97, 0xb0, 0x92};
                                                   })),
                  KernelModel::v6_1()),
            KErr::ekeyrejected);
  EXPECT_EQ(parse(with_cert(KeyAlgo::rsa, edit_ext(skid, [](Bytes& v) { v.push_back(0); })), KernelModel::v6_1()),
            KErr::ebadmsg);
}

// certificate.tbs.subject.inner.length.long-form: the kernel reads certificates with its BER
// decoder (a non-minimal length is accepted) and compares the Names' contents: a subject
// whose RDN is re-encoded differs from the issuer, so the certificate is not self-signed and
// its (now broken) self-signature is not checked.
TEST(KernelMutants, EmbeddedCertificateBerLengths) {
  Node c = tree(cert_der(KeyAlgo::rsa));
  auto& tbs = c.kids.at(0).kids;
  Bytes subject_content;  // the subject's first RDN with its length in long form (31 81 LL)
  for (std::size_t i = 0; i < tbs.at(5).kids.size(); ++i) {
    Bytes b = tbs[5].kids[i].enc();
    if (i == 0) {
      ASSERT_LT(b[1], 0x80);
      b.insert(b.begin() + 1, 0x81);
    }
    subject_content.insert(subject_content.end(), b.begin(), b.end());
  }
  Bytes tbs_content;
  for (std::size_t i = 0; i < tbs.size(); ++i) {
    Bytes b = i == 5 ? tlv(asn1::kSequence, subject_content) : tbs[i].enc();
    tbs_content.insert(tbs_content.end(), b.begin(), b.end());
  }
  const Bytes cert =
      tlv(asn1::kSequence, cat({tlv(asn1::kSequence, tbs_content), c.kids.at(1).enc(), c.kids.at(2).enc()}));
  // modsign's strict DER reader refuses it; the kernel's BER decoder does not.
  EXPECT_FALSE(crypto::Certificate::from_der(cert).ok());
  EXPECT_TRUE(crypto::Certificate::from_der(cert, asn1::Rules::ber).ok());
  EXPECT_TRUE(cms::x509_decode(cert, KernelModel::v7_0()).ok());
  MsgSpec m = one({});
  m.certs.push_back(cert);
  EXPECT_EQ(parse(build(m, content())), KErr::none);
  EXPECT_EQ(verify_module_sig(build(m, content()), keyring_of({&signer(KeyAlgo::rsa)})).err, KErr::none);
  // The same subject re-encoded in the outer length only (30 81 LL): the contents still equal
  // the issuer's, so the certificate counts as self-signed and its signature (over the
  // changed TBS) is checked: EKEYREJECTED.
  Bytes tbs2;
  for (std::size_t i = 0; i < tbs.size(); ++i) {
    Bytes b = tbs[i].enc();
    if (i == 5 && b[1] < 0x80) b.insert(b.begin() + 1, 0x81);
    tbs2.insert(tbs2.end(), b.begin(), b.end());
  }
  MsgSpec m2 = one({});
  m2.certs.push_back(tlv(asn1::kSequence, cat({tlv(asn1::kSequence, tbs2), c.kids.at(1).enc(), c.kids.at(2).enc()})));
  EXPECT_EQ(parse(build(m2, content())), KErr::ekeyrejected);
}

// certificate.tbs.subjectPublicKeyInfo.*: x509_extract_key_data keeps the key bytes; the key
// is parsed only when used, by the algorithm's set_pub_key (crypto_sig_set_pubkey in
// public_key_verify_signature, after crypto_alloc_sig).  A self-signed embedded certificate
// uses its key at once (x509_check_for_self_signed): the set_pub_key errno, or, for a key
// that parses, EKEYREJECTED from the self-signature over the changed TBS.  modsign used to
// refuse such a certificate with EBADMSG because OpenSSL decodes the key at parse time.
TEST(KernelMutants, EmbeddedCertificateKeyParsedWhenUsed) {
  // The subjectPublicKey BIT STRING's contents (00 || key) of a certificate, edited.
  auto edit_key = [](const std::function<void(Bytes&)>& f) {
    return [=](Node& c) {
      Bytes& bits = c.kids.at(0).kids.at(6).kids.at(1).val;
      Bytes key(bits.begin() + 1, bits.end());
      f(key);
      bits = cat({Bytes{0}, key});
    };
  };
  // RSA: bytes after RsaPubKey are not read (asn1_ber_decoder stops at the end of the grammar).
  EXPECT_EQ(parse(with_cert(KeyAlgo::rsa, edit_key([](Bytes& k) { k.push_back(0); }))), KErr::ekeyrejected);
  // RSA: a modulus of 3072 - 64 bits is not a key size rsa_check_key_length allows.
  EXPECT_EQ(parse(with_cert(KeyAlgo::rsa, edit_key([](Bytes& k) {
                              Node key = tree(k);
                              Bytes& n = key.kids.at(0).val;
                              n.erase(n.end() - 8, n.end());
                              k = key.enc();
                            }))),
            KErr::einval);
  // RSA: an exponent longer than the modulus (rsa_get_e).
  EXPECT_EQ(parse(with_cert(KeyAlgo::rsa, edit_key([](Bytes& k) {
                              Node key = tree(k);
                              key.kids.at(1).val = Bytes(key.kids.at(0).val.size() + 1, 1);
                              k = key.enc();
                            }))),
            KErr::einval);
  // RSA: RsaPubKey that does not decode.
  EXPECT_EQ(parse(with_cert(KeyAlgo::rsa, edit_key([](Bytes& k) { k[0] = 0x04; }))), KErr::ebadmsg);
  // ECDSA: a point that is not uncompressed, or not on the curve (ecdsa_set_pub_key).
  EXPECT_EQ(parse(with_cert(KeyAlgo::ecdsa_p384, edit_key([](Bytes& k) { k[0] = 0; }))), KErr::einval);
  EXPECT_EQ(parse(with_cert(KeyAlgo::ecdsa_p384, edit_key([](Bytes& k) { k.back() ^= 1; }))), KErr::einval);
  EXPECT_EQ(parse(with_cert(KeyAlgo::ecdsa_p384, edit_key([](Bytes& k) { k.resize(k.size() - 2); }))), KErr::einval);
  // ML-DSA: the length alone (crypto_mldsa_set_pub_key); other bytes are a key.
  EXPECT_EQ(parse(with_cert(KeyAlgo::ml_dsa_44, edit_key([](Bytes& k) { k.push_back(0); }))), KErr::einval);
  EXPECT_EQ(parse(with_cert(KeyAlgo::ml_dsa_44, edit_key([](Bytes& k) { k[40] ^= 1; }))), KErr::ekeyrejected);
  // ML-DSA with NULL parameters in its AlgorithmIdentifier, and an SPKI with a long-form
  // length: OpenSSL refuses both, the kernel takes the key.
  EXPECT_EQ(parse(with_cert(KeyAlgo::ml_dsa_65,
                            [](Node& c) { c.kids.at(0).kids.at(6).kids.at(0).kids.push_back(Node{0x05}); })),
            KErr::ekeyrejected);
  // On a kernel without CONFIG_CRYPTO_MLDSA crypto_alloc_sig fails first: ENOENT.
  KernelModel no_mldsa = KernelModel::v7_0();
  no_mldsa.absent_sig_algos = {"mldsa"};
  EXPECT_EQ(parse(with_cert(KeyAlgo::ml_dsa_44, edit_key([](Bytes& k) { k.push_back(0); })), no_mldsa), KErr::enoent);
  // Unchanged certificates still load.
  for (KeyAlgo a : {KeyAlgo::rsa, KeyAlgo::ecdsa_p384, KeyAlgo::ml_dsa_65})
    EXPECT_EQ(parse(with_cert(a, [](Node&) {})), KErr::none) << static_cast<int>(a);
}

// The unparsed key as crypto_sig_set_pubkey rebuilds it verifies what the original key does.
TEST(KernelMutants, UnparsedKeyRebuiltAsTheKernelReadsIt) {
  for (KeyAlgo a : {KeyAlgo::rsa, KeyAlgo::ecdsa_p384, KeyAlgo::ml_dsa_65}) {
    const crypto::PublicKey& good = signer(a).cert.public_key();
    const crypto::PublicKey raw = crypto::PublicKey::unparsed(a, good.spki());
    EXPECT_FALSE(raw.usable());
    auto rebuilt = cms::crypto_sig_set_pubkey(raw);
    ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().message;
    EXPECT_TRUE(rebuilt.value().usable());
    EXPECT_TRUE(rebuilt.value() == good) << static_cast<int>(a);
  }
}

// signeddata.length.indefinite + signeddata.version.length.plus-one: the kernel walks into an
// indefinite-length SignedData and meets pkcs7_note_signeddata_version (EINVAL: a 2-byte
// version) before the misaligned bytes after it; modsign used to look for the SignedData's
// end first and refuse the whole with EBADMSG.
// signeddata.length.minus-one + signeddata.signerInfos.length.indefinite: the SignedData ends
// inside the signerInfos' end-of-contents octets; the kernel reads the SignerInfo (and its
// actions: ENOPKG for ML-DSA on a 6.x kernel) before it finds the missing octet (EBADMSG).
TEST(KernelMutants, IndefiniteLengthWalkedInto) {
  Node ci = tree(build(one({}), content()));
  signed_data(ci).indef = true;
  Bytes der = ci.enc();
  ASSERT_EQ(parse(der), KErr::none);
  const Bytes version = {0x30, 0x80, 0x02, 0x01, 0x01};
  auto at = std::search(der.begin(), der.end(), version.begin(), version.end());
  ASSERT_NE(at, der.end());
  at[3] = 0x02;
  EXPECT_EQ(parse(der), KErr::einval);

  Node ci2 = tree(build(one({.algo = KeyAlgo::ml_dsa_65}), content()));
  signed_data(ci2).kids.back().indef = true;
  Bytes der2 = ci2.enc();
  ASSERT_EQ(parse(der2), KErr::none);
  ASSERT_EQ(der2[19], 0x30);  // ContentInfo 30 82 LL LL, OID (11), [0] a0 82 LL LL, SignedData
  ASSERT_EQ(der2[20], 0x82);
  const unsigned len = (der2[21] << 8 | der2[22]) - 1;
  der2[21] = static_cast<std::uint8_t>(len >> 8);
  der2[22] = static_cast<std::uint8_t>(len);
  EXPECT_EQ(parse(der2), KErr::ebadmsg);
  EXPECT_EQ(parse(der2, KernelModel::v6()), KErr::enopkg);
}

// signeddata.value.drop-last + signeddata.encapContentInfo.length.indefinite (20261203:2121):
// no signerInfos.  The decoder's final check of that CHOICE tests whether the last tag it read
// matched: after a definite contentInfo (or certificates) it did, and zero signers are
// pkcs7_check_authattrs' EINVAL; an indefinite contentInfo without content, or an indefinite
// SignedData, leaves its end-of-contents octets read as an unmatched tag: EBADMSG.
TEST(KernelMutants, MissingSignerInfosAfterAnUnmatchedTag) {
  const auto without_signer_infos = [](bool encap_indef, bool sd_indef, bool certs) {
    Node ci = tree(build(one({}), content()));
    Node& sd = signed_data(ci);
    sd.kids.pop_back();
    if (certs) sd.kids.push_back(Node{0xa0, {}, {tree(cert_der(KeyAlgo::ml_dsa_65))}});
    sd.kids.at(2).indef = encap_indef;
    sd.indef = sd_indef;
    return ci.enc();
  };
  EXPECT_EQ(parse(without_signer_infos(false, false, false)), KErr::einval);
  EXPECT_EQ(parse(without_signer_infos(true, false, false)), KErr::ebadmsg);
  EXPECT_EQ(parse(without_signer_infos(false, true, false)), KErr::ebadmsg);
  EXPECT_EQ(parse(without_signer_infos(true, false, true)), KErr::einval);  // the certificates matched last
  EXPECT_EQ(parse(without_signer_infos(false, true, true)), KErr::ebadmsg);
  EXPECT_EQ(parse(without_signer_infos(true, false, false), KernelModel::v6()), KErr::ebadmsg);
}

// A keyring certificate goes through the same x509.asn1 decoder as an embedded one: a
// subjectPublicKey BIT STRING whose length takes 4 octets is read by OpenSSL but is a
// decoder error in the kernel (length_too_long), so the kernel never loads the
// certificate; x509_supported() says so and keyring loading leaves it out with a note.
TEST(KernelMutants, KeyringCertificateThroughTheKernelDecoder) {
  Node c = tree(cert_der(KeyAlgo::ecdsa_p384));
  Node& spki = c.kids.at(0).kids.at(6);
  const Bytes bits = spki.kids.at(1).val;
  Bytes body = spki.kids.at(0).enc();
  const Bytes hdr = {
      0x03, 0x84, 0, 0, static_cast<std::uint8_t>(bits.size() >> 8), static_cast<std::uint8_t>(bits.size())};
  body.insert(body.end(), hdr.begin(), hdr.end());
  body.insert(body.end(), bits.begin(), bits.end());
  spki.kids.clear();
  spki.val = body;
  auto cert = crypto::Certificate::from_der(c.enc());
  ASSERT_TRUE(cert.ok()) << cert.error().message;
  auto st = cms::x509_supported(cert.value(), KernelModel::v7_0());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, KErr::ebadmsg);
  EXPECT_TRUE(cms::x509_supported(signer(KeyAlgo::ecdsa_p384).cert, KernelModel::v7_0()).ok());
}

// signerinfo.signatureAlgorithm.oid.oid-swap (20261206:521): Linux 6.1's
// pkcs7_sig_note_pkey_algo knows SM2-with-SM3 ("sm2", raw); a trusted RSA key, or an embedded
// RSA certificate, then refuses the signature (EKEYREJECTED on Debian 12).  6.12 and 7.2 have
// no SM2 (ENOPKG: unsupported crypto).
TEST(KernelMutants, Sm2WithSm3KnownTo61Only) {
  const Bytes sm2 = oid_bytes({0x2a, 0x81, 0x1c, 0xcf, 0x55, 0x01, 0x83, 0x75});
  const Bytes der = build(one({.algo = KeyAlgo::rsa, .sig_oid = sm2}), content());
  auto old = cms::pkcs7_parse_message(der, KernelModel::v6_1());
  ASSERT_TRUE(old);
  EXPECT_EQ(old.value().signed_infos.at(0).pkey_algo, "sm2");
  EXPECT_EQ(parse(der, KernelModel::v6()), KErr::enopkg);
  EXPECT_EQ(parse(der, KernelModel::v7_0()), KErr::enopkg);
}

// rsa-embedded-akid:x509:AlgorithmIdentifier.algorithm.oid-2.16.840.1.101.3.4.3.13 (the
// grammar generator, session 23): x509_note_sig_algo knows RSA and ECDSA with SHA3-256, -384
// and -512 only; SHA3-224 (.13 RSA, .9 ECDSA) in tbsCertificate.signature is unsupported
// (ENOPKG: the module loads tainted on the built 7.2.13), not a mismatch of the two
// identifiers (EINVAL, what modsign said).
TEST(KernelMutants, Sha3_224CertificateSignatureAlgorithmsAreUnsupported) {
  auto sha3 = [](std::uint8_t last) { return oid_bytes({0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, last}); };
  auto tbs_alg = [&](std::uint8_t last) {
    return [&, last](Node& c) { c.kids.at(0).kids.at(2).kids = {Node{asn1::kOid, sha3(last)}}; };
  };
  EXPECT_EQ(parse(with_cert(KeyAlgo::rsa, tbs_alg(0x0d))), KErr::enopkg);         // RSA with SHA3-224
  EXPECT_EQ(parse(with_cert(KeyAlgo::ecdsa_p384, tbs_alg(0x09))), KErr::enopkg);  // ECDSA with SHA3-224
  // SHA3-384 is known: the outer identifier then differs (EINVAL).
  EXPECT_EQ(parse(with_cert(KeyAlgo::rsa, tbs_alg(0x0f))), KErr::einval);
  EXPECT_EQ(parse(with_cert(KeyAlgo::ecdsa_p384, tbs_alg(0x0b))), KErr::einval);
}

// certificate.tbs.signature.oid.oid-swap (20261207:151): x509_note_sig_algo knows GOST
// R 34.10-2012 with Streebog-256/512 ("ecrdsa").  In tbsCertificate.signature alone the two
// identifiers differ (EINVAL); in both, x509_get_sig_params needs Streebog: a kernel without
// it marks the signature unsupported (the certificate parses), one with it checks the
// self-signature, whose ECDSA key is no EC-RDSA key (EKEYREJECTED).  Confirmed on Debian 12,
// 13, unstable (Streebog as a module) and the built 7.2.13 (none): cert-sigalg-gost*.
TEST(KernelMutants, GostCertificateSignatureAlgorithms) {
  const Bytes gost256 = oid_bytes({0x2a, 0x85, 0x03, 0x07, 0x01, 0x01, 0x03, 0x02});
  auto tbs_alg = [&](Node& c) { c.kids.at(0).kids.at(2).kids = {Node{asn1::kOid, gost256}}; };
  EXPECT_EQ(parse(with_cert(KeyAlgo::ecdsa_p384, tbs_alg)), KErr::einval);
  const Bytes both = with_cert(KeyAlgo::ecdsa_p384, [&](Node& c) {
    tbs_alg(c);
    c.kids.at(1).kids = {Node{asn1::kOid, gost256}};
  });
  EXPECT_EQ(parse(both), KErr::ekeyrejected);
  KernelModel no_streebog = KernelModel::v7_0();
  no_streebog.absent_hashes = {"streebog"};
  EXPECT_EQ(parse(both, no_streebog), KErr::none);
}
