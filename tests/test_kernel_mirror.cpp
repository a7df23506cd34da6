// The kernel mirror beyond the §9 items: modsign's own forms per profile, decoder details,
// agreement with OpenSSL's parser, chains and keyrings, times, signature encodings (Linux
// 7.2 source review), and Linux 6.1's digests (real-kernel conformance).
#include <gtest/gtest.h>

#include <optional>

#include "cms/signed_data.hpp"
#include "kernel_support.hpp"
#include "module/module_signature.hpp"

using namespace modsign;
using namespace modsign::test::kernel_tests;

// ------------------------------------------------------ modsign's own forms per profile

TEST(KernelProfiles, ModsignFormsPerProfile) {
  const Bytes mod = content();
  auto check = [&](KeyAlgo algo, bool attrs, const KernelModel& p, module::LoadOutcome want, KErr want_err) {
    const Signer& s = signer(algo);
    cms::BuildOptions opt;
    opt.digest = algo == KeyAlgo::rsa ? HashAlgo::sha256 : HashAlgo::sha512;
    opt.signed_attrs = attrs;
    for (auto sid : {cms::SignerIdType::issuer_and_serial, cms::SignerIdType::subject_key_id}) {
      opt.sid = sid;
      const Bytes file = module::append_signature(mod, cms::build_detached(s.key, s.cert, mod, opt).value());
      auto v = module::module_sig_check(file, keyring_of({&s}), p);
      EXPECT_EQ(v.outcome, want) << crypto::key_algo_name(algo) << " attrs=" << attrs << " " << p.name() << ": "
                                 << v.reason;
      EXPECT_EQ(v.outcome == module::LoadOutcome::refused ? v.load_errno : v.sig_errno, want_err) << v.reason;
    }
  };
  auto waived = KernelModel::v7_0();
  waived.waive_mldsa_authattrs = true;
  for (auto algo : {KeyAlgo::ml_dsa_44, KeyAlgo::ml_dsa_65, KeyAlgo::ml_dsa_87}) {
    check(algo, false, KernelModel::v7_0(), module::LoadOutcome::loads, KErr::none);
    check(algo, false, KernelModel::v6(), module::LoadOutcome::loads_tainted, KErr::enopkg);
    check(algo, true, KernelModel::v7_0(), module::LoadOutcome::refused, KErr::ekeyrejected);
    check(algo, true, waived, module::LoadOutcome::loads, KErr::none);
  }
  for (auto p : {KernelModel::v6(), KernelModel::v7_0(), waived}) {
    check(KeyAlgo::rsa, true, p, module::LoadOutcome::refused, KErr::ekeyrejected);
    check(KeyAlgo::rsa, false, p, module::LoadOutcome::loads, KErr::none);
    check(KeyAlgo::ecdsa_p384, false, p, module::LoadOutcome::loads, KErr::none);
  }
}

// ---------------------------------------------------------------------- decoder details

TEST(KernelDecoder, IndefiniteLengthsAndSizes) {
  // The same message with indefinite lengths on its outer constructed elements: accepted.
  const Signer& s = signer(KeyAlgo::rsa);
  const Bytes der = build(one({}), content());
  asn1::Reader top(der);
  auto ci = top.next();
  asn1::Reader in(ci.content);
  auto o = in.next();
  auto x0 = in.next();
  asn1::Reader in0(x0.content);
  auto sd = in0.next();
  const Bytes ber = cat({Bytes{0x30, 0x80}, to_bytes(o.tlv), Bytes{0xa0, 0x80}, Bytes{0x30, 0x80}, to_bytes(sd.content),
                         Bytes{0, 0, 0, 0, 0, 0}});
  EXPECT_EQ(verify_module_sig(ber, keyring_of({&s})).err, KErr::none);
  // Trailing bytes after the ContentInfo are accepted (lib/asn1_decoder.c).
  Bytes trailing = der;
  trailing.insert(trailing.end(), {1, 2, 3});
  EXPECT_EQ(verify_module_sig(trailing, keyring_of({&s})).err, KErr::none);
  // Inputs of 64 KiB or more: EMSGSIZE.
  Bytes big = der;
  big.resize(65536, 0);
  EXPECT_EQ(verify_module_sig(big, keyring_of({&s})).err, KErr::emsgsize);
  // More than 2 length octets: EBADMSG.
  Bytes three = cat({Bytes{0x30, 0x83, 0x00}, Bytes(der.begin() + 2, der.end())});
  three[3] = static_cast<std::uint8_t>((der.size() - 4) >> 8);
  three[4] = static_cast<std::uint8_t>(der.size() - 4);
  EXPECT_EQ(verify_module_sig(three, keyring_of({&s})).err, KErr::ebadmsg);
}

