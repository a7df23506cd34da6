// The modsign command line: outputs, exit statuses and the bad-input contract
// (clear message naming the file, documented exit status, inputs unchanged).
// This file: keygen, sign, info, verify, replacing signatures, .p7s outputs, sign-file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <modsign/version.hpp>
#include "cli_support.hpp"
#include "cms/signed_data.hpp"
#include "crypto/crypto.hpp"
#include "module/compression.hpp"
#include "module/module_signature.hpp"

using namespace modsign;
using namespace modsign::test::cli_tests;

namespace {

std::string sha256_file(const std::string& p) {
  return to_hex(crypto::digest(crypto::HashAlgo::sha256, test::slurp(p)));
}

}  // namespace

TEST_F(Cli, KeygenWritesSeedFormKeyAndKernelStyleCertificate) {
  struct stat st {};
  ASSERT_EQ(::stat(key("mldsa.pem").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto k = crypto::PrivateKey::load(key("mldsa.pem"), std::nullopt);
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(k->algo(), crypto::KeyAlgo::ml_dsa_65);
  EXPECT_EQ(k->pkcs8_der()->value().size(), 54u);  // RFC 9881 seed form
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

// signedAttrs on a module signature: every kernel refuses it (EKEYREJECTED) but ML-DSA's
// under the waiver.  A trial signed RSA and ECDSA modules so, and nothing said a word.
TEST_F(Cli, SignSaysWhenNoKernelLoadsTheForm) {
  const std::string m = d_ / "m.ko";
  test::spit(m, test::pattern(3000));
  auto r =
      test::run(M() + " sign --key " + q(key("ec.pem")) + " --cert " + q(key("ec.crt")) + " --signed-attrs -q " + q(m));
  EXPECT_EQ(r.status, 0) << r.err;  // written as asked; the warning is not hidden by -q
  EXPECT_EQ(r.err,
            "modsign: warning: no kernel modsign models (v6.1, v6, v7.0, v7.0+waiver) loads a module signature of "
            "this form (ECDSA-P256, sha512, signedAttrs): leave out --signed-attrs\n");
  r = test::run(M() + " verify --cert " + q(key("ec.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find(": refused (EKEYREJECTED): Invalid module sig (has authattrs)"), std::string::npos) << r.out;
  r = test::run(M() + " sign --replace -q --key " + q(key("combined.pem")) + " --signed-attrs " + q(m));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");  // -q hides the note that only the waiver loads it
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
  EXPECT_EQ(r.out, m + ": loads (OK): signature verified: mldsa65 signature, trusted key \"CLI test key\"" +
                       test::trusted_key_ids(key("mldsa.crt")) + test::kLoadScope + "\n");
  // The same in JSON: CN, SKID and serial of the key that vouched.
  r = test::run(M() + " verify --json --cert " + q(key("mldsa.crt")) + " " + q(m));
  {
    auto jt = nlohmann::json::parse(r.out);
    ASSERT_EQ(jt["trusted_keys"].size(), 1u) << r.out;
    EXPECT_EQ(jt["trusted_keys"][0]["cn"], "CLI test key");
    EXPECT_EQ(" (skid " + jt["trusted_keys"][0]["skid"].get<std::string>() + ", serial " +
                  jt["trusted_keys"][0]["serial"].get<std::string>() + ")",
              test::trusted_key_ids(key("mldsa.crt")));
    EXPECT_EQ(jt["trusted_keys"][0]["serial"], to_hex(cert->front().serial()));
  }
  // Both backends, and the key file holding the certificate too.
  r = test::run(M() + " verify --backend botan --cert " + q(key("ec.crt")) + " --cert " + q(key("mldsa.crt")) + " " +
                q(m));
  EXPECT_EQ(r.status, 0) << r.out;
  // Signed with the combined file (key + certificate), no --cert.
  const std::string m2 = module("mod2.ko");
  r = test::run(M() + " sign --key " + q(key("combined.pem")) + " --signed-attrs --keyid " + q(m2));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err,
            "modsign: note: only a 7.x kernel built with CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y loads "
            "this form (ML-DSA-65, sha512, signedAttrs)\n");
  // signedAttrs on a module: refused by a default 7.0 kernel, loaded with the waiver.
  r = test::run(M() + " verify --json --cert " + q(key("combined.pem")) + " " + q(m2));
  EXPECT_EQ(r.status, 1);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "refused");
  EXPECT_EQ(j["errno"], "EKEYREJECTED");
  EXPECT_EQ(j["reason"], "Invalid module sig (has authattrs)");
  // What the verdict covers: the signature check, not the ELF checks after it (issue 25 §3).
  EXPECT_EQ(j["predicts"], "module_sig_check");
  // Every record has the same keys: log is [] when the kernel logs nothing else.
  EXPECT_EQ(j["log"], nlohmann::json::array());
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"compressed", "errno", "kernel", "log", "outcome", "path", "predicts",
                                            "profile", "reason", "signers", "trusted_keys"}));
  r = test::run(M() + " verify --json " + q(d_ / "missing.ko"));
  EXPECT_EQ(r.status, 3);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "error");
  EXPECT_EQ(j["log"], nlohmann::json::array());
  keys.clear();
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"compressed", "errno", "kernel", "log", "outcome", "path", "predicts",
                                            "profile", "reason", "signers", "trusted_keys"}));
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
  ASSERT_EQ(
      test::run(M() + " sign --key " + q(key("mldsa.pem")) + " --cert " + q(key("mldsa.crt")) + " " + q(m)).status, 0);
  // Wrong certificate: ENOKEY, a soft error: loads tainted, refused when enforcing.
  auto r = test::run(M() + " verify --cert " + q(key("ec.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out,
            m +
                ": loads-tainted (ENOKEY): module with unavailable key: no trusted key matches the signer; module "
                "verification failed: signature and/or required key missing - tainting kernel" +
                test::kLoadScope + "\n");
  r = test::run(M() + " verify --enforce --cert " + q(key("ec.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, m + ": refused (EKEYREJECTED): Loading of module with unavailable key is rejected (no trusted key "
                       "matches the signer) [kernel v7.0+enforce]\n");
  r = test::run(M() + " verify --lockdown --cert " + q(key("ec.crt")) + " " + q(m));
  EXPECT_EQ(r.out.rfind(m + ": refused (EPERM): Lockdown: ", 0), 0u) << r.out;
  // Content changed after signing: EKEYREJECTED.
  Bytes b = test::slurp(m);
  b[100] ^= 1;
  test::spit(m, b);
  r = test::run(M() + " verify --cert " + q(key("mldsa.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, m + ": refused (EKEYREJECTED): Sig 1: signature does not verify [kernel v7.0]\n");
  // Unsigned: ENODATA.
  const std::string u = module("unsigned.ko");
  r = test::run(M() + " verify --cert " + q(key("mldsa.crt")) + " " + q(u));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, u +
                       ": loads-tainted (ENODATA): unsigned module: no signature marker; module verification failed: "
                       "signature and/or required key missing - tainting kernel" +
                       test::kLoadScope + "\n");
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
  EXPECT_EQ(r.err,
            "modsign: " + m + ": module is already signed (use --replace to strip the old signature and re-sign)\n");
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
    // Of another algorithm, both are named; of the same, the key and certificate differ.
    const std::string algos = cert == key("ec.crt") ? " (the key is ML-DSA-65, the certificate ECDSA-P256)" : "";
    EXPECT_EQ(r.err,
              "modsign: " + cert + ": no certificate matches the private key " + key("mldsa.pem") + algos + "\n");
    EXPECT_EQ(test::slurp(m), test::pattern(4096));
  }
  // A certificate file that is not a certificate.
  test::spit(d_ / "junk.crt", std::string("hello\n"));
  r = test::run(M() + " verify --cert " + q(d_ / "junk.crt") + " " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err,
            "modsign: " + (d_ / "junk.crt") + ": no X.509 certificate found (neither DER nor PEM CERTIFICATE)\n");
  // A key file that is not a key: the certificate given for the key says so (a new user's
  // trial read OpenSSL's "DECODER routines::unsupported"), other PEM too.
  r = test::run(M() + " sign --key " + q(key("mldsa.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + key("mldsa.crt") + ": holds a certificate, not a private key\n");
  const test::TempDir elsewhere;  // the directory of `m` is listed below: nothing new in it
  const std::string other = elsewhere / "other.pem";
  test::spit(other, std::string("-----BEGIN FOO-----\nAAAA\n-----END FOO-----\n"));
  r = test::run(M() + " sign --key " + q(other) + " --cert " + q(key("mldsa.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + other + ": holds no PEM PRIVATE KEY block\n");
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
  ASSERT_EQ(
      test::run(M() + " sign --key " + q(key("mldsa.pem")) + " --cert " + q(key("mldsa.crt")) + " " + q(m)).status, 0);
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
  EXPECT_EQ(r.out, m + ": refused (EBADMSG): PKCS#7 signature info has unexpected non-zero params [kernel v7.0]\n");
  r = test::run(M() + " sign --replace --key " + q(key("mldsa.pem")) + " --cert " + q(key("mldsa.crt")) + " " + q(m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + m +
                       ": cannot strip the existing signature: EBADMSG PKCS#7 signature info has unexpected non-zero "
                       "params\n");
  EXPECT_EQ(test::slurp(m), legacy);
}

TEST_F(Cli, P7sOutputs) {
  const std::string m = module();
  const std::string sign =
      M() + " sign --key " + q(key("rsa.pem")) + " --cert " + q(key("rsa.crt")) + " --hash sha256 ";
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
