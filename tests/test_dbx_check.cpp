// modsign dbx check / import-json / diff / hash and the library calls behind them
// (include/modsign/efi_image.hpp): the firmware's db/dbx verdict on images signed here with
// sbsign (confirmed with sbverify), Microsoft's dbx JSON (tests/vectors/msft-secureboot-objects),
// SVN records, SBAT parsing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "crypto/crypto.hpp"

#include "efi_support.hpp"
#include "modsign/efi_image.hpp"

using namespace modsign;
using namespace modsign::test::efi_tests;

namespace {
using test::sh;

const std::string kSeeds = test::source_dir() + "/tests/fuzz/corpus/pe/";
const std::string kJson = test::vector_path("msft-secureboot-objects/dbx_info_msft_latest-excerpt.json");

/// d/k.pem, d/c.pem (self-signed "CN=<cn>"), d/c.der; d/signed.efi: the x86-64 fuzz seed
/// signed with it by sbsign.
void sign_seed(const TempDir& d, const std::string& cn = "modsign dbx check signer") {
  sh(test::openssl() + " req -x509 -newkey rsa:2048 -nodes -keyout " + q(d / "k.pem") + " -out " + q(d / "c.pem") +
     " -days 30 -subj " + q("/CN=" + cn) + " 2>/dev/null");
  sh(test::openssl() + " x509 -in " + q(d / "c.pem") + " -outform DER -out " + q(d / "c.der"));
  sh("sbsign --key " + q(d / "k.pem") + " --cert " + q(d / "c.pem") + " --output " + q(d / "signed.efi") + " " +
     q(kSeeds + "pe32plus-x86-64") + " 2>/dev/null");
}

std::string esl_of_cert(const TempDir& d, const std::string& der, const std::string& out) {
  sh(cli() + " dbx add-cert --owner " + kOwnerA.str() + " -o " + q(d / out) + " " + q(der));
  return d / out;
}

nlohmann::json json_line(const std::string& s) { return nlohmann::json::parse(s.substr(0, s.find('\n'))); }

}  // namespace

// ------------------------------------------------------------------- firmware verdicts