TEST(KernelDecoder, Version1SignerInfoWithSkidHasEmptyKeyId) {
  // 7.2 source: the issuer/serial noted by the parse context stay empty, so the key id is
  // empty and the keyring search fails with EINVAL: a hard error for module loading.
  const Signer& s = signer(KeyAlgo::rsa);
  MsgSpec m = one({.version = 1, .skid = true});
  auto r = verify_module_sig(build(m, content()), keyring_of({&s}));
  EXPECT_EQ(r.err, KErr::einval) << r.reason;
}

// ---------------------------------------------------------------------- OpenSSL agreement

TEST(KernelOpenSsl, ParserAgreement) {
  // Messages both parsers accept, and messages the kernel rejects that OpenSSL's CMS
  // parser accepts (its ASN.1 layer does not apply the kernel's rules).
  test::TempDir d;
  auto openssl_parses = [&](const Bytes& der) {
    test::spit(d / "m.p7s", der);
    return test::run(test::openssl() + " cms -cmsout -inform DER -in " + test::q(d / "m.p7s") +
                     " -outform DER -out /dev/null")
               .status == 0;
  };
  struct Case {
    const char* what;
    MsgSpec m;
    KErr kernel;
    bool openssl;
  };
  auto with_unknown = good_attrs();
  with_unknown.push_back(attr(kUnknownAttr, {tlv(asn1::kNull, {}), tlv(asn1::kNull, {})}));
  auto two_md = good_attrs();
  two_md.push_back(message_digest_attr(crypto::digest(HashAlgo::sha256, content())));
  auto smime = good_attrs();
  smime.push_back(attr(crypto::oid::smime_capabilities, {tlv(asn1::kSequence, {})}));
  MsgSpec v2 = one({});
  v2.sd_version = {0x02};
  std::vector<Case> cases = {
      {"RSA, no signedAttrs", one({}), KErr::none, true},
      {"RSA, signedAttrs", one({.attrs = good_attrs()}), KErr::none, true},
      {"ML-DSA-65 no signedAttrs", one({.algo = KeyAlgo::ml_dsa_65}), KErr::none, true},
      {"ML-DSA-65 SKID", one({.algo = KeyAlgo::ml_dsa_65, .version = 3, .skid = true}), KErr::none, true},
      {"unknown attribute with two values", one({.attrs = with_unknown}), KErr::none, true},
      {"SignedData version 2 (kernel: EINVAL)", v2, KErr::einval, true},
      {"md5 digestAlgorithm (kernel: ENOPKG)", one({.digest_oid = kMd5}), KErr::enopkg, true},
      {"two messageDigest attributes (kernel: EKEYREJECTED)", one({.attrs = two_md}), KErr::ekeyrejected, true},
      {"sMIMECapabilities in id-data (kernel: EKEYREJECTED)", one({.attrs = smime}), KErr::ekeyrejected, true},
      {"sha256WithRSAEncryption signatureAlgorithm (kernel: ENOPKG)", one({.sig_oid = kSha256WithRsa}), KErr::enopkg,
       true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(parse_err(c.m), c.kernel) << c.what;
    EXPECT_EQ(openssl_parses(build(c.m, content())), c.openssl) << c.what;
  }
}

// ------------------------------------------------ chains and keyrings (7.2 source review)

namespace {
struct Pki {
  test::TempDir d;
  std::string O = test::openssl();
  std::string p(const std::string& n) const { return test::q(d / n); }
  void run(const std::string& cmd) {
    auto r = test::run(cmd);
    ASSERT_EQ(r.status, 0) << cmd << "\n" << r.err;
  }
  // root CA -> intermediate -> leaf, RSA-2048, SKID and AKID (keyid and issuer+serial).
  void make() {
    test::spit(d / "ext.cnf", std::string("[ca]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=keyCertSign\n"
                                          "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n"
                                          "[leaf]\nbasicConstraints=critical,CA:FALSE\nkeyUsage=digitalSignature\n"
                                          "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n"));
    for (const char* k : {"root", "inter", "leaf"})
      run(O + " genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out " + p(std::string(k) + ".key"));
    run(O + " req -new -x509 -key " + p("root.key") + " -subj /CN=Test-Root -days 3650 -set_serial 1 -out " +
        p("root.pem") + " -addext basicConstraints=critical,CA:TRUE -addext subjectKeyIdentifier=hash");
    run(O + " req -new -key " + p("inter.key") + " -subj /CN=Test-Inter -out " + p("inter.csr"));
    run(O + " x509 -req -in " + p("inter.csr") + " -CA " + p("root.pem") + " -CAkey " + p("root.key") +
        " -set_serial 2 -days 3650 -extfile " + p("ext.cnf") + " -extensions ca -out " + p("inter.pem"));
    run(O + " req -new -key " + p("leaf.key") + " -subj /CN=Test-Leaf -out " + p("leaf.csr"));
    run(O + " x509 -req -in " + p("leaf.csr") + " -CA " + p("inter.pem") + " -CAkey " + p("inter.key") +
        " -set_serial 3 -days 3650 -extfile " + p("ext.cnf") + " -extensions leaf -out " + p("leaf.pem"));
    test::spit(d / "mod.bin", content());
    run("cat " + p("inter.pem") + " " + p("root.pem") + " > " + p("chain.pem"));
  }
  // openssl cms -sign embeds the leaf (and -certfile extras).
  Bytes sign(bool with_chain) {
    run(O + " cms -sign -binary -noattr -md sha256 -in " + p("mod.bin") + " -signer " + p("leaf.pem") + " -inkey " +
        p("leaf.key") + (with_chain ? " -certfile " + p("chain.pem") : std::string()) + " -outform DER -out " +
        p("s.p7s"));
    return test::slurp(d / "s.p7s");
  }
  cms::Keyring keyring(const std::string& pem) {
    cms::Keyring k;
    EXPECT_TRUE(k.add_path(d / pem).ok());
    return k;
  }
};
}  // namespace

TEST(KernelChains, EmbeddedLeafTrustedDirectlyOrThroughItsIssuers) {
  Pki pki;
  ASSERT_NO_FATAL_FAILURE(pki.make());
  const Bytes leaf_only = pki.sign(false);
  const Bytes with_chain = pki.sign(true);
  // The leaf itself in the keyring: the SignerInfo's signature is checked with it.
  EXPECT_EQ(verify_module_sig(leaf_only, pki.keyring("leaf.pem")).err, KErr::none);
  // The intermediate (the leaf's AKID names it): found through the AKID, loads.
  auto r = verify_module_sig(leaf_only, pki.keyring("inter.pem"));
  EXPECT_EQ(r.err, KErr::none) << r.reason;
  // Whole chain embedded, keyring = intermediate or root: loads.
  r = verify_module_sig(with_chain, pki.keyring("inter.pem"));
  EXPECT_EQ(r.err, KErr::none) << r.reason;
  r = verify_module_sig(with_chain, pki.keyring("root.pem"));
  EXPECT_EQ(r.err, KErr::none) << r.reason;
  // Only the root, chain not embedded: nothing links the leaf to it: ENOKEY.
  EXPECT_EQ(verify_module_sig(leaf_only, pki.keyring("root.pem")).err, KErr::enokey);
}

TEST(KernelChains, KeyringLookupNeedsBothIds) {
  // Self-signed certificate A embedded; the keyring holds B with the same key (same SKID)
  // but another serial: the kernel's lookup by A's id fails and the unknown self-signed
  // certificate ends the walk (ENOKEY) — the SKID alone does not match.
  Pki pki;
  ASSERT_NO_FATAL_FAILURE(pki.make());
  pki.run(pki.O + " req -new -x509 -key " + pki.p("leaf.key") + " -subj /CN=Self -days 3650 -set_serial 10 -out " +
          pki.p("a.pem") + " -addext subjectKeyIdentifier=hash");
  pki.run(pki.O + " req -new -x509 -key " + pki.p("leaf.key") + " -subj /CN=Self -days 3650 -set_serial 11 -out " +
          pki.p("b.pem") + " -addext subjectKeyIdentifier=hash");
  pki.run(pki.O + " cms -sign -binary -noattr -md sha256 -in " + pki.p("mod.bin") + " -signer " + pki.p("a.pem") +
          " -inkey " + pki.p("leaf.key") + " -outform DER -out " + pki.p("a.p7s"));
  const Bytes der = test::slurp(pki.d / "a.p7s");
  EXPECT_EQ(verify_module_sig(der, pki.keyring("b.pem")).err, KErr::enokey);
  EXPECT_EQ(verify_module_sig(der, pki.keyring("a.pem")).err, KErr::none);
}

TEST(KernelChains, CertificateAcceptance) {
  // P-521 certificates are accepted (crypto/ecdsa.c supports it); an RSASSA-PSS-signed
  // certificate is not (x509_note_sig_algo: ENOPKG), in the message or in the keyring.
  Pki pki;
  pki.run(pki.O + " genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-521 -out " + pki.p("p521.key"));
  pki.run(pki.O + " req -new -x509 -key " + pki.p("p521.key") + " -subj /CN=P521 -days 3650 -out " + pki.p("p521.pem") +
          " -addext subjectKeyIdentifier=hash");
  test::spit(pki.d / "mod.bin", content());
  pki.run(pki.O + " cms -sign -binary -noattr -md sha512 -in " + pki.p("mod.bin") + " -signer " + pki.p("p521.pem") +
          " -inkey " + pki.p("p521.key") + " -outform DER -out " + pki.p("e.p7s"));
  auto r = verify_module_sig(test::slurp(pki.d / "e.p7s"), pki.keyring("p521.pem"));
  EXPECT_EQ(r.err, KErr::none) << r.reason;
  pki.run(pki.O + " genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out " + pki.p("r.key"));
  pki.run(pki.O + " req -new -x509 -key " + pki.p("r.key") +
          " -subj /CN=PSS -days 3650 -sigopt rsa_padding_mode:pss -out " + pki.p("pss.pem"));
  pki.run(pki.O + " cms -sign -binary -noattr -md sha256 -in " + pki.p("mod.bin") + " -signer " + pki.p("pss.pem") +
          " -inkey " + pki.p("r.key") + " -outform DER -out " + pki.p("pss.p7s"));
  auto m = cms::pkcs7_parse_message(test::slurp(pki.d / "pss.p7s"), KernelModel::v7_0());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, KErr::enopkg);
}

