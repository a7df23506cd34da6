// The system blacklist after the hostile-input review: certificate lookalikes, attached
// content, kernel options and the kernel lines stops cite, revocation over the whole
// keyring, signedAttrs keys, JSON lines, digest names, Linux 6.1 without SHA-3.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "blacklist_support.hpp"
#include "module/compression.hpp"

using namespace modsign;
using namespace modsign::test::blacklist_tests;

// ------------------------------------------------------------------ after the hostile-input review

// A file that looks like certificates (DER SEQUENCE start, or a PEM block anywhere) but does
// not parse as them is reported as --revoked/--keyring report it (exit 3, nothing written),
// not hashed as if it were a module: DER with trailing bytes, two concatenated DER
// certificates, a PEM private key.  PEM after leading text (openssl x509 -text) is read.
TEST_F(BlacklistCli, CertificateLookalikesAreRefusedNotHashedAsModules) {
  sh(test::openssl() + " x509 -in " + q(key("rsa.crt")) + " -outform DER -out " + q(d_ / "c.der"));
  const Bytes der = test::slurp(d_ / "c.der");
  Bytes trail = der;
  for (char c : std::string("garbage\n")) trail.push_back(static_cast<std::uint8_t>(c));
  test::spit(d_ / "trail.der", trail);
  Bytes two = der;
  two.insert(two.end(), der.begin(), der.end());
  test::spit(d_ / "two.der", two);
  for (const std::string f : {"trail.der", "two.der"}) {
    auto r = test::run(M() + " blacklist entry -o " + q(d_ / "out") + " " + q(d_ / f));
    EXPECT_EQ(r.status, 3) << f << r.out;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "modsign: " + (d_ / f) + ": malformed certificate: trailing data after Certificate\n");
    EXPECT_NE(test::run("test -e " + q(d_ / "out")).status, 0) << f;
    r = test::run(M() + " blacklist check " + q(d_ / f));
    EXPECT_EQ(r.status, 3) << f << r.out;
    EXPECT_EQ(r.out, "");
  }
  auto r = test::run(M() + " blacklist entry " + q(key("rsa.pem")));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "modsign: " + key("rsa.pem") + ": no X.509 certificate found (neither DER nor PEM CERTIFICATE)\n");
  // `openssl x509 -text` output: text, then the PEM block.
  sh(test::openssl() + " x509 -in " + q(key("rsa.crt")) + " -text -out " + q(d_ / "text.pem"));
  auto certs = crypto::Certificate::load_all(key("rsa.crt"));
  ASSERT_TRUE(certs.ok());
  const std::string tbs = "tbs:" + sha256_of(Bytes((*certs)[0].tbs().begin(), (*certs)[0].tbs().end()));
  r = test::run(M() + " blacklist entry " + q(d_ / "text.pem"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "\"" + tbs + "\"\n");
  // Above 16 MiB a non-ELF file is a module whatever it contains: IMA's hash of it.
  Bytes big = test::pattern(17u << 20);
  for (char c : std::string("-----BEGIN CERTIFICATE-----\n")) big.push_back(static_cast<std::uint8_t>(c));
  test::spit(d_ / "big.bin", big);
  r = test::run(M() + " blacklist entry " + q(d_ / "big.bin"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "\"bin:" + first_word(sh("sha256sum " + q(d_ / "big.bin"))) + "\"\n");
}

// A certificate whose key OpenSSL refuses (an EC point of zeros) still has its tbs: entry,
// and blacklist check finds it: x509_cert_parse() keeps the key bytes undecoded (they are
// parsed only when used), and x509_get_sig_params() hashes the TBSCertificate either way.
// An empty module file: finit_module refuses it (kernel_read_file, EINVAL) before IMA, so no
// blacklist entry stops it, not even the bin: of its (empty) file hash (session 20's hostile
// review: check said IMA's EPERM, digest "blacklist_visible").
TEST_F(BlacklistCli, AnEmptyFileIsNeverLookedUp) {
  const std::string empty = d_ / "empty.ko";
  test::spit(empty, Bytes{});
  const std::string e3b0 = "bin:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  test::spit(d_ / "list", "\"" + e3b0 + "\"\n");
  auto r = test::run(M() + " blacklist check --list " + q(d_ / "list") + " " + q(empty));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, empty +
                       ": not stopped\n  note: the module file is empty (kernel_read_file: EINVAL before IMA's "
                       "appraisal and the signature check): no blacklist entry is ever looked up\n");
  r = test::run(M() + " digest --json " + q(empty));
  EXPECT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["blacklist_visible"], false);
  EXPECT_EQ(j["bin_source"], "not-read");
  EXPECT_EQ(j["bin_entry"], nullptr);
  r = test::run(M() + " verify " + q(empty));
  EXPECT_EQ(r.out, empty +
                       ": refused (EINVAL): the module file is empty (kernel_read_file: EINVAL before IMA's "
                       "appraisal and the signature check) [kernel v7.0]\n");
}