TEST(DbxCheck, SignedImageAllowedByDbCertificateAsSbverifyAgrees) {
  TempDir d;
  sign_seed(d);
  const std::string db = esl_of_cert(d, d / "c.der", "db.esl");
  spit(d / "empty.esl", Bytes{});
  auto r = run(cli() + " dbx check --dbx " + q(d / "empty.esl") + " --db " + q(db) + " " + q(d / "signed.efi"));
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string sha = to_hex(authenticode_file(d / "signed.efi")->sha256);
  EXPECT_EQ(r.out, d / "signed.efi" +
                       ": allowed: signature 1 verifies against db certificate \"CN = modsign dbx check signer\" (" +
                       db + " list 1 entry 1, byte offset 28)\n  authenticode-sha256: " + sha + "\n");
  // The same certificate as MokListRT (what shim admits besides db): allowed the same way.
  r = run(cli() + " dbx check --json --dbx " + q(d / "empty.esl") + " --mok " + q(db) + " " + q(d / "signed.efi"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json_line(r.out)["rule"], "allowed_by_db_certificate");
  EXPECT_EQ(json_line(r.out)["entry"]["file"], db);
  // sbverify (OpenSSL PKCS7_verify, as firmware) accepts the same signature with that certificate.
  EXPECT_EQ(run("sbverify --cert " + q(d / "c.pem") + " " + q(d / "signed.efi") + " 2>&1").status, 0);

  // Another certificate in db: no signature verifies; sbverify refuses too.
  TempDir o;
  sign_seed(o, "someone else");
  const std::string other = esl_of_cert(o, o / "c.der", "db.esl");
  r = run(cli() + " dbx check --json --dbx " + q(d / "empty.esl") + " --db " + q(other) + " " + q(d / "signed.efi"));
  EXPECT_EQ(r.status, 1) << r.err;
  auto j = json_line(r.out);
  EXPECT_EQ(j["verdict"], "refused");
  EXPECT_EQ(j["rule"], "not_allowed_by_db");
  EXPECT_EQ(j["entry"], nullptr);
  EXPECT_EQ(j["signatures"][0]["digest_matches"], true);
  EXPECT_EQ(j["signatures"][0]["allowed_by"], nullptr);
  EXPECT_NE(run("sbverify --cert " + q(o / "c.pem") + " " + q(d / "signed.efi") + " 2>&1").status, 0);

  // A byte flipped in .text: the digest no longer matches, so the db certificate admits
  // nothing (AuthenticodeVerify compares the digest first).
  Bytes b = slurp(d / "signed.efi");
  const auto info = authenticode_image(b);
  ASSERT_TRUE(info.ok());
  b[info->sections[0].pointer_to_raw_data + 1] ^= 1;
  spit(d / "flipped.efi", b);
  r = run(cli() + " dbx check --json --dbx " + q(d / "empty.esl") + " --db " + q(db) + " " + q(d / "flipped.efi"));
  EXPECT_EQ(r.status, 1);
  j = json_line(r.out);
  EXPECT_EQ(j["rule"], "not_allowed_by_db");
  EXPECT_EQ(j["signatures"][0]["digest_matches"], false);
  EXPECT_NE(run("sbverify --cert " + q(d / "c.pem") + " " + q(d / "flipped.efi") + " 2>&1").status, 0);
}

TEST(DbxCheck, RefusedByHashInDbxNamesEntryAndOffset) {
  TempDir d;
  sign_seed(d);
  const std::string db = esl_of_cert(d, d / "c.der", "db.esl");
  const std::string sha = to_hex(authenticode_file(d / "signed.efi")->sha256);
  // dbx: an unrelated hash, then the image's, in one list: the second entry (its owner GUID) at 28 + 48.
  sh(cli() + " dbx add-hash --owner " + kOwnerB.str() + " -o " + q(d / "dbx.esl") + " " + std::string(64, 'a') + " " +
     sha);
  auto r = run(cli() + " dbx check --dbx " + q(d / "dbx.esl") + " --db " + q(db) + " " + q(d / "signed.efi"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, d / "signed.efi" + ": refused: Authenticode hash in dbx as EFI_CERT_SHA256 (" + d / "dbx.esl" +
                       " list 1 entry 2, byte offset 76)\n  authenticode-sha256: " + sha + "\n");
  // The same dbx as an efivarfs copy (4 attribute bytes first): offset 80.
  Bytes v = {0x27, 0, 0, 0};
  append(v, slurp(d / "dbx.esl"));
  spit(d / "dbx-efivarfs", v);
  r = run(cli() + " dbx check --json --dbx " + q(d / "dbx-efivarfs") + " --db " + q(db) + " " + q(d / "signed.efi"));
  EXPECT_EQ(r.status, 1);
  auto j = json_line(r.out);
  EXPECT_EQ(j["rule"], "hash_in_dbx");
  EXPECT_EQ(j["entry"]["offset"], 80);
  EXPECT_EQ(j["entry"]["list"], 1);
  EXPECT_EQ(j["entry"]["entry"], 2);
  EXPECT_EQ(j["entry"]["data"], sha);
  EXPECT_EQ(j["entry"]["owner"], kOwnerB.str());
  // Unsigned: the hash alone decides, in db as in dbx.
  const std::string plain = kSeeds + "pe32plus-x86-64";
  const std::string usha = to_hex(authenticode_file(plain)->sha256);
  EXPECT_EQ(usha, sha);  // sbsign does not change the digest of an aligned image
  sh(cli() + " dbx add-hash --owner " + kOwnerA.str() + " -o " + q(d / "dbhash.esl") + " " + usha);
  spit(d / "empty.esl", Bytes{});
  r = run(cli() + " dbx check --json --dbx " + q(d / "empty.esl") + " --db " + q(d / "dbhash.esl") + " " + q(plain));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  j = json_line(r.out);
  EXPECT_EQ(j["rule"], "allowed_by_db_hash");
  EXPECT_EQ(j["entry"]["offset"], 28);
  r = run(cli() + " dbx check --json --dbx " + q(d / "dbx.esl") + " --db " + q(d / "dbhash.esl") + " " + q(plain));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(json_line(r.out)["rule"], "hash_in_dbx");
  r = run(cli() + " dbx check --dbx " + q(d / "empty.esl") + " " + q(plain));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, plain +
                       ": refused: not allowed by db (no signature verifies against a db certificate, hash not in "
                       "db)\n  authenticode-sha256: " +
                       usha + "\n");
}

TEST(DbxCheck, RefusedByCertificateInDbx) {
  TempDir d;
  sign_seed(d);
  const std::string db = esl_of_cert(d, d / "c.der", "db.esl");
  const std::string dbx = esl_of_cert(d, d / "c.der", "dbx.esl");
  auto r = run(cli() + " dbx check --dbx " + q(dbx) + " --db " + q(db) + " " + q(d / "signed.efi"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            d / "signed.efi" +
                ": refused: signature 1 verifies against a dbx EFI_CERT_X509 certificate \"CN = modsign dbx "
                "check signer\" (" +
                dbx + " list 1 entry 1, byte offset 28)");

  // EFI_CERT_X509_SHA256 of the signer's TBSCertificate with a TimeOfRevocation.
  auto cert = crypto::Certificate::from_der(slurp(d / "c.der"));
  ASSERT_TRUE(cert.ok());
  const EfiTime when = *EfiTime::parse("2024-05-06 07:08:09");
  const Bytes entry = x509_sha256_data(crypto::digest(crypto::HashAlgo::sha256, cert->tbs()), when);
  spit(d / "tbs.esl", modsign::write_efi_lists({{efi_guids::cert_x509_sha256, kOwnerB, entry}}));
  r = run(cli() + " dbx check --dbx " + q(d / "tbs.esl") + " --db " + q(db) + " " + q(d / "signed.efi"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            d / "signed.efi" +
                ": refused: certificate \"CN = modsign dbx check signer\" of signature 1 is in dbx as "
                "EFI_CERT_X509_SHA256, revoked at 2024-05-06 07:08:09 (" +
                d / "tbs.esl" + " list 1 entry 1, byte offset 28)");
  EXPECT_NE(
      r.out.find("  note: the certificate was revoked at 2024-05-06 07:08:09; firmware admits a signature with an "
                 "RFC 3161 timestamp before that time verified by dbt, which modsign does not evaluate\n"),
      std::string::npos);
  r = run(cli() + " dbx check --json --dbx " + q(d / "tbs.esl") + " --db " + q(db) + " " + q(d / "signed.efi"));
  auto j = json_line(r.out);
  EXPECT_EQ(j["rule"], "certificate_hash_in_dbx");
  EXPECT_EQ(j["signatures"][0]["revocation_time"], "2024-05-06 07:08:09");
  EXPECT_EQ(j["signatures"][0]["forbidden_by"]["type"], "EFI_CERT_X509_SHA256");
}

TEST(DbxCheck, EspTreeAndUsageErrors) {
  TempDir d;
  sign_seed(d);
  sh("mkdir -p " + q(d / "esp/EFI/BOOT") + " && cp " + q(d / "signed.efi") + " " + q(d / "esp/EFI/BOOT/BOOTX64.EFI") +
     " && echo not-pe > " + q(d / "esp/EFI/BOOT/grub.cfg"));
  const std::string db = esl_of_cert(d, d / "c.der", "db.esl");
  spit(d / "empty.esl", Bytes{});
  auto r = run(cli() + " dbx check --json --dbx " + q(d / "empty.esl") + " --db " + q(db) + " -r " + q(d / "esp"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json_line(r.out)["path"], d / "esp/EFI/BOOT/BOOTX64.EFI");
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
  EXPECT_EQ(run(cli() + " dbx check --dbx " + q(d / "empty.esl")).status, 2);
  EXPECT_EQ(run(cli() + " dbx check " + q(d / "signed.efi")).status, 2);  // --dbx is required
  r = run(cli() + " dbx check --dbx " + q(d / "missing.esl") + " " + q(d / "signed.efi"));
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find(d / "missing.esl"), std::string::npos) << r.err;
  r = run(cli() + " dbx check --dbx " + q(d / "empty.esl") + " " + q(d / "esp/EFI/BOOT/grub.cfg"));
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find(d / "esp/EFI/BOOT/grub.cfg" + ": "), std::string::npos) << r.err;
}

// ------------------------------------------------------------------- Microsoft's JSON

// A member named twice (issue 29): jq and Python take the last value, a first-wins reader
// the first, so the same published list would be imported as another; refused, with its
// byte offset, by import-json and diff alike; so is a \u0000 in a string.  Nothing written.
TEST(DbxJson, MemberNamedTwiceOrNulIsRefused) {
  TempDir d;
  const Bytes b = slurp(kJson);
  const std::string text(b.begin(), b.end());
  const std::string first =
      "\"authenticodeHash\": \"80B4D96931BF0D02FD91A61E19D14F1DA452E66DB2408CA8604D411F92659F0A\",";
  const std::size_t at = text.find(first);
  ASSERT_NE(at, std::string::npos);
  const std::string twice = text.substr(0, at + first.size()) + " \"authenticodeHash\": \"" + std::string(64, '0') +
                            "\"," + text.substr(at + first.size());
  spit(d / "twice.json", twice);
  std::string nul = text;
  nul.replace(nul.find("shim.efi"), 8, "shim\\u0000.efi");
  spit(d / "nul.json", nul);
  const std::string dup_at = std::to_string(at + first.size() + 1);
  const std::string nul_at = std::to_string(nul.find("\\u0000") + 6);
  for (const auto& [file, why] : std::vector<std::pair<std::string, std::string>>{
           {d / "twice.json", "JSON byte offset " + dup_at + ": member \"authenticodeHash\" given twice"},
           {d / "nul.json", "JSON byte offset " + nul_at + ": \\u0000 (a NUL) in a string"}}) {
    SCOPED_TRACE(file);
    auto r = run(cli() + " dbx import-json --arch amd64 -o " + q(d / "x64.esl") + " " + q(file));
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "modsign: " + file + ": " + why + "\n");
    EXPECT_FALSE(std::filesystem::exists(d / "x64.esl"));
  }
}

TEST(DbxJson, ImportWritesHashesAndSvnRecords) {
  TempDir d;
  auto r = run(cli() + " dbx import-json --arch amd64 -o " + q(d / "x64.esl") + " " + q(kJson));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err,
            "modsign: " + kJson +
                ": note: certificates[0]: MicWinProPCA2011_2011-10-19.der (CN = Microsoft "
                "Windows Production PCA 2011) not found beside the JSON; not included\nmodsign: " +
                d / "x64.esl" +
                ": 7 entries for x64: 4 EFI_CERT_SHA256 image hashes, 3 SVN records, 0 EFI_CERT_X509 certificates\n");
  // Two lists (owner Microsoft, owner SVN) of 48-byte entries: 28 + 4*48 + 28 + 3*48 bytes.
  const Bytes esl = slurp(d / "x64.esl");
  ASSERT_EQ(esl.size(), 392u);
  EXPECT_EQ(to_hex(ByteView(esl).subspan(28, 16)), to_hex(efi_guids::microsoft_owner.bytes));
  EXPECT_EQ(to_hex(ByteView(esl).subspan(44, 32)), "80b4d96931bf0d02fd91a61e19d14f1da452e66db2408ca8604d411f92659f0a");
  EXPECT_EQ(to_hex(ByteView(esl).subspan(248, 16)), "6c2b139dd5598843ab1c185cfcb2eb92");  // svn owner GUID bytes
  EXPECT_EQ(to_hex(ByteView(esl).subspan(264, 32)), "01612b139dd5598843ab1c185c3cb2eb92000009000000000000000000000000");
  // flatHash is never an entry.
  const std::string text = run(cli() + " dbx list " + q(d / "x64.esl")).out;
  EXPECT_EQ(text.find("2df05c41acc56d0f"), std::string::npos);
  EXPECT_NE(
      text.find("  entry 2.1: owner 9d132b6c-59d5-4388-ab1c-185cfcb2eb92: SVN record: 9d132b61-59d5-4388-ab1c-"
                "185c3cb2eb92 (EFI_BOOTMGR_DBXSVN_GUID), version 9.0 -> bin:01612b139dd5598843ab1c185c3cb2eb920000"
                "09000000000000000000000000 (matches no file hash)\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("; 3 of the bin entries are SVN records\n"), std::string::npos);
  auto j = nlohmann::json::parse(run(cli() + " dbx list --json " + q(d / "x64.esl")).out);
  EXPECT_EQ(j["summary"]["svn"], 3);
  EXPECT_EQ(j["lists"][1]["entries"][1]["svn"]["application"], "e8f82e9d-e127-4158-a488-4c18abe2f284");
  EXPECT_EQ(j["lists"][1]["entries"][1]["svn"]["version"], "3.0");
  EXPECT_EQ(j["lists"][1]["entries"][1]["svn"]["application_name"], nullptr);
  EXPECT_EQ(j["lists"][1]["entries"][1]["matches_no_file_hash"], true);
  EXPECT_EQ(j["lists"][1]["entries"][1]["kernel_key"],
            "bin:019d2ef8e827e15841a4884c18abe2f284000003000000000000000000000000");
  EXPECT_EQ(j["lists"][0]["entries"][0]["svn"], nullptr);
  EXPECT_EQ(j["lists"][0]["entries"][0]["matches_no_file_hash"], false);

  // ESL and JSON hold the same entries; the ESL without its last hash does not.
  EXPECT_EQ(run(cli() + " dbx diff " + q(d / "x64.esl") + " " + q(kJson)).status, 0);
  sh(cli() + " dbx add-hash --owner " + efi_guids::microsoft_owner.str() + " -o " + q(d / "three.esl") +
     " 80b4d96931bf0d02fd91a61e19d14f1da452e66db2408ca8604d411f92659f0a "
     "1aec84b84b6c65a51220a9be7181965230210d62d6d33c48999c6b295a2b0a06"
     " c805603c4fa038776e42f263c604b49d96840322e1922d5606a9b0bbb5bffe6f " +
     std::string(64, 'e'));
  r = run(cli() + " dbx diff " + q(d / "three.esl") + " " + q(kJson));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "only in A (" + d / "three.esl" + "): 1\n  EFI_CERT_SHA256 " + std::string(64, 'e') + " (" +
                       d / "three.esl" + " list 1 entry 4, byte offset 172)\nonly in B (" + kJson +
                       "): 4\n"
                       "  EFI_CERT_SHA256 6078c0fa37d9d35dadac7ad90e90a3a95c44985a3d305bd22a5d838ed45491ee (" +
                       kJson +
                       " images.x64[3] (bootmgfw.efi))\n"
                       "  EFI_CERT_SHA256 SVN record 9d132b61-59d5-4388-ab1c-185c3cb2eb92 (EFI_BOOTMGR_DBXSVN_GUID), "
                       "version 9.0 (" +
                       kJson +
                       " svns[0] (bootmgfw.efi))\n"
                       "  EFI_CERT_SHA256 SVN record e8f82e9d-e127-4158-a488-4c18abe2f284, version 3.0 (" +
                       kJson +
                       " svns[1] (cdboot.efi))\n"
                       "  EFI_CERT_SHA256 SVN record c999cac2-7ffe-496f-8127-9e2a8a535976, version 3.0 (" +
                       kJson + " svns[2] (wdsmgfw.efi))\nin both: 3\n");
  j = nlohmann::json::parse(run(cli() + " dbx diff --json " + q(d / "three.esl") + " " + q(kJson)).out);
  EXPECT_EQ(j["equal"], false);
  EXPECT_EQ(j["common"], 3);
  EXPECT_EQ(j["only_in_a"][0]["offset"], 172);
  EXPECT_EQ(j["only_in_b"][1]["svn"]["major"], 9);
  // Another architecture has none of the excerpt's x64 hashes, only the SVN records.
  r = run(cli() + " dbx import-json --arch arm64 -o " + q(d / "aa64.esl") + " " + q(kJson));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(d / "aa64.esl").size(), 28u + 3 * 48);
  EXPECT_EQ(run(cli() + " dbx import-json --arch sparc -o " + q(d / "x.esl") + " " + q(kJson)).status, 2);
  EXPECT_EQ(run(cli() + " dbx import-json --arch x64 -o " + q(d / "x.esl") + " " + q(d / "x64.esl")).status, 3);
}