TEST(KernelTime, X509DecodeTimeRules) {
  auto t = [](std::uint8_t tag, const std::string& v) {
    return asn1::decode_time(tag, ByteView(reinterpret_cast<const std::uint8_t*>(v.data()), v.size()));
  };
  EXPECT_EQ(t(asn1::kUtcTime, "700101000000Z"), 0);
  EXPECT_EQ(t(asn1::kUtcTime, "491231235959Z"), 2524607999);              // 2049
  EXPECT_EQ(t(asn1::kUtcTime, "600101000000Z"), std::nullopt);            // 1960 < 1970
  EXPECT_EQ(t(asn1::kUtcTime, "250101240000Z"), 1735776000);              // hour 24 allowed
  EXPECT_EQ(t(asn1::kUtcTime, "250101235960Z"), 1735775999 + 1);          // leap second
  EXPECT_EQ(t(asn1::kGeneralizedTime, "20250101000000Z"), std::nullopt);  // GeneralizedTime in UTCTime range
  EXPECT_EQ(t(asn1::kGeneralizedTime, "21260101000000Z"), 4922899200);
  EXPECT_EQ(t(asn1::kUtcTime, "250229000000Z"), std::nullopt);  // not a leap year
  EXPECT_EQ(t(asn1::kUtcTime, "240229000000Z"), 1709164800);
  EXPECT_EQ(t(asn1::kUtcTime, "2501010000Z"), std::nullopt);  // length
}

