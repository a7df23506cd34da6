// The kernel mirror against kernel-semantics.md §9: usage gates (items 24-28), trust and
// keys (29-35), module load (36-38), with the errno the kernel gives.
#include <gtest/gtest.h>

#include "kernel_support.hpp"
#include "module/module_signature.hpp"

using namespace modsign;
using namespace modsign::test::kernel_tests;

// ------------------------------------------------------------------- usage gates (24-28)

TEST(KernelVerify, Item24RsaAttrsOnModule) {
  EXPECT_EQ(verify_usage(one({.attrs = good_attrs()}), Usage::module), KErr::ekeyrejected);
  EXPECT_EQ(verify_usage(one({.attrs = good_attrs()}), Usage::module, KernelModel::v6()), KErr::ekeyrejected);
  auto waived = KernelModel::v7_0();
  waived.waive_mldsa_authattrs = true;
  EXPECT_EQ(verify_usage(one({.attrs = good_attrs()}), Usage::module, waived), KErr::ekeyrejected);
}

TEST(KernelVerify, Item25MlDsaAttrsWaiver) {
  const MsgSpec m = one({.algo = KeyAlgo::ml_dsa_65, .attrs = good_attrs(HashAlgo::sha512)});
  EXPECT_EQ(verify_usage(m, Usage::module), KErr::ekeyrejected);
  auto waived = KernelModel::v7_0();
  waived.waive_mldsa_authattrs = true;
  auto msg = cms::pkcs7_parse_message(build(m, content()), waived);
  ASSERT_TRUE(msg.ok());
  ASSERT_TRUE(cms::pkcs7_supply_detached_data(*msg, content()).ok());
  std::vector<std::string> log;
  EXPECT_TRUE(cms::pkcs7_verify(*msg, Usage::module, waived, &log).ok());
  EXPECT_EQ(log, std::vector<std::string>{"Waived invalid module sig (has authattrs)"});
  // Only the first SignerInfo decides: RSA first, ML-DSA second is not waivable.
  MsgSpec mixed;
  mixed.signers = {SiSpec{.attrs = good_attrs()},
                   SiSpec{.algo = KeyAlgo::ml_dsa_65, .attrs = good_attrs(HashAlgo::sha512)}};
  EXPECT_EQ(verify_usage(mixed, Usage::module, waived), KErr::ekeyrejected);
}

TEST(KernelVerify, ImaModsigVerifyReusesTheDigestOfPkcs7GetDigest) {
  // ima_collect_modsig() runs pkcs7_get_digest() before ima_modsig_verify() verifies the same
  // message.  A failed messageDigest check leaves the content digest in sig->m, so under the
  // waiver IMA checks an ML-DSA signature over SHA-512(content) and passes, where the module
  // loader (a fresh message) refuses.
  const Signer& s = signer(KeyAlgo::ml_dsa_65);
  const Bytes h = crypto::digest(HashAlgo::sha512, content());
  Bytes wrong = h;
  wrong[0] ^= 0xff;
  const Bytes over_digest = crypto::sign_message(s.key, HashAlgo::sha512, h).value();
  const Bytes quirk = build(one({.algo = KeyAlgo::ml_dsa_65,
                                 .attrs = std::vector<Bytes>{content_type_attr(kData), message_digest_attr(wrong)},
                                 .signature = over_digest}),
                            content());
  auto waived = KernelModel::v7_0();
  waived.waive_mldsa_authattrs = true;
  const auto k = keyring_of({&s});
  auto ima = cms::ima_modsig_verify(content(), quirk, k, waived);
  EXPECT_EQ(ima.err, KErr::none) << ima.reason;
  EXPECT_EQ(ima.trusted_by, std::vector<std::string>{"kernel mirror test"});
  auto loader = cms::verify_pkcs7_signature(content(), quirk, k, Usage::module, waived);
  EXPECT_EQ(loader.err, KErr::ekeyrejected);
  EXPECT_EQ(loader.reason, "Sig 1: Message digest doesn't match");
  // Without the waiver module usage refuses the signedAttrs before any digest matters.
  auto strict = cms::ima_modsig_verify(content(), quirk, k, KernelModel::v7_0());
  EXPECT_EQ(strict.err, KErr::ekeyrejected);
  EXPECT_EQ(strict.reason, "Invalid module sig (has authattrs)");
  // A right messageDigest: pkcs7_get_digest gives the signedAttrs, and a signature over the
  // content digest fails as it does for the loader.
  const Bytes plain = build(one({.algo = KeyAlgo::ml_dsa_65,
                                 .attrs = std::vector<Bytes>{content_type_attr(kData), message_digest_attr(h)},
                                 .signature = over_digest}),
                            content());
  EXPECT_EQ(cms::ima_modsig_verify(content(), plain, k, waived).err, KErr::ekeyrejected);
  EXPECT_EQ(cms::verify_pkcs7_signature(content(), plain, k, Usage::module, waived).err, KErr::ekeyrejected);
  // And the regular waived message passes both.
  const Bytes good = build(one({.algo = KeyAlgo::ml_dsa_65, .attrs = good_attrs(HashAlgo::sha512)}), content());
  EXPECT_EQ(cms::ima_modsig_verify(content(), good, k, waived).err, KErr::none);
  EXPECT_EQ(cms::verify_pkcs7_signature(content(), good, k, Usage::module, waived).err, KErr::none);
}

