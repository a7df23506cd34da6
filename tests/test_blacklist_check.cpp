// The system blacklist's bin: entries of modules (confirmed with sha256sum), the checker,
// and the CLI end to end: blacklist entry/check/lint/merge, verify --blacklist/--revoked,
// EFI_SIGNATURE_LIST sources.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "blacklist_support.hpp"
#include "module/compression.hpp"

using namespace modsign;
using namespace modsign::test::blacklist_tests;

// ------------------------------------------------------------------ module entries and the CLI

TEST_F(BlacklistCli, RsaSha256ModuleEntryIsSha256sumOfContentAndCheckStopsItOnBothProfiles) {
  const std::string mod = signed_module("rsa.ko", "rsa.pem", "rsa.crt", "sha256");
  // sha256sum of the 5000 content bytes, independently of modsign.
  const std::string want = "bin:" + first_word(sh("head -c 5000 " + q(mod) + " | sha256sum"));
  for (const std::string k : {"v7.0", "v6"}) {
    auto r = test::run(M() + " blacklist entry --kernel " + k + " -o " + q(d_ / "list") + " " + q(mod));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "");
    const Bytes written = test::slurp(d_ / "list");
    EXPECT_EQ(std::string(written.begin(), written.end()), "\"" + want + "\"\n");
    r = test::run(M() + " blacklist check --kernel " + k + " --list " + q(d_ / "list") + " " + q(mod));
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_EQ(r.out, mod + ": stopped by " + want + " (" + (d_ / "list") +
                         " line 1): ima_check_blacklist() -> is_binary_blacklisted() "
                         "(security/integrity/ima/ima_appraise.c:428-452, certs/blacklist.c:247-254): EPERM [an IMA "
                         "appraise rule for MODULE_CHECK that allows modsig (appraise_type=imasig|modsig)]\n");
    r = test::run(M() + " blacklist check --json --kernel " + k + " --list " + q(d_ / "list") + " " + q(mod));
    EXPECT_EQ(r.status, 1);
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["stopped"], true);
    EXPECT_EQ(j["source"], "d-modsig");
    EXPECT_EQ(j["stops"][0]["errno"], "EPERM");
    EXPECT_EQ(j["stops"][0]["origins"][0]["where"], "line 1");
  }
  // An empty-handed list: not stopped, exit 0.
  test::spit(d_ / "other", "\"bin:" + hexes(64, '0') + "\"\n");
  auto r = test::run(M() + " blacklist check --list " + q(d_ / "other") + " " + q(mod));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, mod + ": not stopped\n");
  // Printed to standard output without -o, as a hash list.
  r = test::run(M() + " blacklist entry " + q(mod) + " " + q(key("rsa.crt")));
  EXPECT_EQ(r.status, 0);
  auto certs = crypto::Certificate::load_all(key("rsa.crt"));
  EXPECT_EQ(r.out, "\"" + want + "\",\n\"tbs:" + sha256_of(Bytes((*certs)[0].tbs().begin(), (*certs)[0].tbs().end())) +
                       "\"\n");
}

TEST_F(BlacklistCli, UnsignedAndCompressedModules) {
  test::spit(d_ / "plain.ko", test::pattern(3000));
  const std::string whole = "bin:" + first_word(sh("sha256sum " + q(d_ / "plain.ko")));
  auto r = test::run(M() + " blacklist entry --json " + q(d_ / "plain.ko"));
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["entry"], whole);
  EXPECT_EQ(j["source"], "ima-hash");
  // ima_hash= sha512: the whole file with SHA-512.
  r = test::run(M() + " blacklist entry --ima-hash sha512 " + q(d_ / "plain.ko"));
  EXPECT_EQ(r.out, "\"bin:" + first_word(sh("sha512sum " + q(d_ / "plain.ko"))) + "\"\n");
  // A signed module compressed with xz: v7.0 looks at the decompressed image's modsig,
  // v6 at the compressed file as stored.
  const std::string mod = signed_module("c.ko", "rsa.pem", "rsa.crt", "sha256", 7000);
  const std::string content = "bin:" + first_word(sh("head -c 7000 " + q(mod) + " | sha256sum"));
  sh("xz --check=crc32 --lzma2=dict=1MiB -k " + q(mod));
  r = test::run(M() + " blacklist entry " + q(mod + ".xz"));
  EXPECT_EQ(r.out, "\"" + content + "\"\n") << r.err;
  r = test::run(M() + " blacklist entry --kernel v6 " + q(mod + ".xz"));
  EXPECT_EQ(r.out, "\"bin:" + first_word(sh("sha256sum " + q(mod + ".xz"))) + "\"\n") << r.err;
  // xz with a CRC64 check: the kernel's decompressor refuses it, so nothing is checked.
  sh("xz --check=crc64 -c " + q(mod) + " > " + q(mod + ".crc64.xz"));
  r = test::run(M() + " blacklist check --json " + q(mod + ".crc64.xz"));
  EXPECT_EQ(r.status, 0);
  j = nlohmann::json::parse(r.out);
  ASSERT_GE(j["notes"].size(), 1u);
  EXPECT_EQ(std::string(j["notes"][0]).rfind("the kernel's module_decompress() refuses this file (", 0), 0u) << r.out;
}