TEST(KernelSignatures, EcdsaSignatureDecodedLikeTheKernel) {
  // r and s re-encoded with a non-minimal length and trailing bytes: the kernel's BER
  // decoder reads them, so the module loads.
  const Signer& s = signer(KeyAlgo::ecdsa_p256);
  const Bytes sig = crypto::sign_message(s.key, HashAlgo::sha256, content()).value();
  asn1::Reader r(sig);
  auto seq = r.next();
  Bytes lax =
      cat({Bytes{0x30, 0x81, static_cast<std::uint8_t>(seq.content.size())}, to_bytes(seq.content), Bytes{0xde, 0xad}});
  auto rep =
      verify_module_sig(build(one({.algo = KeyAlgo::ecdsa_p256, .signature = lax}), content()), keyring_of({&s}));
  EXPECT_EQ(rep.err, KErr::none) << rep.reason;
  // Not a SEQUENCE at all: EBADMSG in the trust path collapses to EKEYREJECTED.
  rep = verify_module_sig(build(one({.algo = KeyAlgo::ecdsa_p256, .signature = Bytes{0x04, 0x01, 0x00}}), content()),
                          keyring_of({&s}));
  EXPECT_EQ(rep.err, KErr::ekeyrejected);
}

TEST(KernelSignatures, RsaErrnosOnTheEmbeddedCertificatePath) {
  // rsassa_pkcs1_verify (7.2): wrong length EINVAL; a valid block over another digest
  // EKEYREJECTED.  The embedded signer certificate makes pkcs7_verify return them as is.
  const Signer& s = signer(KeyAlgo::rsa);
  MsgSpec short_sig = one({.signature = Bytes(255, 0x42)});
  short_sig.certs = {s.cert.der()};
  EXPECT_EQ(verify_usage(short_sig, Usage::module), KErr::einval);
  MsgSpec other = one({.signature = crypto::sign_message(s.key, HashAlgo::sha256, test::pattern(5)).value()});
  other.certs = {s.cert.der()};
  EXPECT_EQ(verify_usage(other, Usage::module), KErr::ekeyrejected);
}