TEST(KernelVerify, Item26FirmwareNeedsAttrs) {
  EXPECT_EQ(verify_usage(one({}), Usage::firmware), KErr::ekeyrejected);
  EXPECT_EQ(verify_usage(one({.attrs = good_attrs()}), Usage::firmware), KErr::none);
}

TEST(KernelVerify, Item27KexecNeedsAuthenticode) {
  EXPECT_EQ(verify_usage(one({}), Usage::kexec_pe), KErr::ekeyrejected);
}

TEST(KernelVerify, Item28KeySignatureUsage) { EXPECT_EQ(verify_usage(one({}), Usage::key_signature), KErr::einval); }

// ------------------------------------------------------------------ trust and keys (29-35)

TEST(KernelTrust, Item29WrongSignatureWithoutCertificates) {
  const MsgSpec m = one({.corrupt_signature = true});
  EXPECT_EQ(verify_usage(m, Usage::module), KErr::none);  // nothing checked: no embedded signer
  auto msg = cms::pkcs7_parse_message(build(m, content()), KernelModel::v7_0());
  ASSERT_TRUE(cms::pkcs7_supply_detached_data(*msg, content()).ok());
  ASSERT_TRUE(cms::pkcs7_verify(*msg, Usage::module, KernelModel::v7_0()).ok());
  auto t = cms::pkcs7_validate_trust(*msg, {signer(KeyAlgo::rsa).cert}, KernelModel::v7_0());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, KErr::ekeyrejected);
}

TEST(KernelTrust, Item30UnknownSigner) {
  const Bytes der = build(one({}), content());
  EXPECT_EQ(verify_module_sig(der, keyring_of({&signer(KeyAlgo::ml_dsa_65)})).err, KErr::enokey);
  const Bytes module_file = module::append_signature(content(), der);
  auto v = module::module_sig_check(module_file, keyring_of({}), KernelModel::v7_0());
  EXPECT_EQ(v.outcome, module::LoadOutcome::loads_tainted);
  EXPECT_EQ(v.sig_errno, KErr::enokey);
  auto enforced = KernelModel::v7_0();
  enforced.enforce = true;
  v = module::module_sig_check(module_file, keyring_of({}), enforced);
  EXPECT_EQ(v.outcome, module::LoadOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::ekeyrejected);
}

