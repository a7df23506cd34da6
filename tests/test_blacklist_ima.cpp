// The system blacklist under IMA (found in the hostile-input review): whole-file keys under
// an imasig-only rule, the blacklisted-hash record, and ima-appraise with d-modsig,
// including hostile inputs.
#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "blacklist_support.hpp"
#include "module/compression.hpp"
#include "module/module_signature.hpp"

using namespace modsign;
using namespace modsign::test::blacklist_tests;

// A rule that requires a signature without allowing modsig (appraise_type=imasig) makes
// IMA look up its hash of the whole file, signature included, even for a signed module:
// `check` names that stop with its condition; the d-modsig stop keeps its own.
TEST_F(BlacklistCli, SignedModuleWholeFileKeyStopsUnderImasigOnlyRule) {
  const std::string mod = signed_module("w.ko", "rsa.pem", "rsa.crt", "sha256");
  const std::string whole = "bin:" + first_word(sh("sha256sum " + q(mod)));
  const std::string dmodsig = "bin:" + first_word(sh("head -c 5000 " + q(mod) + " | sha256sum"));
  ASSERT_NE(whole, dmodsig);
  test::spit(d_ / "list", "\"" + whole + "\"\n");
  for (const std::string k : {"v7.0", "v6"}) {
    auto r = test::run(M() + " blacklist check --kernel " + k + " --list " + q(d_ / "list") + " " + q(mod));
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_EQ(r.out, mod + ": stopped by " + whole + " (" + (d_ / "list") +
                         " line 1): ima_check_blacklist() -> is_binary_blacklisted() "
                         "(security/integrity/ima/ima_appraise.c:428-452, certs/blacklist.c:247-254): EPERM [an IMA "
                         "appraise rule for MODULE_CHECK that requires a signature without allowing modsig "
                         "(appraise_type=imasig): IMA's sha256 of the whole file as stored]\n");
  }
  // --ima-hash sha512: the whole-file key is then the sha512sum, and the SHA-256 one no longer matches.
  auto r = test::run(M() + " blacklist check --ima-hash sha512 --list " + q(d_ / "list") + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out;
  // Both keys listed: two stops, the modsig one first.
  test::spit(d_ / "both", "\"" + dmodsig + "\",\n\"" + whole + "\"\n");
  r = test::run(M() + " blacklist check --json --list " + q(d_ / "both") + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["stops"].size(), 2u);
  EXPECT_EQ(j["stops"][0]["entry"], dmodsig);
  EXPECT_EQ(j["stops"][0]["condition"],
            "an IMA appraise rule for MODULE_CHECK that allows modsig (appraise_type=imasig|modsig)");
  EXPECT_EQ(j["stops"][1]["entry"], whole);
  EXPECT_EQ(j["stops"][1]["origins"][0]["where"], "line 2");
  // An unsigned module: the whole-file key is the only one, named once.
  test::spit(d_ / "plain.ko", test::pattern(3000));
  test::spit(d_ / "plain", "\"bin:" + first_word(sh("sha256sum " + q(d_ / "plain.ko"))) + "\"\n");
  r = test::run(M() + " blacklist check --json --list " + q(d_ / "plain") + " " + q(d_ / "plain.ko"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(nlohmann::json::parse(r.out)["stops"].size(), 1u);
}

// Each IMA stop carries the "blacklisted-hash" record the kernel adds when the rule also
// measures: an ima-buf entry whose buffer is the d-modsig digest, or empty when IMA's file
// hash was looked up (the kernel passes its still-NULL modsig digest; seen on 7.2.13 in
// tools/kernel-conformance).  The template data is rebuilt here from sha256sum/sha1sum.
TEST_F(BlacklistCli, ImaStopsCarryTheBlacklistedHashRecord) {
  const std::string mod = signed_module("m.ko", "rsa.pem", "rsa.crt", "sha256");
  const std::string whole = first_word(sh("sha256sum " + q(mod)));
  const std::string dmodsig = first_word(sh("head -c 5000 " + q(mod) + " | sha256sum"));
  test::spit(d_ / "both", "\"bin:" + dmodsig + "\",\n\"bin:" + whole + "\"\n");
  auto record = [&](const std::string& buf_hex) {
    const Bytes buf = from_hex(buf_hex);
    test::spit(d_ / "buf", buf);
    return std::string(
               "28000000"
               "7368613235363a00") +
           first_word(sh("sha256sum " + q(d_ / "buf"))) +
           "11000000"
           "626c61636b6c69737465642d6861736800" +
           (buf.empty() ? "00000000" : "20000000") + buf_hex;
  };
  auto sha1_of_hex = [&](const std::string& hex) {
    test::spit(d_ / "data", from_hex(hex));
    return first_word(sh("sha1sum " + q(d_ / "data")));
  };
  auto r = test::run(M() + " blacklist check --json --list " + q(d_ / "both") + " " + q(mod));
  EXPECT_EQ(r.status, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["stops"].size(), 2u);
  const auto& a = j["stops"][0]["ima_record"];
  EXPECT_EQ(a["template"], "ima-buf");
  EXPECT_EQ(a["event"], "blacklisted-hash");
  EXPECT_EQ(a["buf"], dmodsig);
  EXPECT_EQ(a["template_data"], record(dmodsig));
  EXPECT_EQ(a["template_hash_sha1"], sha1_of_hex(record(dmodsig)));
  const auto& b = j["stops"][1]["ima_record"];  // appraise_type=imasig: the whole file's hash
  EXPECT_EQ(b["buf"], "");
  EXPECT_EQ(b["template_data"], record(""));
  EXPECT_EQ(b["template_hash_sha1"], "3ed42715de7bcf37dd7f7d2fc58891c130c1ed47");  // as 7.2.13 recorded it
  // --ima-hash sha512 changes d-ng of the record (the buffer stays the modsig digest).
  r = test::run(M() + " blacklist check --json --ima-hash sha512 --list " + q(d_ / "both") + " " + q(mod));
  j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["stops"].size(), 1u);
  EXPECT_EQ(std::string(j["stops"][0]["ima_record"]["template_data"]).substr(0, 24),
            "48000000"
            "7368613531323a00");
  // A stop outside IMA has no record: the signer's certificate listed by its tbs: entry.
  r = test::run(M() + " blacklist entry -o " + q(d_ / "tbs") + " " + q(key("rsa.crt")));
  ASSERT_EQ(r.status, 0) << r.err;
  r = test::run(M() + " blacklist check --json --list " + q(d_ / "tbs") + " " + q(key("rsa.crt")));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["stops"].size(), 1u);
  EXPECT_EQ(std::string(j["stops"][0]["entry"]).substr(0, 4), "tbs:");
  EXPECT_FALSE(j["stops"][0].contains("ima_record"));
}

// `ima appraise`: an enforcing "appraise func=MODULE_CHECK appraise_type=imasig|modsig"
// rule on files without security.ima, step by step as Linux 7.2.13 did it under
// tools/kernel-conformance (kernel mldsa-ima).
TEST_F(BlacklistCli, ImaAppraiseModsig) {
  const std::string mod = signed_module("a.ko", "rsa.pem", "rsa.crt", "sha256");
  const std::string dmodsig = first_word(sh("head -c 5000 " + q(mod) + " | sha256sum"));
  const Bytes before = test::slurp(mod);
  // Passes: the modsig verifies against the .ima keyring.
  auto r = test::run(M() + " ima appraise --keyring " + q(key("rsa.crt")) + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, mod + ": passes: modsig verified (trusted: blacklist test RSA)\n");
  // Not on the keyring: invalid-signature, ENOKEY; refused with EACCES.
  r = test::run(M() + " ima appraise --keyring " + q(key("mldsa.crt")) + " --json " + q(mod));
  EXPECT_EQ(r.status, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "refused");
  EXPECT_EQ(j["errno"], "EACCES");
  EXPECT_EQ(j["cause"], "invalid-signature");
  EXPECT_EQ(j["check_errno"], "ENOKEY");
  EXPECT_FALSE(j.contains("ima_record"));
  // The d-modsig key listed: ima_check_blacklist comes first, whatever the keyring.
  test::spit(d_ / "list", "\"bin:" + dmodsig + "\"\n");
  r = test::run(M() + " ima appraise --keyring " + q(key("rsa.crt")) + " --blacklist " + q(d_ / "list") + " --json " +
                q(mod));
  EXPECT_EQ(r.status, 1);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cause"], "blacklisted");
  EXPECT_EQ(j["check_errno"], "EPERM");
  EXPECT_EQ(j["blacklist_entry"], "bin:" + dmodsig);
  EXPECT_EQ(j["ima_record"]["buf"], dmodsig);
  EXPECT_EQ(j["ima_record"]["field_length_order"], "little-endian");
  EXPECT_EQ(std::string(j["ima_record"]["template_data"]).substr(0, 8), "28000000");  // d-ng: 40 bytes, LE
  // On s390x the record's lengths are big-endian, and the JSON says so.
  r = test::run(M() + " ima appraise --kernel-arch s390x --keyring " + q(key("rsa.crt")) + " --blacklist " +
                q(d_ / "list") + " --json " + q(mod));
  EXPECT_EQ(r.status, 1);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ima_record"]["field_length_order"], "big-endian");
  EXPECT_EQ(std::string(j["ima_record"]["template_data"]).substr(0, 8), "00000028");
  // Unsigned: no modsig and no security.ima.
  test::spit(d_ / "plain.ko", test::pattern(3000));
  r = test::run(M() + " ima appraise --keyring " + q(key("rsa.crt")) + " " + q(d_ / "plain.ko"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, d_ / "plain.ko" + std::string(": refused (EACCES): no-modsig: ENOENT: ima_read_modsig: no appended "
                                                 "signature; no security.ima either (IMA-signature-required)\n"));
  // signedAttrs: ima_modsig_verify uses the module usage, which refuses authattrs.
  const std::string attrs = d_ / "attrs.ko";
  test::spit(attrs, test::pattern(5000));
  sh(M() + " sign --key " + q(key("rsa.pem")) + " --cert " + q(key("rsa.crt")) + " --signed-attrs " + q(attrs));
  r = test::run(M() + " ima appraise --keyring " + q(key("rsa.crt")) + " " + q(attrs));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, attrs +
                       ": refused (EACCES): invalid-signature: EKEYREJECTED: ima_modsig_verify: Invalid module sig "
                       "(has authattrs)\n");
  // A PKCS#7 that carries its own content, signed over other bytes: IMA verifies it over
  // those bytes and lets the file through; the module loader refuses it (EBADMSG).
  test::spit(d_ / "other", std::string("content that is not this module\n"));
  sh(test::openssl() + " cms -sign -binary -nodetach -noattr -nosmimecap -md sha256 -outform DER -in " +
     q(d_ / "other") + " -signer " + q(key("rsa.crt")) + " -inkey " + q(key("rsa.pem")) + " -out " + q(d_ / "p7"));
  const std::string foreign = d_ / "foreign.ko";
  test::spit(foreign, module::append_signature(test::pattern(5000), test::slurp(d_ / "p7")));
  r = test::run(M() + " ima appraise --keyring " + q(key("rsa.crt")) + " " + q(foreign));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out, foreign + ": passes: modsig verified (trusted: blacklist test RSA)\n");
  r = test::run(M() + " verify --cert " + q(key("rsa.crt")) + " " + q(foreign));
  EXPECT_EQ(r.out, foreign + ": refused (EBADMSG): PKCS#7 signature with non-detached data [kernel v7.0]\n");
  // Bad input: a missing module is exit 3 and named; nothing was written.
  r = test::run(M() + " ima appraise --keyring " + q(key("rsa.crt")) + " " + q(d_ / "missing.ko"));
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find(d_ / "missing.ko"), std::string::npos) << r.err;
  EXPECT_EQ(test::slurp(mod), before);
}

