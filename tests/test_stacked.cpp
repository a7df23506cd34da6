// Stacked signatures (a module signed twice: sign-file signs over an existing signature),
// legacy trailers (module_signature id_type 0/1, non-zero legacy fields), and sign-file on
// compressed modules (the decompressed image is signed and compressed again): exact sizes,
// offsets, notes and exit statuses; the results checked by `modsign verify` and `openssl
// cms -verify`.
#include <gtest/gtest.h>

#include <tuple>

#include <modsign/modsign.hpp>

#include "test_support.hpp"

using namespace modsign;
using test::q;

namespace {

// DER ContentInfo(SignedData) sizes with these certificates (as in test_api_sign.cpp).
constexpr std::size_t kRsa = 404, kMl = 3455, kTrailer = 40, kContent = 4096;

class Stacked : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const std::string o = test::openssl();
    std::string cmd;
    // Same issuer, serials of the same length (fixed SignedData sizes), one per key.
    for (const auto& [name, alg, serial] : {std::tuple{"rsa", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048", "ef"},
                                            std::tuple{"ml", "-algorithm ML-DSA-65", "ee"}}) {
      const std::string k = *dir_ / (std::string(name) + ".pem"), c = *dir_ / (std::string(name) + ".crt");
      cmd += o + " genpkey " + alg + " -out " + q(k) + " && chmod 600 " + q(k) + " && " + o + " req -x509 -new -key " +
             q(k) + " -subj '/CN=api sign/O=modsign' -days 30 -set_serial 0x0123456789abcd" + serial + " -out " + q(c) +
             " && ";
    }
    auto r = test::run(cmd + "true");
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string key(const std::string& n) { return *dir_ / (n + ".pem"); }
  static std::string crt(const std::string& n) { return *dir_ / (n + ".crt"); }
  static std::string M() { return test::modsign_cli(); }
  std::string sign_file(const std::string& opts, const std::string& hash, const std::string& k, const std::string& m) {
    return M() + " sign-file " + opts + hash + " " + q(key(k)) + " " + q(crt(k)) + " " + q(m);
  }
  /// pattern(4096) signed by sign-file with RSA/sha256, then again with ML-DSA-65/sha512.
  std::string twice(const std::string& name = "m.ko") {
    const std::string p = d_ / name;
    test::spit(p, test::pattern(kContent));
    EXPECT_EQ(test::run(sign_file("", "sha256", "rsa", p)).status, 0);
    EXPECT_EQ(test::run(sign_file("", "sha512", "ml", p)).status, 0);
    return p;
  }
  void expect_openssl_verifies(const std::string& p7s, const Bytes& content, const std::string& cert) {
    test::expect_openssl_cms_verifies(p7s, content, cert, d_ / "content.bin");
  }
  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

TEST_F(Stacked, InfoListsEveryNestedSignature) {
  const std::string m = twice();
  EXPECT_EQ(test::slurp(m).size(), kContent + kRsa + kTrailer + kMl + kTrailer);  // 8035
  const ModuleFile f = open_module_file(m, KernelProfile());
  const auto all = describe_signatures(f);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].signature_algorithm, "ML-DSA-65");
  EXPECT_EQ(all[0].cms_length, kMl);
  EXPECT_EQ(all[0].content_length, kContent + kRsa + kTrailer);  // 4540: the outer one covers the inner
  EXPECT_EQ(all[1].signature_algorithm, "RSA");
  EXPECT_EQ(all[1].sig_hashalgo, "sha256");
  EXPECT_EQ(all[1].cms_length, kRsa);
  EXPECT_EQ(all[1].content_length, kContent);  // its PKCS#7 starts at 4096
  EXPECT_EQ(all[1].image_size, 8035u);
  auto r = test::run(M() + " info " + q(m));
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("content_length:      4540\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nnested[1]:           RSA sha256, CMS 404 bytes at 4096\n"), std::string::npos) << r.out;
  r = test::run(M() + " info --json " + q(m));
  EXPECT_NE(r.out.find("\"nested\":[{\"accepted_by\":[\"v6.1\",\"v6\",\"v7.0\",\"v7.0+waiver\"],\"cms_length\":404,"
                       "\"cms_offset\":4096,\"content_length\":4096,\"sig_hashalgo\":\"sha256\",\"sig_key\":"
                       "\"01:23:45:67:89:AB:CD:EF\",\"signature_algorithm\":\"RSA\",\"signed_attrs\":false,"
                       "\"signer\":\"api sign\"}]"),
            std::string::npos)
      << r.out;
}