TEST(KernelTrust, Item31BlacklistedEmbeddedCertificate) {
  const Signer& a = signer(KeyAlgo::rsa);
  const Signer& b = signer(KeyAlgo::ecdsa_p256);
  cms::Blacklist bl;
  bl.descriptions.insert("tbs:" + to_hex(crypto::digest(HashAlgo::sha256, a.cert.tbs())));
  MsgSpec m = one({});
  m.certs = {a.cert.der()};
  auto msg = cms::pkcs7_parse_message(build(m, content()), KernelModel::v7_0(), &bl);
  ASSERT_TRUE(msg.ok()) << msg.error().message;
  EXPECT_TRUE(msg->certs[0].blacklisted);
  ASSERT_TRUE(cms::pkcs7_supply_detached_data(*msg, content()).ok());
  EXPECT_EQ(cms::pkcs7_verify(*msg, Usage::module, KernelModel::v7_0()).error().code, KErr::ekeyrejected);
  // A second, valid signer makes it pass, in either order.
  for (bool blacklisted_first : {true, false}) {
    MsgSpec two;
    two.certs = {a.cert.der(), b.cert.der()};
    SiSpec sa{}, sb{.algo = KeyAlgo::ecdsa_p256};
    two.signers = blacklisted_first ? std::vector<SiSpec>{sa, sb} : std::vector<SiSpec>{sb, sa};
    auto m2 = cms::pkcs7_parse_message(build(two, content()), KernelModel::v7_0(), &bl);
    ASSERT_TRUE(m2.ok());
    ASSERT_TRUE(cms::pkcs7_supply_detached_data(*m2, content()).ok());
    EXPECT_TRUE(cms::pkcs7_verify(*m2, Usage::module, KernelModel::v7_0()).ok()) << blacklisted_first;
  }
  // The blacklisted signer's own bad signature is returned first: a well-formed RSA
  // signature over other content is EKEYREJECTED (rsassa_pkcs1_verify: digest mismatch).
  const Bytes other_sig = crypto::sign_message(a.key, HashAlgo::sha256, test::pattern(10)).value();
  MsgSpec bad = one({.signature = other_sig});
  bad.certs = {a.cert.der()};
  auto m3 = cms::pkcs7_parse_message(build(bad, content()), KernelModel::v7_0(), &bl);
  ASSERT_TRUE(cms::pkcs7_supply_detached_data(*m3, content()).ok());
  auto st3 = cms::pkcs7_verify(*m3, Usage::module, KernelModel::v7_0());
  ASSERT_FALSE(st3.ok());
  EXPECT_EQ(st3.error().code, KErr::ekeyrejected);
  EXPECT_EQ(st3.error().message, "signature does not verify");
}

TEST(KernelTrust, Item32SigningTimeOutsideValidity) {
  const Signer& s = signer(KeyAlgo::rsa);
  auto a = good_attrs();
  a.push_back(attr(crypto::oid::signing_time, {tlv(asn1::kUtcTime, Bytes{'0', '1', '0', '1', '0', '1', '0', '0', '0',
                                                                         '0', '0', '0', 'Z'})}));  // 2001
  MsgSpec m = one({.attrs = a});
  m.certs = {s.cert.der()};
  EXPECT_EQ(verify_usage(m, Usage::unspecified), KErr::ekeyrejected);
  // Without the embedded certificate the time is never checked.
  EXPECT_EQ(verify_usage(one({.attrs = a}), Usage::unspecified), KErr::none);
}

TEST(KernelTrust, Item33MlDsaAttrsSha256) {
  const Signer& s = signer(KeyAlgo::ml_dsa_65);
  MsgSpec m = one({.algo = KeyAlgo::ml_dsa_65, .hash = HashAlgo::sha256, .attrs = good_attrs(HashAlgo::sha256)});
  MsgSpec with_cert = m;
  with_cert.certs = {s.cert.der()};
  EXPECT_EQ(verify_usage(with_cert, Usage::unspecified), KErr::einval);
  auto r = cms::verify_pkcs7_signature(content(), build(m, content()), keyring_of({&s}), Usage::unspecified,
                                       KernelModel::v7_0());
  EXPECT_EQ(r.err, KErr::ekeyrejected);
}

