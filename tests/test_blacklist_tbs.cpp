// The system blacklist's tbs: entries: H(TBSCertificate) confirmed with the openssl command
// line on both kernel profiles, `modsign blacklist entry/check` on certificates, and the
// kernel's print-cert-tbs-hash.sh.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "blacklist_support.hpp"

using namespace modsign;
using namespace modsign::test::blacklist_tests;

// ------------------------------------------------------------------ TBS hashes (§9 item 41)

namespace {
struct CertFiles {
  std::string pem, der;
};
CertFiles make_cert(const test::TempDir& d, const std::string& name, const std::string& md) {
  CertFiles c{d / (name + ".pem"), d / (name + ".der")};
  sh(test::openssl() + " req -x509 -newkey rsa:2048 -nodes -keyout " + q(d / (name + ".key")) + " -out " + q(c.pem) +
     " -" + md + " -subj /CN=" + name + " -days 30 2>&1");
  sh(test::openssl() + " x509 -in " + q(c.pem) + " -outform DER -out " + q(c.der));
  return c;
}
/// H(TBSCertificate) with the openssl command line only: asn1parse -strparse 4 writes the
/// TBSCertificate TLV (offset 4 after the outer SEQUENCE's 4-byte header), dgst hashes it.
std::string openssl_tbs_hash(const test::TempDir& d, const std::string& der, const std::string& md) {
  sh(test::openssl() + " asn1parse -inform DER -in " + q(der) + " -strparse 4 -noout -out " + q(d / "tbs.der"));
  const std::string out = sh(test::openssl() + " dgst -" + md + " -r " + q(d / "tbs.der"));
  return first_word(out);
}
}  // namespace

TEST(BlacklistTbs, Sha256OfTbsCertificateMatchesOpensslOnBothProfiles) {
  test::TempDir d;
  auto c = make_cert(d, "tbs256", "sha256");
  auto cert = crypto::Certificate::from_der(test::slurp(c.der));
  ASSERT_TRUE(cert.ok());
  const std::string want = "tbs:" + openssl_tbs_hash(d, c.der, "sha256");
  ASSERT_EQ(want.size(), 68u);
  EXPECT_EQ(certificate_entry(*cert, cms::KernelModel::v7_0()), want);
  EXPECT_EQ(certificate_entry(*cert, cms::KernelModel::v6()), want);  // its own hash is SHA-256 too
  auto r = test::run(M() + " blacklist entry " + q(c.pem));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "\"" + want + "\"\n");
  r = test::run(M() + " blacklist entry --kernel v6 " + q(c.der));
  EXPECT_EQ(r.out, "\"" + want + "\"\n");
  // A PEM bundle: one item per certificate, named FILE#N.
  auto c2 = make_cert(d, "second", "sha256");
  sh("cat " + q(c.pem) + " " + q(c2.pem) + " > " + q(d / "bundle.pem"));
  const std::string want2 = "tbs:" + openssl_tbs_hash(d, c2.der, "sha256");
  r = test::run(M() + " blacklist entry " + q(d / "bundle.pem"));
  EXPECT_EQ(r.out, "\"" + want + "\",\n\"" + want2 + "\"\n");
  test::spit(d / "l2", "\"" + want2 + "\"");
  r = test::run(M() + " blacklist check --list " + q(d / "l2") + " " + q(d / "bundle.pem"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1), (d / "bundle.pem") + "#1: not stopped\n");
  EXPECT_EQ(r.out.find((d / "bundle.pem") + "#2: stopped by " + want2 + " (" + (d / "l2") + " line 1): "),
            r.out.find('\n') + 1);
}

