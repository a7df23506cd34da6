// `modsign cms verify` against `openssl cms -verify` on SignedData made at test time by
// `openssl cms -sign` for RSA, ECDSA P-256 and ML-DSA-65, with each option that changes the
// structure, attached and detached, SHA-256/384/512, plus tampered content and signature.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace modsign::test {
namespace {

struct Key {
  std::string name, genpkey;
};
/// The key's name as CTest shows the parameter (gtest's default was the struct's bytes).
void PrintTo(const Key& k, std::ostream* os) { *os << k.name; }

class CmsOpenssl : public testing::TestWithParam<Key> {};

int openssl_verify(const std::string& file, const std::string& cert, const std::string& content) {
  return run(openssl() + " cms -verify -binary -inform DER -in " + q(file) + " -nointern -certfile " + q(cert) +
             " -noverify -out /dev/null" + (content.empty() ? "" : " -content " + q(content)))
      .status;
}

int modsign_verify(const std::string& file, const std::string& cert, const std::string& content, std::string* out) {
  const auto r = run(modsign_cli() + " cms verify --cert " + q(cert) +
                     (content.empty() ? "" : " --content " + q(content)) + " " + q(file));
  *out = r.out + r.err;
  return r.status;
}

TEST_P(CmsOpenssl, VerdictEqualsOpensslCmsVerify) {
  const Key k = GetParam();
  TempDir d;
  const std::string key = d / "key.pem", cert = d / "cert.pem", content = d / "content.bin";
  auto r = run(openssl() + " genpkey " + k.genpkey + " -out " + q(key));
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(openssl() + " req -x509 -new -key " + q(key) + " -subj '/CN=cms " + k.name +
          "' -days 30 -addext subjectKeyIdentifier=hash -out " + q(cert));
  ASSERT_EQ(r.status, 0) << r.err;
  spit(content, pattern(3000));

  // -stream writes BER: indefinite lengths, eContent as a constructed OCTET STRING.
  const std::vector<std::string> forms = {"",       "-noattr", "-nocerts", "-keyid", "-nosmimecap", "-no_signing_time",
                                          "-stream"};
  int compared = 0, signed_ok = 0;
  for (const std::string md : {"sha256", "sha384", "sha512"}) {
    for (const auto& form : forms) {
      for (const bool attached : {false, true}) {
        if (form == "-stream" && !attached) continue;  // openssl attaches the content anyway
        const std::string p7 = d / ("s." + md + form + (attached ? ".att" : ".det") + ".p7s");
        r = run(openssl() + " cms -sign -binary " + form + (attached ? " -nodetach" : "") + " -md " + md + " -in " +
                q(content) + " -signer " + q(cert) + " -inkey " + q(key) + " -outform DER -out " + q(p7));
        const bool mldsa_noattr = k.name == "mldsa65" && form == "-noattr";
        if (mldsa_noattr && openssl_major() == 3) {
          // OpenSSL 3.5.7 cannot sign ML-DSA without signedAttrs ("provider signature not
          // supported"); the RFC 9882 examples cover that form (test_cms_cli.cpp).  4.0.3 can.
          EXPECT_NE(r.status, 0) << "openssl 3 now signs ML-DSA with -noattr: compare it too";
          continue;
        }
        ASSERT_EQ(r.status, 0) << k.name << " " << md << " " << form << ": " << r.err;
        ++signed_ok;
        const std::string c = attached ? "" : content;
        std::string out;
        const int ours = modsign_verify(p7, cert, c, &out);
        const int theirs = openssl_verify(p7, cert, c);
        EXPECT_EQ(ours, 0) << k.name << " " << md << " " << form << "\n" << out;
        if (mldsa_noattr && attached) {
          // OpenSSL 4.0.3 refuses its own attached ML-DSA without signedAttrs ("no content":
          // test::openssl_mldsa_noattr_refusal); the signature is genuine (modsign, and
          // OpenSSL itself on the detached form below).
          EXPECT_NE(theirs, 0) << "openssl " << openssl_major() << " now verifies it: compare its verdict";
        } else {
          EXPECT_EQ(ours == 0, theirs == 0) << k.name << " " << md << " " << form;
        }
        ++compared;

        // The dump shows the structure each option asks for.
        r = run(modsign_cli() + " cms dump --json " + q(p7));
        ASSERT_EQ(r.status, 0) << r.err;
        const auto j = nlohmann::json::parse(r.out);
        const auto& s = j["signer_infos"][0];
        EXPECT_EQ(j["econtent"].is_null(), !attached);
        EXPECT_EQ(j["certificates"].size(), form == "-nocerts" ? 0u : 1u);
        EXPECT_EQ(s["sid"]["type"], form == "-keyid" ? "subjectKeyIdentifier" : "issuerAndSerialNumber");
        EXPECT_EQ(s["version"], form == "-keyid" ? 3 : 1);
        EXPECT_EQ(s["digest_algorithm"]["name"], md);
        EXPECT_EQ(s["signed_attrs"].is_null(), form == "-noattr");
        if (form != "-noattr") {
          EXPECT_EQ(s["signing_time"].is_null(), form == "-no_signing_time");
          bool smime = false;
          for (const auto& a : s["signed_attrs"]) smime |= a["name"] == "smimeCapabilities";
          EXPECT_EQ(smime, form != "-nosmimecap") << form;
        }

        // Tampered signature: the last byte of the signature OCTET STRING (where the dump
        // puts it; openssl's verdict confirms the change reached the signature).
        const std::string bad_sig = p7 + ".badsig";
        Bytes sb = slurp(p7);
        sb[s["signature_at"]["offset"].get<std::size_t>() + s["signature_at"]["length"].get<std::size_t>() - 1] ^= 0x01;
        spit(bad_sig, sb);
        EXPECT_EQ(modsign_verify(bad_sig, cert, c, &out), 1) << out;
        EXPECT_NE(openssl_verify(bad_sig, cert, c), 0);
        compared += 1;
      }
    }
    // Tampered content, detached and attached (a byte inside the eContent).
    const std::string p7 = d / ("s." + md + ".det.p7s"), p7a = d / ("s." + md + ".att.p7s");
    const std::string bad = d / "bad.bin";
    Bytes b = slurp(content);
    b[100] ^= 0x80;
    spit(bad, b);
    std::string out;
    EXPECT_EQ(modsign_verify(p7, cert, bad, &out), 1) << out;
    EXPECT_NE(openssl_verify(p7, cert, bad), 0);
    const auto j = nlohmann::json::parse(run(modsign_cli() + " cms dump --json " + q(p7a)).out);
    Bytes a = slurp(p7a);
    a[j["econtent"]["offset"].get<std::size_t>() + 10] ^= 0x80;
    const std::string bad_att = d / "bad.att.p7s";
    spit(bad_att, a);
    EXPECT_EQ(modsign_verify(bad_att, cert, "", &out), 1) << out;
    EXPECT_NE(openssl_verify(bad_att, cert, ""), 0);
    compared += 2;
  }
  // OpenSSL 3 refuses ML-DSA with -noattr (6 combinations); 4 signs them.
  const bool refused = k.name == "mldsa65" && openssl_major() == 3;
  EXPECT_EQ(signed_ok, refused ? 33 : 39);
  EXPECT_EQ(compared, refused ? 72 : 84);
}

INSTANTIATE_TEST_SUITE_P(Keys, CmsOpenssl,
                         testing::Values(Key{"rsa", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048"},
                                         Key{"ecdsa", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256"},
                                         Key{"mldsa65", "-algorithm ML-DSA-65"}),
                         [](const testing::TestParamInfo<Key>& i) { return i.param.name; });

}  // namespace
}  // namespace modsign::test