TEST(DbxJson, CertificateBesideTheJsonAndHostileInput) {
  TempDir d;
  sign_seed(d);
  // The same shape, with a certificate file next to it: it becomes an EFI_CERT_X509 entry
  // and refuses the image it signed.
  spit(d / "dbx_info_msft_test.json", std::string(R"({"images": {"ia32": [{"authenticodeHash": ")") +
                                          std::string(64, 'B') +
                                          R"(", "hashType": "SHA256", "flatHash": "", "filename": "a.efi"}]},
  "certificates": [{"value": "c.der", "subjectName": "CN = x", "issuerName": "CN = x", "thumbprint": ""}],
  "svns": []})");
  auto r = run(cli() + " dbx import-json --arch x86 -o " + q(d / "ia32.esl") + " " + q(d / "dbx_info_msft_test.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "modsign: " + d / "ia32.esl" +
                       ": 2 entries for ia32: 1 EFI_CERT_SHA256 image hashes, 0 SVN records, 1 "
                       "EFI_CERT_X509 certificates\n");
  r = run(cli() + " dbx check --json --dbx " + q(d / "dbx_info_msft_test.json") + " " + q(d / "signed.efi"));
  EXPECT_EQ(r.status, 1);
  auto j = json_line(r.out);
  EXPECT_EQ(j["rule"], "certificate_in_dbx");
  EXPECT_EQ(j["entry"]["origin"], "certificates[0] (c.der)");
  EXPECT_EQ(j["entry"]["certificate"], "CN = modsign dbx check signer");

  const std::pair<std::string, std::string> bad[] = {
      {"{\"images\": {\"x64\": [{\"authenticodeHash\": \"12\"}]}}",
       ": images.x64[0].authenticodeHash: \"12\" is not 64 hex digits"},
      {"{\"images\": {\"x64\": [{\"authenticodeHash\": 12}]}}", ": images.x64[0].authenticodeHash is not a string"},
      {"{\"images\": {\"x64\": [{\"hashType\": \"SHA1\", \"authenticodeHash\": \"\"}]}}",
       ": images.x64[0]: hashType \"SHA1\" is not SHA256"},
      {"{\"images\": 3}", ": no \"images\" object (not a dbx_info_msft JSON file)"},
      {"{\"images\": {}", ": JSON byte offset 13: expected ',' or '}'"},
      {"{\"images\": {}} x", ": JSON byte offset 15: data after the JSON value"},
      {std::string(100, '['), ": JSON byte offset 65: nesting deeper than 64"},
  };
  for (const auto& [text, msg] : bad) {
    spit(d / "bad.json", text);
    r = run(cli() + " dbx import-json --arch x64 -o " + q(d / "out.esl") + " " + q(d / "bad.json"));
    EXPECT_EQ(r.status, 3) << text;
    EXPECT_EQ(r.err, "modsign: " + d / "bad.json" + msg + "\n") << text;
    EXPECT_FALSE(std::ifstream(d / "out.esl").good());
  }
}

