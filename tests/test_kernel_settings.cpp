// The target kernel's settings (include/modsign/kernel_config.hpp; `sign` and `verify`
// --kernel-build / --kernel-config): fake build trees made here from the committed
// fragments of tests/kernel/config-fragments/ (the .config of the 7.2.13 test kernels with
// and without CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA, Debian 13's 6.12), so that
// the tests need no kernel tree.  Exact values, exact warning lines.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <modsign/modsign.hpp>

#include "test_support.hpp"

using namespace modsign;
using test::q;

namespace {

std::string fragment(const std::string& name) {
  std::ifstream in(test::source_dir() + "/tests/kernel/config-fragments/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class KernelSettings : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const std::string o = test::openssl();
    std::string cmd;
    for (const auto& [name, alg] :
         {std::pair{"rsa", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048"}, std::pair{"ml", "-algorithm ML-DSA-65"}}) {
      const std::string k = *dir_ / (std::string(name) + ".pem"), c = *dir_ / (std::string(name) + ".crt");
      cmd += o + " genpkey " + alg + " -out " + q(k) + " && chmod 600 " + q(k) + " && " + o + " req -x509 -new -key " +
             q(k) + " -subj '/CN=api sign/O=modsign' -days 30 -set_serial 0x0123456789abcdef -out " + q(c) + " && ";
    }
    auto r = test::run(cmd + "true");
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string file(const std::string& n) { return *dir_ / n; }

  /// A build tree DIR/<name>: .config from `frag`, a Makefile saying 7.2 (unless
  /// `makefile` is false), certs/signing_key.pem and signing_key.x509 (DER) of the RSA key.
  std::string tree(const std::string& name, const std::string& frag, bool makefile = true) {
    const std::string t = d_ / name;
    std::filesystem::create_directories(t + "/certs");
    test::spit(t + "/.config", fragment(frag));
    if (makefile) test::spit(t + "/Makefile", std::string("# SPDX\nVERSION = 7\nPATCHLEVEL = 2\nSUBLEVEL = 13\n"));
    auto r = test::run("cp " + q(file("rsa.pem")) + " " + q(t + "/certs/signing_key.pem") + " && " + test::openssl() +
                       " x509 -in " + q(file("rsa.crt")) + " -outform DER -out " + q(t + "/certs/signing_key.x509"));
    EXPECT_EQ(r.status, 0) << r.err;
    return t;
  }
  std::string module(const std::string& name = "m.ko") {
    const std::string p = d_ / name;
    test::spit(p, test::pattern(4096));
    return p;
  }
  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

TEST_F(KernelSettings, ReadsBuildTree) {
  const std::string t = tree("waive", "7.2.13-waive.config");
  const KernelConfig c = read_kernel_build(t);
  EXPECT_EQ(c.source, t + "/.config");
  EXPECT_EQ(c.build_dir, t);
  EXPECT_EQ(c.version, "7.2");
  EXPECT_EQ(c.sig_hash, "sha256");
  EXPECT_EQ(c.sig_key, t + "/certs/signing_key.pem");
  EXPECT_EQ(c.sig_cert, t + "/certs/signing_key.x509");
  EXPECT_EQ(c.value("CONFIG_CRYPTO_MLDSA"), "y");
  EXPECT_EQ(c.value("MODULE_SIG_KEY"), "certs/signing_key.pem");
  EXPECT_EQ(c.value("MODULE_SIG_FORCE"), "");  // "# ... is not set"
  EXPECT_EQ(c.symbols.size(), 15u);
  const KernelProfile p = kernel_profile_of(c);
  EXPECT_EQ(p.name(), "v7.0");
  EXPECT_TRUE(p.waive_mldsa_authattrs());
  EXPECT_FALSE(p.enforce());
  EXPECT_FALSE(kernel_profile_of(read_kernel_build(tree("nowaive", "7.2.13-nowaive.config"))).waive_mldsa_authattrs());
}

// Linux 7.3-rc7 (tools/build-test-kernel --version 7.3): the version from the Makefile (its
// EXTRAVERSION "-rc7" is not part of it) or, without one, from the .config header; the
// profile stays "v7.0" (kernel-semantics §10.1: 7.3 changes nothing modsign predicts).
TEST_F(KernelSettings, Linux73TreeTakesTheV70Profile) {
  const std::string t = tree("rc7", "7.3.0-rc7-nowaive.config", false);
  test::spit(t + "/Makefile", std::string("# SPDX\nVERSION = 7\nPATCHLEVEL = 3\nSUBLEVEL = 0\nEXTRAVERSION = -rc7\n"));
  const KernelConfig c = read_kernel_build(t);
  EXPECT_EQ(c.version, "7.3");
  EXPECT_EQ(c.sig_hash, "sha256");
  EXPECT_EQ(c.value("CONFIG_CRYPTO_MLDSA"), "y");
  EXPECT_EQ(c.value("MODULE_SIG_KEY_TYPE_MLDSA_65"), "");  // absent: OpenSSL 3.0 configured it
  EXPECT_EQ(c.symbols.size(), 14u);
  const KernelProfile p = kernel_profile_of(c);
  EXPECT_EQ(p.name(), "v7.0");
  EXPECT_FALSE(p.waive_mldsa_authattrs());
  EXPECT_FALSE(p.enforce());
  EXPECT_EQ(p.module_decompress(), "none");
  EXPECT_EQ(read_kernel_build(tree("rc7-hdr", "7.3.0-rc7-nowaive.config", false)).version, "7.3");
  // An ML-DSA signature with signedAttrs: this kernel (no waiver) refuses it, as 7.2.13 does.
  EXPECT_EQ(kernel_config_warnings(c, "s", "mldsa65", "sha512", true),
            std::vector<std::string>{"warning: " + c.source +
                                     ": s: ML-DSA with signedAttrs is refused (EKEYREJECTED) without "
                                     "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y"});
  EXPECT_EQ(kernel_config_warnings(c, "s", "mldsa65", "sha512", false), std::vector<std::string>{});
  // The configuration decides the waiver: --waive-mldsa-authattrs cannot turn it on.
  auto r = test::run(test::modsign_cli() + " verify --kernel-build " + q(t) + " --waive-mldsa-authattrs --cert " +
                     q(file("rsa.crt")) + " " + q(module()));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "modsign: --waive-mldsa-authattrs: " + t +
                       "/.config does not set CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y, and the "
                       "configuration decides (leave out one of them)\n");
}

TEST_F(KernelSettings, VersionSourcesAndKeyForms) {
  // Debian 13: no Makefile here, the .config header says 6.12 -> "v6".
  const std::string deb = tree("deb", "debian13-6.12.config", false);
  KernelConfig c = read_kernel_build(deb);
  EXPECT_EQ(c.version, "6.12");
  EXPECT_EQ(kernel_profile_of(c).name(), "v6");
  // CONFIG_MODULE_DECOMPRESS=y with CONFIG_MODULE_COMPRESS_XZ=y: the kernel decompresses xz.
  EXPECT_EQ(kernel_profile_of(c).module_decompress(), "xz");
  // --waive-mldsa-authattrs with a 6.x configuration names that file, not --kernel v7.0,
  // which was not given (a hostile review of session 19).
  const std::string m = module();
  auto r = test::run(test::modsign_cli() + " verify --kernel-build " + q(deb) + " --waive-mldsa-authattrs --cert " +
                     q(file("rsa.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "modsign: --waive-mldsa-authattrs: " + deb +
                       "/.config configures Linux 6.12, which has no ML-DSA waiver (7.0 and later)\n");
  // The 7.2.13 test kernels have no CONFIG_MODULE_COMPRESS at all.
  EXPECT_EQ(kernel_profile_of(read_kernel_build(tree("nowaive2", "7.2.13-nowaive.config"))).module_decompress(),
            "none");
  // auto.conf alone, kernel.release: 6.1 -> "v6.1"; enforce from CONFIG_MODULE_SIG_FORCE; a
  // pkcs11: URI and an absolute path are taken as they are.
  const std::string t = d_ / "hdr";
  std::filesystem::create_directories(t + "/include/config");
  test::spit(t + "/include/config/auto.conf",
             std::string("CONFIG_MODULE_SIG=y\nCONFIG_MODULE_SIG_FORCE=y\nCONFIG_MODULE_SIG_HASH=\"sha512\"\n"
                         "CONFIG_MODULE_SIG_KEY=\"pkcs11:token=kernel;object=signing\"\n"));
  test::spit(t + "/include/config/kernel.release", std::string("6.1.0-57-cloud-amd64\n"));
  c = read_kernel_build(t);
  EXPECT_EQ(c.source, t + "/include/config/auto.conf");
  EXPECT_EQ(c.version, "6.1");
  EXPECT_EQ(c.sig_key, "pkcs11:token=kernel;object=signing");
  EXPECT_EQ(kernel_profile_of(c).name(), "v6.1");
  EXPECT_TRUE(kernel_profile_of(c).enforce());
  test::spit(t + "/include/config/auto.conf", std::string("CONFIG_MODULE_SIG_KEY=\"/etc/keys/k.pem\"\n"));
  EXPECT_EQ(read_kernel_build(t).sig_key, "/etc/keys/k.pem");
  // Errors.
  EXPECT_THROW(read_kernel_build(d_ / "none"), IoError);
  try {
    read_kernel_build(d_.path());
    FAIL();
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), d_.path() + ": no .config or include/config/auto.conf (not a kernel build tree)");
  }
  test::spit(d_ / "empty.config", std::string("# nothing\n"));
  try {
    read_kernel_config(d_ / "empty.config");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), d_ / "empty.config" + ": no CONFIG_ symbol (not a kernel configuration)");
  }
}

TEST_F(KernelSettings, Warnings) {
  const KernelConfig deb = read_kernel_build(tree("deb", "debian13-6.12.config", false));
  const KernelConfig nowaive = read_kernel_build(tree("nowaive", "7.2.13-nowaive.config"));
  const KernelConfig waive = read_kernel_build(tree("waive", "7.2.13-waive.config"));
  const std::string ds = deb.source, ns = nowaive.source, ws = waive.source;
  EXPECT_EQ(kernel_config_warnings(waive, "x", "RSA", "sha256", false), std::vector<std::string>{});
  EXPECT_EQ(kernel_config_warnings(waive, "x", "ML-DSA-65", "sha512", true), std::vector<std::string>{});
  EXPECT_EQ(kernel_config_warnings(deb, "x", "ECDSA-P384", "sha3-256", false), std::vector<std::string>{});
  EXPECT_EQ(kernel_config_warnings(deb, "the new signature", "ML-DSA-65", "sha512", false),
            std::vector<std::string>{"warning: " + ds +
                                     ": the new signature: Linux 6.12 knows no ML-DSA (added in 7.0; the kernel "
                                     "refuses it: ENOPKG)"});
  EXPECT_EQ(kernel_config_warnings(nowaive, "s", "mldsa65", "sha512", true),
            std::vector<std::string>{"warning: " + ns +
                                     ": s: ML-DSA with signedAttrs is refused (EKEYREJECTED) without "
                                     "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y"});
  EXPECT_EQ(kernel_config_warnings(waive, "s", "rsa", "sha1", false),
            std::vector<std::string>{"warning: " + ws +
                                     ": s: sha1 is no module-signing choice of this kernel (CONFIG_MODULE_SIG_SHA1 is "
                                     "not set; Linux 7.x removed it)"});
  KernelConfig bare = waive;
  bare.set("CONFIG_CRYPTO_SHA3", "n");
  bare.set("CONFIG_CRYPTO_ECDSA", "m");
  bare.set("CONFIG_CRYPTO_MLDSA", "n");
  bare.set("CONFIG_CRYPTO_SHA512", "m");
  EXPECT_EQ(kernel_config_warnings(bare, "s", "ECDSA-P256", "sha3-384", false),
            (std::vector<std::string>{
                "warning: " + ws +
                    ": s: sha3-384 needs CONFIG_CRYPTO_SHA3=y, which is not set (the kernel refuses it: ENOPKG)",
                "warning: " + ws +
                    ": s: ECDSA needs CONFIG_CRYPTO_ECDSA=y, not =m (crypto_alloc_sig fails with ENOENT: a "
                    "trusted key of this type refuses the module, EKEYREJECTED, and a self-signed "
                    "certificate of this type is not loaded, ENOKEY)"}));
  EXPECT_EQ(
      kernel_config_warnings(bare, "s", "ML-DSA-87", "sha512", false),
      (std::vector<std::string>{"warning: " + ws +
                                    ": s: sha512 needs CONFIG_CRYPTO_SHA512=y, not =m (the digest must be built in to "
                                    "check module signatures)",
                                "warning: " + ws +
                                    ": s: ML-DSA needs CONFIG_CRYPTO_MLDSA=y, which is not set (crypto_alloc_sig fails "
                                    "with ENOENT: a trusted key of this type refuses the module, EKEYREJECTED, and a "
                                    "self-signed certificate of this type is not loaded, ENOKEY)"}));
  bare.set("CONFIG_MODULE_SIG", "n");
  EXPECT_EQ(kernel_config_warnings(bare, "s", "RSA", "sha256", false),
            std::vector<std::string>{"warning: " + ws +
                                     ": s: CONFIG_MODULE_SIG is not set: this kernel checks no module signature"});
}

TEST_F(KernelSettings, SignTakesHashKeyAndCertificateFromTheTree) {
  const std::string t = tree("waive", "7.2.13-waive.config");
  const std::string m = module();
  auto r = test::run(test::modsign_cli() + " sign --kernel-build " + q(t) + " " + q(m));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, m + ": signed (RSA, no signedAttrs, sha256, CMS 404 bytes)\n");
  EXPECT_EQ(test::slurp(m).size(), 4096u + 404 + 40);
  r = test::run(test::modsign_cli() + " info --json " + q(m));
  EXPECT_NE(r.out.find("\"sig_hashalgo\":\"sha256\""), std::string::npos) << r.out;
  r = test::run(test::modsign_cli() + " verify --kernel-build " + q(t) + " --cert " + q(t + "/certs/signing_key.x509") +
                " --json " + q(m));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"kernel\":\"v7.0\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"outcome\":\"loads\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"warnings\":[]"), std::string::npos) << r.out;
  // --hash wins over CONFIG_MODULE_SIG_HASH; --key over CONFIG_MODULE_SIG_KEY.
  const std::string m2 = module("m2.ko");
  r = test::run(test::modsign_cli() + " sign --kernel-config " + q(t + "/.config") + " --hash sha512 --key " +
                q(file("ml.pem")) + " --cert " + q(file("ml.crt")) + " --signed-attrs " + q(m2));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, m2 + ": signed (ML-DSA-65, signedAttrs, sha512, CMS 3564 bytes)\n");
  // Without --key nor --kernel-build; both tree options; --kernel with --kernel-build.
  r = test::run(test::modsign_cli() + " sign --kernel-config " + q(t + "/.config") + " " + q(m2));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "modsign: --key is required (or --kernel-build DIR, whose CONFIG_MODULE_SIG_KEY is used)\n"
            "Run 'modsign sign --help' for more information.\n");
  r = test::run(test::modsign_cli() + " sign --kernel-build " + q(t) + " --kernel-config " + q(t + "/.config") + " " +
                q(m2));
  EXPECT_EQ(r.status, 2);
  r = test::run(test::modsign_cli() + " verify --kernel v6 --kernel-build " + q(t) + " " + q(m2));
  EXPECT_EQ(r.status, 2);
  r = test::run(test::modsign_cli() + " sign --kernel-build " + q(d_ / "nothing") + " " + q(m2));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err,
            "modsign: " + d_ / "nothing" + ": no .config or include/config/auto.conf (not a kernel build tree)\n");
}