TEST(BlacklistTbs, Item41Sha384WithRsaCertificate) {
  test::TempDir d;
  auto c = make_cert(d, "tbs384", "sha384");
  auto cert = crypto::Certificate::from_der(test::slurp(c.der));
  ASSERT_TRUE(cert.ok());
  const std::string s256 = "tbs:" + openssl_tbs_hash(d, c.der, "sha256");
  const std::string s384 = "tbs:" + openssl_tbs_hash(d, c.der, "sha384");
  EXPECT_EQ(s384.size(), 4u + 96u);
  EXPECT_EQ(certificate_entry(*cert, cms::KernelModel::v7_0()), s256);
  EXPECT_EQ(certificate_entry(*cert, cms::KernelModel::v6()), s384);
  // Listed by its SHA-256: 7.0 blacklists it, v6 does not (it looks up the SHA-384).
  Sources s;
  ASSERT_TRUE(load_hash_list(s, "l", parse_hash_list("\"" + s256 + "\"")).ok());
  auto v7 = check_certificate(*cert, s, cms::KernelModel::v7_0());
  ASSERT_TRUE(v7.stopped());
  EXPECT_EQ(v7.stops[0].entry, s256);
  EXPECT_EQ(v7.stops[0].err, KErr::ekeyrejected);
  EXPECT_EQ(v7.stops[0].origins[0].where, "line 1");
  EXPECT_FALSE(check_certificate(*cert, s, cms::KernelModel::v6()).stopped());
  // And the other way round.
  Sources s6;
  ASSERT_TRUE(load_hash_list(s6, "l", parse_hash_list("\"" + s384 + "\"")).ok());
  EXPECT_TRUE(check_certificate(*cert, s6, cms::KernelModel::v6()).stopped());
  EXPECT_FALSE(check_certificate(*cert, s6, cms::KernelModel::v7_0()).stopped());
  // The CLI: exit 1 when stopped, JSON per item.
  test::spit(d / "l", "\"" + s256 + "\"\n");
  auto r = test::run(M() + " blacklist check --list " + q(d / "l") + " " + q(c.pem));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find(" (")), c.pem + ": stopped by " + s256);
  r = test::run(M() + " blacklist check --kernel v6 --json --list " + q(d / "l") + " " + q(c.pem));
  EXPECT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stopped"], false);
  EXPECT_EQ(j["entry"], s384);
  EXPECT_EQ(j["kind"], "certificate");
}

TEST(BlacklistTbs, MlDsaCertificateHasNoV6Entry) {
  test::TempDir d;
  sh(M() + " keygen --algo ml-dsa-44 --out " + q(d / "k.pem") + " --cert-out " + q(d / "k.crt"));
  auto certs = crypto::Certificate::load_all(d / "k.crt");
  ASSERT_TRUE(certs.ok());
  const auto& cert = (*certs)[0];
  EXPECT_EQ(certificate_entry(cert, cms::KernelModel::v6()), std::nullopt);
  EXPECT_EQ(certificate_entry(cert, cms::KernelModel::v7_0()),
            "tbs:" + to_hex(crypto::digest(crypto::HashAlgo::sha256, cert.tbs())));
  auto r = test::run(M() + " blacklist entry --kernel v6 " + q(d / "k.crt"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("no tbs: entry under v6"), std::string::npos) << r.err;
}

// The kernel's tools/certs/print-cert-tbs-hash.sh (which Kconfig recommends) hashes the TBS
// with the certificate's own signature hash: the v6 key, not the 7.0 one.  With OpenSSL 3
// its `openssl x509 -in -` cannot read standard input, so it prints the hash of nothing
// and exits 1.
TEST(BlacklistTbs, KernelPrintCertTbsHashScript) {
  const std::string script = test::kernel_source_dir() + "/tools/certs/print-cert-tbs-hash.sh";
  if (test::run("test -r " + q(script)).status != 0) GTEST_SKIP() << "kernel source not unpacked";
  test::TempDir d;
  auto c = make_cert(d, "script384", "sha384");
  auto cert = crypto::Certificate::from_der(test::slurp(c.der));
  ASSERT_TRUE(cert.ok());
  const std::string bin = test::openssl_bin();
  const std::string dir = bin.substr(0, bin.rfind('/'));
  auto r = test::run("PATH=" + q(dir) + ":$PATH bash " + q(script) + " " + q(c.pem));
  const std::string empty384 = "tbs:" + to_hex(crypto::digest(crypto::HashAlgo::sha384, Bytes{}));
  if (r.status == 0) {
    EXPECT_EQ(r.out, *certificate_entry(*cert, cms::KernelModel::v6()));
  } else {
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, empty384) << r.err;
  }
  EXPECT_NE(r.out, *certificate_entry(*cert, cms::KernelModel::v7_0()));
}