// ------------------------------------------------------------------- SBAT and SVN (library)

TEST(DbxSbat, SectionLevelAndRefusals) {
  const std::string grub =
      "sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md\n"
      "grub,5,Free Software Foundation,grub,2.06,https://www.gnu.org/software/grub/\n"
      "grub.debian,5,Debian,grub2,2.06-13+deb12u2,https://tracker.debian.org/pkg/grub2\n";
  Bytes sec(grub.begin(), grub.end());
  sec.resize(512, 0);  // the section's zero padding
  auto rows = parse_sbat_section(sec);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[1].component, "grub");
  EXPECT_EQ((*rows)[1].generation, 5u);
  EXPECT_EQ((*rows)[2].version, "2.06-13+deb12u2");
  EXPECT_EQ((*rows)[2].url, "https://tracker.debian.org/pkg/grub2");
  auto lv = parse_sbat_level("sbat,1,2024010900\r\nshim,4\ngrub,3\ngrub.debian,6\n");
  ASSERT_TRUE(lv.ok());
  EXPECT_EQ(lv->datestamp, "2024010900");
  ASSERT_EQ(lv->components.size(), 4u);
  EXPECT_EQ(lv->components[3], (std::pair<std::string, std::uint32_t>{"grub.debian", 6}));

  const std::string bad_rows[][2] = {{"a,1,b,c,d\n", "line 1: 5 fields, 6 needed"},
                                     {"sbat,1,x,y,z,u\na,1,,c,d,e\n", "line 2: field 3 is empty"},
                                     {"\n\n", "no SBAT rows"}};
  for (const auto& [t, msg] : bad_rows) {
    auto r = parse_sbat_section(Bytes(t.begin(), t.end()));
    ASSERT_FALSE(r.ok()) << t;
    EXPECT_EQ(r.error().code, KErr::einval);
    EXPECT_EQ(r.error().message, msg);
  }
  EXPECT_EQ(parse_sbat_level("shim,4\n").error().message, "no sbat,1 row first");
  // A copy of /sys/firmware/efi/efivars/SbatLevelRT-605dab50-...: attributes 0x06 first.
  auto rt = parse_sbat_level(std::string("\x06\0\0\0sbat,1,2023012900\nshim,2\n", 29));
  ASSERT_TRUE(rt.ok()) << rt.error().message;
  EXPECT_EQ(rt->datestamp, "2023012900");
  EXPECT_EQ(rt->components[1], (std::pair<std::string, std::uint32_t>{"shim", 2}));
  EXPECT_EQ(parse_sbat_level("sbat,1\nshim\n").error().message, "line 2: not component,generation");
  EXPECT_EQ(efi_image_rule_name(EfiImageRule::sbat_refused), "sbat_refused");
}

