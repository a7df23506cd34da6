// pkcs11: keys (issue 15 §1): a SoftHSM2 token initialised by the test in a temporary
// directory, RSA-2048/4096 and ECDSA P-256/P-384 keys generated on the token by
// pkcs11-tool, certificates made for them by `openssl req -x509` through pkcs11-provider,
// and modules signed through the URI by `sign`, `sign-file` and a batch; checked by
// `openssl cms -verify` and `modsign verify`.  The refusals (wrong PIN, missing object, bad
// URI, ML-DSA on a token without CKM_ML_DSA) with their exact messages and exit statuses,
// nothing written.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <string_view>

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <modsign/sign.hpp>

#include "cli_support.hpp"
#include "crypto/pkcs11_store.hpp"
#include "test_support.hpp"

namespace modsign::test {
namespace {

using test::q;

constexpr const char* kSoftHsm = "/usr/lib/softhsm/libsofthsm2.so";
constexpr const char* kToken = "modsign-test";
const std::string kTokenName = "'modsign-test' (SoftHSM project SoftHSM v2)";

std::string M() { return modsign_cli(); }

/// pkcs11-provider's pkcs11.so: the build's (-DMODSIGN_PKCS11_PROVIDER, tools/check), else
/// the one in OpenSSL's modules directory (`openssl version -m`; Debian 13's package).
std::string provider() {
  const std::string built = test::pkcs11_provider_path();
  if (!built.empty()) return built;
  const auto r = run(openssl() + " version -m");
  const auto a = r.out.find('"'), b = r.out.rfind('"');
  return a == std::string::npos || b <= a ? std::string() : r.out.substr(a + 1, b - a - 1) + "/pkcs11.so";
}

struct TokenKey {
  const char* label;
  const char* pkcs11_tool_type;
  const char* algo;         // as `sign` reports it
  const char* verify_name;  // as `verify` reports the signature
};
const TokenKey kKeys[] = {{"rsa2048", "rsa:2048", "RSA", "rsa"},
                          {"rsa4096", "rsa:4096", "RSA", "rsa"},
                          {"p256", "EC:prime256v1", "ECDSA-P256", "ecdsa"},
                          {"p384", "EC:secp384r1", "ECDSA-P384", "ecdsa"}};

class Pkcs11 : public testing::Test {
 protected:
  // pkcs11-provider dlopen()s the token module with RTLD_DEEPBIND, which the sanitizer
  // runtimes refuse by ending the process (google/sanitizers#611): these tests run in the
  // plain suite only.
  void SetUp() override {
    if (!test::sanitize_build().empty())
      GTEST_SKIP() << "pkcs11-provider loads the token with RTLD_DEEPBIND, which -fsanitize=" << test::sanitize_build()
                   << " refuses; run in the plain suite";
  }
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const std::string conf = *dir_ / "softhsm2.conf";
    run("mkdir -p " + q(*dir_ / "tokens"));
    spit(conf, "directories.tokendir = " + *dir_ / "tokens" + "\nobjectstore.backend = file\nlog.level = ERROR\n");
    setenv("SOFTHSM2_CONF", conf.c_str(), 1);
    setenv("PKCS11_PROVIDER_MODULE", kSoftHsm, 1);
    unsetenv("KBUILD_SIGN_PIN");
    auto r = run(std::string("softhsm2-util --init-token --free --label ") + kToken + " --pin 1234 --so-pin 5678");
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    // openssl's own configuration for making the certificates through the token: the
    // provider beside OpenSSL's default one, digests kept off the token, no C_Finalize.
    spit(*dir_ / "openssl.cnf",
         "openssl_conf = init\n[init]\nproviders = prov\n[prov]\ndefault = dflt\npkcs11 = p11\n[dflt]\nactivate = 1\n"
         "[p11]\nmodule = " +
             provider() +
             "\npkcs11-module-block-operations = digest\n"
             "pkcs11-module-quirks = no-deinit\nactivate = 1\n");
    int id = 1;
    for (const auto& k : kKeys) {
      r = run(std::string("pkcs11-tool --module ") + kSoftHsm + " --token-label " + kToken +
              " --login --pin 1234 --keypairgen --key-type " + k.pkcs11_tool_type + " --label " + k.label + " --id 0" +
              std::to_string(id++));
      ASSERT_EQ(r.status, 0) << r.out << r.err;
      const std::string crt = *dir_ / (std::string(k.label) + ".crt");
      r = run("OPENSSL_CONF=" + q(*dir_ / "openssl.cnf") + " " + openssl() + " req -new -x509 -key " + q(uri(k.label)) +
              " -passin pass:1234 -subj '/CN=token " + k.label + "/O=modsign' -days 3650 -sha256" +
              " -addext subjectKeyIdentifier=hash -out " + q(crt) + " </dev/null");
      ASSERT_EQ(r.status, 0) << r.out << r.err;
    }
    // rsa2048's and p256's certificates also go onto the token (same label and id).
    for (const auto& [label, idn] : {std::pair{"rsa2048", "01"}, std::pair{"p256", "03"}}) {
      r = run(openssl() + " x509 -in " + q(*dir_ / (std::string(label) + ".crt")) + " -outform DER -out " +
              q(*dir_ / (std::string(label) + ".der")) + " && pkcs11-tool --module " + kSoftHsm + " --token-label " +
              kToken + " --login --pin 1234 --write-object " + q(*dir_ / (std::string(label) + ".der")) +
              " --type cert --label " + label + " --id " + idn);
      ASSERT_EQ(r.status, 0) << r.out << r.err;
    }
    r = run(M() + " keygen --algo ml-dsa-65 --out " + q(*dir_ / "mldsa.pem") + " --cert-out " + q(*dir_ / "mldsa.crt"));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::string uri(const std::string& label) {
    return std::string("pkcs11:token=") + kToken + ";object=" + label;
  }
  static std::string crt(const std::string& label) { return *dir_ / (label + ".crt"); }
  std::string module(const std::string& name = "mod.ko", std::size_t n = 4096) {
    const std::string p = d_ / name;
    spit(p, pattern(n));
    return p;
  }
  void expect_loads(const std::string& m, const TokenKey& k) {
    auto r = run(M() + " verify --cert " + q(crt(k.label)) + " " + q(m));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, m + ": loads (OK): signature verified: " + k.verify_name + " signature, trusted key \"token " +
                         k.label + "\"" + test::trusted_key_ids(crt(k.label)) + test::kLoadScope + "\n");
  }
  static inline TempDir* dir_ = nullptr;
  TempDir d_;
};

TEST_F(Pkcs11, SignsWithEveryKeyTypeThroughTheUri) {
  for (const auto& k : kKeys) {
    SCOPED_TRACE(k.label);
    const std::string m = module(std::string(k.label) + ".ko");
    auto r = run("KBUILD_SIGN_PIN=1234 " + M() + " sign --key " + q(uri(k.label)) + " --cert " + q(crt(k.label)) +
                 " --hash sha256 --p7s " + q(m));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_TRUE(r.out.starts_with(m + ": signed (" + k.algo + ", no signedAttrs, sha256, CMS ")) << r.out;
    expect_openssl_cms_verifies(m + ".p7s", pattern(4096), crt(k.label), d_ / "content.bin", true);
    expect_loads(m, k);
  }
}

TEST_F(Pkcs11, CertificateFromTheTokenAndPinFile) {
  const std::string m = module();
  spit(d_ / "pin", std::string("1234\n"));
  auto r =
      run(M() + " sign --key " + q(uri("rsa2048")) + " --pin-file " + q(d_ / "pin") + " --p7s " + q(m) + " </dev/null");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("1234"), std::string::npos);
  EXPECT_EQ(r.err.find("1234"), std::string::npos);
  expect_openssl_cms_verifies(m + ".p7s", pattern(4096), crt("rsa2048"), d_ / "content.bin", true);
  expect_loads(m, kKeys[0]);
  // The token's own certificate of an object without one: refused.
  const std::string m2 = module("m2.ko");
  r = run(M() + " sign --key " + q(uri("p384")) + " --pin-file " + q(d_ / "pin") + " " + q(m2) + " </dev/null");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err,
            "modsign: " + uri("p384") + ": token " + kTokenName + ": no certificate matches the URI (type=cert)\n");
  EXPECT_EQ(slurp(m2), pattern(4096));
}

