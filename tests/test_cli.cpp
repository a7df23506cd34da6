// The modsign command line: outputs, exit statuses and the bad-input contract
// (clear message naming the file, documented exit status, inputs unchanged).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cms/signed_data.hpp"
#include "crypto/crypto.hpp"
#include "module/compression.hpp"
#include "module/module_signature.hpp"
#include "test_support.hpp"
#include <modsign/version.hpp>

using namespace modsign;
using test::q;

namespace {

std::string M() { return test::modsign_cli(); }

// One key set for the whole file: ML-DSA-65 key+cert in one file and separately, plus an
// ECDSA key, made by `modsign keygen` itself.
class Cli : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    auto r = test::run(M() + " keygen --out " + q(*dir_ / "mldsa.pem") + " --cert-out " + q(*dir_ / "mldsa.crt") +
                       " --subject 'CN=CLI test key,O=modsign'");
    ASSERT_EQ(r.status, 0) << r.err;
    r = test::run(M() + " keygen --algo ml-dsa-65 --out " + q(*dir_ / "combined.pem"));
    ASSERT_EQ(r.status, 0) << r.err;
    r = test::run(M() + " keygen --algo ecdsa-p256 --out " + q(*dir_ / "ec.pem") + " --cert-out " + q(*dir_ / "ec.crt"));
    ASSERT_EQ(r.status, 0) << r.err;
    r = test::run(M() + " keygen --algo rsa-2048 --out " + q(*dir_ / "rsa.pem") + " --cert-out " + q(*dir_ / "rsa.crt"));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string key(const std::string& n) { return *dir_ / n; }

  // A fresh unsigned "module" in the per-test directory.
  std::string module(const std::string& name = "mod.ko", std::size_t n = 4096) {
    const std::string p = d_ / name;
    test::spit(p, test::pattern(n));
    return p;
  }
  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

std::string sha256_file(const std::string& p) { return to_hex(crypto::digest(crypto::HashAlgo::sha256, test::slurp(p))); }

}  // namespace