TEST_F(BlacklistCli, MlDsaWithoutSignedAttrsCannotBeStoppedByBinOnV7) {
  const std::string mod = signed_module("ml.ko", "mldsa.pem", "mldsa.crt", "sha512", 6000);
  const std::string side = "bin:" + first_word(sh("head -c 6000 " + q(mod) + " | sha256sum"));
  auto r = test::run(M() + " blacklist entry " + q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "modsign: " + mod +
                       ": no bin: entry exists under v7.0: ima_collect_modsig() gets no digest (EINVAL: "
                       "pkcs7_get_digest: No digest available), so ima_check_blacklist() looks up \"bin:\", which no "
                       "key can be; the side SHA-256 "
                       "entry " +
                       side +
                       " (--side-sha256) would stop it under the proposed behaviour\n"
                       "modsign: no entries to write\n");
  r = test::run(M() + " blacklist entry --side-sha256 -o " + q(d_ / "side") + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.err;
  const Bytes side_list = test::slurp(d_ / "side");
  EXPECT_EQ(std::string(side_list.begin(), side_list.end()), "\"" + side + "\"\n");
  r = test::run(M() + " blacklist check --list " + q(d_ / "side") + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, mod +
                       ": not stopped\n  note: no bin: entry can stop it under v7.0 through the modsig: "
                       "ima_collect_modsig() gets no "
                       "digest (EINVAL: pkcs7_get_digest: No digest available), so ima_check_blacklist() looks up "
                       "\"bin:\", which no key can "
                       "be; under the proposed behaviour (side SHA-256 of the signed content) " +
                       side +
                       " would stop it\n"
                       "  note: " +
                       side + " is listed, but v7.0 does not look it up\n");
  // With signedAttrs (sign-file's OpenSSL 3 form, the waiver) the "digest" IMA gets is the
  // re-tagged attribute blob itself: longer than any key can be.
  test::spit(d_ / "mla.ko", test::pattern(6000));
  sh(M() + " sign --signed-attrs --hash sha512 --key " + q(key("mldsa.pem")) + " --cert " + q(key("mldsa.crt")) + " " +
     q(d_ / "mla.ko"));
  r = test::run(M() + " blacklist entry --json " + q(d_ / "mla.ko"));
  EXPECT_EQ(r.status, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["entry"], nullptr);
  EXPECT_EQ(j["source"], "none");
  EXPECT_EQ(j["side_sha256_entry"], side);
  const std::string ex = j["explanation"];
  EXPECT_EQ(ex.rfind("pkcs7_get_digest() returns the ", 0), 0u) << ex;
  EXPECT_NE(ex.find("-byte re-tagged signedAttrs, longer than the 128 hex digits a key may hold"), std::string::npos)
      << ex;
  // v6 cannot parse ML-DSA: IMA has no modsig and looks up the hash of the whole file.
  r = test::run(M() + " blacklist entry --kernel v6 " + q(mod));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "\"bin:" + first_word(sh("sha256sum " + q(mod))) + "\"\n");
}