TEST(KernelTrust, Item34MlDsaNoAttrsDigestIgnored) {
  const Signer& s = signer(KeyAlgo::ml_dsa_65);
  for (HashAlgo h : {HashAlgo::sha256, HashAlgo::sha512, HashAlgo::sha3_256}) {
    auto r = verify_module_sig(build(one({.algo = KeyAlgo::ml_dsa_65, .hash = h}), content()), keyring_of({&s}));
    EXPECT_EQ(r.err, KErr::none) << crypto::hash_info(h).name << ": " << r.reason;
  }
}

TEST(KernelTrust, Item35MlDsaWrongSignatureLength) {
  const Signer& s = signer(KeyAlgo::ml_dsa_65);
  Bytes sig = crypto::sign_message(s.key, HashAlgo::sha512, content()).value();
  sig.pop_back();
  MsgSpec m = one({.algo = KeyAlgo::ml_dsa_65, .signature = sig});
  MsgSpec with_cert = m;
  with_cert.certs = {s.cert.der()};
  EXPECT_EQ(verify_usage(with_cert, Usage::module), KErr::ebadmsg);
  EXPECT_EQ(verify_module_sig(build(m, content()), keyring_of({&s})).err, KErr::ekeyrejected);
}

// ------------------------------------------------------------------- module load (36-38)

TEST(KernelModule, Item36TrailerFields) {
  const Signer& s = signer(KeyAlgo::rsa);
  const auto k = keyring_of({&s});
  const Bytes good = module::append_signature(content(), build(one({}), content()));
  EXPECT_EQ(module::module_sig_check(good, k, KernelModel::v7_0()).outcome, module::LoadOutcome::loads);
  const std::size_t ms = good.size() - 28 - 12;
  Bytes id1 = good;
  id1[ms + 2] = 1;
  auto v = module::module_sig_check(id1, k, KernelModel::v7_0());
  EXPECT_EQ(v.outcome, module::LoadOutcome::loads_tainted);
  EXPECT_EQ(v.sig_errno, KErr::enopkg);
  Bytes hash1 = good;
  hash1[ms + 1] = 1;
  v = module::module_sig_check(hash1, k, KernelModel::v7_0());
  EXPECT_EQ(v.outcome, module::LoadOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::ebadmsg);
  Bytes len = good;
  const std::uint32_t too_long = static_cast<std::uint32_t>(good.size() - 28 - 12);
  for (int i = 0; i < 4; ++i)
    len[ms + 8 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(too_long >> (24 - 8 * i));
  v = module::module_sig_check(len, k, KernelModel::v7_0());
  EXPECT_EQ(v.outcome, module::LoadOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::ebadmsg);
}

TEST(KernelModule, Item37NoMarker) {
  auto v = module::module_sig_check(content(), {}, KernelModel::v7_0());
  EXPECT_EQ(v.outcome, module::LoadOutcome::loads_tainted);
  EXPECT_EQ(v.sig_errno, KErr::enodata);
  auto p = KernelModel::v7_0();
  p.enforce = true;
  v = module::module_sig_check(content(), {}, p);
  EXPECT_EQ(v.outcome, module::LoadOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::ekeyrejected);
  EXPECT_EQ(v.reason, "Loading of unsigned module is rejected (no signature marker)");
  p.enforce = false;
  p.lockdown = true;
  v = module::module_sig_check(content(), {}, p);
  EXPECT_EQ(v.load_errno, KErr::eperm);
}

TEST(KernelModule, Item38MangledModuleIsUnsigned) {
  const Signer& s = signer(KeyAlgo::rsa);
  const Bytes good = module::append_signature(content(), build(one({}), content()));
  auto v = module::module_sig_check(good, keyring_of({&s}), KernelModel::v7_0(), /*mangled=*/true);
  EXPECT_EQ(v.outcome, module::LoadOutcome::loads_tainted);
  EXPECT_EQ(v.sig_errno, KErr::enodata);
}
