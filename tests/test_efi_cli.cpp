// UEFI signature databases: the `modsign dbx` CLI, and the same bytes as efitools and
// sbsigntool write.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>

#include <nlohmann/json.hpp>

#include "crypto/algorithms.hpp"
#include "efi_support.hpp"

using namespace modsign;
using namespace modsign::test::efi_tests;

// ---------------------------------------------------------------------------------------
// CLI

TEST(EfiCli, ListText) {
  TempDir d;
  const Bytes h1 = fill(32, 0xa0);
  const Bytes tbs = x509_sha256_data(fill(32, 0x10), *EfiTime::parse("2024-01-02 03:04:05"));
  Bytes f;
  put32(f, 0x27);
  append(f, good_list(guids::cert_sha256, {{guids::microsoft_owner, h1}}));
  append(f, good_list(guids::cert_x509_sha256, {{kOwnerA, tbs}}));
  append(f, good_list(kUnknown, {{kOwnerB, fill(4, 0)}}));
  spit(d / "dbx", f);
  auto r = run(cli() + " dbx list " + q(d / "dbx"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string tbs_hex = to_hex(tbs);
  EXPECT_EQ(
      r.out,
      "file: " + d / "dbx" +
          "\n"
          "form: efivarfs (attributes + data)\n"
          "attributes: 0x00000027\n"
          "payload: byte offset 4\n"
          "variable: dbx\n"
          "list 1: EFI_CERT_SHA256, byte offset 4, 1 entry of 48 bytes\n"
          "  entry 1.1: owner " +
          kMs + ": " + to_hex(h1) + " -> bin:" + to_hex(h1) +
          "\n"
          "list 2: EFI_CERT_X509_SHA256, byte offset 80, 1 entry of 64 bytes\n"
          "  entry 2.1: owner 11111111-2222-3333-4444-555555555555: " +
          tbs_hex + " -> tbs:" + tbs_hex +
          " (never matches)\n"
          "list 3: 01020304-0506-0708-090a-0b0c0d0e0f10, byte offset 172, 1 entry of 20 bytes\n"
          "  entry 3.1: owner aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee: 00010203 -> ignored\n"
          "note: list 2 entry 1 (EFI_CERT_X509_SHA256): tbs:" +
          tbs_hex.substr(0, 16) +
          "... is keyed over all 48 bytes of the entry (32-byte TBS hash + 16-byte TimeOfRevocation), so it never "
          "equals the tbs:<64 hex> SHA-256 lookup of x509_get_sig_params() and blocks nothing\n"
          "summary: 3 lists, 3 entries: 1 bin, 1 tbs (1 never matching), 0 revoked, 0 platform, 1 ignored\n");
  // --variable db: nothing but X.509 is handled.
  r = run(cli() + " dbx list --variable db " + q(d / "dbx"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("-> ignored\nlist 2"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("summary: 3 lists, 3 entries: 0 bin, 0 tbs (0 never matching), 0 revoked, 0 platform, 3 ignored\n"),
      std::string::npos);
  r = run(cli() + " dbx list --variable DBX " + q(d / "dbx"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "modsign: --variable must be db, dbx, MokListRT or MokListXRT\n");
}

// A certificate subject in a dbx file is attacker-controlled text: OpenSSL's one-line form
// already shows C0 controls as \1B, and the text output of `dbx list` (like keygen's summary
// line) also escapes C1 controls: CN "ev" U+009B "1milé" is shown as "ev\xc2\x9b1milé",
// the "é" as it is; --json keeps the subject's exact characters (a JSON string value).
TEST(EfiCli, ListTextEscapesControlsInCertificateSubjects) {
  TempDir d;
  const std::string cn =
      "ev\xc2\x9b"
      "1mil\xc3\xa9";
  auto r = run(cli() + " keygen --algo ecdsa-p256 --out " + q(d / "k.pem") + " --cert-out " + q(d / "k.crt") +
               " --subject " + q("CN=" + cn));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind(d / "k.pem" + ": ECDSA-P256 key, certificate CN = ev\\xc2\\x9b1mil\xc3\xa9 serial ", 0), 0u)
      << r.out;
  r = run(cli() + " dbx add-cert --owner " + kMs + " -o " + q(d / "dbx.esl") + " " + q(d / "k.crt"));
  ASSERT_EQ(r.status, 0) << r.err;
  auto fp = run(test::openssl() + " x509 -in " + q(d / "k.crt") + " -noout -fingerprint -sha256");
  ASSERT_EQ(fp.status, 0) << fp.err;
  std::string hex;
  for (char ch : fp.out.substr(fp.out.find('=') + 1))
    if (std::isxdigit(static_cast<unsigned char>(ch))) hex += static_cast<char>(std::tolower(ch));
  ASSERT_EQ(hex.size(), 64u);
  r = run(cli() + " dbx list " + q(d / "dbx.esl"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(
      r.out.find("\n  entry 1.1: owner " + kMs + ": X.509 \"CN = ev\\xc2\\x9b1mil\xc3\xa9\", SHA-256 fingerprint " +
                 hex + " -> revoked certificate\n"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos);
  r = run(cli() + " dbx list --json " + q(d / "dbx.esl"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["lists"][0]["entries"][0]["certificate"]["subject"], "CN = " + cn);
}

// An auth2 TimeStamp that firmware refuses is said so (issue 29): EDK2's
// VerifyTimeBasedPayload refuses non-zero Pad1/Nanosecond/TimeZone/Daylight/Pad2
// (EFI_SECURITY_VIOLATION), and a month 13 is outside EFI_TIME's range; a well-formed one
// has no note.
TEST(EfiCli, ListNotesAnAuth2TimestampFirmwareRefuses) {
  const SizedCert& c = cert_932();
  TempDir d;
  Bytes tbs_data;
  const Bytes payload = synthetic_dbx(c.der, tbs_data);
  EfiTime t = *EfiTime::parse("2010-03-06 19:17:21");
  const auto notes = [&](const EfiTime& ts) {
    spit(d / "update.bin", auth2(ts, fill(50, 0x30), payload));
    const auto r = run(cli() + " dbx list --json " + q(d / "update.bin"));
    EXPECT_EQ(r.status, 0) << r.err;
    std::vector<std::string> out;
    const auto j = nlohmann::json::parse(r.out);
    for (const auto& n : j["notes"])
      if (n.get<std::string>().rfind("timestamp: ", 0) == 0) out.push_back(n.get<std::string>());
    return out;
  };
  EXPECT_TRUE(notes(t).empty());
  t.nanosecond = 5;
  t.time_zone = 60;
  t.month = 13;
  EXPECT_EQ(notes(t), (std::vector<std::string>{
                          "timestamp: Nanosecond 5, TimeZone 60 not 0: EDK2 refuses this update "
                          "(EFI_SECURITY_VIOLATION; UEFI 2.10 §8.2.2 requires Pad1, Nanosecond, TimeZone, Daylight "
                          "and Pad2 to be 0)",
                          "timestamp: Month 13 is outside 1-12 (UEFI 2.10 §8.3)"}));
  const auto r = run(cli() + " dbx list " + q(d / "update.bin"));
  EXPECT_NE(r.out.find("note: timestamp: Month 13 is outside 1-12 (UEFI 2.10 §8.3)\n"), std::string::npos) << r.out;
}

TEST(EfiCli, ListJsonAuth2WithCertificate) {
  const SizedCert& c = cert_932();
  TempDir d;
  Bytes tbs_data;
  const Bytes payload = synthetic_dbx(c.der, tbs_data);
  const Bytes file = auth2(*EfiTime::parse("2010-03-06 19:17:21"), fill(50, 0x30), payload);
  spit(d / "update.bin", file);
  auto r = run(cli() + " dbx list --json " + q(d / "update.bin"));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["form"], "auth2");
  EXPECT_EQ(j["auth2"]["timestamp"], "2010-03-06 19:17:21");
  EXPECT_EQ(j["auth2"]["pkcs7_length"], 50);
  EXPECT_EQ(j["auth2"]["dw_length"], 74);
  EXPECT_EQ(j["payload_offset"], 90);
  EXPECT_EQ(j["kernel_status"], 0);
  EXPECT_TRUE(j["error"].is_null());
  ASSERT_EQ(j["lists"].size(), 5u);
  EXPECT_EQ(j["lists"][2]["type"], "EFI_CERT_X509");
  EXPECT_EQ(j["lists"][2]["signature_size"], 948);
  const auto& ce = j["lists"][2]["entries"][0];
  EXPECT_EQ(ce["kind"], "revoked");
  EXPECT_EQ(ce["kernel_key"], "revoked certificate");
  EXPECT_EQ(ce["owner_name"], "MICROSOFT_OWNER");
  EXPECT_EQ(ce["data_length"], 932);
  // Fingerprint cross-checked with openssl.
  auto fp = run(test::openssl() + " x509 -in " + q(c.pem) + " -noout -fingerprint -sha256");
  std::string want = fp.out.substr(fp.out.find('=') + 1);
  std::string hex;
  for (char ch : want)
    if (std::isxdigit(static_cast<unsigned char>(ch))) hex += static_cast<char>(std::tolower(ch));
  EXPECT_EQ(ce["certificate"]["sha256"], hex);
  EXPECT_EQ(ce["certificate"]["subject"].get<std::string>().substr(0, 6), "CN = x");
  const auto& te = j["lists"][4]["entries"][0];
  EXPECT_EQ(te["kind"], "tbs");
  EXPECT_EQ(te["never_matches"], true);
  EXPECT_EQ(te["description"], "tbs:" + to_hex(tbs_data));
  EXPECT_EQ(j["lists"][0]["entries"][1]["description"], "bin:" + to_hex(fill(32, 0x20)));
  EXPECT_EQ(j["summary"]["bin"], 6);
  EXPECT_EQ(j["summary"]["tbs"], 1);
  EXPECT_EQ(j["summary"]["revoked"], 1);
  EXPECT_EQ(j["notes"].size(), 1u);
  // Text form shows the wrapper and the certificate.
  r = run(cli() + " dbx list " + q(d / "update.bin"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("form: auth2 (EFI_VARIABLE_AUTHENTICATION_2)\ntimestamp: 2010-03-06 19:17:21\n"
                       "pkcs7: 50 bytes at byte offset 40 (dwLength 74, not verified)\npayload: byte offset 90\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  entry 3.1: owner " + kMs + ": X.509 \"CN = x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SHA-256 fingerprint " + hex + " -> revoked certificate\n"), std::string::npos) << r.out;
}

TEST(EfiCli, ListMalformedExit3) {
  TempDir d;
  Bytes f = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 1)}});
  append(f, raw_list(guids::cert_sha256, 0xffffffffu, 0, 48, fill(48, 0)));
  spit(d / "bad", f);
  auto r = run(cli() + " dbx list --json " + q(d / "bad"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d / "bad" +
                       ": EBADMSG: EFI_SIGNATURE_LIST at byte offset 76: signature_list_size 4294967295 exceeds the 76 "
                       "bytes left (the kernel stops here; the entries above stay loaded)\n");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kernel_status"], -74);
  EXPECT_EQ(j["error"]["offset"], 76);
  EXPECT_EQ(j["lists"].size(), 1u);
  r = run(cli() + " dbx list --form auth2 " + q(d / "bad"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "modsign: " + d / "bad" + ": EBADMSG: byte offset 20: wRevision 0x0000, not 0x0200\n");
  r = run(cli() + " dbx list " + q(d / "missing"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "");
}

TEST(EfiCli, MergeAndAddHash) {
  TempDir d;
  const std::string h1 = to_hex(fill(32, 1)), h2 = to_hex(fill(32, 2)), h3 = to_hex(fill(32, 3));
  auto r = run(cli() + " dbx add-hash --owner " + kMs + " -o " + q(d / "a.esl") + " " + h1 + " " + h2);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(d / "a.esl"), good_list(guids::cert_sha256, {{guids::microsoft_owner, fill(32, 1)},
                                                               {guids::microsoft_owner, fill(32, 2)}}));
  r = run(cli() + " dbx add-hash --owner " + kOwnerA.str() + " -o " + q(d / "b.esl") + " " + h2 + " " + h3);
  ASSERT_EQ(r.status, 0) << r.err;
  // b.esl wrapped as an efivarfs dump: merge reads every form.
  Bytes bv;
  put32(bv, 0x27);
  append(bv, slurp(d / "b.esl"));
  spit(d / "b.var", bv);
  r = run(cli() + " dbx merge -o " + q(d / "m.esl") + " " + q(d / "a.esl") + " " + q(d / "b.var"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "modsign: " + d / "b.var" + ": list 1 entry 1: EFI_CERT_SHA256 already present with owner " + kMs +
                       "; owner 11111111-2222-3333-4444-555555555555 dropped\n"
                       "modsign: " +
                       d / "m.esl" + ": 3 entries in 2 lists from 4 in 2 files; 1 duplicate removed\n");
  Bytes expect =
      good_list(guids::cert_sha256, {{guids::microsoft_owner, fill(32, 1)}, {guids::microsoft_owner, fill(32, 2)}});
  append(expect, good_list(guids::cert_sha256, {{kOwnerA, fill(32, 3)}}));
  EXPECT_EQ(slurp(d / "m.esl"), expect);

  // A malformed input: exit 3, the existing output untouched.
  spit(d / "bad", raw_list(guids::cert_sha256, 28 + 48, 0, 15, fill(48, 0)));
  r = run(cli() + " dbx merge -o " + q(d / "m.esl") + " " + q(d / "a.esl") + " " + q(d / "bad"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d / "bad" +
                       ": EBADMSG: EFI_SIGNATURE_LIST at byte offset 0: signature_size 15 is smaller than the 16-byte "
                       "SignatureOwner\n");
  EXPECT_EQ(slurp(d / "m.esl"), expect);

  // Bad arguments: exit 2, nothing written.
  r = run(cli() + " dbx add-hash --owner nope -o " + q(d / "x") + " " + h1);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "modsign: --owner: not a GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx): nope\n");
  r = run(cli() + " dbx add-hash --owner " + kMs + " -o " + q(d / "x") + " abcd");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "modsign: not a SHA-256 hash (64 hex digits): abcd\n");
  EXPECT_FALSE(std::ifstream(d / "x").good());
  r = run(cli() + " dbx merge " + q(d / "a.esl"));
  EXPECT_EQ(r.status, 2);
}

TEST(EfiCli, AddCertThenListDb) {
  const SizedCert& c = cert_932();
  TempDir d;
  auto r = run(cli() + " dbx add-cert --owner " + kOwnerA.str() + " -o " + q(d / "db.esl") + " " + q(c.pem));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(d / "db.esl"), good_list(guids::cert_x509, {{kOwnerA, c.der}}));
  r = run(cli() + " dbx list --variable db --json " + q(d / "db.esl"));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["lists"][0]["entries"][0]["kernel_key"], "platform keyring certificate");
  EXPECT_EQ(j["summary"]["platform"], 1);
  // The same file through load_dbx_file (the --dbx path of the checker).
  Sources s;
  ASSERT_TRUE(load_dbx_file(d / "db.esl", s).ok());
  ASSERT_EQ(s.keyring.revoked.size(), 1u);
  EXPECT_EQ(s.keyring.revoked[0].der(), c.der);
  EXPECT_EQ(s.revoked_origins[0].file, d / "db.esl");
}

TEST(EfiCli, ReadmeExample) {
  // A `modsign dbx add-hash` + `dbx list` example (once the README's), byte for byte (hash = SHA-256 of nothing,
  // cross-checked with sha256sum).
  TempDir d;
  auto sum = run("printf '' | sha256sum");
  ASSERT_EQ(sum.status, 0);
  const std::string e = sum.out.substr(0, 64);
  ASSERT_EQ(e, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  auto r = run("cd " + q(d.path()) + " && " + cli() + " dbx add-hash --owner " + kMs + " -o dbx.esl " + e + " && " +
               cli() + " dbx list dbx.esl");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "file: dbx.esl\n"
            "form: esl (EFI_SIGNATURE_LIST data)\n"
            "payload: byte offset 0\n"
            "variable: dbx\n"
            "list 1: EFI_CERT_SHA256, byte offset 0, 1 entry of 48 bytes\n"
            "  entry 1.1: owner 77fa9abd-0359-4d32-bd60-28f4e78f784b: " +
                e + " -> bin:" + e +
                "\n"
                "summary: 1 list, 1 entry: 1 bin, 0 tbs (0 never matching), 0 revoked, 0 platform, 0 ignored\n");
  EXPECT_EQ(slurp(d / "dbx.esl").size(), 28u + 48);
}

// ---------------------------------------------------------------------------------------
// Independent confirmation with efitools / sbsigntool (Debian packages efitools,
// sbsigntool; tools/check installs them)

TEST(EfiInterop, EfitoolsAndSbsiglistWriteTheSameBytes) {
  if (run("command -v cert-to-efi-sig-list && command -v cert-to-efi-hash-list && command -v sbsiglist && "
          "command -v sig-list-to-certs")
          .status != 0)
    GTEST_SKIP() << "efitools/sbsigntool not installed (tools/check installs them)";
  const SizedCert& c = cert_932();
  TempDir d;
  const std::string owner = kOwnerA.str();
  // EFI_CERT_X509: cert-to-efi-sig-list == modsign dbx add-cert.
  auto r = run("cert-to-efi-sig-list -g " + owner + " " + q(c.pem) + " " + q(d / "efitools.esl"));
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(cli() + " dbx add-cert --owner " + owner + " -o " + q(d / "modsign.esl") + " " + q(c.pem));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(d / "modsign.esl"), slurp(d / "efitools.esl"));
  // EFI_CERT_SHA256: sbsiglist --type sha256 == modsign dbx add-hash.
  const Bytes h = fill(32, 0x3c);
  spit(d / "h.bin", h);
  r = run("sbsiglist --owner " + kMs + " --type sha256 --output " + q(d / "sbsiglist.esl") + " " + q(d / "h.bin"));
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(cli() + " dbx add-hash --owner " + kMs + " -o " + q(d / "h.esl") + " " + to_hex(h));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(d / "h.esl"), slurp(d / "sbsiglist.esl"));
  // EFI_CERT_X509_SHA256: cert-to-efi-hash-list (SHA-256 of the TBS + EFI_TIME) == our writer.
  r = run("cert-to-efi-hash-list -g " + owner + " -t '2024-01-02 03:04:05' -s 256 " + q(c.pem) + " " +
          q(d / "tbs.esl"));
  ASSERT_EQ(r.status, 0) << r.err;
  auto cert = crypto::Certificate::from_der(c.der);
  ASSERT_TRUE(cert.ok());
  const Bytes tbs_hash = crypto::digest(crypto::HashAlgo::sha256, cert->tbs());
  const Bytes mine = write_lists(group_entries(
      {{guids::cert_x509_sha256, kOwnerA, x509_sha256_data(tbs_hash, *EfiTime::parse("2024-01-02 03:04:05"))}}));
  EXPECT_EQ(mine, slurp(d / "tbs.esl"));
  // efitools reads a merged file of ours back: one .der per certificate, one .hash per hash.
  r = run(cli() + " dbx merge -o " + q(d / "all.esl") + " " + q(d / "modsign.esl") + " " + q(d / "h.esl") + " " +
          q(d / "tbs.esl"));
  ASSERT_EQ(r.status, 0) << r.err;
  r = run("cd " + q(d.path()) + " && sig-list-to-certs all.esl out");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(d / "out-0.der"), c.der);
  EXPECT_EQ(slurp(d / "out-1.hash"), h);
}
