// Which library makes and checks each ML-DSA signature (issue 28): every path takes it from
// the one measured table (crypto::Backend::automatic, default_ml_dsa_backend()) and a
// `backend` option forces one.  crypto::ml_dsa_uses() counts the operations per library;
// each case below runs one public call and asserts exactly which operations it made.
// Keys come from `openssl genpkey` (seed and expanded key, the default) and, for the key
// without its seed, `-provparam ml-dsa.output_formats=priv-only` (expandedKey only).
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

#include <modsign/modsign.hpp>

#include "crypto/crypto.hpp"
#include "test_support.hpp"

using namespace modsign;
using test::q;

namespace {

/// "openssl sign N, botan sign N, openssl verify N, botan verify N": what `f` did.
template <class F>
std::string uses_of(F&& f) {
  const crypto::MlDsaUses a = crypto::ml_dsa_uses();
  f();
  const crypto::MlDsaUses b = crypto::ml_dsa_uses();
  return "openssl sign " + std::to_string(b.openssl_sign - a.openssl_sign) + ", botan sign " +
         std::to_string(b.botan_sign - a.botan_sign) + ", openssl verify " +
         std::to_string(b.openssl_verify - a.openssl_verify) + ", botan verify " +
         std::to_string(b.botan_verify - a.botan_verify);
}

/// The SignRefusal of the SignError `f` throws (nullopt: none thrown).
template <class F>
std::optional<SignRefusal> refusal_of(F&& f) {
  try {
    f();
  } catch (const SignError& e) { return e.reason(); }
  return std::nullopt;
}

constexpr const char* kBotanSign = "openssl sign 0, botan sign 1, openssl verify 0, botan verify 0";
constexpr const char* kOpensslSign = "openssl sign 1, botan sign 0, openssl verify 0, botan verify 0";
constexpr const char* kBotanVerify = "openssl sign 0, botan sign 0, openssl verify 0, botan verify 1";
constexpr const char* kOpensslVerify = "openssl sign 0, botan sign 0, openssl verify 1, botan verify 0";
// The table per architecture (crypto::default_ml_dsa_backend): Botan where it was measured
// faster (x86_64); OpenSSL elsewhere (s390x: CPACF SHA-3; arm64: its ARMv8 Keccak).
#if defined(__x86_64__)
constexpr const char* kAutoSign = kBotanSign;
constexpr const char* kAutoVerify = kBotanVerify;
constexpr const char* kAutoVerifyTwice = "openssl sign 0, botan sign 0, openssl verify 0, botan verify 2";
#else
constexpr const char* kAutoSign = kOpensslSign;
constexpr const char* kAutoVerify = kOpensslVerify;
constexpr const char* kAutoVerifyTwice = "openssl sign 0, botan sign 0, openssl verify 2, botan verify 0";
#endif

class BackendPaths : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const std::string o = test::openssl();
    std::string cmd;
    for (const auto& [name, extra] :
         {std::pair{"seed", ""}, std::pair{"noseed", " -provparam ml-dsa.output_formats=priv-only"}}) {
      const std::string k = *dir_ / (std::string(name) + ".key"), c = *dir_ / (std::string(name) + ".crt");
      cmd += o + " genpkey -algorithm ML-DSA-65" + extra + " -out " + q(k) + " && chmod 600 " + q(k) + " && " + o +
             " req -x509 -new -key " + q(k) + " -subj '/CN=backend " + name + "' -days 30 -addext " +
             "subjectKeyIdentifier=hash -out " + q(c) + " && ";
    }
    const auto r = test::run(cmd + "true");
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string key(const std::string& n) { return *dir_ / (n + ".key"); }
  static std::string crt(const std::string& n) { return *dir_ / (n + ".crt"); }
  std::string file(const std::string& name, std::size_t n = 5000) {
    const std::string p = d_ / name;
    test::spit(p, test::pattern(n));
    return p;
  }
  static KernelProfile v72() { return *KernelProfile::parse("v7.2"); }
  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

TEST_F(BackendPaths, KeyWithoutSeedIsWhatTheFixtureMeans) {
  EXPECT_TRUE(crypto::PrivateKey::load(key("seed"), std::nullopt).value().ml_dsa_seed()->value() != Bytes{});
  EXPECT_FALSE(crypto::PrivateKey::load(key("noseed"), std::nullopt).value().ml_dsa_seed().has_value());
}

TEST_F(BackendPaths, ModuleSigning) {
  const Signer seed = Signer::load(key("seed"), crt("seed"));
  const Signer noseed = Signer::load(key("noseed"), crt("noseed"));
  SignOptions o;
  EXPECT_EQ(uses_of([&] { sign_module_file(seed, file("a.ko"), o); }), kAutoSign);
  EXPECT_EQ(uses_of([&] { sign_module_file(noseed, file("b.ko"), o); }), kOpensslSign);  // auto: no seed, OpenSSL
  o.backend = "openssl";
  EXPECT_EQ(uses_of([&] { sign_module_file(seed, file("c.ko"), o); }), kOpensslSign);
  o.backend = "botan";
  EXPECT_EQ(uses_of([&] { sign_module_file(seed, file("d.ko"), o); }), kBotanSign);
  EXPECT_EQ(refusal_of([&] { sign_module_file(noseed, file("e.ko"), o); }), SignRefusal::backend_needs_seed);
  // Streamed (above stream_above): the signature over the external μ, which only OpenSSL takes.
  o.backend = "auto";
  o.stream_above = 1000;
  EXPECT_EQ(uses_of([&] { sign_module_file(seed, file("f.ko"), o); }), kOpensslSign);
}

TEST_F(BackendPaths, ImaSigning) {
  const Signer seed = Signer::load(key("seed"), crt("seed"));
  const Signer noseed = Signer::load(key("noseed"), crt("noseed"));
  ImaSignOptions o;
  EXPECT_EQ(uses_of([&] { ima_sign_file(seed, file("a")); }), kAutoSign);
  EXPECT_EQ(uses_of([&] { ima_sign_file(noseed, file("b"), o); }), kOpensslSign);
  o.backend = "openssl";
  EXPECT_EQ(uses_of([&] { ima_sign_file(seed, file("c"), o); }), kOpensslSign);
  o.backend = "botan";
  EXPECT_EQ(uses_of([&] { ima_sign_file(seed, file("d"), o); }), kBotanSign);
  EXPECT_EQ(refusal_of([&] { ima_sign_file(noseed, file("e"), o); }), SignRefusal::backend_needs_seed);
  o.backend = "fastest";
  EXPECT_THROW(ima_sign_file(seed, file("f"), o), UsageError);
}

// The CLI says the same for sign and ima sign, exit 2 (new user's trial: ima sign said
// it otherwise, exit 3), and nothing is written.
TEST_F(BackendPaths, CliBotanWithoutSeedIsAUsageError) {
  const std::string m = file("m.ko"), f = file("f");
  const std::string want = "modsign: " + key("noseed") +
                           ": --backend botan needs an ML-DSA key with its seed (RFC 9881 seed or both form); "
                           "--backend auto signs with OpenSSL a key without it\n";
  const std::string kc = " --key " + q(key("noseed")) + " --cert " + q(crt("noseed")) + " --backend ";
  auto r = test::run(test::modsign_cli() + " sign" + kc + "botan " + q(m));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, want);
  r = test::run(test::modsign_cli() + " ima sign --sigfile" + kc + "botan " + q(f));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, want);
  EXPECT_FALSE(std::filesystem::exists(f + ".sig"));
  EXPECT_EQ(test::slurp(m), test::pattern(5000));
  r = test::run(test::modsign_cli() + " ima sign --sigfile -q" + kc + "auto " + q(f));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::slurp(f + ".sig").size(), 9u + 3309u);
}