TEST_F(Stacked, VerifyChecksTheOutermostAndNotesTheRest) {
  const std::string m = twice();
  auto r = test::run(M() + " verify --cert " + q(crt("ml")) + " " + q(m));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, m + ": loads (OK): signature verified: mldsa65 signature, trusted key \"api sign\"" +
                       test::trusted_key_ids(crt("ml")) + test::kLoadScope + "\n");
  EXPECT_EQ(r.err, "modsign: " + m +
                       ": note: 1 more signature under the one the kernel checks (it reads only the outermost; modsign "
                       "info lists them)\n");
  // The inner key alone does not make it load: the kernel never looks at the inner one.
  r = test::run(M() + " verify --cert " + q(crt("rsa")) + " " + q(m));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            m +
                ": loads-tainted (ENOKEY): module with unavailable key: no trusted key matches the signer; module "
                "verification failed: signature and/or required key missing - tainting kernel" +
                test::kLoadScope + "\n");
}

TEST_F(Stacked, StripOneOrAll) {
  const std::string m = twice();
  auto r = test::run(M() + " strip " + q(m));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, m + ": signature removed (3455 bytes of CMS)\n");
  EXPECT_EQ(r.err, "modsign: " + m + ": note: 1 more signature inside (strip --all removes them)\n");
  EXPECT_EQ(test::slurp(m).size(), kContent + kRsa + kTrailer);
  const std::string m2 = twice("m2.ko");
  r = test::run(M() + " strip --all " + q(m2));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, m2 + ": 2 signatures removed (3859 bytes of CMS)\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(test::slurp(m2), test::pattern(kContent));
  StripOptions o;
  o.all = true;
  const std::string m3 = twice("m3.ko");
  const StripReport rep = strip_module_file(m3, o);
  EXPECT_EQ(rep.signatures_removed, 2u);
  EXPECT_EQ(rep.content_size, kContent);
  EXPECT_EQ(rep.cms_size, kRsa + kMl);
}

TEST_F(Stacked, ReplaceReplacesEveryOne) {
  const std::string m = twice();
  auto r =
      test::run(M() + " sign --replace --hash sha256 --key " + q(key("rsa")) + " --cert " + q(crt("rsa")) + " " + q(m));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "modsign: " + m + ": note: replaced 2 stacked signatures\n");
  const Bytes b = test::slurp(m);
  ASSERT_EQ(b.size(), kContent + kRsa + kTrailer);
  EXPECT_EQ(Bytes(b.begin(), b.begin() + kContent), test::pattern(kContent));
  r = test::run(M() + " verify --cert " + q(crt("rsa")) + " " + q(m));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  ASSERT_EQ(test::run(M() + " extract -o " + q(d_ / "m.p7s") + " " + q(m)).status, 0);
  expect_openssl_verifies(d_ / "m.p7s", test::pattern(kContent), crt("rsa"));
  // The streaming pass strips the whole stack too (without the note), byte for byte the same.
  const std::string s = twice("s.ko");
  r = test::run(M() + " sign --replace --stream-above 1 --hash sha256 --key " + q(key("rsa")) + " --cert " +
                q(crt("rsa")) + " " + q(s));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, s + ": signed (RSA, no signedAttrs, sha256, CMS 404 bytes, streamed)\n");
  EXPECT_EQ(test::slurp(s), b);
}

