// `modsign sign-file` against the kernel's own scripts/sign-file (linux-source-7.2, built
// here against the OpenSSL this build links, as scripts/Makefile builds it), per OpenSSL
// major version (issue 26):
//   - RSA: the signed modules are identical byte for byte (PKCS#1 v1.5 is deterministic);
//   - ECDSA P-256 and ML-DSA-65: identical field by field (every field of the SignedData
//     and the module_signature trailer, the signature value aside: sign-file's ECDSA nonce
//     and ML-DSA's hedged signing are random), and both signatures verify;
//   - ML-DSA on OpenSSL 3.x: sign-file drops CMS_NOATTR (sign-file.c: "ML-DSA + CMS_NOATTR
//     is not supported in openssl-3.5"), so its CMS carries signedAttrs {contentType,
//     messageDigest}; modsign sign-file writes none (the form sign-file writes
//     on OpenSSL >= 4, and the one 7.x kernels take without their ML-DSA waiver).  On
//     OpenSSL >= 4 the two agree field by field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "crypto/crypto.hpp"
#include "test_support.hpp"

namespace modsign::test {
namespace {

/// scripts/sign-file built in `dir` against this build's OpenSSL.
std::string kernel_sign_file(const std::string& dir) {
  const std::string src = kernel_source_dir();
  const std::string exe = dir + "/sign-file";
  std::string cc = "cc -O1 -I" + q(src + "/tools/include/uapi");
  const std::string bin = openssl_bin();
  const std::string root = bin.substr(0, bin.rfind("/bin/"));
  if (root != "/usr" && bin.rfind("/bin/") != std::string::npos)
    cc += " -I" + q(root + "/include") + " -L" + q(root + "/lib") + " -Wl,-rpath," + q(root + "/lib");
  const auto r = run(cc + " -o " + q(exe) + " " + q(src + "/scripts/sign-file.c") + " -lcrypto");
  EXPECT_EQ(r.status, 0) << r.err;
  return exe;
}

/// The dump with every position and size left out: what is equal field by field.
nlohmann::json fields(const std::string& p7s) {
  const auto r = run(modsign_cli() + " cms dump --json " + q(p7s));
  EXPECT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  const auto strip = [](auto&& self, nlohmann::json& v) -> void {
    if (v.is_object()) {
      for (const char* k :
           {"offset", "length", "der_size", "path", "signature_at", "signed_attrs_at", "signature_length"})
        v.erase(k);
      for (auto& [k, x] : v.items()) self(self, x);
    } else if (v.is_array()) {
      for (auto& x : v) self(self, x);
    }
  };
  strip(strip, j);
  return j;
}

struct Signed {
  std::string module, p7s;
};

class SignFileParity : public testing::Test {
 protected:
  void SetUp() override {
    if (run("test -r " + q(kernel_source_dir() + "/scripts/sign-file.c")).status != 0)
      FAIL() << "no linux-source-7.2 (tools/build-test-kernel --source-only unpacks it; tools/check runs it)";
    sign_file_ = kernel_sign_file(d_.path());
    spit(d_ / "m.ko", pattern(6000));
  }
  void keypair(const std::string& name, const std::string& genpkey) {
    auto r = run(openssl() + " genpkey " + genpkey + " -out " + q(d_ / (name + ".pem")));
    ASSERT_EQ(r.status, 0) << r.err;
    r = run(openssl() + " req -x509 -new -key " + q(d_ / (name + ".pem")) + " -subj '/CN=parity " + name +
            "/O=modsign' -days 30 -addext subjectKeyIdentifier=hash -outform DER -out " + q(d_ / (name + ".der")));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  /// `tool` (sign-file or modsign sign-file) with `opts` over a copy of m.ko, in place; -p
  /// writes the CMS beside it as MODULE.p7s (sign-file names it after the module, not DEST).
  Signed sign(const std::string& tool, const std::string& name, const std::string& opts) {
    const std::string out = d_ / (name + "." + (tool == sign_file_ ? "kernel" : "modsign") + opts + ".ko");
    spit(out, slurp(d_ / "m.ko"));
    const auto r =
        run(tool + " -p " + opts + " sha256 " + q(d_ / (name + ".pem")) + " " + q(d_ / (name + ".der")) + " " + q(out));
    EXPECT_EQ(r.status, 0) << tool << " " << name << ": " << r.err;
    return {out, out + ".p7s"};
  }
  TempDir d_;
  std::string sign_file_;
};

TEST_F(SignFileParity, RsaIsByteIdentical) {
  keypair("rsa", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048");
  for (const std::string opts : {"", "-k"}) {
    const Signed kernel = sign(sign_file_, "rsa", opts), ours = sign(modsign_cli() + " sign-file", "rsa", opts);
    EXPECT_EQ(slurp(kernel.module), slurp(ours.module)) << opts;
    EXPECT_EQ(slurp(kernel.p7s), slurp(ours.p7s)) << opts;
    EXPECT_EQ(slurp(ours.module).size(), 6000u + slurp(ours.p7s).size() + 12 + 28) << opts;
  }
}

TEST_F(SignFileParity, EcdsaAndMldsaAgreeFieldByField) {
  keypair("ecdsa", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256");
  keypair("mldsa65", "-algorithm ML-DSA-65");
  for (const std::string name : {"ecdsa", "mldsa65"}) {
    for (const std::string opts : {"", "-k"}) {
      const Signed kernel = sign(sign_file_, name, opts), ours = sign(modsign_cli() + " sign-file", name, opts);
      nlohmann::json k = fields(kernel.p7s), o = fields(ours.p7s);
      // Both are genuine signatures over m.ko by the key of name.der, read by OpenSSL; but
      // OpenSSL 3.x cannot verify ML-DSA without signedAttrs (modsign's form, and sign-file's
      // on OpenSSL >= 4): Botan verifies that one.
      for (const Signed* s : {&kernel, &ours}) {
        const auto r =
            run(openssl() + " cms -verify -binary -inform DER -in " + q(s->p7s) + " -content " + q(d_ / "m.ko") +
                " -certfile " + q(d_ / (name + ".der")) + " -nointern -noverify -out /dev/null");
        if (name == "mldsa65" && s == &ours && openssl_major() == 3) {
          EXPECT_NE(r.status, 0) << s->p7s;
          EXPECT_NE(r.err.find(openssl_mldsa_noattr_refusal(false)), std::string::npos) << r.err;
        } else {
          EXPECT_EQ(r.status, 0) << s->p7s << ": " << r.err;
        }
      }
      if (name == "mldsa65") {
        const Bytes der = slurp(ours.p7s);
        const auto dump = nlohmann::json::parse(run(modsign_cli() + " cms dump --json " + q(ours.p7s)).out);
        const auto& si = dump.at("signer_infos").at(0);
        const std::size_t len = si.at("signature_length"), end = si.at("signature_at").at("offset").get<std::size_t>() +
                                                                 si.at("signature_at").at("length").get<std::size_t>();
        ASSERT_EQ(len, 3309u);
        auto c = crypto::Certificate::load_all(d_ / (name + ".der"));
        ASSERT_TRUE(c.ok());
        EXPECT_TRUE(crypto::botan::ml_dsa_verify(crypto::KeyAlgo::ml_dsa_65, c.value()[0].public_key().raw(),
                                                 slurp(d_ / "m.ko"), ByteView(der).subspan(end - len, len)));
      }
      EXPECT_TRUE(o.at("signer_infos").at(0).at("signed_attrs").is_null()) << name << opts;
      if (name == "mldsa65" && openssl_major() == 3) {
        // OpenSSL 3.x: sign-file's ML-DSA CMS has signedAttrs; everything else agrees.
        const auto& sa = k.at("signer_infos").at(0).at("signed_attrs");
        ASSERT_TRUE(sa.is_array()) << k.dump();
        std::string names;
        for (const auto& a : sa) names += a["name"].get<std::string>() + " ";
        EXPECT_EQ(names, "contentType messageDigest ");
        for (auto* j : {&k, &o})
          for (const char* f : {"signed_attrs", "content_type", "message_digest", "signing_time"})
            j->at("signer_infos").at(0).erase(f);
      }
      EXPECT_EQ(k, o) << name << opts << "\nkernel: " << k.dump() << "\nmodsign: " << o.dump();
      // Each signed module is m.ko, then the CMS written beside it, then module_signature;
      // the trailers agree but for sig_len (ECDSA's DER signature varies).
      const Bytes km = slurp(kernel.module), om = slurp(ours.module), plain = slurp(d_ / "m.ko");
      for (const Signed* s : {&kernel, &ours}) {
        const Bytes m = slurp(s->module), p7 = slurp(s->p7s);
        ASSERT_EQ(m.size(), plain.size() + p7.size() + 40) << s->module;
        EXPECT_EQ(Bytes(m.begin(), m.begin() + 6000), plain) << s->module;
        EXPECT_EQ(Bytes(m.begin() + 6000, m.end() - 40), p7) << s->module;
      }
      const Bytes kt(km.end() - 40, km.end() - 32), ot(om.end() - 40, om.end() - 32);
      EXPECT_EQ(kt, ot) << name << opts;
      EXPECT_EQ(Bytes(km.end() - 28, km.end()), Bytes(om.end() - 28, om.end())) << name << opts;
    }
  }
}

}  // namespace
}  // namespace modsign::test