TEST_F(BackendPaths, ImaAppraisal) {
  const Signer seed = Signer::load(key("seed"), crt("seed"));
  const std::string f = file("a");
  const ImaSignature s = ima_sign_file(seed, f);
  const TrustStore ima = TrustStore::from_certificates({crt("seed")}, v72());
  ImaAppraiseOptions o;
  ImaFileAppraisal v;
  EXPECT_EQ(uses_of([&] { v = ima_appraise_file(f, s.value, ima, v72(), o); }), kAutoVerify);
  EXPECT_EQ(v.status, "pass");
  o.backend = "openssl";
  EXPECT_EQ(uses_of([&] { v = ima_appraise_file(f, s.value, ima, v72(), o); }), kOpensslVerify);
  EXPECT_EQ(v.status, "pass");
}

TEST_F(BackendPaths, KeyringSelfSignature) {
  // x509_check_for_self_signed on a certificate not seen before: one verification; its
  // answer is remembered per certificate and profile, so loading it again makes none.
  const std::string c = d_ / "fresh.crt";
  const auto r = test::run(test::openssl() + " req -x509 -new -key " + q(key("seed")) +
                           " -subj '/CN=backend fresh' -days 30 -out " + q(c));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(uses_of([&] { (void)TrustStore::from_certificates({c}, v72()); }), kAutoVerify);
  EXPECT_EQ(uses_of([&] { (void)TrustStore::from_certificates({c}, v72()); }),
            "openssl sign 0, botan sign 0, openssl verify 0, botan verify 0");
}