TEST_F(BlacklistCli, RevokedCertificateAndTbsEntryInVerify) {
  const std::string mod = signed_module("v.ko", "rsa.pem", "rsa.crt", "sha256");
  auto r = test::run(M() + " verify --cert " + q(key("rsa.crt")) + " " + q(mod));
  ASSERT_EQ(r.status, 0) << r.out;
  // Revoked signing certificate: is_key_on_revocation_list() -> EKEYREJECTED (fatal).
  r = test::run(M() + " verify --cert " + q(key("rsa.crt")) + " --revoked " + q(key("rsa.crt")) + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, mod + ": refused (EKEYREJECTED): Key is on the revocation list [kernel v7.0]\n");
  // tbs: entry of the signing certificate, which sign-file does not embed: the kernel
  // never adds the certificate to its keyring (x509_key_preparse: EKEYREJECTED), so the
  // signature has no key: ENOKEY, tainted — refused with EKEYREJECTED when enforcing.
  r = test::run(M() + " blacklist entry -o " + q(d_ / "tbs") + " " + q(key("rsa.crt")));
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run(M() + " verify --json --cert " + q(key("rsa.crt")) + " --blacklist " + q(d_ / "tbs") + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "loads-tainted");
  EXPECT_EQ(j["errno"], "ENOKEY");
  // The reason names the tbs: entry that stopped the key, as `blacklist check` does.
  {
    const std::string tbs_line = first_word(sh("cat " + q(d_ / "tbs")));
    const std::string entry = tbs_line.substr(1, tbs_line.size() - 2);  // without the quotes
    ASSERT_EQ(entry.rfind("tbs:", 0), 0u) << tbs_line;
    EXPECT_EQ(j["reason"],
              "module with unavailable key: no trusted key matches the signer; the signer's certificate \"" +
                  crypto::Certificate::load_all(key("rsa.crt"))->front().subject_cn() +
                  "\" is kept out of the keyring by blacklist entry " + entry +
                  "; module verification failed: signature and/or required key missing - tainting kernel");
  }
  r = test::run(M() + " verify --enforce --json --cert " + q(key("rsa.crt")) + " --blacklist " + q(d_ / "tbs") + " " +
                q(mod));
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "refused");
  EXPECT_EQ(j["errno"], "EKEYREJECTED");
  // The same certificate embedded in the PKCS#7 (openssl cms, no signedAttrs): pkcs7_verify
  // finds it blacklisted: EKEYREJECTED, fatal even without enforcement.
  const std::string emb =
      test::openssl_cms_module(d_.path(), "emb.ko", "-noattr -nosmimecap", key("rsa.crt"), key("rsa.pem"));
  r = test::run(M() + " verify --json --cert " + q(key("rsa.crt")) + " " + q(emb));
  EXPECT_EQ(nlohmann::json::parse(r.out)["outcome"], "loads") << r.out;
  r = test::run(M() + " verify --json --cert " + q(key("rsa.crt")) + " --blacklist " + q(d_ / "tbs") + " " + q(emb));
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "refused");
  EXPECT_EQ(j["errno"], "EKEYREJECTED");
  EXPECT_EQ(j["reason"], "Sig 1: signer certificate is blacklisted");
  // `blacklist check` names the same stops.
  r = test::run(M() + " blacklist check --json --revoked " + q(key("rsa.crt")) + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stops"][0]["entry"], "revoked certificate CN = blacklist test RSA");
  EXPECT_EQ(j["stops"][0]["errno"], "EKEYREJECTED");
  EXPECT_EQ(j["stops"][0]["origins"][0]["where"], "certificate 1");
  r = test::run(M() + " blacklist check --json --list " + q(d_ / "tbs") + " --keyring " + q(key("rsa.crt")) + " " +
                q(mod));
  EXPECT_EQ(r.status, 1);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stops"][0]["errno"], "ENOKEY");
  r = test::run(M() + " blacklist check --json --list " + q(d_ / "tbs") + " " + q(emb));
  EXPECT_EQ(r.status, 1);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stops"][0]["errno"], "EKEYREJECTED");
  auto certs = crypto::Certificate::load_all(key("rsa.crt"));
  EXPECT_EQ(j["stops"][0]["entry"], "tbs:" + sha256_of(Bytes((*certs)[0].tbs().begin(), (*certs)[0].tbs().end())));
  // A revoked certificate whose own tbs: key is listed never reaches the .blacklist
  // keyring (x509_key_preparse refuses it), so it revokes nothing: only the keyring
  // exclusion remains (ENOKEY).
  r = test::run(M() + " verify --json --cert " + q(key("rsa.crt")) + " --blacklist " + q(d_ / "tbs") + " --revoked " +
                q(key("rsa.crt")) + " " + q(mod));
  EXPECT_EQ(nlohmann::json::parse(r.out)["errno"], "ENOKEY");
  EXPECT_EQ(r.err, "modsign: note: " + key("rsa.crt") + " certificate 1 is not loaded: its " +
                       std::string(j["stops"][0]["entry"]) + " is listed (x509_key_preparse: EKEYREJECTED)\n");
  // An ML-DSA certificate means nothing to a v6 kernel.
  r = test::run(M() + " blacklist check --kernel v6 --revoked " + q(key("mldsa.crt")) + " " + q(mod));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(
      r.err.rfind("modsign: note: " + key("mldsa.crt") + " certificate 1 is not loaded by a v6 kernel (ENOPKG", 0), 0u)
      << r.err;
  // The same ML-DSA certificate as an EFI_CERT_X509 entry of a --dbx file gives the same
  // note, in blacklist check and verify alike.
  ASSERT_EQ(test::run(M() + " blacklist entry --format esl --owner 77fa9abd-0359-4d32-bd60-28f4e78f784b -o " +
                      q(d_ / "ml.esl") + " " + q(key("mldsa.crt")))
                .status,
            0);
  const std::string dbx_note =
      "modsign: note: " + (d_ / "ml.esl") + " list 1 entry 1 (EFI_CERT_X509) is not loaded by a v6 kernel (ENOPKG";
  r = test::run(M() + " blacklist check --kernel v6 --dbx " + q(d_ / "ml.esl") + " " + q(mod));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, mod + ": not stopped\n");
  EXPECT_EQ(r.err.rfind(dbx_note, 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const std::string revoked_note =
      test::run(M() + " blacklist check --kernel v6 --revoked " + q(key("mldsa.crt")) + " " + q(mod)).err;
  EXPECT_EQ(r.err.substr(dbx_note.size()), revoked_note.substr(revoked_note.find(" (ENOPKG") + 8)) << r.err;
  r = test::run(M() + " verify --kernel v6 --cert " + q(key("rsa.crt")) + " --dbx " + q(d_ / "ml.esl") + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.rfind(dbx_note, 0), 0u) << r.err;
  // Without --keyring the non-embedded signer's tbs: entry cannot be matched.
  r = test::run(M() + " blacklist check --list " + q(d_ / "tbs") + " " + q(mod));
  EXPECT_EQ(r.status, 0);
}

TEST_F(BlacklistCli, LintAndMerge) {
  test::spit(d_ / "good", "\"bin:aa\",\n\"bin:bb\",\n\"bin:aa\"\n");
  auto r = test::run(M() + " blacklist lint " + q(d_ / "good"));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, (d_ / "good") +
                       ":3:1: duplicate of an earlier entry (the kernel logs \"Duplicate blacklisted hash\" "
                       "and keeps one) [warning]\n" +
                       (d_ / "good") + ": ok, 3 entries, 1 duplicate\n");
  test::spit(d_ / "bad", "\"bin:aa\",\n\"tbs:ABCD\",\n\"bin:abc\",\n");
  r = test::run(M() + " blacklist lint " + q(d_ / "bad"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, (d_ / "bad") +
                       ":2:6: upper-case hex digit 'A' (awk: Not a lowercase hexadecimal string (item 2))\n" +
                       (d_ / "bad") +
                       ":3:6: odd number of hex digits (3) (awk: Not an even number of hexadecimal "
                       "characters (item 3))\n" +
                       (d_ / "bad") +
                       ":3:10: ',' after the last entry (only blanks follow it) (awk: Not a string (item 4))\n");
  r = test::run(M() + " blacklist lint --json " + q(d_ / "bad"));
  EXPECT_EQ(r.status, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["awk_accepts"], false);
  EXPECT_EQ(j["build_accepts"], false);
  EXPECT_EQ(j["entries"], 1);
  ASSERT_EQ(j["problems"].size(), 3u);
  EXPECT_EQ(j["problems"][0]["line"], 2);
  EXPECT_EQ(j["problems"][0]["column"], 6);
  EXPECT_EQ(j["problems"][0]["item"], 2);
  EXPECT_EQ(j["problems"][0]["stage"], "awk");
  EXPECT_EQ(j["problems"][0]["awk"], "Not a lowercase hexadecimal string (item 2)");
  test::spit(d_ / "trail", "\"bin:aa\",");
  r = test::run(M() + " blacklist lint " + q(d_ / "trail"));
  EXPECT_EQ(r.status, 1);
  r = test::run(M() + " blacklist lint --awk-only " + q(d_ / "trail"));
  EXPECT_EQ(r.status, 0);
  r = test::run(M() + " blacklist lint --json " + q(d_ / "trail"));
  EXPECT_EQ(r.status, 1);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["awk_accepts"], true);
  EXPECT_EQ(j["build_accepts"], false);
  EXPECT_EQ(j["problems"][0]["stage"], "build");
  EXPECT_EQ(j["problems"][0]["awk"], nullptr);
  r = test::run(M() + " blacklist lint " + q(d_ / "missing"));
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("modsign: "), std::string::npos);
  // merge: first-seen order, duplicates counted on stderr, exact bytes.
  test::spit(d_ / "two", "\"bin:cc\", \"bin:bb\"");
  r = test::run(M() + " blacklist merge -o " + q(d_ / "merged") + " " + q(d_ / "good") + " " + q(d_ / "two"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "modsign: 3 entries from 2 files, 2 duplicates dropped\n");
  const Bytes m = test::slurp(d_ / "merged");
  EXPECT_EQ(std::string(m.begin(), m.end()), "\"bin:aa\",\n\"bin:bb\",\n\"bin:cc\"\n");
  // A bad input: exit 3, the problem named, nothing written.
  r = test::run(M() + " blacklist merge -o " + q(d_ / "m2") + " " + q(d_ / "good") + " " + q(d_ / "bad"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + (d_ / "bad") +
                       ":2:6: upper-case hex digit 'A' (awk: Not a lowercase hexadecimal "
                       "string (item 2))\n");
  EXPECT_NE(test::run("test -e " + q(d_ / "m2")).status, 0);
  // check refuses a list the build would refuse.
  r = test::run(M() + " blacklist check --list " + q(d_ / "bad") + " " + q(d_ / "good"));
  EXPECT_EQ(r.status, 3);
}

// A real Debian module (RSA/SHA-256, as Debian signs them): its bin: entry is the sha256sum
// of the module without the signature trailer; re-signed by modsign with RSA/SHA-256 it is
// the same; stripped, IMA hashes the whole file, which is again the same bytes.
TEST(BlacklistRealModules, DebianModuleEntryIsSha256sumOfContent) {
  auto f = test::run(q(test::source_dir() + "/tools/fetch-debian-kernel"));
  if (f.status == 77) GTEST_SKIP() << "no Debian kernel package reachable: " << f.err;
  ASSERT_EQ(f.status, 0) << f.err;
  const auto pos = f.out.find("MODULES=");
  const std::string modules = f.out.substr(pos + 8, f.out.find('\n', pos) - pos - 8);
  auto list = test::run("find " + q(modules) + " -name '*.ko' -type f | sort | head -n 1");
  ASSERT_EQ(list.status, 0);
  const std::string mod = list.out.substr(0, list.out.find('\n'));
  const Bytes file = test::slurp(mod);
  ASSERT_GT(file.size(), 40u);
  // sig_len: big-endian u32 just before the 28-byte marker.
  const std::size_t at = file.size() - 28 - 4;
  const std::size_t sig_len = (std::size_t{file[at]} << 24) | (std::size_t{file[at + 1]} << 16) |
                              (std::size_t{file[at + 2]} << 8) | file[at + 3];
  const std::size_t content = file.size() - 28 - 12 - sig_len;
  const std::string want =
      "bin:" + first_word(sh("head -c " + std::to_string(content) + " " + q(mod) + " | sha256sum"));
  auto r = test::run(M() + " blacklist entry --json " + q(mod));
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["entry"], want);
  EXPECT_EQ(j["source"], "d-modsig");
  EXPECT_EQ(j["algo"], "sha256");
  test::TempDir d;
  sh(M() + " keygen --algo rsa-2048 --out " + q(d / "k.pem") + " --cert-out " + q(d / "k.crt"));
  sh("cp " + q(mod) + " " + q(d / "m.ko"));
  sh(M() + " sign --replace --hash sha256 --key " + q(d / "k.pem") + " --cert " + q(d / "k.crt") + " " + q(d / "m.ko"));
  r = test::run(M() + " blacklist entry --kernel v6 " + q(d / "m.ko"));
  EXPECT_EQ(r.out, "\"" + want + "\"\n");
  sh(M() + " strip " + q(d / "m.ko"));
  r = test::run(M() + " blacklist entry " + q(d / "m.ko"));
  EXPECT_EQ(r.out, "\"bin:" + first_word(sh("sha256sum " + q(d / "m.ko"))) + "\"\n");
  EXPECT_EQ(r.out, "\"" + want + "\"\n");
}