TEST_F(BlacklistCli, CertificateWithARefusedKeyHasItsTbsEntry) {
  ASSERT_EQ(
      test::run(M() + " keygen --algo ecdsa-p256 --out " + q(d_ / "ec.pem") + " --cert-out " + q(d_ / "ec.crt")).status,
      0);
  ASSERT_EQ(
      test::run(test::openssl() + " x509 -in " + q(d_ / "ec.crt") + " -outform DER -out " + q(d_ / "ec.der")).status,
      0);
  Bytes der = test::slurp(d_ / "ec.der");
  const Bytes point_head{0x03, 0x42, 0x00, 0x04};  // BIT STRING, no unused bits, uncompressed point
  auto at = std::search(der.begin(), der.end(), point_head.begin(), point_head.end());
  ASSERT_NE(at, der.end());
  std::fill(at + 4, at + 4 + 64, 0x00);
  test::spit(d_ / "bad.der", der);
  ASSERT_NE(test::run(test::openssl() + " x509 -inform DER -in " + q(d_ / "bad.der") + " -noout -pubkey").status, 0);
  // Certificate 30 82 LL LL, TBSCertificate 30 82 LL LL from offset 4.
  ASSERT_EQ(der[4], 0x30);
  ASSERT_EQ(der[5], 0x82);
  const std::size_t tbs_len = 4 + (std::size_t{der[6]} << 8 | der[7]);
  const std::string tbs =
      "tbs:" + sha256_of(Bytes(der.begin() + 4, der.begin() + 4 + static_cast<std::ptrdiff_t>(tbs_len)));
  auto r = test::run(M() + " blacklist entry " + q(d_ / "bad.der"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "\"" + tbs + "\"\n");
  test::spit(d_ / "list", "\"" + tbs + "\"\n");
  r = test::run(M() + " blacklist check --blacklist " + q(d_ / "list") + " " + q(d_ / "bad.der"));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
}

// ima_collect_modsig(): a PKCS#7 that carries its own content makes
// pkcs7_supply_detached_data() fail (EINVAL, "Data already supplied") and the function
// returns before pkcs7_get_digest(): IMA has a modsig without a digest and looks up "bin:",
// so no key can stop the module — even though the attached content is the module content.
TEST_F(BlacklistCli, AttachedContentModsigHasNoBinEntry) {
  const std::string mod =
      test::openssl_cms_module(d_.path(), "att.ko", "-nodetach -noattr -nosmimecap", key("rsa.crt"), key("rsa.pem"));
  auto r = test::run(M() + " blacklist entry --json " + q(mod));
  EXPECT_EQ(r.status, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["entry"], nullptr);
  EXPECT_EQ(j["source"], "none");
  EXPECT_EQ(j["explanation"],
            "ima_collect_modsig() gets no digest (EINVAL: pkcs7_supply_detached_data: Data already supplied "
            "(the PKCS#7 carries its own content)), so ima_check_blacklist() looks up \"bin:\", which "
            "no key can be");
  // The content's SHA-256 — what a detached signature's d-modsig would be — does not stop it.
  const std::string content_key = "bin:" + first_word(sh("sha256sum " + q(d_ / "content")));
  EXPECT_EQ(j["side_sha256_entry"], content_key);
  test::spit(d_ / "list", "\"" + content_key + "\"\n");
  r = test::run(M() + " blacklist check --json --list " + q(d_ / "list") + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stopped"], false);
  EXPECT_EQ(j["stops"].size(), 0u);
  // And the module loader refuses the signature outright (verify_pkcs7_message_sig: EBADMSG),
  // before the revocation list is consulted: `check` names no revocation stop.
  r = test::run(M() + " verify --cert " + q(key("rsa.crt")) + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, mod + ": refused (EBADMSG): PKCS#7 signature with non-detached data [kernel v7.0]\n");
  r = test::run(M() + " verify --cert " + q(key("rsa.crt")) + " --revoked " + q(key("rsa.crt")) + " " + q(mod));
  EXPECT_EQ(r.out, mod + ": refused (EBADMSG): PKCS#7 signature with non-detached data [kernel v7.0]\n");
  r = test::run(M() + " blacklist check --revoked " + q(key("rsa.crt")) + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out,
            mod +
                ": not stopped\n  note: no bin: entry can stop it under v7.0 through the modsig: "
                "ima_collect_modsig() gets no digest (EINVAL: pkcs7_supply_detached_data: Data already supplied (the "
                "PKCS#7 carries its own content)), so ima_check_blacklist() looks up \"bin:\", which no key "
                "can be; under the proposed behaviour (side SHA-256 of the signed content) " +
                content_key +
                " would stop it\n  note: module_sig_check: verify_pkcs7_message_sig() fails (EBADMSG: PKCS#7 signature "
                "with non-detached data), before any certificate check\n");
}

// Every command with --kernel takes the same five profiles (v7.1 and v7.2 differ from v7.0
// only for IMA file signatures; issue 30: one vocabulary).
TEST_F(BlacklistCli, EveryKernelOptionTakesV61) {
  const std::string mod = signed_module("k.ko", "rsa.pem", "rsa.crt", "sha256");
  const std::string dmodsig = first_word(sh("head -c 5000 " + q(mod) + " | sha256sum"));
  for (const std::string cmd : {"digest", "ima template", "blacklist entry", "blacklist check", "verify"}) {
    auto r = test::run(M() + " " + cmd + " --kernel v6.1 " + q(mod));
    EXPECT_NE(r.status, 2) << cmd << ": " << r.err;
    EXPECT_EQ(r.err.find("--kernel:"), std::string::npos) << cmd << ": " << r.err;
    r = test::run(M() + " " + cmd + " --kernel v5 " + q(mod));
    EXPECT_EQ(r.status, 2) << cmd;
    EXPECT_NE(r.err.find("--kernel: v5 not in {v6.1,v6,v7.0,v7.1,v7.2}"), std::string::npos) << cmd << ": " << r.err;
    r = test::run(M() + " " + cmd + " --kernel v7.2 " + q(mod));
    EXPECT_NE(r.status, 2) << cmd << ": " << r.err;
  }
  auto r = test::run(M() + " blacklist entry --kernel v6.1 " + q(mod));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "\"bin:" + dmodsig + "\"\n");
  test::spit(d_ / "esl", Bytes{});
  r = test::run(M() + " dbx list --kernel v6.1 " + q(d_ / "esl"));
  EXPECT_NE(r.status, 2) << r.err;
}

// The text of each module stop names the kernel function and the lines of Linux 7.2.13
// that refuse (checked against the source: system_keyring.c:333-337 calls
// is_key_on_revocation_list; pkcs7_verify.c:230-239 marks the chain, 468-472 returns
// EKEYREJECTED; pkcs7_trust.c:158-187 is pkcs7_validate_trust).
TEST_F(BlacklistCli, CheckStopsCiteTheKernelLines) {
  const std::string mod = signed_module("r.ko", "rsa.pem", "rsa.crt", "sha256");
  auto r = test::run(M() + " blacklist check --revoked " + q(key("rsa.crt")) + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, mod + ": stopped by revoked certificate CN = blacklist test RSA (" + key("rsa.crt") +
                       " certificate 1): is_key_on_revocation_list() (certs/blacklist.c:289-299) from "
                       "verify_pkcs7_message_sig() (certs/system_keyring.c:333-337): EKEYREJECTED\n");
  auto certs = crypto::Certificate::load_all(key("rsa.crt"));
  ASSERT_TRUE(certs.ok());
  const std::string tbs = "tbs:" + sha256_of(Bytes((*certs)[0].tbs().begin(), (*certs)[0].tbs().end()));
  test::spit(d_ / "tbs", "\"" + tbs + "\"\n");
  r = test::run(M() + " blacklist check --list " + q(d_ / "tbs") + " --keyring " + q(key("rsa.crt")) + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, mod + ": loads-tainted (ENOKEY): signing key not loaded: " + tbs + " (" + (d_ / "tbs") +
                       " line 1): x509_key_preparse() keeps the certificate out of the keyring "
                       "(crypto/asymmetric_keys/x509_public_key.c:189-191, EKEYREJECTED); pkcs7_validate_trust() then "
                       "finds no key for the signer (crypto/asymmetric_keys/pkcs7_trust.c:158-187): ENOKEY "
                       "[module_sig_check(): ENOKEY loads the module tainted; refused (EKEYREJECTED) when signatures "
                       "are enforced, EPERM under lockdown (kernel/module/signing.c:105-131)]\n");
  // The headline follows the enforcement policy, as verify's outcome does.
  const std::string tail =
      " line 1): x509_key_preparse() keeps the certificate out of the keyring "
      "(crypto/asymmetric_keys/x509_public_key.c:189-191, EKEYREJECTED); pkcs7_validate_trust() then "
      "finds no key for the signer (crypto/asymmetric_keys/pkcs7_trust.c:158-187): ENOKEY "
      "[module_sig_check(): ENOKEY loads the module tainted; refused (EKEYREJECTED) when signatures "
      "are enforced, EPERM under lockdown (kernel/module/signing.c:105-131)]\n";
  r = test::run(M() + " blacklist check --enforce --list " + q(d_ / "tbs") + " --keyring " + q(key("rsa.crt")) + " " +
                q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, mod + ": refused (EKEYREJECTED, signatures enforced): signing key not loaded: " + tbs + " (" +
                       (d_ / "tbs") + tail);
  r = test::run(M() + " blacklist check --lockdown --list " + q(d_ / "tbs") + " --keyring " + q(key("rsa.crt")) + " " +
                q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, mod + ": refused (EPERM, lockdown): signing key not loaded: " + tbs + " (" + (d_ / "tbs") + tail);
  // JSON: outcome and errno agree with verify's for the same sources.
  for (const auto& [flags, outcome, err, stopped] :
       std::vector<std::tuple<std::string, std::string, std::string, bool>>{
           {"", "loads-tainted", "ENOKEY", false},
           {"--enforce ", "refused", "EKEYREJECTED", true},
           {"--lockdown ", "refused", "EPERM", true}}) {
    r = test::run(M() + " blacklist check --json " + flags + "--list " + q(d_ / "tbs") + " --keyring " +
                  q(key("rsa.crt")) + " " + q(mod));
    EXPECT_EQ(r.status, 1) << flags;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["outcome"], outcome) << flags;
    EXPECT_EQ(j["errno"], err) << flags;
    EXPECT_EQ(j["stopped"], stopped) << flags;
    EXPECT_EQ(j["stops"][0]["errno"], "ENOKEY") << flags;
    auto v = test::run(M() + " verify --json " + flags + "--cert " + q(key("rsa.crt")) + " --blacklist " +
                       q(d_ / "tbs") + " " + q(mod));
    auto vj = nlohmann::json::parse(v.out);
    EXPECT_EQ(vj["outcome"], outcome) << flags;
    EXPECT_EQ(vj["errno"], err) << flags;
  }
  // Not stopped: outcome not-stopped, errno null, exit 0.
  r = test::run(M() + " blacklist check --json --keyring " + q(key("rsa.crt")) + " " + q(mod));
  EXPECT_EQ(r.status, 0);
  auto nj = nlohmann::json::parse(r.out);
  EXPECT_EQ(nj["outcome"], "not-stopped");
  EXPECT_TRUE(nj["errno"].is_null());
  EXPECT_EQ(nj["stopped"], false);
  const std::string emb =
      test::openssl_cms_module(d_.path(), "emb.ko", "-noattr -nosmimecap", key("rsa.crt"), key("rsa.pem"));
  r = test::run(M() + " blacklist check --list " + q(d_ / "tbs") + " " + q(emb));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, emb + ": stopped by " + tbs + " (" + (d_ / "tbs") +
                       " line 1): x509_get_sig_params() marks the certificate blacklisted "
                       "(crypto/asymmetric_keys/x509_public_key.c:38-45); pkcs7_verify() refuses a signer whose chain "
                       "reaches it (crypto/asymmetric_keys/pkcs7_verify.c:230-239, 468-472): EKEYREJECTED\n");
  r = test::run(M() + " blacklist check --list " + q(d_ / "tbs") + " " + q(key("rsa.crt")));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, key("rsa.crt") + ": stopped by " + tbs + " (" + (d_ / "tbs") +
                       " line 1): x509_get_sig_params() marks it blacklisted "
                       "(crypto/asymmetric_keys/x509_public_key.c:38-45); x509_key_preparse() refuses it from every "
                       "keyring (:189-191), pkcs7_verify() refuses signatures whose chain reaches it "
                       "(crypto/asymmetric_keys/pkcs7_verify.c:230-239, 468-472): EKEYREJECTED\n");
}