TEST_F(Stacked, LegacyTrailer) {
  const std::string m = d_ / "m.ko";
  test::spit(m, test::pattern(kContent));
  ASSERT_EQ(test::run(sign_file("", "sha256", "rsa", m)).status, 0);
  Bytes b = test::slurp(m);
  ASSERT_EQ(b.size(), 4540u);
  b[b.size() - kTrailer + 2] = 1;  // id_type PKEY_ID_X509
  b[b.size() - kTrailer + 1] = 4;  // hash
  test::spit(m, b);
  auto r = test::run(M() + " verify --cert " + q(crt("rsa")) + " " + q(m));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            m +
                ": loads-tainted (ENOPKG): module with unsupported crypto: not signed with expected PKCS#7 "
                "message (id_type 1); module verification failed: signature and/or required key missing - tainting "
                "kernel" +
                test::kLoadScope + "\n");
  r = test::run(M() + " strip " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + m +
                       ": cannot strip the signature: ENOPKG not signed with expected PKCS#7 message (id_type 1)\n");
  EXPECT_EQ(test::slurp(m), b);
  const std::string note =
      "note: removed a legacy trailer (id_type 1 X509, algo 0, hash 4, signer_len 0, key_id_len 0): the kernel "
      "refuses it (mod_check_sig)";
  r = test::run(M() + " strip --legacy -o " + q(d_ / "s.ko") + " " + q(m));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "modsign: " + m + ": " + note + "\n");
  EXPECT_EQ(test::slurp(d_ / "s.ko"), test::pattern(kContent));
  // sign --replace refuses it without --legacy, re-signs it with.
  r = test::run(M() + " sign --replace --key " + q(key("ml")) + " --cert " + q(crt("ml")) + " " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(test::slurp(m), b);
  r = test::run(M() + " sign --replace --legacy --key " + q(key("ml")) + " --cert " + q(crt("ml")) + " " + q(m));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "modsign: " + m + ": " + note + "\n");
  EXPECT_EQ(test::slurp(m).size(), kContent + kMl + kTrailer);
  EXPECT_EQ(test::run(M() + " verify --cert " + q(crt("ml")) + " " + q(m)).status, 0);
}

TEST_F(Stacked, SignFileCompressedModules) {
  struct Case {
    std::string name, fmt, compress, decompress, magic;
  };
  for (const Case& c : {Case{"m.ko.xz", "xz", "xz --check=crc32 -c", "xz -dc", "fd377a585a00"},
                        Case{"m.ko.zst", "zstd", "zstd -q -c", "zstd -q -dc", "28b52ffd"},
                        Case{"blob", "gzip", "gzip -n -c", "gzip -dc", "1f8b"}}) {
    const std::string plain = d_ / "plain.ko", m = d_ / c.name;
    test::spit(plain, test::pattern(kContent));
    ASSERT_EQ(test::run(c.compress + " " + q(plain) + " > " + q(m)).status, 0);
    auto r = test::run(sign_file("", "sha256", "rsa", m));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "modsign: " + m + ": note: " + c.fmt +
                         "-compressed module: signed the decompressed image (what the kernel checks) and compressed it "
                         "again as " +
                         c.fmt + "\n");
    const Bytes stored = test::slurp(m);
    EXPECT_EQ(to_hex(ByteView(stored).first(c.magic.size() / 2)), c.magic) << c.name;
    r = test::run(c.decompress + " " + q(m) + " > " + q(d_ / "out.ko"));
    ASSERT_EQ(r.status, 0) << r.err;
    const Bytes image = test::slurp(d_ / "out.ko");
    ASSERT_EQ(image.size(), kContent + kRsa + kTrailer) << c.name;
    EXPECT_EQ(Bytes(image.begin(), image.begin() + kContent), test::pattern(kContent));
    r = test::run(M() + " verify --cert " + q(crt("rsa")) + " " + q(m));
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(r.out.rfind(m + ": loads (OK): signature verified: rsa signature", 0), 0u) << r.out;
    ASSERT_EQ(test::run(M() + " extract -o " + q(d_ / "x.p7s") + " " + q(m)).status, 0);
    expect_openssl_verifies(d_ / "x.p7s", test::pattern(kContent), crt("rsa"));
    // -d: the detached signature of the decompressed image, the module untouched.
    const std::string m2 = d_ / ("d-" + c.name);
    ASSERT_EQ(test::run(c.compress + " " + q(plain) + " > " + q(m2)).status, 0);
    const Bytes before = test::slurp(m2);
    r = test::run(sign_file("-d ", "sha256", "rsa", m2));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "modsign: " + m2 + ": note: " + c.fmt +
                         "-compressed module: the signature covers the decompressed image (what the kernel checks)\n");
    EXPECT_EQ(test::slurp(m2), before);
    EXPECT_EQ(test::slurp(m2 + ".p7s").size(), kRsa);
    expect_openssl_verifies(m2 + ".p7s", test::pattern(kContent), crt("rsa"));
  }
}

}  // namespace
