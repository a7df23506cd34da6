// Two-phase signing (include/modsign/remote_sign.hpp) and reproducible signatures
// (SignOptions::deterministic): prepare, sign with an independent signer (`openssl pkeyutl
// -sign`, OpenSSL 3.5), attach; the results are compared byte for byte with one-step
// signing and checked by OpenSSL, Botan and the kernel prediction.
#include <gtest/gtest.h>

#include <modsign/modsign.hpp>
#include <nlohmann/json.hpp>

#include "common/base64.hpp"
#include "crypto/crypto.hpp"
#include "test_support.hpp"

using namespace modsign;
using test::q;

namespace {

// Keys made by openssl itself, key and certificate in separate files.
class ApiRemote : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const std::string o = test::openssl();
    std::string cmd;
    for (const auto& [name, alg] :
         {std::pair{"ml44", "-algorithm ML-DSA-44"}, std::pair{"ml65", "-algorithm ML-DSA-65"},
          std::pair{"ml87", "-algorithm ML-DSA-87"}, std::pair{"rsa", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048"},
          std::pair{"ec", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256"},
          std::pair{"ec384", "-algorithm EC -pkeyopt ec_paramgen_curve:P-384"}}) {
      const std::string k = *dir_ / (std::string(name) + ".key"), c = *dir_ / (std::string(name) + ".crt");
      cmd += o + " genpkey " + alg + " -out " + q(k) + " && chmod 600 " + q(k) + " && " + o + " req -x509 -new -key " +
             q(k) + " -subj '/CN=remote " + name + "/O=modsign' -days 30 -set_serial 0x1234 -addext " +
             "subjectKeyIdentifier=hash -out " + q(c) + " && ";
    }
    auto r = test::run(cmd + "true");
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string key(const std::string& n) { return *dir_ / (n + ".key"); }
  static std::string crt(const std::string& n) { return *dir_ / (n + ".crt"); }
  std::string module(const std::string& name = "m.ko", std::size_t n = 5000) {
    const std::string p = d_ / name;
    test::spit(p, test::pattern(n));
    return p;
  }
  /// `openssl pkeyutl -sign` of the bytes `in` with key `k` and the options `opts`.
  Bytes pkeyutl_sign(const std::string& k, const Bytes& in, const std::string& opts) {
    test::spit(d_ / "in.bin", in);
    auto r = test::run(test::openssl() + " pkeyutl -sign -inkey " + q(key(k)) + " -in " + q(d_ / "in.bin") + " " +
                       opts + " -out " + q(d_ / "sig.bin"));
    EXPECT_EQ(r.status, 0) << r.err;
    return r.status == 0 ? test::slurp(d_ / "sig.bin") : Bytes{};
  }
  /// The module signed in one step with the same options, as a separate file.
  Bytes one_step(const std::string& k, const std::string& path, SignOptions o) {
    const std::string copy = path + ".one";
    test::spit(copy, test::slurp(path));
    o.out = "";
    sign_module_file(Signer::load(key(k), crt(k)), copy, o);
    return test::slurp(copy);
  }
  /// The kernel's verdict (7.0 profile, the certificate trusted).
  std::string verdict(const std::string& k, const std::string& path) {
    const auto profile = *KernelProfile::parse("v7.0");
    const auto trust = TrustStore::from_certificates({crt(k)}, profile);
    return std::string(outcome_name(predict_module_file(path, trust, profile).outcome));
  }
  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

/// FIPS 204 Alg. 7 line 6 computed with Botan's SHAKE256, apart from the library's MlDsaMu.
Bytes independent_mu(const Bytes& pk, const Bytes& m) {
  Bytes t = crypto::botan::shake256(pk, 64);
  t.push_back(0);
  t.push_back(0);
  t.insert(t.end(), m.begin(), m.end());
  return crypto::botan::shake256(t, 64);
}

Bytes raw_public_key(const std::string& cert) {
  auto c = crypto::Certificate::load_all(cert);
  return c->front().public_key().raw();
}

}  // namespace

TEST_F(ApiRemote, MlDsaExternalMuSignedByPkeyutlEqualsOneStepDeterministic) {
  for (const auto& [k, algo, sig_size] :
       {std::tuple{"ml44", "ML-DSA-44", 2420u}, std::tuple{"ml65", "ML-DSA-65", 3309u},
        std::tuple{"ml87", "ML-DSA-87", 4627u}}) {
    const std::string m = module(std::string(k) + ".ko");
    const auto cert = SignerCertificate::load(crt(k));
    EXPECT_EQ(cert.algorithm(), algo);
    const PreparedModule p = prepare_module_file(cert, m);
    EXPECT_EQ(p.path, m);
    EXPECT_EQ(p.size, 5000u);
    EXPECT_EQ(p.sha256, crypto::digest(crypto::HashAlgo::sha256, test::pattern(5000)));
    EXPECT_EQ(p.algorithm, algo);
    EXPECT_EQ(p.hash, "sha512");
    EXPECT_FALSE(p.signed_attrs);
    EXPECT_EQ(p.kind, ToSign::mu);
    EXPECT_EQ(to_sign_name(p.kind), "mu");
    EXPECT_EQ(p.to_sign, independent_mu(raw_public_key(crt(k)), test::pattern(5000)));
    EXPECT_EQ(p.mu, p.to_sign);
    EXPECT_TRUE(p.digest_info.empty());
    EXPECT_EQ(test::slurp(m), test::pattern(5000)) << "prepare writes nothing";
    const Bytes sig = pkeyutl_sign(k, p.to_sign, "-pkeyopt mu:1 -pkeyopt deterministic:1");
    ASSERT_EQ(sig.size(), sig_size);
    // The signature is an ordinary pure ML-DSA signature over the module (Botan agrees).
    EXPECT_TRUE(crypto::botan::ml_dsa_verify(crypto::Certificate::load_all(crt(k))->front().public_key().algo(),
                                             raw_public_key(crt(k)), test::pattern(5000), sig));
    const SignReport rep = attach_signature_file(cert, p, sig);
    EXPECT_EQ(rep.path, m);
    EXPECT_EQ(rep.algorithm, algo);
    EXPECT_EQ(rep.files_written, std::vector<std::string>{m});
    SignOptions det;
    det.deterministic = true;
    for (const char* backend : {"openssl", "botan"}) {
      det.backend = backend;
      EXPECT_EQ(test::slurp(m), one_step(k, module(std::string(k) + ".2.ko"), det)) << algo << " " << backend;
    }
    EXPECT_EQ(verdict(k, m), "loads") << algo;
    // OpenSSL verifies the signature the SignedData ends with over the module content.
    const Bytes cms = extract_signature(m);
    test::spit(d_ / "content.bin", test::pattern(5000));
    test::spit(d_ / "s.bin", Bytes(cms.end() - sig_size, cms.end()));
    auto r = test::run(test::openssl() + " x509 -in " + q(crt(k)) + " -pubkey -noout > " + q(d_ / "pub.pem") + " && " +
                       test::openssl() + " pkeyutl -verify -pubin -inkey " + q(d_ / "pub.pem") + " -rawin -in " +
                       q(d_ / "content.bin") + " -sigfile " + q(d_ / "s.bin"));
    EXPECT_EQ(r.status, 0) << r.err << r.out;
    EXPECT_EQ(Bytes(cms.end() - sig_size, cms.end()), sig);
  }
}

TEST_F(ApiRemote, MlDsaSignedAttrsSignedPureOrByMu) {
  const std::string m = module();
  const auto cert = SignerCertificate::load(crt("ml65"));
  SignOptions o;
  o.signed_attrs = true;
  const PreparedModule p = prepare_module_file(cert, m, o);
  EXPECT_EQ(p.kind, ToSign::signed_attrs);
  EXPECT_EQ(p.to_sign, p.signed_attrs_der);
  EXPECT_EQ(p.to_sign.front(), 0x31) << "a DER SET";
  EXPECT_EQ(p.to_sign.size(), 109u) << "contentType (26 bytes) and a 64-byte messageDigest (81 bytes)";
  EXPECT_EQ(p.mu, independent_mu(raw_public_key(crt("ml65")), p.to_sign));
  // The SET signed pure and its μ signed with mu:1 give the same deterministic signature.
  const Bytes pure = pkeyutl_sign("ml65", p.to_sign, "-rawin -pkeyopt deterministic:1");
  EXPECT_EQ(pkeyutl_sign("ml65", p.mu, "-pkeyopt mu:1 -pkeyopt deterministic:1"), pure);
  attach_signature_file(cert, p, pure, o);
  o.deterministic = true;
  EXPECT_EQ(test::slurp(m), one_step("ml65", module("b.ko"), o));
  // openssl cms -verify checks the SignedData (extracted) over the module content.
  test::spit(d_ / "content.bin", test::pattern(5000));
  test::spit(d_ / "x.p7s", extract_signature(m));
  auto r = test::run(test::openssl() + " cms -verify -binary -inform DER -in " + q(d_ / "x.p7s") + " -content " +
                     q(d_ / "content.bin") + " -certfile " + q(crt("ml65")) + " -nointern -noverify -out /dev/null");
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST_F(ApiRemote, RsaDigestAndDigestInfoEqualOneStep) {
  for (bool attrs : {false, true}) {
    const std::string m = module(attrs ? "a.ko" : "n.ko");
    const auto cert = SignerCertificate::load(crt("rsa"));
    SignOptions o;
    o.hash = "sha256";
    o.signed_attrs = attrs;
    o.skid = attrs;
    const PreparedModule p = prepare_module_file(cert, m, o);
    EXPECT_EQ(p.kind, ToSign::digest);
    EXPECT_EQ(p.to_sign.size(), 32u);
    if (!attrs) EXPECT_EQ(p.to_sign, crypto::digest(crypto::HashAlgo::sha256, test::pattern(5000)));
    else EXPECT_EQ(p.to_sign, crypto::digest(crypto::HashAlgo::sha256, p.signed_attrs_der));
    // DigestInfo (RFC 8017 §9.2 note 1): the fixed SHA-256 prefix, then the digest.
    EXPECT_EQ(to_hex(p.digest_info), "3031300d060960864801650304020105000420" + to_hex(p.to_sign));
    const Bytes sig = pkeyutl_sign("rsa", p.to_sign, "-pkeyopt digest:sha256");
    // PKCS#1 v1.5 type 1 padding of the DigestInfo itself (openssl rsautl) gives the same block.
    test::spit(d_ / "di.bin", p.digest_info);
    auto r = test::run(test::openssl() + " rsautl -sign -inkey " + q(key("rsa")) + " -in " + q(d_ / "di.bin") +
                       " -out " + q(d_ / "di.sig") + " 2>/dev/null");
    ASSERT_EQ(r.status, 0);
    EXPECT_EQ(test::slurp(d_ / "di.sig"), sig);
    attach_signature_file(cert, p, sig, o);
    EXPECT_EQ(test::slurp(m), one_step("rsa", module("c.ko"), o)) << attrs;
    EXPECT_EQ(verdict("rsa", m), attrs ? "refused" : "loads") << "kernels refuse signedAttrs for RSA";
  }
}

TEST_F(ApiRemote, EcdsaRfc6979EqualsOneStepDeterministic) {
  for (const auto& [k, hash, opt] : {std::tuple{"ec", "sha256", "sha256"}, std::tuple{"ec384", "sha384", "sha384"}}) {
    const std::string m = module(std::string(k) + ".ko");
    const auto cert = SignerCertificate::load(crt(k));
    SignOptions o;
    o.hash = hash;
    const PreparedModule p = prepare_module_file(cert, m, o);
    EXPECT_TRUE(p.digest_info.empty());
    const Bytes sig = pkeyutl_sign(k, p.to_sign, std::string("-pkeyopt digest:") + opt + " -pkeyopt nonce-type:1");
    EXPECT_EQ(pkeyutl_sign(k, p.to_sign, std::string("-pkeyopt digest:") + opt + " -pkeyopt nonce-type:1"), sig);
    attach_signature_file(cert, p, sig, o);
    o.deterministic = true;
    EXPECT_EQ(test::slurp(m), one_step(k, module(std::string(k) + ".2.ko"), o)) << k;
    EXPECT_EQ(verdict(k, m), "loads");
  }
}

TEST_F(ApiRemote, AttachRefusesAndLeavesTheModule) {
  const auto cert = SignerCertificate::load(crt("ml65"));
  const std::string m = module();
  const PreparedModule p = prepare_module_file(cert, m);
  const Bytes sig = pkeyutl_sign("ml65", p.to_sign, "-pkeyopt mu:1");
  auto refused = [&](const PreparedModule& pm, const Bytes& s, const SignerCertificate& c) -> std::string {
    const Bytes before = test::slurp(pm.path);
    try {
      attach_signature_file(c, pm, s);
    } catch (const InputError& e) {
      EXPECT_EQ(test::slurp(pm.path), before) << "module changed";
      return e.what();
    }
    return "no exception";
  };
  Bytes bad = sig;
  bad[100] ^= 1;
  EXPECT_EQ(refused(p, bad, cert), m + ": signature does not verify with " + crt("ml65"));
  try {
    attach_signature_file(cert, p, bad);
  } catch (const SignError& e) { EXPECT_EQ(e.reason(), SignRefusal::signature_mismatch); }
  EXPECT_EQ(refused(p, Bytes(sig.begin(), sig.begin() + 100), cert),
            m + ": signature does not verify with " + crt("ml65") + ": ML-DSA signature of the wrong size");
  EXPECT_EQ(refused(p, sig, SignerCertificate::load(crt("ml44"))),
            crt("ml44") + ": not the certificate the module was prepared with (SHA-256 differs)");
  PreparedModule altered = p;
  altered.to_sign[0] ^= 1;
  EXPECT_EQ(refused(altered, sig, cert), m + ": to_sign differs from the module's (the prepared data was altered)");
  // A module changed since prepare: same size, other bytes; then another size.
  Bytes content = test::pattern(5000);
  content[7] ^= 1;
  test::spit(m, content);
  EXPECT_EQ(refused(p, sig, cert), m + ": changed since prepare (SHA-256 differs)");
  content.push_back(0);
  test::spit(m, content);
  EXPECT_EQ(refused(p, sig, cert), m + ": changed since prepare (5001 bytes, prepared with 5000)");
  // Prepared without a private key: the checks of the options still apply.
  SignOptions o;
  o.signed_attrs = true;
  o.hash = "sha256";
  EXPECT_THROW(prepare_module_file(cert, module("x.ko"), o), SignError);
}

TEST_F(ApiRemote, StreamedPrepareAndAttachEqualWholeFileAndOneStep) {
  for (const auto& [k, attrs, replace] :
       {std::tuple{"ml65", false, false}, std::tuple{"ml87", true, false}, std::tuple{"rsa", false, true}}) {
    const std::string m = module(std::string(k) + ".ko");
    SignOptions o;
    o.signed_attrs = attrs;
    o.replace = replace;
    if (replace) sign_module_file(Signer::load(key(k), crt(k)), m, o);  // an old signature to strip
    const Bytes before = test::slurp(m);
    const auto cert = SignerCertificate::load(crt(k));
    const PreparedModule whole = prepare_module_file(cert, m, o);
    o.stream_above = 1000;
    const PreparedModule streamed = prepare_module_file(cert, m, o);
    EXPECT_EQ(streamed.to_sign, whole.to_sign) << k;
    EXPECT_EQ(streamed.sha256, whole.sha256) << k;
    EXPECT_EQ(streamed.size, before.size());
    const Bytes sig = k == std::string("rsa") ? pkeyutl_sign(k, whole.to_sign, "-pkeyopt digest:sha512")
                      : attrs                 ? pkeyutl_sign(k, whole.to_sign, "-rawin -pkeyopt deterministic:1")
                              : pkeyutl_sign(k, whole.to_sign, "-pkeyopt mu:1 -pkeyopt deterministic:1");
    SignOptions out;
    out.stream_above = 1000;
    const SignReport rep = attach_signature_file(cert, streamed, sig, out);
    EXPECT_TRUE(rep.streamed);
    EXPECT_EQ(rep.external_mu, k == std::string("ml65"));
    o.deterministic = true;
    o.out = "";
    const std::string copy = d_ / "copy.ko";
    test::spit(copy, before);
    sign_module_file(Signer::load(key(k), crt(k)), copy, o);
    EXPECT_EQ(test::slurp(m), test::slurp(copy)) << k;
    EXPECT_EQ(verdict(k, m), attrs ? "refused" : "loads") << k;
  }
  // A streamed module changed after prepare is refused and left alone.
  const std::string m = module("late.ko");
  const auto cert = SignerCertificate::load(crt("ml65"));
  SignOptions o;
  o.stream_above = 1000;
  const PreparedModule p = prepare_module_file(cert, m, o);
  Bytes changed = test::pattern(5000);
  changed[4999] ^= 1;
  test::spit(m, changed);
  try {
    attach_signature_file(cert, p, pkeyutl_sign("ml65", p.to_sign, "-pkeyopt mu:1"), o);
    ADD_FAILURE() << "no exception";
  } catch (const InputError& e) { EXPECT_EQ(std::string(e.what()), m + ": changed since prepare (SHA-256 differs)"); }
  EXPECT_EQ(test::slurp(m), changed);
}

TEST_F(ApiRemote, CompressedModuleRecompressedAsOneStep) {
  const std::string plain = module("z.ko");
  ASSERT_EQ(test::run("xz --check=crc32 --lzma2=dict=1MiB -T1 -k " + q(plain)).status, 0);
  const std::string m = plain + ".xz";
  const auto cert = SignerCertificate::load(crt("rsa"));
  SignOptions o;
  o.recompress = true;
  const PreparedModule p = prepare_module_file(cert, m, o);
  EXPECT_EQ(p.compression, "xz");
  EXPECT_EQ(p.to_sign, crypto::digest(crypto::HashAlgo::sha512, test::pattern(5000))) << "the decompressed image";
  const Bytes sig = pkeyutl_sign("rsa", p.to_sign, "-pkeyopt digest:sha512");
  const SignReport rep = attach_signature_file(cert, p, sig);
  EXPECT_EQ(rep.recompressed, "xz");
  const std::string copy = d_ / "copy.ko.xz";
  ASSERT_EQ(test::run("xz --check=crc32 --lzma2=dict=1MiB -T1 -c " + q(plain) + " > " + q(copy)).status, 0);
  sign_module_file(Signer::load(key("rsa"), crt("rsa")), copy, o);
  EXPECT_EQ(test::slurp(m), test::slurp(copy));
}

// recompress asked of an uncompressed module (sign -r --recompress over a tree of both) is
// nothing to do, as sign_module_file() takes it: prepare records false, and attach signs it
// (it used to refuse the manifest: "recompress" is true, the module is not compressed).
TEST_F(ApiRemote, RecompressOfAnUncompressedModuleIsNothingToDo) {
  const std::string m = module("plain.ko");
  const auto cert = SignerCertificate::load(crt("rsa"));
  SignOptions o;
  o.recompress = true;
  const PreparedModule p = prepare_module_file(cert, m, o);
  EXPECT_EQ(p.compression, "");
  EXPECT_FALSE(p.recompress);
  const Bytes sig = pkeyutl_sign("rsa", p.to_sign, "-pkeyopt digest:sha512");
  const SignReport rep = attach_signature_file(cert, p, sig, o);
  EXPECT_EQ(rep.recompressed, "");
  const std::string copy = module("copy.ko");
  sign_module_file(Signer::load(key("rsa"), crt("rsa")), copy, o);
  EXPECT_EQ(test::slurp(m), test::slurp(copy));
}

TEST_F(ApiRemote, DeterministicTwiceIdenticalHedgedDiffers) {
  const Signer ml = Signer::load(key("ml65"), crt("ml65"));
  const Signer ec = Signer::load(key("ec"), crt("ec"));
  const Bytes content = test::pattern(3000);
  SignOptions o;
  for (const char* b : {"openssl", "botan"}) {
    o.backend = b;
    o.deterministic = false;
    EXPECT_NE(sign_module_image(ml, content, o).module, sign_module_image(ml, content, o).module) << b;
    o.deterministic = true;
    EXPECT_EQ(sign_module_image(ml, content, o).module, sign_module_image(ml, content, o).module) << b;
  }
  const Bytes det = sign_module_image(ml, content, o).module;
  o.deterministic = false;
  EXPECT_NE(sign_module_image(ec, content, o).module, sign_module_image(ec, content, o).module);
  o.deterministic = true;
  EXPECT_EQ(sign_module_image(ec, content, o).module, sign_module_image(ec, content, o).module);
  // The streaming path (external μ, OpenSSL) gives the same bytes as in memory.
  const std::string m = d_ / "big.ko";
  test::spit(m, content);
  o.stream_above = 1000;
  o.backend = "auto";
  const SignReport rep = sign_module_file(ml, m, o);
  EXPECT_TRUE(rep.streamed);
  EXPECT_TRUE(rep.external_mu);
  EXPECT_EQ(test::slurp(m), det);
}

// The Wycheproof sign_seed vectors with an empty context and no rnd are deterministic
// ML-DSA signatures: our signing path reproduces them byte for byte with both backends,
// from the message and (OpenSSL) from the μ the vector gives.
TEST(RemoteVectors, WycheproofDeterministicSignaturesReproduced) {
  int checked = 0, mu_checked = 0;
  for (const int level : {44, 65, 87}) {
    const std::string file = "wycheproof/testvectors_v1/mldsa_" + std::to_string(level) + "_sign_seed_test.json";
    const auto text = test::slurp(test::vector_path(file));
    const auto j = nlohmann::json::parse(text.begin(), text.end());
    for (const auto& g : j.at("testGroups")) {
      const std::string seed = g.at("privateSeed");
      if (seed.size() != 64 || !g.contains("privateKeyPkcs8")) continue;
      auto k = crypto::PrivateKey::from_bytes(from_hex(g.at("privateKeyPkcs8").get<std::string>()), std::nullopt);
      ASSERT_TRUE(k.ok()) << file;
      for (const auto& t : g.at("tests")) {
        if (t.at("result") != "valid" || t.contains("rnd") ||
            (t.contains("ctx") && !t.at("ctx").get<std::string>().empty()))
          continue;
        const Bytes sig = from_hex(t.at("sig").get<std::string>());
        const Bytes mu = from_hex(t.at("mu").get<std::string>());
        const std::string where = file + " tcId " + std::to_string(t.at("tcId").get<int>());
        auto s_mu = crypto::ml_dsa_sign_mu(*k, mu, true);
        ASSERT_TRUE(s_mu.ok()) << where;
        EXPECT_EQ(*s_mu, sig) << where << " (openssl, from mu)";
        ++mu_checked;
        if (!t.contains("msg")) continue;
        const Bytes msg = from_hex(t.at("msg").get<std::string>());
        for (auto b : {crypto::Backend::openssl, crypto::Backend::botan}) {
          auto s = crypto::sign_message(*k, crypto::HashAlgo::sha512, msg, b, true);
          ASSERT_TRUE(s.ok()) << where;
          EXPECT_EQ(*s, sig) << where << (b == crypto::Backend::botan ? " (botan)" : " (openssl)");
        }
        ++checked;
      }
    }
  }
  // 70 + 80 + 71 deterministic message cases (as VectorsWycheproof.MlDsaSignSeedAllCases
  // counts them), and those plus the 15 mu-only ("Internal") cases of groups with a PKCS#8 key.
  EXPECT_EQ(checked, 221);
  EXPECT_EQ(mu_checked, 236);
}

TEST(RemoteBase64, RoundTripAndRefusals) {
  EXPECT_EQ(to_base64(from_hex("")), "");
  EXPECT_EQ(to_base64(from_hex("66")), "Zg==");
  EXPECT_EQ(to_base64(from_hex("666f")), "Zm8=");
  EXPECT_EQ(to_base64(from_hex("666f6f")), "Zm9v");
  EXPECT_EQ(to_base64(from_hex("fbff")), "+/8=");
  EXPECT_EQ(from_base64("Zm9vYg=="), from_hex("666f6f62"));
  EXPECT_EQ(from_base64("Zm9vYg"), from_hex("666f6f62"));
  EXPECT_EQ(from_base64("+/8="), from_hex("fbff"));
  for (const char* bad : {"Zm9vY", "Zm9v!", "Zg=", "Zh==", "Zm9v\n"}) EXPECT_THROW(from_base64(bad), InputError) << bad;
}