TEST(DbxSvn, RecordsDecodeOnlyWithTheSvnOwner) {
  const Bytes d = from_hex("01612b139dd5598843ab1c185c3cb2eb92010009000000000000000000000000");
  auto r = efi_svn_record(efi_guids::svn_owner, d);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->application, efi_guids::bootmgr_dbxsvn);
  EXPECT_EQ(r->application_name, "EFI_BOOTMGR_DBXSVN_GUID");
  EXPECT_EQ(r->version(), "9.1");
  EXPECT_FALSE(efi_svn_record(efi_guids::microsoft_owner, d).has_value());
  Bytes pad = d;
  pad[31] = 1;
  EXPECT_FALSE(efi_svn_record(efi_guids::svn_owner, pad).has_value());
  Bytes lead = d;
  lead[0] = 2;
  EXPECT_FALSE(efi_svn_record(efi_guids::svn_owner, lead).has_value());
  EXPECT_EQ(*msft_dbx_arch("arm64"), "aarch64");
  EXPECT_EQ(*msft_dbx_arch("x86"), "ia32");
  EXPECT_FALSE(msft_dbx_arch("X64").has_value());
}

TEST(DbxSbat, CheckRefusesALowerGeneration) {
  TempDir d;
  // The x86-64 seed with GRUB's .sbat rows added by objcopy; its hash in db.
  const std::string sbat = kSeeds.substr(0, kSeeds.size() - 3) + "sbat/grub.sbat";
  sh("objcopy --add-section .sbat=" + q(sbat) + " --set-section-flags .sbat=data,readonly " +
     q(kSeeds + "pe32plus-x86-64") + " " + q(d / "a.efi"));
  const std::string sha = to_hex(authenticode_file(d / "a.efi")->sha256);
  sh(cli() + " dbx add-hash --owner " + kOwnerA.str() + " -o " + q(d / "db.esl") + " " + sha);
  spit(d / "empty.esl", Bytes{});
  spit(d / "level", std::string("sbat,1,2024010900\nshim,4\ngrub,6\ngrub.debian,4\n"));
  auto r = run(cli() + " dbx check --dbx " + q(d / "empty.esl") + " --db " + q(d / "db.esl") + " --sbat-level " +
               q(d / "level") + " " + q(d / "a.efi"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, d / "a.efi" + ": refused by shim's SBAT check\n  authenticode-sha256: " + sha +
                       "\n  sbat: grub generation 5 is below the level's 6: refused\n");
  spit(d / "level", std::string("sbat,1,2024010900\ngrub,5\ngrub.debian,5\n"));
  r = run(cli() + " dbx check --json --dbx " + q(d / "empty.esl") + " --db " + q(d / "db.esl") + " --sbat-level " +
          q(d / "level") + " " + q(d / "a.efi"));
  EXPECT_EQ(r.status, 0) << r.err;
  auto j = json_line(r.out);
  EXPECT_EQ(j["rule"], "allowed_by_db_hash");
  EXPECT_EQ(j["sbat"]["rows"].size(), 3u);
  EXPECT_EQ(j["sbat"]["rows"][2]["component"], "grub.debian");
  EXPECT_EQ(j["sbat"]["refused"].size(), 0u);
  // Without a .sbat section shim refuses the image.
  sh(cli() + " dbx add-hash --owner " + kOwnerA.str() + " -o " + q(d / "db2.esl") + " " +
     to_hex(authenticode_file(kSeeds + "pe32plus-x86-64")->sha256));
  r = run(cli() + " dbx check --json --dbx " + q(d / "empty.esl") + " --db " + q(d / "db2.esl") + " --sbat-level " +
          q(d / "level") + " " + q(kSeeds + "pe32plus-x86-64"));
  EXPECT_EQ(r.status, 1);
  j = json_line(r.out);
  EXPECT_EQ(j["rule"], "sbat_refused");
  EXPECT_EQ(j["notes"][0], "no .sbat section: shim refuses to load an image without one");
  // A level that is not SbatLevel text: input error naming the file.
  spit(d / "level", std::string("grub,5\n"));
  r = run(cli() + " dbx check --dbx " + q(d / "empty.esl") + " --sbat-level " + q(d / "level") + " " + q(d / "a.efi"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d / "level" + ": no sbat,1 row first\n");
}