// `ima appraise` with hostile inputs (review rv-hostile): a compressed module the kernel
// cannot decompress, a malformed modsig, and unreadable inputs among good ones.
TEST_F(BlacklistCli, ImaAppraiseHostileInputs) {
  const std::string mod = signed_module("a.ko", "rsa.pem", "rsa.crt", "sha256");
  // xz with a CRC64 check: on 7.x IMA defers the compressed read (READING_MODULE_COMPRESSED)
  // and module_decompress() fails with EINVAL before the image is appraised; the signature
  // inside would verify.  Before 7.0 IMA appraised the compressed file: no modsig there.
  sh("cp " + q(mod) + " " + q(d_ / "c64.ko") + " && xz -C crc64 " + q(d_ / "c64.ko"));
  const std::string c64 = d_ / "c64.ko.xz";
  const Bytes c64_before = test::slurp(c64);
  const std::string crc64 =
      "xz stream uses a CRC64 check; the kernel's xz decoder accepts only CRC32 or none, so in-kernel decompression "
      "(module_decompress) fails with EINVAL: recompress with `xz --check=crc32`";
  auto r = test::run(M() + " ima appraise --keyring " + q(key("rsa.crt")) + " " + q(c64));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, c64 + ": refused (EINVAL): decompress: EINVAL: module_decompress: " + crc64 +
                       "; IMA never appraises the image\n");
  r = test::run(M() + " ima appraise --json --keyring " + q(key("rsa.crt")) + " " + q(c64));
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "refused");
  EXPECT_EQ(j["errno"], "EINVAL");
  EXPECT_EQ(j["cause"], "decompress");
  EXPECT_EQ(j["check_errno"], "EINVAL");
  // verify agrees on the errno.
  r = test::run(M() + " verify --cert " + q(key("rsa.crt")) + " " + q(c64));
  EXPECT_EQ(r.out.rfind(c64 + ": refused (EINVAL): " + crc64, 0), 0u) << r.out;
  r = test::run(M() + " ima appraise --kernel v6 --keyring " + q(key("rsa.crt")) + " " + q(c64));
  EXPECT_EQ(r.out, c64 +
                       ": refused (EACCES): no-modsig: ENOENT: ima_read_modsig: no appended signature; no "
                       "security.ima either (IMA-signature-required)\n");
  EXPECT_EQ(test::slurp(c64), c64_before);
  // A truncated xz stream (the new-user trial): a prediction like the CRC64 one, not an
  // input error, as `ima template` predicts it; --max-size stays modsign's own bound (exit 3).
  sh("cp " + q(mod) + " " + q(d_ / "t.ko") + " && xz -C crc32 " + q(d_ / "t.ko") + " && head -c 300 " +
     q(d_ / "t.ko.xz") + " > " + q(d_ / "cut.ko.xz"));
  const std::string cut = d_ / "cut.ko.xz";
  r = test::run(M() + " ima appraise --keyring " + q(key("rsa.crt")) + " " + q(cut));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, cut +
                       ": refused (EINVAL): decompress: EINVAL: module_decompress: xz-compressed module: "
                       "truncated xz data; IMA never appraises the image\n");
  r = test::run(M() + " ima appraise --kernel v6 --keyring " + q(key("rsa.crt")) + " " + q(cut));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, cut +
                       ": refused (EACCES): no-modsig: ENOENT: ima_read_modsig: no appended signature; no "
                       "security.ima either (IMA-signature-required)\n");
  r = test::run(M() + " ima appraise --max-size 1000 --keyring " + q(key("rsa.crt")) + " " + q(d_ / "t.ko.xz"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("decompressed size exceeds the limit of 1000"), std::string::npos) << r.err;
  // A modsig whose PKCS#7 does not parse (sig_len 0 before a valid trailer): no-modsig, with
  // the same ending as the other no-modsig reasons.
  Bytes bad = test::pattern(100);
  const Bytes trailer = module::encode_module_signature(0);
  bad.insert(bad.end(), trailer.begin(), trailer.end());
  bad.insert(bad.end(), module::kMarker.begin(), module::kMarker.end());
  test::spit(d_ / "zero.ko", bad);
  r = test::run(M() + " ima appraise " + q(d_ / "zero.ko"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, d_ / "zero.ko" + std::string(": refused (EACCES): no-modsig: EBADMSG: ima_read_modsig: "
                                                "pkcs7_parse_message: ASN.1 decoder: missing ContentInfo; no "
                                                "security.ima either (IMA-signature-required)\n"));
  // Unreadable inputs among good ones: each is named on stderr, the others are still
  // appraised, the exit status is the worst (3), and --json keeps line N for input N.
  ASSERT_EQ(mkfifo((d_ / "fifo.ko").c_str(), 0644), 0);
  const std::string cmd = M() + " ima appraise --keyring " + q(key("rsa.crt")) + " " + q(mod) + " " +
                          q(d_ / "missing.ko") + " " + q(d_ / "fifo.ko") + " " + q(d_ / "zero.ko");
  r = test::run("timeout 60 " + cmd);
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d_ / "missing.ko" + ": No such file or directory\nmodsign: " + d_ / "fifo.ko" +
                       ": is a FIFO, not a regular file\n");
  EXPECT_EQ(r.out.rfind(mod + ": passes: modsig verified (trusted: blacklist test RSA)\n" + d_ / "zero.ko" +
                            ": refused (EACCES): no-modsig",
                        0),
            0u)
      << r.out;
  r = test::run("timeout 60 " + cmd + " --json");
  EXPECT_EQ(r.status, 3);
  std::vector<nlohmann::json> lines;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) lines.push_back(nlohmann::json::parse(l));
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0]["outcome"], "pass");
  EXPECT_EQ(lines[1]["path"], d_ / "missing.ko");
  EXPECT_EQ(lines[1]["outcome"], "error");
  EXPECT_EQ(lines[1]["errno"], nullptr);
  // The reason names no file (the record's path does), as verify --json gives it.
  EXPECT_EQ(lines[1]["reason"], "No such file or directory");
  EXPECT_EQ(lines[2]["outcome"], "error");
  EXPECT_EQ(lines[2]["reason"], "is a FIFO, not a regular file");
  EXPECT_EQ(lines[3]["cause"], "no-modsig");
}