TEST_F(KernelSettings, WarnsWhenThatKernelRefuses) {
  const std::string nowaive = tree("nowaive", "7.2.13-nowaive.config");
  const std::string m = module();
  auto r = test::run(test::modsign_cli() + " sign --kernel-build " + q(nowaive) + " --key " + q(file("ml.pem")) +
                     " --cert " + q(file("ml.crt")) + " --hash sha512 --signed-attrs " + q(m));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "modsign: warning: " + nowaive +
                       "/.config: the new signature (ML-DSA-65, sha512, signedAttrs): ML-DSA with signedAttrs is "
                       "refused (EKEYREJECTED) without CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y\n");
  // verify takes that kernel's profile (no waiver): refused, and says why.
  r = test::run(test::modsign_cli() + " verify --kernel-build " + q(nowaive) + " --cert " + q(file("ml.crt")) + " " +
                q(m));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.rfind(m + ": refused (EKEYREJECTED): ", 0), 0u) << r.out;
  EXPECT_EQ(r.err, "modsign: warning: " + nowaive +
                       "/.config: the module's signature: ML-DSA with signedAttrs is refused (EKEYREJECTED) without "
                       "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y\n");
  const std::string waive = tree("waive", "7.2.13-waive.config");
  r = test::run(test::modsign_cli() + " verify --kernel-build " + q(waive) + " --cert " + q(file("ml.crt")) + " " +
                q(m));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  // Debian 13 (6.12): no ML-DSA at all.
  const std::string deb = tree("deb", "debian13-6.12.config", false);
  const std::string m2 = module("m2.ko");
  r = test::run(test::modsign_cli() + " sign --kernel-build " + q(deb) + " --key " + q(file("ml.pem")) + " --cert " +
                q(file("ml.crt")) + " " + q(m2));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, m2 + ": signed (ML-DSA-65, no signedAttrs, sha256, CMS 3455 bytes)\n");
  EXPECT_EQ(r.err, "modsign: warning: " + deb +
                       "/.config: the new signature (ML-DSA-65, sha256, no signedAttrs): Linux 6.12 knows no ML-DSA "
                       "(added in 7.0; the kernel refuses it: ENOPKG)\n");
}