TEST(KernelDecoder, StructureChecksOfLibAsn1Decoder) {
  // Each variant differs from a valid RSA message by one structural change; the kernel's
  // decoder (lib/asn1_decoder.c, 7.2) refuses all but the first with EBADMSG.
  const Signer& s = signer(KeyAlgo::rsa);
  const Bytes sig = crypto::sign_message(s.key, HashAlgo::sha256, content()).value();
  const Bytes ias = tlv(asn1::kSequence, cat({to_bytes(s.cert.issuer()), tlv(asn1::kInteger, s.cert.serial())}));
  const Bytes dalg = tlv(asn1::kSequence, oid(crypto::hash_info(HashAlgo::sha256).oid));
  const Bytes salg = tlv(asn1::kSequence, cat({oid(crypto::oid::rsa_encryption), Bytes{0x05, 0x00}}));
  auto message = [&](Bytes sid, Bytes digest_alg, Bytes tail, Bytes dalgs_set, std::uint8_t outer_tag) {
    Bytes si =
        tlv(asn1::kSequence, cat({Bytes{0x02, 0x01, 0x01}, sid, digest_alg, salg, tlv(asn1::kOctetString, sig), tail}));
    Bytes sd = tlv(asn1::kSequence,
                   cat({Bytes{0x02, 0x01, 0x01}, dalgs_set, tlv(asn1::kSequence, oid(kData)), tlv(asn1::kSet, si)}));
    return tlv(outer_tag, cat({oid(kSignedData), tlv(asn1::context_cons(0), sd)}));
  };
  const Bytes dalgs = tlv(asn1::kSet, dalg);
  auto err = [&](const Bytes& der) { return verify_module_sig(der, keyring_of({&s})).err; };
  // A primitive identifier where SEQUENCE is expected is accepted (the decoder masks the
  // constructed bit for constructed grammar elements).
  EXPECT_EQ(err(message(ias, dalg, {}, dalgs, 0x10)), KErr::none);
  EXPECT_EQ(err(message(ias, dalg, {}, dalgs, asn1::kSequence)), KErr::none);
  // Extra elements inside definite-length SEQUENCEs: "Cons length error".
  EXPECT_EQ(
      err(message(ias,
                  tlv(asn1::kSequence, cat({oid(crypto::hash_info(HashAlgo::sha256).oid), Bytes{5, 0}, Bytes{5, 0}})),
                  {}, dalgs, asn1::kSequence)),
      KErr::ebadmsg);
  Bytes ias_extra =
      tlv(asn1::kSequence, cat({to_bytes(s.cert.issuer()), tlv(asn1::kInteger, s.cert.serial()), Bytes{2, 1, 7}}));
  EXPECT_EQ(err(message(ias_extra, dalg, {}, dalgs, asn1::kSequence)), KErr::ebadmsg);
  // Malformed unauthenticated attributes.
  EXPECT_EQ(err(message(ias, dalg, Bytes{0xa1, 0x03, 0xff, 0xff, 0xff}, dalgs, asn1::kSequence)), KErr::ebadmsg);
  // Well-formed unauthenticated attributes are parsed and ignored.
  EXPECT_EQ(err(message(ias, dalg, tlv(asn1::context_cons(1), attr(kUnknownAttr, {tlv(asn1::kNull, {})})), dalgs,
                        asn1::kSequence)),
            KErr::none);
  // Empty SET OF digestAlgorithms.
  EXPECT_EQ(err(message(ias, dalg, {}, Bytes{0x31, 0x00}, asn1::kSequence)), KErr::ebadmsg);
  // A subjectKeyIdentifier sid tagged [0] constructed (0xA0) instead of primitive (0x80).
  MsgSpec v3 = one({.version = 3, .skid = true});
  Bytes der = build(v3, content());
  const std::string hex = to_hex(der);
  const auto pos = hex.find("8014" + to_hex(*s.cert.skid()));
  ASSERT_NE(pos, std::string::npos);
  der[pos / 2] = 0xa0;
  EXPECT_EQ(err(der), KErr::ebadmsg);
  // An attribute with an empty value SET.
  auto a = good_attrs();
  a.push_back(attr(kUnknownAttr, {}));
  EXPECT_EQ(parse_err(one({.attrs = a})), KErr::ebadmsg);
}