TEST_F(Cli, KeygenWritesSeedFormKeyAndKernelStyleCertificate) {
  struct stat st {};
  ASSERT_EQ(::stat(key("mldsa.pem").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto k = crypto::PrivateKey::load(key("mldsa.pem"), std::nullopt);
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(k->algo(), crypto::KeyAlgo::ml_dsa_65);
  EXPECT_EQ(k->pkcs8_der()->size(), 54u);  // RFC 9881 seed form
  // Key first, then the certificate, in the combined file (like certs/signing_key.pem).
  const Bytes combined = test::slurp(key("combined.pem"));
  const std::string text(combined.begin(), combined.end());
  EXPECT_EQ(text.find("-----BEGIN PRIVATE KEY-----"), 0u);
  EXPECT_NE(text.find("-----BEGIN CERTIFICATE-----"), std::string::npos);
  // The openssl command line reads both, and sees the kernel's extensions.
  auto r = test::run(test::openssl() + " x509 -in " + q(key("mldsa.crt")) + " -noout -text");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Signature Algorithm: ML-DSA-65"), std::string::npos);
  EXPECT_NE(r.out.find("Subject: CN=CLI test key, O=modsign"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("X509v3 Basic Constraints: critical\n                CA:FALSE"), std::string::npos);
  EXPECT_NE(r.out.find("X509v3 Key Usage: \n                Digital Signature"), std::string::npos);
  EXPECT_NE(r.out.find("X509v3 Subject Key Identifier"), std::string::npos);
  EXPECT_NE(r.out.find("X509v3 Authority Key Identifier"), std::string::npos);
  r = test::run(test::openssl() + " verify -CAfile " + q(key("mldsa.crt")) + " " + q(key("mldsa.crt")));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  r = test::run(test::openssl() + " pkey -in " + q(key("mldsa.pem")) + " -noout -text");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.find("ML-DSA-65 Private-Key:\nseed:"), 0u) << r.out;
}

TEST_F(Cli, KeygenUsageErrors) {
  auto r = test::run(M() + " keygen --algo ml-dsa-66 --out " + q(d_ / "x.pem"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown --algo 'ml-dsa-66'"), std::string::npos);
  EXPECT_EQ(test::run(M() + " keygen").status, 2);
  EXPECT_EQ(test::run(M()).status, 2);
  EXPECT_EQ(test::run(M() + " frobnicate").status, 2);
}

TEST_F(Cli, SignInfoVerifyDefaultForm) {
  const std::string m = module();
  auto r = test::run(M() + " sign --key " + q(key("mldsa.pem")) + " --cert " + q(key("mldsa.crt")) + " " + q(m));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, m + ": signed (ML-DSA-65, no signedAttrs, sha512, CMS 3471 bytes)\n");
  r = test::run(M() + " info --json " + q(m));
  ASSERT_EQ(r.status, 0);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["signed"], true);
  EXPECT_EQ(j["sig_id"], "PKCS#7");
  EXPECT_EQ(j["signer"], "CLI test key");
  EXPECT_EQ(j["sig_hashalgo"], "sha512");
  EXPECT_EQ(j["signature_algorithm"], "ML-DSA-65");
  EXPECT_EQ(j["signed_attrs"], false);
  EXPECT_EQ(j["signature_length"], 3309);
  EXPECT_EQ(j["content_length"], 4096);
  EXPECT_EQ(j["cms_length"], 3471);
  EXPECT_EQ(j["size"], 4096 + 3471 + 40);
  auto cert = crypto::Certificate::load_all(key("mldsa.crt"));
  EXPECT_EQ(j["sig_key"], to_colon_hex(cert->front().serial()));
  r = test::run(M() + " verify --cert " + q(key("mldsa.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, m + ": loads (OK): signature verified: mldsa65 signature, trusted key \"CLI test key\"\n");
  // Both backends, and the key file holding the certificate too.
  r = test::run(M() + " verify --backend botan --cert " + q(key("ec.crt")) + " --cert " + q(key("mldsa.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 0) << r.out;
  // Signed with the combined file (key + certificate), no --cert.
  const std::string m2 = module("mod2.ko");
  r = test::run(M() + " sign --key " + q(key("combined.pem")) + " --signed-attrs --keyid " + q(m2));
  ASSERT_EQ(r.status, 0) << r.err;
  // signedAttrs on a module: refused by a default 7.0 kernel, loaded with the waiver.
  r = test::run(M() + " verify --json --cert " + q(key("combined.pem")) + " " + q(m2));
  EXPECT_EQ(r.status, 1);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "refused");
  EXPECT_EQ(j["errno"], "EKEYREJECTED");
  EXPECT_EQ(j["reason"], "Invalid module sig (has authattrs)");
  r = test::run(M() + " verify --json --waive-mldsa-authattrs --cert " + q(key("combined.pem")) + " " + q(m2));
  EXPECT_EQ(r.status, 0) << r.out;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["path"], m2);
  EXPECT_EQ(j["kernel"], "v7.0");
  EXPECT_EQ(j["outcome"], "loads");
  EXPECT_EQ(j["errno"], "OK");
  EXPECT_EQ(j["log"][0], "Waived invalid module sig (has authattrs)");
  ASSERT_EQ(j["signers"].size(), 1u);
  EXPECT_EQ(j["signers"][0]["signed_attrs"], true);
  EXPECT_EQ(j["signers"][0]["digest_algo"], "sha512");
  EXPECT_EQ(j["signers"][0]["sig_algo"], "mldsa65");
  EXPECT_EQ(j["signers"][0]["sid"].get<std::string>().rfind("skid ", 0), 0u);
  r = test::run(M() + " info " + q(m2));
  EXPECT_NE(r.out.find("signer_id_type:      subjectKeyIdentifier\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("signed_attrs:        yes\n"), std::string::npos);
}

TEST_F(Cli, VerifyFailuresGiveErrnoAndExit1) {
  const std::string m = module();
  ASSERT_EQ(test::run(M() + " sign --key " + q(key("mldsa.pem")) + " --cert " + q(key("mldsa.crt")) + " " + q(m)).status, 0);
  // Wrong certificate: ENOKEY, a soft error: loads tainted, refused when enforcing.
  auto r = test::run(M() + " verify --cert " + q(key("ec.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, m + ": loads-tainted (ENOKEY): module with unavailable key: no trusted key matches the signer; module "
                       "verification failed: signature and/or required key missing - tainting kernel\n");
  r = test::run(M() + " verify --enforce --cert " + q(key("ec.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, m + ": refused (EKEYREJECTED): Loading of module with unavailable key is rejected (no trusted key "
                       "matches the signer)\n");
  r = test::run(M() + " verify --lockdown --cert " + q(key("ec.crt")) + " " + q(m));
  EXPECT_EQ(r.out.rfind(m + ": refused (EPERM): Lockdown: ", 0), 0u) << r.out;
  // Content changed after signing: EKEYREJECTED.
  Bytes b = test::slurp(m);
  b[100] ^= 1;
  test::spit(m, b);
  r = test::run(M() + " verify --cert " + q(key("mldsa.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, m + ": refused (EKEYREJECTED): Sig 1: signature does not verify\n");
  // Unsigned: ENODATA.
  const std::string u = module("unsigned.ko");
  r = test::run(M() + " verify --cert " + q(key("mldsa.crt")) + " " + q(u));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, u + ": loads-tainted (ENODATA): unsigned module: no signature marker; module verification failed: "
                       "signature and/or required key missing - tainting kernel\n");
  // JSON form of a failure.
  r = test::run(M() + " verify --json --cert " + q(key("mldsa.crt")) + " " + q(u));
  EXPECT_EQ(r.status, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "loads-tainted");
  EXPECT_EQ(j["errno"], "ENODATA");
  EXPECT_EQ(j["signers"].size(), 0u);
}

TEST_F(Cli, AlreadySignedIsRefusedUnlessReplace) {
  const std::string m = module();
  const std::string sign = M() + " sign --key " + q(key("mldsa.pem")) + " --cert " + q(key("mldsa.crt")) + " ";
  ASSERT_EQ(test::run(sign + q(m)).status, 0);
  const std::string before = sha256_file(m);
  auto r = test::run(sign + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + m + ": module is already signed (use --replace to strip the old signature and re-sign)\n");
  EXPECT_EQ(sha256_file(m), before);
  r = test::run(sign + "--replace --signed-attrs " + q(m));
  ASSERT_EQ(r.status, 0) << r.err;
  // Content is the original 4096 bytes, signed once.
  const Bytes signed_mod = test::slurp(m);
  auto split = module::split(signed_mod);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(Bytes(split->content.begin(), split->content.end()), test::pattern(4096));
}

TEST_F(Cli, BadInputsLeaveFilesUnchanged) {
  const std::string sign = M() + " sign --key " + q(key("mldsa.pem")) + " --cert " + q(key("mldsa.crt")) + " ";
  // Missing module.
  auto r = test::run(sign + q(d_ / "missing.ko"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + (d_ / "missing.ko") + ": No such file or directory\n");
  // Missing key.
  r = test::run(M() + " sign --key " + q(d_ / "nokey.pem") + " " + q(module()));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + (d_ / "nokey.pem") + ": No such file or directory\n");
  // Compressed module without --recompress: refused, unchanged.
  const Bytes xz = module::compress(test::pattern(5000), module::Compression::xz);
  test::spit(d_ / "c.ko.xz", xz);
  r = test::run(sign + q(d_ / "c.ko.xz"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + (d_ / "c.ko.xz") +
                       ": xz-compressed module: use --recompress (or decompress it, sign the .ko, then recompress; the "
                       "kernel checks the signature inside the decompressed image)\n");
  EXPECT_EQ(test::slurp(d_ / "c.ko.xz"), xz);
  // Wrong key type for the certificate (ML-DSA key, ECDSA certificate), and a same-type
  // mismatch (ML-DSA key, another ML-DSA certificate): refused before anything is written.
  const std::string m = module();
  for (const auto& cert : {key("ec.crt"), key("combined.pem")}) {
    r = test::run(M() + " sign --key " + q(key("mldsa.pem")) + " --cert " + q(cert) + " " + q(m));
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.err, "modsign: " + cert + ": no certificate matches the private key " + key("mldsa.pem") + "\n");
    EXPECT_EQ(test::slurp(m), test::pattern(4096));
  }
  // A certificate file that is not a certificate.
  test::spit(d_ / "junk.crt", std::string("hello\n"));
  r = test::run(M() + " verify --cert " + q(d_ / "junk.crt") + " " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + (d_ / "junk.crt") + ": no X.509 certificate found (neither DER nor PEM CERTIFICATE)\n");
  // A key file that is not a key.
  r = test::run(M() + " sign --key " + q(key("mldsa.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err.rfind("modsign: " + key("mldsa.crt") + ": no usable private key in PEM input", 0), 0u) << r.err;
  EXPECT_EQ(test::slurp(m), test::pattern(4096));
  // --dest with two modules is a usage error.
  r = test::run(sign + "--dest " + q(d_ / "o.ko") + " " + q(m) + " " + q(m));
  EXPECT_EQ(r.status, 2);
  // No directory entries left behind by any of the above (no temporary files).
  auto ls = test::run("ls -A " + q(d_.path()));
  EXPECT_EQ(ls.out, "c.ko.xz\njunk.crt\nmod.ko\n");
}

TEST_F(Cli, MalformedSignaturesAreVerdictsAndCannotBeReplaced) {
  const std::string m = module();
  ASSERT_EQ(test::run(M() + " sign --key " + q(key("mldsa.pem")) + " --cert " + q(key("mldsa.crt")) + " " + q(m)).status, 0);
  const Bytes good = test::slurp(m);
  auto split = module::split(good);
  ASSERT_TRUE(split.ok());
  // Truncated CMS: the trailer's sig_len matches a CMS cut short by 10 bytes.
  Bytes truncated = module::append_signature(split->content, split->cms.first(split->cms.size() - 10));
  test::spit(m, truncated);
  auto r = test::run(M() + " verify --cert " + q(key("mldsa.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.rfind(m + ": refused (EBADMSG): ASN.1 decoder: ", 0), 0u) << r.out;
  r = test::run(M() + " info " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err.rfind("modsign: " + m + ": EBADMSG: malformed PKCS#7", 0), 0u) << r.err;
  EXPECT_EQ(test::slurp(m), truncated);
  // Non-zero legacy field (hash byte) in struct module_signature.
  Bytes legacy = good;
  legacy[legacy.size() - 28 - 12 + 1] = 4;
  test::spit(m, legacy);
  r = test::run(M() + " verify --cert " + q(key("mldsa.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, m + ": refused (EBADMSG): PKCS#7 signature info has unexpected non-zero params\n");
  r = test::run(M() + " sign --replace --key " + q(key("mldsa.pem")) + " --cert " + q(key("mldsa.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + m +
                       ": cannot strip the existing signature: EBADMSG PKCS#7 signature info has unexpected non-zero "
                       "params\n");
  EXPECT_EQ(test::slurp(m), legacy);
}

TEST_F(Cli, P7sOutputs) {
  const std::string m = module();
  const std::string sign = M() + " sign --key " + q(key("rsa.pem")) + " --cert " + q(key("rsa.crt")) + " --hash sha256 ";
  ASSERT_EQ(test::run(sign + "--p7s-only " + q(m)).status, 0);
  EXPECT_EQ(test::slurp(m), test::pattern(4096));  // module untouched
  const Bytes p7s = test::slurp(m + ".p7s");
  ASSERT_EQ(test::run(sign + "--p7s --dest " + q(d_ / "out.ko") + " " + q(m)).status, 0);
  EXPECT_EQ(test::slurp(m), test::pattern(4096));
  // RSA is deterministic: the same SignedData both times, and it is what the module carries.
  EXPECT_EQ(test::slurp(d_ / "out.ko.p7s"), p7s);  // named after the module written
  EXPECT_EQ(test::slurp(d_ / "out.ko"), module::append_signature(test::pattern(4096), p7s));
}

TEST_F(Cli, SignFileCommandLine) {
  // modsign sign-file HASH KEY X509 MODULE [DEST]: no signedAttrs (CMS_NOATTR), and for
  // RSA byte-identical to `openssl cms -sign -noattr` appended with the trailer.
  const std::string m = module();
  auto r = test::run(M() + " sign-file sha256 " + q(key("rsa.pem")) + " " + q(key("rsa.crt")) + " " + q(m) + " " +
                     q(d_ / "dest.ko"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(test::slurp(m), test::pattern(4096));
  test::spit(d_ / "content.bin", test::pattern(4096));
  r = test::run(test::openssl() + " cms -sign -binary -noattr -nocerts -md sha256 -in " + q(d_ / "content.bin") +
                " -signer " + q(key("rsa.crt")) + " -inkey " + q(key("rsa.pem")) + " -outform DER -out " +
                q(d_ / "ref.p7s"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::slurp(d_ / "dest.ko"), module::append_signature(test::pattern(4096), test::slurp(d_ / "ref.p7s")));
  // In place, ML-DSA, -k (SKID) and -p (keep MODULE.p7s).
  r = test::run(M() + " sign-file -pk sha512 " + q(key("mldsa.pem")) + " " + q(key("mldsa.crt")) + " " + q(m));
  ASSERT_EQ(r.status, 0) << r.err;
  const Bytes signed_mod = test::slurp(m);
  auto split = module::split(signed_mod);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(Bytes(split->cms.begin(), split->cms.end()), test::slurp(m + ".p7s"));
  auto sd = cms::parse(split->cms);
  ASSERT_TRUE(sd.ok());
  EXPECT_EQ(sd->version, 3);
  EXPECT_FALSE(sd->signers[0].signed_attrs.has_value());
  r = test::run(M() + " verify --cert " + q(key("mldsa.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 0) << r.out;
  // -d: only the detached signature.
  const std::string m2 = module("m2.ko");
  r = test::run(M() + " sign-file -d sha512 " + q(key("mldsa.pem")) + " " + q(key("mldsa.crt")) + " " + q(m2));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::slurp(m2), test::pattern(4096));
  EXPECT_EQ(test::slurp(m2 + ".p7s").size(), 3471u);
  // -s RAWSIG: append a ready-made PKCS#7.
  r = test::run(M() + " sign-file -s " + q(m2 + ".p7s") + " sha512 " + q(key("mldsa.crt")) + " " + q(m2));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::slurp(m2), module::append_signature(test::pattern(4096), test::slurp(m2 + ".p7s")));
  // Usage: exit 2; errors: exit 1 (scripts/sign-file's statuses).
  EXPECT_EQ(test::run(M() + " sign-file sha512 " + q(key("mldsa.pem"))).status, 2);
  r = test::run(M() + " sign-file sha512 " + q(key("mldsa.pem")) + " " + q(key("mldsa.crt")) + " " + q(d_ / "none.ko"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "modsign: " + (d_ / "none.ko") + ": No such file or directory\n");
  r = test::run(M() + " sign-file md4 " + q(key("mldsa.pem")) + " " + q(key("mldsa.crt")) + " " + q(m2));
  EXPECT_EQ(r.status, 1);
}

TEST(RealModules, DebianCloudKernelModulesVerifyAndResign) {
  auto f = test::run(q(std::string(MODSIGN_SOURCE_DIR) + "/tools/fetch-debian-kernel"));
  if (f.status == 77) GTEST_SKIP() << "no Debian kernel package reachable: " << f.err;
  ASSERT_EQ(f.status, 0) << f.err;
  auto field = [&](const std::string& k) {
    auto pos = f.out.find(k + "=");
    return f.out.substr(pos + k.size() + 1, f.out.find('\n', pos) - pos - k.size() - 1);
  };
  const std::string cert = field("CERT"), modules = field("MODULES");
  auto list = test::run("find " + q(modules) + " -name '*.ko' -type f | sort | head -n 25");
  ASSERT_EQ(list.status, 0);
  std::vector<std::string> mods;
  for (std::size_t pos = 0, nl; (nl = list.out.find('\n', pos)) != std::string::npos; pos = nl + 1)
    mods.push_back(list.out.substr(pos, nl - pos));
  ASSERT_EQ(mods.size(), 25u);
  std::string args;
  for (const auto& m : mods) args += " " + q(m);
  auto r = test::run(test::modsign_cli() + " verify --cert " + q(cert) + args);
  EXPECT_EQ(r.status, 0) << r.out;
  std::size_t ok = 0;
  const std::string loads = ": loads (OK): signature verified: rsa signature, trusted key \"Build time autogenerated kernel key\"\n";
  for (std::size_t pos = 0; (pos = r.out.find(loads, pos)) != std::string::npos; ++pos) ++ok;
  EXPECT_EQ(ok, 25u) << r.out;
  // Both kernel profiles load them; without the certificate they are ENOKEY: tainted, or
  // refused when signatures are enforced.
  r = test::run(test::modsign_cli() + " verify --kernel v6 --cert " + q(cert) + args);
  EXPECT_EQ(r.status, 0) << r.out;
  r = test::run(test::modsign_cli() + " verify --json" + args);
  EXPECT_EQ(r.status, 1);
  std::size_t tainted = 0;
  for (std::size_t pos = 0, nl; (nl = r.out.find('\n', pos)) != std::string::npos; pos = nl + 1) {
    auto jj = nlohmann::json::parse(r.out.substr(pos, nl - pos));
    tainted += jj["outcome"] == "loads-tainted" && jj["errno"] == "ENOKEY";
  }
  EXPECT_EQ(tainted, 25u) << r.out;
  r = test::run(test::modsign_cli() + " verify --enforce " + q(mods[0]));
  EXPECT_EQ(r.out, mods[0] + ": refused (EKEYREJECTED): Loading of module with unavailable key is rejected (no trusted "
                             "key matches the signer)\n");
  r = test::run(test::modsign_cli() + " info --json " + q(mods[0]));
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["sig_hashalgo"], "sha256");
  EXPECT_EQ(j["signer"], "Build time autogenerated kernel key");
  EXPECT_EQ(j["signature_algorithm"], "RSA");
  EXPECT_EQ(j["signed_attrs"], false);
  EXPECT_EQ(j["signature_length"], 512);

  // Re-sign one real module with ML-DSA-65 in both forms; confirm with the openssl CLI.
  test::TempDir d;
  ASSERT_EQ(test::run(test::modsign_cli() + " keygen --out " + q(d / "k.pem") + " --cert-out " + q(d / "c.pem")).status, 0);
  const auto orig_split_file = test::slurp(mods[0]);
  auto orig = module::split(orig_split_file);
  ASSERT_TRUE(orig.ok());
  test::spit(d / "content.bin", orig->content);
  for (bool attrs : {false, true}) {
    const std::string out = d / (attrs ? "attrs.ko" : "plain.ko");
    r = test::run(test::modsign_cli() + " sign --replace --key " + q(d / "k.pem") + " --cert " + q(d / "c.pem") +
                  (attrs ? " --signed-attrs" : "") + " --dest " + q(out) + " " + q(mods[0]));
    ASSERT_EQ(r.status, 0) << r.err;
    r = test::run(test::modsign_cli() + " verify --backend botan --cert " + q(d / "c.pem") +
                  (attrs ? " --waive-mldsa-authattrs " : " ") + q(out));
    EXPECT_EQ(r.status, 0) << r.out;
    const Bytes signed_mod = test::slurp(out);
    auto split = module::split(signed_mod);
    ASSERT_TRUE(split.ok());
    EXPECT_EQ(Bytes(split->content.begin(), split->content.end()), Bytes(orig->content.begin(), orig->content.end()));
    if (attrs) {
      test::spit(d / "sig.p7s", split->cms);
      r = test::run(test::openssl() + " cms -verify -binary -inform DER -in " + q(d / "sig.p7s") + " -content " +
                    q(d / "content.bin") + " -certfile " + q(d / "c.pem") + " -nointern -noverify -out /dev/null");
      EXPECT_EQ(r.status, 0) << r.err;
    } else {
      auto sd = cms::parse(split->cms);
      ASSERT_TRUE(sd.ok());
      test::spit(d / "raw.sig", sd->signers[0].signature);
      r = test::run(test::openssl() + " pkeyutl -verify -rawin -certin -inkey " + q(d / "c.pem") + " -in " +
                    q(d / "content.bin") + " -sigfile " + q(d / "raw.sig"));
      EXPECT_EQ(r.status, 0) << r.out << r.err;
    }
  }
}

TEST_F(Cli, NonRegularFilesAndDestinations) {
  const std::string sign = M() + " sign --key " + q(key("rsa.pem")) + " --cert " + q(key("rsa.crt")) + " ";
  // A FIFO as input is refused at once (no hang), a directory too.
  ASSERT_EQ(test::run("mkfifo " + q(d_ / "fifo")).status, 0);
  auto r = test::run(sign + q(d_ / "fifo"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + (d_ / "fifo") + ": is a FIFO, not a regular file\n");
  r = test::run(M() + " info " + q(d_.path()));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d_.path() + ": is a directory\n");
  // A FIFO as --dest is not replaced.
  const std::string m = module();
  r = test::run(sign + "--dest " + q(d_ / "fifo") + " " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + (d_ / "fifo") + ": is a FIFO, not a regular file; not replacing it\n");
  EXPECT_EQ(test::run("test -p " + q(d_ / "fifo")).status, 0);
  // A symbolic link as --dest: its target is written, the link stays.
  test::spit(d_ / "target.ko", std::string("old"));
  ASSERT_EQ(test::run("ln -s target.ko " + q(d_ / "link.ko")).status, 0);
  r = test::run(sign + "--dest " + q(d_ / "link.ko") + " " + q(m));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::run("test -L " + q(d_ / "link.ko")).status, 0);
  EXPECT_TRUE(module::has_marker(test::slurp(d_ / "target.ko")));
  // Owner and group survive signing in place (the tests run as root in CI).
  if (::geteuid() == 0) {
    ASSERT_EQ(test::run("chown 65534:65534 " + q(m)).status, 0);
    ASSERT_EQ(test::run(sign + q(m)).status, 0);
    struct stat st {};
    ASSERT_EQ(::stat(m.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u);
    EXPECT_EQ(st.st_gid, 65534u);
  }
  // No temporary files left anywhere.
  EXPECT_EQ(test::run("ls -A " + q(d_.path()) + " | grep -c modsign").out, "0\n");
}

TEST_F(Cli, SignRefusesWhatKernelsRefuse) {
  const std::string m = module();
  auto r = test::run(M() + " sign --key " + q(key("mldsa.pem")) + " --cert " + q(key("mldsa.crt")) +
                     " --signed-attrs --hash sha256 " + q(m));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "modsign: ML-DSA with --signed-attrs needs --hash sha512: kernels refuse any other digest there "
                   "(crypto/asymmetric_keys/public_key.c)\n");
  EXPECT_EQ(test::slurp(m), test::pattern(4096));
  // keygen with the same file for key and certificate would lose the key.
  r = test::run(M() + " keygen --out " + q(d_ / "k.pem") + " --cert-out " + q(d_ / "k.pem"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(test::run("test -e " + q(d_ / "k.pem")).status, 1);
  r = test::run(M() + " keygen --days 4000000 --out " + q(d_ / "k.pem"));
  EXPECT_EQ(r.status, 2);
}

TEST_F(Cli, SignFileOptionsAfterOperandsAsGetopt) {
  // GNU getopt permutes: "sign-file sha256 KEY X509 MODULE -p" is "-p sha256 ...".
  const std::string m = module();
  auto r = test::run(M() + " sign-file sha256 " + q(key("rsa.pem")) + " " + q(key("rsa.crt")) + " " + q(m) + " -p");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(module::has_marker(test::slurp(m)));
  EXPECT_EQ(test::run("test -f " + q(m + ".p7s")).status, 0);
  EXPECT_EQ(test::run("test -e " + q(d_ / "-p")).status, 1);
  // -sp RAWSIG: -s and -p are flags, the raw signature is the first operand.
  const std::string m2 = module("m2.ko");
  r = test::run(M() + " sign-file -s " + q(m + ".p7s") + " sha256 " + q(key("rsa.crt")) + " " + q(m2));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(test::slurp(m2), module::append_signature(test::pattern(4096), test::slurp(m + ".p7s")));
  EXPECT_EQ(test::run(M() + " sign-file -x sha256 a b c").status, 2);
}

// info --json: line N is input N, an unreadable or unparsable input included (as verify
// --json), each keyed by "path"; the status is that of the worst input (3).
TEST_F(Cli, InfoJsonOneLinePerInputInOrder) {
  const std::string plain = module("plain.ko");
  const std::string missing = d_ / "missing.ko";
  const std::string signed_mod = module("signed.ko");
  ASSERT_EQ(test::run(M() + " sign --key " + q(key("mldsa.pem")) + " --cert " + q(key("mldsa.crt")) + " " + q(signed_mod))
                .status,
            0);
  // A marker with a module_signature that claims more CMS bytes than the file holds.
  const std::string broken = d_ / "broken.ko";
  Bytes b = test::pattern(64);
  const Bytes tail = module::encode_module_signature(1000);
  b.insert(b.end(), tail.begin(), tail.end());
  b.insert(b.end(), module::kMarker.begin(), module::kMarker.end());
  test::spit(broken, b);
  auto r = test::run(M() + " info --json " + q(plain) + " " + q(missing) + " " + q(signed_mod) + " " + q(broken));
  EXPECT_EQ(r.status, 3);
  std::vector<nlohmann::json> lines;
  for (std::size_t pos = 0, nl; (nl = r.out.find('\n', pos)) != std::string::npos; pos = nl + 1)
    lines.push_back(nlohmann::json::parse(r.out.substr(pos, nl - pos)));
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0]["path"], plain);
  EXPECT_EQ(lines[0]["signed"], false);
  EXPECT_FALSE(lines[0].contains("file"));
  EXPECT_EQ(lines[1], nlohmann::json({{"path", missing}, {"error", missing + ": No such file or directory"}}));
  EXPECT_EQ(lines[2]["path"], signed_mod);
  EXPECT_EQ(lines[2]["signed"], true);
  EXPECT_EQ(lines[3]["path"], broken);
  ASSERT_TRUE(lines[3].contains("error")) << lines[3].dump();
  EXPECT_FALSE(lines[3].contains("signed"));
  // The messages stay on stderr, as without --json.
  EXPECT_NE(r.err.find("modsign: " + missing + ": No such file or directory\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("modsign: " + broken + ": "), std::string::npos) << r.err;
}

// --version: the library's version first (modsign::version(), MODSIGN_VERSION_STRING),
// then the OpenSSL and Botan in use.
TEST_F(Cli, VersionNamesModsignOpensslAndBotan) {
  auto r = test::run(M() + " --version");
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(r.out.substr(0, r.out.find('\n') + 1), "modsign 0.2.0\n");
  EXPECT_EQ(std::string(MODSIGN_VERSION_STRING), "0.2.0");
  EXPECT_NE(r.out.find("\nOpenSSL 3."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nBotan 3."), std::string::npos) << r.out;
}

TEST_F(Cli, JsonSurvivesInvalidUtf8) {
  const std::string bad = d_ / "bad\xff.ko";
  test::spit(bad, test::pattern(100));
  auto r = test::run(M() + " info --json " + q(bad) + " " + q(module()));
  EXPECT_EQ(r.status, 0) << r.err;
  const auto nl = r.out.find('\n');
  ASSERT_NE(nl, std::string::npos);
  auto j1 = nlohmann::json::parse(r.out.substr(0, nl));
  EXPECT_EQ(j1["path"], d_ / "bad\xef\xbf\xbd.ko");  // U+FFFD (the key was "file" before 0.2.0)
  auto j2 = nlohmann::json::parse(r.out.substr(nl + 1));
  EXPECT_EQ(j2["signed"], false);
}

TEST_F(Cli, SameFileTwiceAndHardLinks) {
  const std::string m = module();
  const std::string sign = M() + " sign --key " + q(key("rsa.pem")) + " --cert " + q(key("rsa.crt")) + " ";
  auto r = test::run(sign + q(m) + " " + q(m) + " " + q(d_.path() + "/./mod.ko"));
  EXPECT_EQ(r.status, 0) << r.err;
  // Two "same file" lines and the batch summary (three inputs).
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 3) << r.err;
  EXPECT_EQ(r.err.rfind("modsign: " + m + ": skipped: same file as " + m + "; handled once\nmodsign: " + d_.path() +
                            "/./mod.ko: skipped: same file as " + m + "; handled once\n",
                        0),
            0u)
      << r.err;
  EXPECT_NE(r.err.find("\nmodsign: sign: 1 done, 0 failed, 2 skipped, 4096 bytes, "), std::string::npos) << r.err;
  const Bytes signed_module = test::slurp(m);  // split() returns views into it
  auto split = module::split(signed_module);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->content.size(), 4096u);  // signed once, not twice
  // A hard link is another name: it is signed on its own (the rename leaves the other name
  // with the old content, as documented).
  const std::string u = module("u.ko");
  ASSERT_EQ(test::run("ln " + q(u) + " " + q(d_ / "h.ko")).status, 0);
  r = test::run(sign + q(u) + " " + q(d_ / "h.ko"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(module::has_marker(test::slurp(u)));
  EXPECT_TRUE(module::has_marker(test::slurp(d_ / "h.ko")));
}

TEST_F(Cli, StreamingRefusesHugeClaimedSignatureWithoutReadingIt) {
  // A trailer claiming a 3 MiB PKCS#7: EMSGSIZE (the kernel's decoder limit), decided from
  // the trailer alone.
  Bytes f = test::pattern(4u << 20);
  const Bytes ms = module::encode_module_signature(3u << 20);
  f.insert(f.end(), ms.begin(), ms.end());
  f.insert(f.end(), module::kMarker.begin(), module::kMarker.end());
  test::spit(d_ / "huge.ko", f);
  auto r = test::run(M() + " verify --stream-above 0 " + q(d_ / "huge.ko"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, (d_ / "huge.ko") + ": refused (EMSGSIZE): PKCS#7 message of 3145728 bytes exceeds the ASN.1 "
                                      "decoder's 65535\n");
  r = test::run(M() + " digest --json " + q(d_ / "huge.ko"));
  EXPECT_EQ(nlohmann::json::parse(r.out)["kernel_digest"]["status"], "EMSGSIZE");
}

// keygen's summary line names the RSA size (user trial: "RSA key" for rsa-3072).
TEST_F(Cli, KeygenSummaryNamesTheRsaSize) {
  auto r = test::run(M() + " keygen --algo rsa-3072 --out " + q(d_ / "k.pem"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind((d_ / "k.pem") + ": RSA-3072 key, certificate CN = modsign module signing key serial ", 0), 0u)
      << r.out;
  auto k = crypto::PrivateKey::load(d_ / "k.pem", std::nullopt);
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(test::run(test::openssl() + " pkey -in " + q(d_ / "k.pem") + " -noout -text | head -1").out,
            "Private-Key: (3072 bit, 2 primes)\n");
  r = test::run(M() + " keygen --algo ml-dsa-44 --out " + q(d_ / "m.pem"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind((d_ / "m.pem") + ": ML-DSA-44 key, certificate ", 0), 0u) << r.out;
}

// printable(): names and messages reach the terminal with C0 controls, DEL, C1 controls
// (U+0080..U+009F, UTF-8 C2 80..C2 9F) and bytes 0x80..0x9f outside well-formed UTF-8
// (8-bit C1, 0x9b = CSI) as \xNN per byte; other well-formed UTF-8 (including characters
// whose continuation bytes are 0x80..0x9f: "€" E2 82 AC, "ț" C8 9B, "😀" F0 9F 98 80) and
// other bytes that are not UTF-8 (0xff, a truncated lead byte) are printed as they are.
// Checked on stdout (info's "file:" line) and on stderr ("modsign: FILE: ...").
TEST_F(Cli, NamesEscapeC0AndC1Controls) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"csi-\xc2\x9b" "31m.ko", "csi-\\xc2\\x9b31m.ko"},                   // U+009B CSI
      {"c1-\xc2\x80\xc2\x9f\xc2\xa0.ko", "c1-\\xc2\\x80\\xc2\\x9f\xc2\xa0.ko"},  // U+0080, U+009F; U+00A0 is not C1
      {"lone-\x9b" "31m\x80\x9f.ko", "lone-\\x9b31m\\x80\\x9f.ko"},          // 8-bit C1 bytes
      {"utf8-\xc3\xa9\xe6\xa8\xa1\xe2\x82\xac\xc8\x9b\xf0\x9f\x98\x80.ko",  // é 模 € ț 😀 unchanged
       "utf8-\xc3\xa9\xe6\xa8\xa1\xe2\x82\xac\xc8\x9b\xf0\x9f\x98\x80.ko"},
      {"bad-\xff\xe2\x82.ko", "bad-\xff\xe2\\x82.ko"},                      // truncated E2 82: E2 as is, 82 escaped
      {"overlong-\xc0\x9b.ko", "overlong-\xc0\\x9b.ko"},                    // C0 9B is not UTF-8
      {"surrogate-\xed\xa0\x80.ko", "surrogate-\xed\xa0\\x80.ko"},          // ED A0 80 (U+D800) is not UTF-8
      {"c0-\x1b[1m\x7f\x01.ko", "c0-\\x1b[1m\\x7f\\x01.ko"},                 // C0 and DEL as before
  };
  for (const auto& [raw, shown] : cases) {
    test::spit(d_ / raw, test::pattern(100));
    auto r = test::run(M() + " info " + q(d_ / raw));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1), "file:                " + (d_ / shown) + "\n") << shown;
    r = test::run(M() + " verify " + q(d_ / ("missing-" + raw)));
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.err, "modsign: " + (d_ / ("missing-" + shown)) + ": No such file or directory\n") << shown;
    EXPECT_EQ(r.out, "");
  }
}