// A 7.2 kernel built without CONFIG_CRYPTO_MLDSA (as Debian's 7.2.13 cloud kernel is:
// docs/conformance.md, where its parser still reads ML-DSA signatures, 05-unknown-mldsa65
// loads tainted with no PKCS7 line) has no "mldsa65" for crypto_alloc_sig() (ENOENT): a
// self-signed ML-DSA certificate never enters the keyring (x509_check_for_self_signed
// fails), so the module has no key (ENOKEY, tainted); an ML-DSA certificate issued by an
// RSA CA does enter it, and pkcs7_validate_trust_one() then refuses the module (EKEYREJECTED).
TEST_F(KernelSettings, KernelWithoutMldsaHasNoKeyOrRefuses) {
  std::string cfg = fragment("7.2.13-nowaive.config");
  ASSERT_NE(cfg.find("CONFIG_CRYPTO_MLDSA=y\n"), std::string::npos);
  cfg.replace(cfg.find("CONFIG_CRYPTO_MLDSA=y\n"), 22, "# CONFIG_CRYPTO_MLDSA is not set\n");
  const std::string t = tree("nomldsa", "7.2.13-nowaive.config");
  test::spit(t + "/.config", cfg);
  EXPECT_EQ(kernel_profile_of(read_kernel_build(t)).absent_sig_algos(), std::vector<std::string>{"mldsa"});
  EXPECT_EQ(kernel_profile_of(read_kernel_build(tree("nowaive", "7.2.13-nowaive.config"))).absent_sig_algos(),
            std::vector<std::string>{});
  // The digests: the built configuration has neither SM3 nor Streebog; =m counts as there.
  EXPECT_EQ(kernel_profile_of(read_kernel_build(t)).absent_hashes(), (std::vector<std::string>{"sm3", "streebog"}));
  {
    const std::string with = tree("gost", "7.2.13-nowaive.config");
    test::spit(with + "/.config", cfg + "CONFIG_CRYPTO_STREEBOG=m\nCONFIG_CRYPTO_SM3=y\n");
    EXPECT_EQ(kernel_profile_of(read_kernel_build(with)).absent_hashes(), std::vector<std::string>{});
  }
  const std::string m = module();
  auto r = test::run(test::modsign_cli() + " sign -q --key " + q(file("ml.pem")) + " --cert " + q(file("ml.crt")) +
                     " " + q(m));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string warning =
      "modsign: warning: " + t +
      "/.config: the module's signature: ML-DSA needs "
      "CONFIG_CRYPTO_MLDSA=y, which is not set (crypto_alloc_sig fails with ENOENT: a trusted "
      "key of this type refuses the module, EKEYREJECTED, and a self-signed certificate of this "
      "type is not loaded, ENOKEY)\n";
  r = test::run(test::modsign_cli() + " verify --kernel-build " + q(t) + " --cert " + q(file("ml.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(r.out.rfind(m + ": loads-tainted (ENOKEY): ", 0), 0u) << r.out;
  EXPECT_EQ(
      r.err,
      "modsign: note: " + file("ml.crt") +
          " certificate 1 is not loaded by a v7.0 kernel (ENOENT: "
          "self-signature: crypto_alloc_sig(mldsa65): no such algorithm (CONFIG_CRYPTO_MLDSA is not built in))\n" +
          warning)
      << r.err;
  // The kernel with ML-DSA: the same module loads.
  r = test::run(test::modsign_cli() + " verify --kernel-build " + q(d_ / "nowaive") + " --cert " + q(file("ml.crt")) +
                " " + q(m));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  // An ML-DSA certificate issued by the RSA key: loaded, and then refused.
  const std::string o = test::openssl();
  r = test::run(o + " req -new -key " + q(file("ml.pem")) + " -subj '/CN=ml leaf/O=modsign' -out " +
                q(d_ / "leaf.csr") + " && " + o + " x509 -req -in " + q(d_ / "leaf.csr") + " -CA " +
                q(file("rsa.crt")) + " -CAkey " + q(file("rsa.pem")) + " -days 30 -set_serial 7 -out " +
                q(d_ / "leaf.crt"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string m2 = module("m2.ko");
  r = test::run(test::modsign_cli() + " sign -q --key " + q(file("ml.pem")) + " --cert " + q(d_ / "leaf.crt") + " " +
                q(m2));
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run(test::modsign_cli() + " verify --kernel-build " + q(t) + " --cert " + q(d_ / "leaf.crt") + " " + q(m2));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(r.out,
            m2 + ": refused (EKEYREJECTED): Sig 1: crypto_alloc_sig(mldsa65): no such algorithm "
                 "(CONFIG_CRYPTO_MLDSA is not built in) [kernel v7.0+decompress=none+no-mldsa+no-sm3+no-streebog]\n");
  EXPECT_EQ(r.err, warning);
}

// --kernel-lacks says what --kernel-config reads from "# CONFIG_CRYPTO_MLDSA is not set" (Debian
// unstable's 7.2 cloud kernel): the self-signed ML-DSA certificate is never loaded (ENOENT).
TEST_F(KernelSettings, KernelLacksFlagIsTheConfigsAbsentAlgorithm) {
  const std::string m = module();
  auto r = test::run(test::modsign_cli() + " sign -q --key " + q(file("ml.pem")) + " --cert " + q(file("ml.crt")) +
                     " " + q(m));
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run(test::modsign_cli() + " verify --kernel v7.0 --kernel-lacks mldsa --cert " + q(file("ml.crt")) + " " +
                q(m));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(r.out.rfind(m + ": loads-tainted (ENOKEY): ", 0), 0u) << r.out;
  EXPECT_EQ(r.err,
            "modsign: note: " + file("ml.crt") +
                " certificate 1 is not loaded by a v7.0 kernel (ENOENT: "
                "self-signature: crypto_alloc_sig(mldsa65): no such algorithm (CONFIG_CRYPTO_MLDSA is not built in))\n")
      << r.err;
  // Another algorithm missing changes nothing for this module.
  r = test::run(test::modsign_cli() + " verify --kernel v7.0 --kernel-lacks ecdsa --cert " + q(file("ml.crt")) + " " +
                q(m));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  r = test::run(test::modsign_cli() + " verify --kernel v7.0 --kernel-lacks dsa --cert " + q(file("ml.crt")) + " " +
                q(m));
  EXPECT_EQ(r.status, 2) << r.out << r.err;
}

// A CONFIG_MODULE_SIG_HASH that names no digest is that file's error (its line), exit 3.
TEST_F(KernelSettings, BadModuleSigHashNamesTheConfigLine) {
  const std::string t = tree("md5", "7.2.13-waive.config");
  test::spit(t + "/.config", std::string("# Linux/x86 7.2.13 Kernel Configuration\nCONFIG_MODULE_SIG=y\n"
                                         "CONFIG_CRYPTO_RSA=y\nCONFIG_MODULE_SIG_HASH=\"md5\"\n"));
  const KernelConfig c = read_kernel_build(t);
  EXPECT_EQ(c.sig_hash, "md5");
  EXPECT_EQ(c.sig_hash_line, 4u);
  const std::string m = module();
  auto r = test::run(test::modsign_cli() + " sign --kernel-build " + q(t) + " " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "modsign: " + t +
                       "/.config:4: CONFIG_MODULE_SIG_HASH=\"md5\" is not a digest modsign signs with "
                       "(sha1|sha224|sha256|sha384|sha512|sha3-256|sha3-384|sha3-512)\n");
  EXPECT_EQ(test::slurp(m), test::pattern(4096));
  // --hash given: the tree's hash is not used, so not checked.
  r = test::run(test::modsign_cli() + " sign -q --kernel-build " + q(t) + " --hash sha256 " + q(m));
  EXPECT_EQ(r.status, 0) << r.err;
}

// A kernel without CONFIG_MODULE_SIG checks nothing and loads every module untainted
// (module_sig_check() is the stub): verify refuses to predict for it (exit 3), rather than
// the loads-tainted a hostile review found.
TEST_F(KernelSettings, KernelWithoutModuleSigIsNotPredicted) {
  const std::string t = tree("nosig", "7.2.13-waive.config");
  test::spit(t + "/.config",
             std::string("# Linux/x86 7.2.13 Kernel Configuration\nCONFIG_X86_64=y\nCONFIG_CRYPTO_RSA=y\n"));
  const auto modelled = module_sig_modelled(read_kernel_build(t));
  ASSERT_FALSE(modelled);
  EXPECT_EQ(modelled.error().code, KErr::eopnotsupp);
  EXPECT_EQ(modelled.error().reason, Error::Reason::unpredictable);
  KernelConfig with;
  with.set("CONFIG_MODULE_SIG", "y");
  EXPECT_TRUE(module_sig_modelled(with));
  const std::string m = module();
  auto r = test::run(test::modsign_cli() + " sign -q --key " + q(file("rsa.pem")) + " --cert " + q(file("rsa.crt")) +
                     " " + q(m));
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run(test::modsign_cli() + " verify --kernel-build " + q(t) + " --cert " + q(file("rsa.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "modsign: " + t +
                       "/.config: CONFIG_MODULE_SIG is not set: this kernel checks no module signature "
                       "and loads every module untainted (not modelled)\n");
}

}  // namespace

// The "sm3" shash is CONFIG_CRYPTO_SM3 on 7.x; on 6.x that symbol is the library alone and
// the hash is CONFIG_CRYPTO_SM3_GENERIC or an architecture's driver (hostile review).
TEST(KernelSettingsDigests, Sm3FromTheConfigurationOfItsGeneration) {
  auto lacks_sm3 = [](const std::string& version, std::map<std::string, std::string> symbols) {
    KernelConfig c;
    c.version = version;
    for (const auto& [name, text] : symbols) c.set(name, text);
    const auto h = kernel_profile_of(c).absent_hashes();
    return std::find(h.begin(), h.end(), "sm3") != h.end();
  };
  EXPECT_TRUE(lacks_sm3("6.1.176", {{"CONFIG_CRYPTO_SM3", "y"}}));
  EXPECT_FALSE(lacks_sm3("6.1.176", {{"CONFIG_CRYPTO_SM3", "y"}, {"CONFIG_CRYPTO_SM3_GENERIC", "m"}}));
  EXPECT_FALSE(lacks_sm3("6.12.117", {{"CONFIG_CRYPTO_SM3_AVX_X86_64", "m"}}));
  EXPECT_FALSE(lacks_sm3("7.2.13", {{"CONFIG_CRYPTO_SM3", "m"}}));
  EXPECT_TRUE(lacks_sm3("7.2.13", {{"CONFIG_CRYPTO_SM3_GENERIC", "y"}}));
}

// kconfig reads a bool or tristate by its first character (scripts/kconfig/confdata.c
// conf_set_sym_val): a hand-edited "CONFIG_X86_64=y # note" is y (a hostile review found
// modsign reading it as unset); strings, ints and hexes keep their values.
TEST(KernelSettingsConfigText, BoolsAreReadByTheirFirstCharacter) {
  const test::TempDir d;
  test::spit(d / "config", std::string("CONFIG_X86_64=y # the architecture\nCONFIG_MODULE_SIG=yes\n"
                                       "CONFIG_CRYPTO_SM3=m  # module\nCONFIG_KEXEC_FILE=n\n"
                                       "CONFIG_MODULE_SIG_HASH=\"sha512\"\nCONFIG_NR_CPUS=64\nCONFIG_PHYS=0x1000000\n"
                                       "CONFIG_LOCALVERSION=\"y\"\n"));
  const KernelConfig c = read_kernel_config(d / "config");
  EXPECT_EQ(c.value("X86_64"), "y");
  EXPECT_EQ(c.value("MODULE_SIG"), "y");
  EXPECT_EQ(c.value("CRYPTO_SM3"), "m");
  EXPECT_EQ(c.value("KEXEC_FILE"), "n");
  EXPECT_EQ(c.value("MODULE_SIG_HASH"), "sha512");
  EXPECT_EQ(c.sig_hash, "sha512");
  EXPECT_EQ(c.value("NR_CPUS"), "64");
  EXPECT_EQ(c.value("PHYS"), "0x1000000");
  EXPECT_EQ(c.value("LOCALVERSION"), "y");  // a string, quoted: kept
  EXPECT_EQ(kernel_profile_of(c).machine(), Machine::x86_64);
  EXPECT_TRUE(module_sig_modelled(c));
}

// A bool written quoted (CONFIG_MODULE_SIG_FORCE="y", a hand edit; kconfig never writes it)
// is ignored by conf_set_sym_val with a warning: the symbol keeps its default, not set here.
// modsign took it as y (issue 30's hostile review of session 18).
TEST(KernelSettingsConfigText, AQuotedBoolIsNotSet) {
  const test::TempDir d;
  test::spit(d / "config", std::string("# Linux/x86_64 7.2.13 Kernel Configuration\nCONFIG_X86_64=y\n"
                                       "CONFIG_MODULE_SIG=y\nCONFIG_MODULE_SIG_FORCE=\"y\"\n"
                                       "CONFIG_CRYPTO_RSA=\"y\"\nCONFIG_CRYPTO_SM3=\"m\"\n"
                                       "CONFIG_MODULE_SIG_HASH=\"sha512\"\n"));
  const KernelConfig c = read_kernel_config(d / "config");
  EXPECT_EQ(c.value("MODULE_SIG_FORCE"), "y");  // shown as the text, unquoted
  ASSERT_EQ(c.assignments.at("CONFIG_MODULE_SIG_FORCE").size(), 1u);
  EXPECT_EQ(c.assignments.at("CONFIG_MODULE_SIG_FORCE")[0].line, 4u);
  EXPECT_EQ(c.assignments.at("CONFIG_MODULE_SIG_FORCE")[0].text, "\"y\"");
  const KernelProfile p = kernel_profile_of(c);
  EXPECT_FALSE(p.enforce());
  EXPECT_EQ(p.absent_sig_algos(), (std::vector<std::string>{"rsa", "ecdsa", "mldsa"}));
  EXPECT_EQ(p.absent_hashes(), (std::vector<std::string>{"sm3", "streebog"}));
  EXPECT_EQ(c.sig_hash, "sha512");
  // The same lines unquoted are y and m.
  test::spit(d / "config2", std::string("# Linux/x86_64 7.2.13 Kernel Configuration\nCONFIG_X86_64=y\n"
                                        "CONFIG_MODULE_SIG=y\nCONFIG_MODULE_SIG_FORCE=y\nCONFIG_CRYPTO_RSA=y\n"
                                        "CONFIG_CRYPTO_SM3=m\n"));
  const KernelProfile q = kernel_profile_of(read_kernel_config(d / "config2"));
  EXPECT_TRUE(q.enforce());
  EXPECT_EQ(q.absent_sig_algos(), (std::vector<std::string>{"ecdsa", "mldsa"}));
  EXPECT_EQ(q.absent_hashes(), (std::vector<std::string>{"streebog"}));
}

// conf_read_simple() and conf_set_sym_val(), line by line, as a hostile review of session 19
// found modsign reading them otherwise: the last assignment valid for the symbol's type wins.
TEST(KernelSettingsConfigText, AssignmentsAreReadInOrderByType) {
  const test::TempDir d;
  auto read = [&](const std::string& lines) {
    test::spit(d / "config",
               "# Linux/x86_64 7.2.13 Kernel Configuration\nCONFIG_X86_64=y\nCONFIG_MODULE_SIG=y\n" + lines);
    return read_kernel_config(d / "config");
  };
  auto force = [&](const std::string& lines) { return kernel_profile_of(read(lines)).enforce(); };
  // A later "is not set" line wins over y; a later quoted "y" is ignored and y stays.
  EXPECT_FALSE(force("CONFIG_MODULE_SIG_FORCE=y\n# CONFIG_MODULE_SIG_FORCE is not set\n"));
  EXPECT_TRUE(force("CONFIG_MODULE_SIG_FORCE=y\nCONFIG_MODULE_SIG_FORCE=\"y\"\n"));
  EXPECT_TRUE(force("# CONFIG_MODULE_SIG_FORCE is not set\nCONFIG_MODULE_SIG_FORCE=y\n"));
  // 'm' is no value of a bool (MODULE_SIG_FORCE): ignored, and y stays; a tristate
  // (CRYPTO_RSA) takes it, and is then not built in.
  EXPECT_TRUE(force("CONFIG_MODULE_SIG_FORCE=y\nCONFIG_MODULE_SIG_FORCE=m\n"));
  EXPECT_FALSE(force("CONFIG_MODULE_SIG_FORCE=m\n"));
  auto rsa_absent = [&](const std::string& lines) {
    const auto absent = kernel_profile_of(read(lines)).absent_sig_algos();
    return std::find(absent.begin(), absent.end(), "rsa") != absent.end();
  };
  EXPECT_TRUE(rsa_absent("CONFIG_CRYPTO_RSA=y\nCONFIG_CRYPTO_RSA=m\n"));
  EXPECT_FALSE(rsa_absent("CONFIG_CRYPTO_RSA=m\nCONFIG_CRYPTO_RSA=y\n"));
  // Not assignments of the symbol: leading spaces ("unexpected data"), a space before '='
  // (the symbol "MODULE_SIG_FORCE "), an "is not set" line with a carriage return.
  EXPECT_FALSE(force("  CONFIG_MODULE_SIG_FORCE=y\n"));
  EXPECT_FALSE(force("CONFIG_MODULE_SIG_FORCE = y\n"));
  EXPECT_TRUE(force("CONFIG_MODULE_SIG_FORCE=y\n# CONFIG_MODULE_SIG_FORCE is not set\r\n"));
  EXPECT_TRUE(force("CONFIG_MODULE_SIG_FORCE=y\r\n"));  // y is read by its first character
  // A string is read up to its closing quote; an unquoted one is ignored (the earlier value,
  // or not set), so it is never cut to one character.
  EXPECT_EQ(read("CONFIG_MODULE_SIG_HASH=\"sha512\" # note\n").sig_hash, "sha512");
  const KernelConfig md5 = read("CONFIG_MODULE_SIG_HASH=\"sha256\"\nCONFIG_MODULE_SIG_HASH=md5\n");
  EXPECT_EQ(md5.sig_hash, "sha256");
  EXPECT_EQ(md5.sig_hash_line, 4u);
  EXPECT_EQ(read("CONFIG_MODULE_SIG_HASH=md5\n").sig_hash, "");
  EXPECT_EQ(read("CONFIG_MODULE_SIG_HASH=\"sha\\\"512\"\n").sig_hash, "sha\"512");  // an escape undone
  EXPECT_EQ(read("CONFIG_MODULE_SIG_HASH=\"sha512\n").sig_hash, "");                // no closing quote
  // The key: an unquoted path is ignored, and the Kconfig default is used.
  const std::string b = d / "build";
  std::filesystem::create_directories(b);
  test::spit(b + "/.config", std::string("# Linux/x86_64 7.2.13 Kernel Configuration\nCONFIG_X86_64=y\n"
                                         "CONFIG_MODULE_SIG=y\nCONFIG_MODULE_SIG_KEY=mykey.pem\n"));
  EXPECT_EQ(read_kernel_build(b).sig_key, b + "/certs/signing_key.pem");
  test::spit(b + "/.config", std::string("# Linux/x86_64 7.2.13 Kernel Configuration\nCONFIG_X86_64=y\n"
                                         "CONFIG_MODULE_SIG=y\nCONFIG_MODULE_SIG_KEY=\"mykey.pem\"\n"));
  EXPECT_EQ(read_kernel_build(b).sig_key, b + "/mykey.pem");
}