// ------------------------------------------------ Linux 6.1 digests (real-kernel conformance)
// tools/kernel-conformance on Debian 12's 6.1.0-57-cloud-amd64: Debian's RSA/SHA-256 module
// signature with its digestAlgorithm changed to md5 is refused with EKEYREJECTED (the kernel
// hashes with md5 and logs "alg: No test for pkcs1pad(rsa,md5)"), and with sha3-256 it loads
// tainted ("PKCS7: Unknown OID ... Unsupported digest algo").  6.12 answers ENOPKG and
// EKEYREJECTED instead, which is profile v6; profile v6.1 is the older parser.

TEST(KernelProfiles, V61ParsesMd5AndNoSha3) {
  const auto v61 = KernelModel::v6_1();
  EXPECT_EQ(v61.name(), "v6.1");
  EXPECT_EQ(KernelModel::parse("6.1")->name(), "v6.1");
  EXPECT_EQ(KernelModel::parse("v6")->name(), "v6");
  EXPECT_FALSE(KernelModel::parse("v6")->legacy_digests);
  // md5 is a known digest only for v6.1.
  EXPECT_EQ(parse_err(one({.digest_oid = kMd5}), v61), KErr::none);
  EXPECT_EQ(parse_err(one({.digest_oid = kMd5}), KernelModel::v6()), KErr::enopkg);
  // md4 too (1.2.840.113549.2.4).
  EXPECT_EQ(parse_err(one({.digest_oid = oid_bytes({0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x04})}), v61),
            KErr::none);
  // SHA-3 digests and id-ecdsa-with-sha3-* are unknown to v6.1 only.
  EXPECT_EQ(parse_err(one({.hash = HashAlgo::sha3_256}), v61), KErr::enopkg);
  EXPECT_EQ(parse_err(one({.hash = HashAlgo::sha3_256}), KernelModel::v6()), KErr::none);
  EXPECT_EQ(parse_err(one({.algo = KeyAlgo::ecdsa_p256, .hash = HashAlgo::sha3_384}), v61), KErr::enopkg);
  EXPECT_EQ(parse_err(one({.algo = KeyAlgo::ecdsa_p256, .hash = HashAlgo::sha3_384}), KernelModel::v6()), KErr::none);
  EXPECT_EQ(parse_err(one({.algo = KeyAlgo::ecdsa_p256, .hash = HashAlgo::sha384}), v61), KErr::none);
}