// is_key_on_revocation_list() is one pkcs7_validate_trust() over the whole .blacklist
// keyring: a revoked certificate with the signer's issuer+serial but another key, met
// first, ends it with EKEYREJECTED and the module is not refused, even though the real
// signing certificate is revoked too.  `check` agrees with `verify` in both orders.
TEST_F(BlacklistCli, RevocationIsOneTrustCheckOverTheWholeKeyring) {
  const std::string mod = signed_module("o.ko", "rsa.pem", "rsa.crt", "sha256");
  auto certs = crypto::Certificate::load_all(key("rsa.crt"));
  ASSERT_TRUE(certs.ok());
  const std::string serial = to_hex((*certs)[0].serial());
  sh(test::openssl() + " genrsa -out " + q(d_ / "other.pem") + " 2048 2>/dev/null");
  sh(test::openssl() + " req -x509 -new -key " + q(d_ / "other.pem") +
     " -subj '/CN=blacklist test RSA' -set_serial 0x" + serial + " -days 30 -out " + q(d_ / "same-id.crt"));
  const std::string real = key("rsa.crt"), fake = d_ / "same-id.crt";
  auto r =
      test::run(M() + " verify --cert " + q(real) + " --revoked " + q(fake) + " --revoked " + q(real) + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out;
  r = test::run(M() + " blacklist check --revoked " + q(fake) + " --revoked " + q(real) + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(
      r.out.rfind(mod + ": not stopped\n  note: revoked certificate CN = blacklist test RSA vouches for the signer, "
                        "but pkcs7_validate_trust() over the whole .blacklist keyring fails first (EKEYREJECTED: ",
                  0),
      0u)
      << r.out;
  r = test::run(M() + " verify --cert " + q(real) + " --revoked " + q(real) + " --revoked " + q(fake) + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, mod + ": refused (EKEYREJECTED): Key is on the revocation list [kernel v7.0]\n");
  r = test::run(M() + " blacklist check --json --revoked " + q(real) + " --revoked " + q(fake) + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["stops"].size(), 1u);
  EXPECT_EQ(j["stops"][0]["origins"][0]["file"], real);
}

// A listed certificate that is in the PKCS#7 but on no signer's chain refuses nothing
// (pkcs7_verify_sig_chain only stops at one it reaches): when the signer is listed too,
// only the signer's entry is a stop; the other is a note.
TEST_F(BlacklistCli, ListedCertificateOffTheSignerChainIsOnlyANote) {
  sh(test::openssl() + " req -x509 -newkey rsa:2048 -nodes -keyout " + q(d_ / "other.pem") +
     " -subj '/CN=bystander' -days 30 -out " + q(d_ / "other.crt") + " 2>/dev/null");
  const std::string mod =
      test::openssl_cms_module(d_.path(), "two-certs.ko", "-noattr -nosmimecap -certfile " + q(d_ / "other.crt"),
                               key("rsa.crt"), key("rsa.pem"));
  auto tbs_of = [](const std::string& pem) {
    auto c = crypto::Certificate::load_all(pem);
    EXPECT_TRUE(c.ok());
    return "tbs:" + sha256_of(Bytes((*c)[0].tbs().begin(), (*c)[0].tbs().end()));
  };
  const std::string signer = tbs_of(key("rsa.crt")), bystander = tbs_of(d_ / "other.crt");
  test::spit(d_ / "by", "\"" + bystander + "\"\n");
  auto r = test::run(M() + " blacklist check --list " + q(d_ / "by") + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, mod + ": not stopped\n  note: certificate with " + bystander +
                       " is in the PKCS#7 but no signer's chain reaches it\n");
  r = test::run(M() + " verify --cert " + q(key("rsa.crt")) + " --blacklist " + q(d_ / "by") + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out;
  test::spit(d_ / "both", "\"" + bystander + "\",\n\"" + signer + "\"\n");
  r = test::run(M() + " blacklist check --json --list " + q(d_ / "both") + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["stops"].size(), 1u) << r.out;
  EXPECT_EQ(j["stops"][0]["entry"], signer);
  EXPECT_EQ(j["stops"][0]["origins"][0]["where"], "line 2");
  EXPECT_EQ(j["notes"], nlohmann::json::array(
                            {"certificate with " + bystander + " is in the PKCS#7 but no signer's chain reaches it"}));
}

// RSA with signedAttrs (openssl cms without -noattr): pkcs7_get_digest() returns the hash
// of the signedAttrs re-tagged as a SET (pkcs7_verify.c:114-115), not of the module, and
// that is the bin: key — confirmed with openssl asn1parse and sha256sum.
TEST_F(BlacklistCli, RsaWithSignedAttrsKeyIsHashOfRetaggedAttributes) {
  const std::string mod =
      test::openssl_cms_module(d_.path(), "sa.ko", "-nosmimecap -nocerts", key("rsa.crt"), key("rsa.pem"));
  // The signedAttrs: the [0] at depth 5 (ContentInfo > content > SignedData > signerInfos > SignerInfo).
  const std::string line =
      sh(test::openssl() + " asn1parse -inform DER -in " + q(d_ / "p7") + " | grep 'd=5 .*cont \\[ 0 \\]' | head -n 1");
  std::size_t off = 0, hl = 0, len = 0;
  ASSERT_EQ(std::sscanf(line.c_str(), " %zu:d=5 hl=%zu l=%zu", &off, &hl, &len), 3) << line;
  const std::string want =
      "bin:" + first_word(sh("(printf '\\061'; tail -c +" + std::to_string(off + 2) + " " + q(d_ / "p7") +
                             " | head -c " + std::to_string(hl + len - 1) + ") | sha256sum"));
  auto r = test::run(M() + " blacklist entry --json " + q(mod));
  EXPECT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["entry"], want);
  EXPECT_EQ(j["source"], "d-modsig");
  EXPECT_EQ(j["explanation"], "d-modsig: sha256 of the signedAttrs (pkcs7_get_digest with signedAttrs)");
  EXPECT_NE(j["entry"], "bin:" + first_word(sh("sha256sum " + q(d_ / "content"))));
  test::spit(d_ / "list", "\"" + want + "\"\n");
  r = test::run(M() + " blacklist check --json --list " + q(d_ / "list") + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stops"][0]["entry"], want);
  EXPECT_EQ(j["stops"][0]["errno"], "EPERM");
}

// blacklist check --json prints an object for every input, as verify --json does, so that
// line N is input N: an unreadable module or a damaged certificate file is outcome "error".
TEST_F(BlacklistCli, CheckJsonKeepsOneLinePerInput) {
  const std::string mod = signed_module("a.ko", "rsa.pem", "rsa.crt", "sha256");
  test::spit(d_ / "dmg.crt", std::string("-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----\n"));
  auto r = test::run("timeout 60 " + M() + " blacklist check --json " + q(d_ / "missing.ko") + " " + q(mod) + " " +
                     q(d_ / "dmg.crt"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d_ / "missing.ko" + ": No such file or directory\nmodsign: " + d_ / "dmg.crt" +
                       ": PEM block 1 is damaged (bad base64 or armour)\n");
  std::vector<nlohmann::json> lines;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) lines.push_back(nlohmann::json::parse(l));
  ASSERT_EQ(lines.size(), 3u) << r.out;
  // The reason names no file (the record's path does), as verify, info and digest give it.
  EXPECT_EQ(lines[0], nlohmann::json::parse(R"({"path":")" + d_ / "missing.ko" +
                                            R"(","kind":null,"kernel":"v7.0","stopped":false,"outcome":"error",)"
                                            R"("errno":null,"stops":[],"entry":null,"source":null,"notes":[],)"
                                            R"("reason":"No such file or directory"})"));
  EXPECT_EQ(lines[1]["path"], mod);
  EXPECT_EQ(lines[1]["outcome"], "not-stopped");
  EXPECT_EQ(lines[2]["outcome"], "error");
  EXPECT_EQ(lines[2]["reason"], "PEM block 1 is damaged (bad base64 or armour)");
}

// `digest` names the same bin: key as `blacklist entry` on every profile, including the
// cases where IMA has no modsig it can use and looks up its hash of the whole file
// (sha256sum of the file): unsigned, SHA-3 under v6.1 (no SHA-3 there), a compressed module
// under v6 (IMA reads the compressed file).  `digest` used to say "no bin: entry can stop
// it" there, and gave the image's d-modsig key for a compressed module under v6.
TEST_F(BlacklistCli, DigestNamesTheKeyBlacklistEntryNames) {
  test::spit(d_ / "plain.ko", test::pattern(3000));
  const std::string sha3 = signed_module("sha3.ko", "rsa.pem", "rsa.crt", "sha3-256");
  const std::string rsa = signed_module("rsa.ko", "rsa.pem", "rsa.crt", "sha256");
  sh("xz -C crc32 -k " + q(rsa));
  const std::string xz = rsa + ".xz";
  auto whole = [&](const std::string& f) { return "bin:" + first_word(sh("sha256sum " + q(f))); };
  const std::string dmodsig_rsa = "bin:" + first_word(sh("head -c 5000 " + q(rsa) + " | sha256sum"));
  const std::string dmodsig_sha3 =
      "bin:" + first_word(sh("head -c 5000 " + q(sha3) + " | " + test::openssl() + " dgst -sha3-256 -r"));
  struct Want {
    std::string file, kernel, key, source;
  };
  const std::vector<Want> wants = {
      {d_ / "plain.ko", "v7.0", whole(d_ / "plain.ko"), "ima-hash"},
      {d_ / "plain.ko", "v6.1", whole(d_ / "plain.ko"), "ima-hash"},
      {sha3, "v7.0", dmodsig_sha3, "d-modsig"},
      {sha3, "v6", dmodsig_sha3, "d-modsig"},
      {sha3, "v6.1", whole(sha3), "ima-hash"},
      {xz, "v7.0", dmodsig_rsa, "d-modsig"},
      {xz, "v6", whole(xz), "ima-hash"},
      {xz, "v6.1", whole(xz), "ima-hash"},
  };
  for (const auto& w : wants) {
    SCOPED_TRACE(w.file + " " + w.kernel);
    auto r = test::run(M() + " digest --json --kernel " + w.kernel + " " + q(w.file));
    ASSERT_EQ(r.status, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["bin_entry"], w.key);
    EXPECT_EQ(j["bin_source"], w.source);
    EXPECT_EQ(j["blacklist_visible"], true);
    EXPECT_EQ("bin:" + j["file_sha256"].get<std::string>(), whole(w.file));
    if (w.source == "ima-hash") { EXPECT_EQ(j["d_modsig"], nullptr); }
    r = test::run(M() + " blacklist entry --json --kernel " + w.kernel + " " + q(w.file));
    ASSERT_EQ(r.status, 0) << r.err;
    auto e = nlohmann::json::parse(r.out);
    EXPECT_EQ(e["entry"], w.key);
    EXPECT_EQ(e["source"], w.source);
  }
  // Text: the key and why.
  auto r = test::run(M() + " digest --kernel v6 " + q(xz));
  EXPECT_NE(r.out.find("  kernel_digest: ENOENT (under v6 IMA reads the compressed file, which has no appended "
                       "signature)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  blacklist:     " + whole(xz) +
                       " stops it when the policy requires a signature (no modsig IMA can use: IMA's sha256 of the "
                       "whole file as stored; other ima_hash: modsign blacklist entry --ima-hash)\n"),
            std::string::npos)
      << r.out;
}

// Linux 6.1-6.6 knows no SHA-3 signature algorithm in X.509 (tools/kernel-conformance
// sha3-rsa-cert-embedded / sha3-ecdsa-cert-embedded on Debian 12's 6.1: the message does
// not parse, ENOPKG): such a certificate is in no keyring and breaks a PKCS#7 that embeds
// it.  Profile v6 (6.12) parses both.
TEST_F(BlacklistCli, V61KnowsNoSha3Certificates) {
  const std::string crt = d_ / "sha3.crt";
  sh(test::openssl() + " req -x509 -new -key " + q(key("rsa.pem")) + " -sha3-256 -subj /CN=sha3-signed -days 30 -out " +
     q(crt));
  const std::string mod = d_ / "m.ko";
  test::spit(mod, test::pattern(5000));
  sh(M() + " sign --key " + q(key("rsa.pem")) + " --cert " + q(crt) + " --hash sha256 " + q(mod));
  const std::string note = "modsign: note: " + crt +
                           " certificate 1 is not loaded by a v6.1 kernel (ENOPKG: unsupported "
                           "certificate signature algorithm 2.16.840.1.101.3.4.3.14 (no SHA-3 before Linux 6.7))\n";
  // As the trusted key: v6 trusts it, v6.1 never loads it (a note says so).
  auto r = test::run(M() + " verify --kernel v6 --keyring " + q(crt) + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  r = test::run(M() + " verify --kernel v6.1 --keyring " + q(crt) + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, note);
  EXPECT_EQ(r.out, mod +
                       ": loads-tainted (ENOKEY): module with unavailable key: no trusted key matches the signer; "
                       "module verification failed: signature and/or required key missing - tainting kernel" +
                       test::load_scope("v6.1") + "\n");
  r = test::run(M() + " ima appraise --kernel v6.1 --keyring " + q(crt) + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, note);
  EXPECT_EQ(r.out, mod +
                       ": refused (EACCES): invalid-signature: ENOKEY: ima_modsig_verify: no trusted key matches the "
                       "signer\n");
  r = test::run(M() + " ima appraise --kernel v6 --keyring " + q(crt) + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  r = test::run(M() + " blacklist check --kernel v6.1 " + q(crt));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, crt +
                       ": not stopped\n  note: the v6.1 kernel cannot use this certificate at all (ENOPKG: unsupported "
                       "certificate signature algorithm 2.16.840.1.101.3.4.3.14 (no SHA-3 before Linux 6.7))\n");
  // No tbs: key under v6.1 (the certificate is never parsed); v6 hashes the TBS with SHA3-256.
  r = test::run(M() + " blacklist entry --kernel v6.1 " + q(crt));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "modsign: " + crt +
                ": no tbs: entry under v6.1: x509_cert_parse() refuses the certificate (ENOPKG: "
                "unsupported certificate signature algorithm 2.16.840.1.101.3.4.3.14 (no SHA-3 before Linux 6.7)), so "
                "no key is ever looked up for it\nmodsign: no entries to write\n");
  r = test::run(M() + " blacklist entry --kernel v6 " + q(crt));
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string tbs = first_word(sh(test::openssl() + " x509 -in " + q(crt) + " -outform DER | " + test::openssl() +
                                        " asn1parse -inform DER -strparse 4 -noout -out /dev/stdout | " +
                                        test::openssl() + " dgst -sha3-256 -r"));
  EXPECT_EQ(r.out, "\"tbs:" + tbs + "\"\n");
  // Embedded in a PKCS#7 next to the signer's own certificate: x509_cert_parse() fails, so
  // the whole message is unsupported crypto under v6.1.
  const std::string emb = test::openssl_cms_module(d_.path(), "emb.ko", "-noattr -nosmimecap -certfile " + q(crt),
                                                   key("rsa.crt"), key("rsa.pem"));
  r = test::run(M() + " verify --kernel v6 --keyring " + q(key("rsa.crt")) + " " + q(emb));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  r = test::run(M() + " verify --kernel v6.1 --keyring " + q(key("rsa.crt")) + " " + q(emb));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.rfind(emb + ": loads-tainted (ENOPKG): module with unsupported crypto: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("2.16.840.1.101.3.4.3.14 (no SHA-3 before Linux 6.7)"), std::string::npos) << r.out;
}