TEST_F(Pkcs11, SignFileAcceptsTheUri) {
  for (const auto& k : {kKeys[0], kKeys[2]}) {
    const std::string m = module(std::string(k.label) + ".ko");
    auto r = run("KBUILD_SIGN_PIN=1234 " + M() + " sign-file -p sha512 " + q(uri(k.label)) + " " + q(crt(k.label)) +
                 " " + q(m));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out + r.err, "");
    expect_openssl_cms_verifies(m + ".p7s", pattern(4096), crt(k.label), d_ / "content.bin", true);
    expect_loads(m, k);
  }
}

// --deterministic cannot be honoured by a token's ECDSA signer (new-user review: it was
// silently ignored); RSA PKCS#1 v1.5 is deterministic anyway and signs.
TEST_F(Pkcs11, DeterministicEcdsaOnATokenIsRefused) {
  const std::string m = module("det.ko");
  auto r = run("KBUILD_SIGN_PIN=1234 " + M() + " sign --deterministic --key " + q(uri("p256")) + " --cert " +
               q(crt("p256")) + " " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + uri("p256") +
                       ": deterministic ECDSA (RFC 6979) is not available for a key on a PKCS#11 token: its signer "
                       "chooses the nonce\n");
  EXPECT_EQ(slurp(m), pattern(4096));
  const std::string a = module("det-a.ko"), b = module("det-b.ko");
  for (const auto& f : {a, b}) {
    r = run("KBUILD_SIGN_PIN=1234 " + M() + " sign -q --deterministic --key " + q(uri("rsa2048")) + " --cert " +
            q(crt("rsa2048")) + " " + q(f));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(slurp(a), slurp(b));
}

TEST_F(Pkcs11, BatchOverATreeWithTwoWorkers) {
  run("mkdir -p " + q(d_ / "tree/a") + " " + q(d_ / "tree/b"));
  std::vector<std::string> mods;
  for (int i = 0; i < 6; ++i) {
    mods.push_back(d_ / ("tree/" + std::string(i % 2 ? "a" : "b") + "/m" + std::to_string(i) + ".ko"));
    spit(mods.back(), pattern(4096));
  }
  for (const auto& k : {kKeys[0], kKeys[2]}) {
    SCOPED_TRACE(k.label);
    auto r = run("KBUILD_SIGN_PIN=1234 " + M() + " sign --key " + q(uri(k.label)) + " --cert " + q(crt(k.label)) +
                 " --replace --p7s -j2 -r " + q(d_ / "tree"));
    ASSERT_EQ(r.status, 0) << r.err;
    for (const auto& m : mods) {
      expect_openssl_cms_verifies(m + ".p7s", pattern(4096), crt(k.label), d_ / "content.bin", true);
      expect_loads(m, k);
    }
  }
}

// What a -j2 batch does on the token, logged by OpenSC's pkcs11-spy between pkcs11-provider
// and SoftHSM: modsign's own PIN check (C_Login then C_Logout, in a session of its own),
// then one provider login for the whole batch (in a session of its own) and at most one
// session per concurrent worker (2), one C_Sign per module.
TEST_F(Pkcs11, BatchLogsInOnceWithASessionPerWorker) {
  const std::string spy = std::string("/usr/lib/") + MODSIGN_MULTIARCH + "/pkcs11-spy.so";
  if (::access(spy.c_str(), R_OK) != 0) GTEST_SKIP() << spy << " not installed (Debian's opensc-pkcs11)";
  run("mkdir -p " + q(d_ / "tree"));
  for (int i = 0; i < 8; ++i) spit(d_ / ("tree/m" + std::to_string(i) + ".ko"), pattern(4096 + i));
  auto r = run("KBUILD_SIGN_PIN=1234 PKCS11_PROVIDER_MODULE=" + spy + " PKCS11SPY=" + kSoftHsm +
               " PKCS11SPY_OUTPUT=" + q(d_ / "spy.log") + " " + M() + " sign -q --key " + q(uri("rsa2048")) +
               " --cert " + q(crt("rsa2048")) + " -j2 -r " + q(d_ / "tree"));
  ASSERT_EQ(r.status, 0) << r.err;
  const Bytes log = slurp(d_ / "spy.log");
  const std::string text(log.begin(), log.end());
  auto calls = [&](const std::string& fn) {
    std::size_t n = 0;
    for (std::size_t at = text.find(": " + fn + "\n"); at != std::string::npos;
         at = text.find(": " + fn + "\n", at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(calls("C_Login"), 2u) << "modsign's PIN check and the provider's one login";
  EXPECT_EQ(calls("C_Logout"), 1u) << "the PIN check logs out again";
  EXPECT_EQ(calls("C_Sign"), 8u);
  EXPECT_GE(calls("C_OpenSession"), 2u);
  EXPECT_LE(calls("C_OpenSession"), 4u) << "the PIN check's session, the provider's login session and at most one "
                                           "per worker";
  for (int i = 0; i < 8; ++i) expect_loads(d_ / ("tree/m" + std::to_string(i) + ".ko"), kKeys[0]);
}

TEST_F(Pkcs11, WrongPinMissingObjectAndBadUriWriteNothing) {
  const std::string m = module();
  struct Case {
    std::string env, key, err;
  };
  const std::vector<Case> cases = {
      {"KBUILD_SIGN_PIN=0000", uri("rsa2048"),
       uri("rsa2048") + ": token " + kTokenName + ": wrong PIN (CKR_PIN_INCORRECT)"},
      {"KBUILD_SIGN_PIN=1234", uri("nothere"),
       uri("nothere") + ": token " + kTokenName + ": no private key matches the URI"},
      {"KBUILD_SIGN_PIN=1234", "pkcs11:token=nosuch;object=rsa2048",
       "pkcs11:token=nosuch;object=rsa2048: no token matches the URI in " + std::string(kSoftHsm)},
      {"KBUILD_SIGN_PIN=1234", uri("rsa2048") + ";colour=blue",
       uri("rsa2048") + ";colour=blue: not a PKCS#11 URI (RFC 7512): unknown path attribute 'colour'"},
      {"KBUILD_SIGN_PIN=1234", uri("rsa2048") + ";type=cert",
       uri("rsa2048") + ";type=cert: not a PKCS#11 URI (RFC 7512) of a private key: type=cert"},
      {"", "pkcs11:token=modsign%00test;object=rsa2048",
       "pkcs11:token=modsign%00test;object=rsa2048: not a PKCS#11 URI (RFC 7512): %00 (a NUL byte) in 'token': no "
       "PKCS#11 attribute value holds one"},
      {"PKCS11_PROVIDER_MODULE=/nonexistent/libtoken.so", uri("rsa2048"),
       uri("rsa2048") + ": PKCS#11 module /nonexistent/libtoken.so (PKCS11_PROVIDER_MODULE) does not exist or is not a "
                        "file"},
      {"KBUILD_SIGN_PIN=1234", uri("rsa2048") + "?module-path=/nonexistent/libtoken.so",
       uri("rsa2048") + "?module-path=/nonexistent/libtoken.so: PKCS#11 module /nonexistent/libtoken.so (module-path "
                        "in the URI) does not exist or is not a file"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.key);
    auto r = run(c.env + " " + M() + " sign --key " + q(c.key) + " --cert " + q(crt("rsa2048")) + " --p7s " + q(m) +
                 " </dev/null");
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "modsign: " + c.err + "\n");
    EXPECT_EQ(slurp(m), pattern(4096));
    EXPECT_NE(::access((m + ".p7s").c_str(), F_OK), 0);
    // sign-file: the kernel script's exit status 1, the same message.
    r = run(c.env + " " + M() + " sign-file sha512 " + q(c.key) + " " + q(crt("rsa2048")) + " " + q(m) + " </dev/null");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "modsign: " + c.err + "\n");
    EXPECT_EQ(slurp(m), pattern(4096));
  }
}

// The hostile pass's spellings (issue 29): a PIN inside another attribute's value, an
// escaped '=', an escaped ';' in the token label.  Never echoed, whatever the error.
TEST_F(Pkcs11, PinHiddenInValuesOrEscapesIsNeverShown) {
  const std::string m = module();
  for (const auto& [key, shown] :
       {std::pair{std::string("pkcs11:token=x?module-path=/nonexist;pin-value=S3cr3t"),
                  std::string("pkcs11:token=x?module-path=(not shown)")},
        std::pair{std::string("pkcs11:token=x;pin-value%3DS3cr3t"), std::string("pkcs11:token=x;(not shown)")},
        std::pair{std::string("pkcs11:token=x%3Bpin-value%3DS3cr3t"), std::string("pkcs11:token=(not shown)")},
        // The module path decoded ("/nonexist;pin-value=...") was shown in the message's
        // second half (session 20's hostile review).
        std::pair{std::string("pkcs11:token=x?module-path=/nonexist%3Bpin-value=S3cr3t"),
                  std::string("pkcs11:token=x?module-path=(not shown)")}}) {
    SCOPED_TRACE(key);
    const auto r = run(M() + " sign --key " + q(key) + " --cert " + q(crt("rsa2048")) + " " + q(m) + " </dev/null");
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(r.err.find("S3cr3t"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("modsign: " + shown + ": ", 0), 0u) << r.err;
    EXPECT_EQ(slurp(m), pattern(4096));
  }
}

// A PIN in the URI, in its path or its query: a usage error (exit 2; sign-file's 1), the
// URI shown without it.
TEST_F(Pkcs11, PinInTheUriIsAUsageErrorAndNeverShown) {
  const std::string m = module();
  for (const auto& [key, shown] :
       {std::pair{uri("rsa2048") + ";pin-value=1234", uri("rsa2048") + ";pin-value=(not shown)"},
        std::pair{uri("rsa2048") + "?pin-value=1234", uri("rsa2048") + "?pin-value=(not shown)"},
        std::pair{uri("rsa2048") + "?pin-value=1234&module-path=" + kSoftHsm,
                  uri("rsa2048") + "?pin-value=(not shown)&module-path=" + kSoftHsm},
        // Names the parser does not know, but that look like a PIN (issue 29): never echoed.
        std::pair{uri("rsa2048") + "?PIN-VALUE=1234", uri("rsa2048") + "?(not shown: not a valid query)"},
        std::pair{uri("rsa2048") + "?pin%2Dvalue=1234", uri("rsa2048") + "?(not shown: not a valid query)"},
        std::pair{uri("rsa2048") + ";Pin-Value=1234", uri("rsa2048") + ";Pin-Value=(not shown)"},
        std::pair{uri("rsa2048") + ";passphrase=1234", uri("rsa2048") + ";passphrase=(not shown)"}}) {
    SCOPED_TRACE(key);
    const std::string err = "modsign: " + shown +
                            ": PINs are not accepted in the URI (pin-value): use KBUILD_SIGN_PIN, --pin-file or the "
                            "prompt\n";
    auto r = run(M() + " sign --key " + q(key) + " --cert " + q(crt("rsa2048")) + " --p7s " + q(m) + " </dev/null");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, err);
    EXPECT_EQ(r.err.find("1234"), std::string::npos);
    r = run(M() + " sign-file sha512 " + q(key) + " " + q(crt("rsa2048")) + " " + q(m) + " </dev/null");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, err);
    EXPECT_EQ(slurp(m), pattern(4096));
    EXPECT_NE(::access((m + ".p7s").c_str(), F_OK), 0);
  }
}

// An ML-DSA certificate: with no ML-DSA key that the token can sign with, the missing
// mechanism is named; beside an RSA key on the token, the mismatch is (on the old main the
// mechanism was named for both).
TEST_F(Pkcs11, MlDsaNeedsATokenWithCkmMlDsa) {
  // SoftHSM 2.6.1 implements PKCS#11 2.40: no CKM_ML_DSA, so no ML-DSA key can be on it.
  const std::string m = module();
  auto r = run("KBUILD_SIGN_PIN=1234 " + M() + " sign --key " + q(uri("mldsa65")) + " --cert " +
               q(*dir_ / "mldsa.crt") + " --p7s " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "modsign: " + uri("mldsa65") + ": token " + kTokenName +
                       " has no CKM_ML_DSA mechanism: ML-DSA signing needs a PKCS#11 3.2 token that offers it\n");
  r = run("KBUILD_SIGN_PIN=1234 " + M() + " sign --key " + q(uri("rsa2048")) + " --cert " + q(*dir_ / "mldsa.crt") +
          " --p7s " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "modsign: " + *dir_ / "mldsa.crt" + ": no certificate matches the private key " + uri("rsa2048") +
                       " (the key is RSA, the certificate ML-DSA-65)\n");
  EXPECT_EQ(slurp(m), pattern(4096));
  EXPECT_NE(::access((m + ".p7s").c_str(), F_OK), 0);
}

TEST_F(Pkcs11, LibrarySignerLoadsTheTokenKey) {
  spit(d_ / "pin", std::string("1234\n"));
  KeyOptions ko;
  ko.pin_file = d_ / "pin";
  const Signer s = Signer::load(uri("rsa2048"), "", {}, ko);  // the certificate from the token
  EXPECT_EQ(s.algorithm(), "RSA");
  EXPECT_EQ(s.key_path(), uri("rsa2048"));
  EXPECT_EQ(s.certificate_path(), uri("rsa2048"));
  EXPECT_TRUE(s.notes().empty());
  SignOptions o;
  o.hash = "sha256";
  const SignedImage si = sign_module_image(s, pattern(4096), o);
  EXPECT_EQ(si.report.algorithm, "RSA");
  EXPECT_EQ(si.report.hash, "sha256");
  EXPECT_EQ(si.module.size(), 4096 + si.cms.size() + 40);
  test::spit(d_ / "m.ko.p7s", si.cms);
  expect_openssl_cms_verifies(d_ / "m.ko.p7s", pattern(4096), crt("rsa2048"), d_ / "content.bin", true);
  // Signing from two threads with the one key (one login, a session per operation).
  std::vector<std::thread> t;
  std::atomic<int> ok{0};
  for (int i = 0; i < 2; ++i)
    t.emplace_back([&] {
      for (int j = 0; j < 10; ++j)
        if (sign_module_image(s, pattern(1024), o).cms.size() == si.cms.size()) ++ok;
    });
  for (auto& th : t) th.join();
  EXPECT_EQ(ok.load(), 20);
  // An empty PIN file, and the ask callback called once for a token that wants a login.
  spit(d_ / "empty", std::string("\n"));
  ko.pin_file = d_ / "empty";
  try {
    (void)Signer::load(uri("rsa2048"), "", {}, ko);
    ADD_FAILURE() << "no throw";
  } catch (const InputError& e) { EXPECT_EQ(std::string(e.what()), d_ / "empty" + ": empty PIN file"); }
  int asked = 0;
  const Signer s2 = Signer::load(uri("p256"), crt("p256"), [&](const std::string& what) {
    ++asked;
    EXPECT_EQ(what, uri("p256"));
    return std::optional<std::string>("1234");
  });
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(s2.algorithm(), "ECDSA-P256");
}

// A login failure is named, not only numbered (issue 29: "CKR 0x102"): the values a
// login can return carry their pkcs11t.h names; an unknown one keeps its number.
TEST(Pkcs11Text, LoginReturnValuesAreNamed) {
  EXPECT_EQ(crypto::pkcs11::ckr_text(0x102), "CKR_USER_PIN_NOT_INITIALIZED, 0x102");
  EXPECT_EQ(crypto::pkcs11::ckr_text(0xa3), "CKR_PIN_EXPIRED, 0xa3");
  EXPECT_EQ(crypto::pkcs11::ckr_text(0xe0), "CKR_TOKEN_NOT_PRESENT, 0xe0");
  EXPECT_EQ(crypto::pkcs11::ckr_text(0x80000001), "CKR 0x80000001");
}

}  // namespace
}  // namespace modsign::test