TEST(KernelProfiles, V61VerifiesMd5Signatures) {
  const auto v61 = KernelModel::v6_1();
  const auto k = keyring_of({&signer(KeyAlgo::rsa)});
  // A SHA-256 signature relabelled md5: hashed with md5, the DigestInfo differs.
  const Bytes relabelled = build(one({.digest_oid = kMd5}), content());
  EXPECT_EQ(verify_module_sig(relabelled, k, v61).err, KErr::ekeyrejected);
  EXPECT_EQ(verify_module_sig(relabelled, k, KernelModel::v6()).err, KErr::enopkg);
  // A real RSA/MD5 signature verifies on 6.1 (and is unsupported crypto elsewhere).
  const Bytes md5 = build(one({.hash = HashAlgo::md5}), content());
  EXPECT_EQ(verify_module_sig(md5, k, v61).err, KErr::none);
  EXPECT_EQ(verify_module_sig(md5, k, KernelModel::v7_0()).err, KErr::enopkg);
  const Bytes module_file = module::append_signature(content(), relabelled);
  auto v = module::module_sig_check(module_file, k, v61);
  EXPECT_EQ(v.outcome, module::LoadOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::ekeyrejected);
  v = module::module_sig_check(module_file, k, KernelModel::v6());
  EXPECT_EQ(v.outcome, module::LoadOutcome::loads_tainted);
  EXPECT_EQ(v.sig_errno, KErr::enopkg);
}

// tools/kernel-conformance case unknown-ecdsa-md5-embedded-cert on Debian 12's 6.1: a genuine
// ECDSA P-256 signature of md5(content) under digestAlgorithm md5, the signer's certificate
// in the message, is refused with EINVAL (software_key_determine_akcipher allows ECDSA only
// with SHA-1/SHA-2 there); modsign predicted it verified (loads tainted, untrusted key).
TEST(KernelProfiles, V61RefusesEcdsaWithMd5) {
  const auto v61 = KernelModel::v6_1();
  const Signer& ec = signer(KeyAlgo::ecdsa_p256);
  // signatureAlgorithm ecdsa-with-SHA256 (1.2.840.10045.4.3.2): the kernel ignores its hash.
  MsgSpec m = one({.algo = KeyAlgo::ecdsa_p256,
                   .hash = HashAlgo::md5,
                   .sig_oid = Bytes{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02}});
  m.certs = {ec.cert.der()};
  const Bytes der = build(m, content());
  // In the message: pkcs7_verify() checks it against the embedded certificate.
  auto r = verify_module_sig(der, keyring_of({}), v61);
  EXPECT_EQ(r.err, KErr::einval);
  EXPECT_EQ(r.reason, "no ecdsa signature scheme with md5");
  auto v = module::module_sig_check(module::append_signature(content(), der), keyring_of({}), v61);
  EXPECT_EQ(v.outcome, module::LoadOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::einval);
  // Only in the keyring: pkcs7_validate_trust() collapses the error into EKEYREJECTED.
  m.certs.clear();
  r = verify_module_sig(build(m, content()), keyring_of({&ec}), v61);
  EXPECT_EQ(r.err, KErr::ekeyrejected);
  EXPECT_EQ(r.reason, "Sig 1: no ecdsa signature scheme with md5");
  // Later kernels do not parse md5 at all; RSA with md5 still verifies on 6.1.
  EXPECT_EQ(verify_module_sig(der, keyring_of({}), KernelModel::v6()).err, KErr::enopkg);
  EXPECT_EQ(
      verify_module_sig(build(one({.hash = HashAlgo::md5}), content()), keyring_of({&signer(KeyAlgo::rsa)}), v61).err,
      KErr::none);
}