// `entry --format esl` writes what the kernel's dbx handler can use (EFI_CERT_SHA256 for a
// 32-byte bin: key, EFI_CERT_X509 for a certificate); `check --dbx` and `verify --dbx`
// read it back through the efi loader.
TEST_F(BlacklistCli, EslEntriesAndDbxChecks) {
  const std::string mod = signed_module("e.ko", "rsa.pem", "rsa.crt", "sha256");
  const Bytes hash = crypto::digest(crypto::HashAlgo::sha256, test::pattern(5000));
  const std::string owner = "77fa9abd-0359-4d32-bd60-28f4e78f784b";
  auto r = test::run(M() + " blacklist entry --format esl --owner " + owner + " -o " + q(d_ / "x.esl") + " " + q(mod) +
                     " " + q(key("rsa.crt")));
  ASSERT_EQ(r.status, 0) << r.err;
  auto certs = crypto::Certificate::load_all(key("rsa.crt"));
  ASSERT_TRUE(certs.ok());
  const Bytes der = (*certs)[0].der();
  Bytes want = {
      0x26, 0x16, 0xc4, 0xc1, 0x4c, 0x50, 0x92, 0x40, 0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93, 0x43, 0x28,  // EFI_CERT_SHA256
      76,   0,    0,    0,    0,    0,    0,    0,    48,   0,    0,    0,    0xbd, 0x9a, 0xfa, 0x77, 0x59,
      0x03, 0x32, 0x4d, 0xbd, 0x60, 0x28, 0xf4, 0xe7, 0x8f, 0x78, 0x4b};  // owner
  want.insert(want.end(), hash.begin(), hash.end());
  const Bytes x509 = {0xa1, 0x59, 0xc0, 0xa5, 0xe4, 0x94, 0xa7, 0x4a, 0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72};
  want.insert(want.end(), x509.begin(), x509.end());
  auto le32 = [&](std::size_t v) {
    for (int i = 0; i < 4; ++i) want.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  le32(28 + 16 + der.size());
  le32(0);
  le32(16 + der.size());
  want.insert(want.end(), want.begin() + 28, want.begin() + 44);  // the same owner
  want.insert(want.end(), der.begin(), der.end());
  EXPECT_EQ(test::slurp(d_ / "x.esl"), want);
  // The bin: key from the dbx stops the module under IMA; the certificate revokes the signer.
  r = test::run(M() + " blacklist check --json --dbx " + q(d_ / "x.esl") + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stops"][0]["entry"], "bin:" + to_hex(hash));
  EXPECT_EQ(j["stops"][0]["errno"], "EPERM");
  EXPECT_EQ(j["stops"][0]["origins"][0]["file"], d_ / "x.esl");
  EXPECT_EQ(j["stops"][1]["entry"], "revoked certificate CN = blacklist test RSA");
  EXPECT_EQ(j["stops"][1]["errno"], "EKEYREJECTED");
  r = test::run(M() + " verify --cert " + q(key("rsa.crt")) + " --dbx " + q(d_ / "x.esl") + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, mod + ": refused (EKEYREJECTED): Key is on the revocation list [kernel v7.0]\n");
  // A 64-byte d-modsig (RSA/SHA-512) has no dbx form the kernel reads.
  const std::string m512 = signed_module("s512.ko", "rsa.pem", "rsa.crt", "sha512");
  r = test::run(M() + " blacklist entry --format esl --owner " + owner + " -o " + q(d_ / "y.esl") + " " + q(m512));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("is a 64-byte hash: dbx carries bin: keys only as EFI_CERT_SHA256"), std::string::npos) << r.err;
  EXPECT_NE(test::run("test -e " + q(d_ / "y.esl")).status, 0);
  // An unreadable item: exit 3 and no file written.
  r = test::run(M() + " blacklist entry -o " + q(d_ / "n.list") + " " + q(mod) + " " + q(d_ / "missing.ko"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + (d_ / "missing.ko") + ": No such file or directory\n");
  EXPECT_NE(test::run("test -e " + q(d_ / "n.list")).status, 0);
  // --owner is required, and must be a GUID.
  r = test::run(M() + " blacklist entry --format esl -o " + q(d_ / "z.esl") + " " + q(mod));
  EXPECT_EQ(r.status, 2);
  // A broken dbx file is refused (exit 3).
  test::spit(d_ / "bad.esl", Bytes(20, 0));
  r = test::run(M() + " blacklist check --dbx " + q(d_ / "bad.esl") + " " + q(mod));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err.rfind("modsign: " + (d_ / "bad.esl") + ": EBADMSG: ", 0), 0u) << r.err;
}