TEST_F(BackendPaths, ModuleVerdicts) {
  const Signer seed = Signer::load(key("seed"), crt("seed"));
  const std::string m = file("a.ko");
  sign_module_file(seed, m);
  const TrustStore trust = TrustStore::from_certificates({crt("seed")}, v72());
  Verdict v;
  EXPECT_EQ(uses_of([&] { v = predict_module_file(m, trust, v72(), PredictOptions{}); }), kAutoVerify);
  EXPECT_EQ(v.outcome, LoadOutcome::loads);
  PredictOptions o;
  o.backend = "openssl";
  EXPECT_EQ(uses_of([&] { v = predict_module_file(m, trust, v72(), o); }), kOpensslVerify);
  EXPECT_EQ(v.outcome, LoadOutcome::loads);
}

TEST_F(BackendPaths, CmsVerify) {
  const Signer seed = Signer::load(key("seed"), crt("seed"));
  const std::string m = file("a.ko");
  SignOptions so;
  so.p7s_only = true;
  sign_module_file(seed, m, so);
  CmsVerifyOptions o;
  o.content = m;
  o.certificates = {crt("seed")};
  o.kernel = v72();
  CmsVerification v;
  (void)TrustStore::from_certificates({crt("seed")}, v72());  // its self-signature checked (and remembered)
  // the RFC 5652 check, then the kernel's
  EXPECT_EQ(uses_of([&] { v = cms_verify_file(m + ".p7s", o); }), kAutoVerifyTwice);
  EXPECT_TRUE(v.verified);
  EXPECT_EQ(v.kernel_errno, KErr::none);
}

TEST_F(BackendPaths, RemoteAttachCheck) {
  // attach checks the signature it is given: over signedAttrs a message check (the table's
  // library); over μ (no signedAttrs) a μ check, which only OpenSSL takes.
  const auto cert = SignerCertificate::load(crt("seed"));
  for (const bool attrs : {true, false}) {
    const std::string m = file(attrs ? "attrs.ko" : "mu.ko");
    SignOptions o;
    o.signed_attrs = attrs;
    const PreparedModule p = prepare_module_file(cert, m, o);
    test::spit(d_ / "in.bin", p.to_sign);
    const auto r = test::run(test::openssl() + " pkeyutl -sign -inkey " + q(key("seed")) + " -in " + q(d_ / "in.bin") +
                             (attrs ? " -rawin" : " -pkeyopt mu:1") + " -out " + q(d_ / "sig.bin"));
    ASSERT_EQ(r.status, 0) << r.err;
    const Bytes sig = test::slurp(d_ / "sig.bin");
    EXPECT_EQ(uses_of([&] { attach_signature_file(cert, p, sig, SignOptions{}); }),
              attrs ? kAutoVerify : kOpensslVerify)
        << (attrs ? "signedAttrs" : "μ");
  }
}

}  // namespace
