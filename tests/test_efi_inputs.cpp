// UEFI signature databases after the review: hostile inputs and kernel exactness.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "crypto/algorithms.hpp"
#include "efi_support.hpp"

using namespace modsign;
using namespace modsign::test::efi_tests;

// ---------------------------------------------------------------------------------------
// Review: hostile inputs and kernel exactness

TEST(EfiInputs, NeverMatchesDependsOnKernelGeneration) {
  // 7.0 looks up tbs:<SHA-256 of the TBS> (32 bytes); v6 the TBS digest in the certificate's
  // own signature hash (x509_get_sig_params), so 20/28/32/48/64-byte keys can match there.
  Bytes f = good_list(guids::cert_x509_sha256, {{kOwnerA, fill(48, 0)}});
  append(f, good_list(guids::cert_x509_sha256, {{kOwnerA, fill(20, 0)}}));
  append(f, good_list(guids::cert_x509_sha256, {{kOwnerA, fill(40, 0)}}));
  append(f, good_list(guids::cert_x509_sha256, {{kOwnerA, fill(32, 0)}}));
  const ParsedLists p = parse_signature_lists(f);
  ASSERT_FALSE(p.error);
  const VariableEffects v7 = apply_handlers(p, Variable::dbx, cms::KernelModel::v7_0());
  const VariableEffects v6 = apply_handlers(p, Variable::dbx, cms::KernelModel::v6());
  ASSERT_EQ(v7.entries.size(), 4u);
  ASSERT_EQ(v6.entries.size(), 4u);
  const bool want7[] = {true, true, true, false}, want6[] = {false, false, true, false};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(v7.entries[i].never_matches, want7[i]) << i;
    EXPECT_EQ(v6.entries[i].never_matches, want6[i]) << i;
  }
  EXPECT_EQ(v6.entries[0].text, "tbs:" + to_hex(fill(48, 0)));
  EXPECT_EQ(v7.entries[0].text, "tbs:" + to_hex(fill(48, 0)) + " (never matches)");
  ASSERT_EQ(v7.notes.size(), 3u);
  EXPECT_EQ(v7.notes[0],
            "list 1 entry 1 (EFI_CERT_X509_SHA256): tbs:0001020304050607... is keyed over all 48 bytes of "
            "the entry (32-byte TBS hash + 16-byte TimeOfRevocation), so it never equals the tbs:<64 hex> "
            "SHA-256 lookup of x509_get_sig_params() and blocks nothing");
  EXPECT_EQ(v7.notes[2],
            "list 3 entry 1 (EFI_CERT_X509_SHA256): tbs:0001020304050607... is keyed over all 40 bytes of "
            "the entry, so it never equals the tbs:<64 hex> SHA-256 lookup of x509_get_sig_params() and "
            "blocks nothing");
  ASSERT_EQ(v6.notes.size(), 1u);
  EXPECT_EQ(v6.notes[0],
            "list 3 entry 1 (EFI_CERT_X509_SHA256): tbs:0001020304050607... is keyed over all 40 bytes of "
            "the entry, so it never equals the tbs: lookup of x509_get_sig_params() (the TBS digest in the "
            "certificate's signature hash: 20, 28, 32, 48 or 64 bytes) and blocks nothing");
  // CLI: --kernel v6 counts one never-matching entry, v7.0 three.
  TempDir d;
  spit(d / "dbx", f);
  auto r = run(test::modsign_cli() + " dbx list --json --kernel v6 " + q(d / "dbx"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["summary"]["tbs_never_matching"], 1);
  r = run(test::modsign_cli() + " dbx list --json " + q(d / "dbx"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["summary"]["tbs_never_matching"], 3);
}

TEST(EfiInputs, CertificateWithTrailingBytesIsLoaded) {
  // lib/asn1_decoder.c returns at ASN1_OP_COMPLETE without checking dp == datalen, so an
  // EFI_CERT_X509 entry padded after the certificate still loads (db) or is revoked (dbx).
  const SizedCert& c = cert_932();
  Bytes padded = c.der;
  append(padded, Bytes(4, 0));
  const ParsedLists p = parse_signature_lists(good_list(guids::cert_x509, {{kOwnerA, padded}}));
  ASSERT_FALSE(p.error);
  const VariableEffects db = apply_handlers(p, Variable::db);
  ASSERT_EQ(db.entries.size(), 1u);
  EXPECT_EQ(db.entries[0].key_error, KErr::none);
  EXPECT_EQ(db.entries[0].text, "platform keyring certificate");
  ASSERT_TRUE(db.entries[0].cert);
  EXPECT_EQ(db.entries[0].cert->der(), c.der);
  ASSERT_EQ(db.keyring_certificates.size(), 1u);
  ASSERT_EQ(db.notes.size(), 1u);
  EXPECT_EQ(db.notes[0],
            "list 1 entry 1 (EFI_CERT_X509): the 4 bytes after the certificate are ignored (the kernel's "
            "ASN.1 decoder does not check for trailing data)");
  Sources s;
  ASSERT_TRUE(add_to_sources(p, Variable::dbx, "dbx", s).ok());
  ASSERT_EQ(s.keyring.revoked.size(), 1u);
  EXPECT_EQ(s.keyring.revoked[0].der(), c.der);
  // Bytes cut from the certificate are still EBADMSG.
  Bytes cut(c.der.begin(), c.der.end() - 1);
  const VariableEffects bad =
      apply_handlers(parse_signature_lists(good_list(guids::cert_x509, {{kOwnerA, cut}})), Variable::db);
  ASSERT_EQ(bad.entries.size(), 1u);
  EXPECT_EQ(bad.entries[0].key_error, KErr::ebadmsg);
  EXPECT_TRUE(bad.notes.empty());
  // The CLI names the first element's problem, not the trailing bytes.
  TempDir d;
  spit(d / "db", good_list(guids::cert_x509, {{kOwnerA, Bytes{0x30, 3, 2, 1, 1, 0, 0}}}));
  auto r = run(test::modsign_cli() + " dbx list --json --variable db " + q(d / "db"));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto e = nlohmann::json::parse(r.out)["lists"][0]["entries"][0];
  EXPECT_EQ(e["certificate_error"], "EBADMSG: malformed certificate: TBSCertificate: expected tag 0x30, found 0x02");
  EXPECT_EQ(e["kernel_key"], "platform keyring certificate (not added: EBADMSG)");
  // Text: the padded certificate is listed with the note.
  spit(d / "db2", good_list(guids::cert_x509, {{kOwnerA, padded}}));
  r = run(test::modsign_cli() + " dbx list --variable db " + q(d / "db2"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("fingerprint " + to_hex(crypto::digest(crypto::HashAlgo::sha256, c.der)) +
                       " -> platform keyring certificate\nnote: list 1 entry 1 (EFI_CERT_X509): the 4 bytes after the "
                       "certificate are ignored"),
            std::string::npos)
      << r.out;
}

TEST(EfiInputs, TruncatedAtEveryOffset) {
  // Two lists (56 + 92 bytes) behind an auth2 header with a 10-byte CertData: every prefix
  // either fails with the exact container error, or parses the complete lists before the
  // cut and stops with EBADMSG at the cut list.
  const Bytes l1 = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 1)}}, Bytes{9, 9, 9, 9});
  const Bytes l2 = good_list(guids::cert_x509_sha256, {{kOwnerB, fill(48, 2)}});
  ASSERT_EQ(l1.size(), 80u);
  ASSERT_EQ(l2.size(), 92u);
  Bytes payload = l1;
  append(payload, l2);
  const Bytes file = auth2(*EfiTime::parse("2020-01-01 00:00:00"), fill(10, 0x30), payload);
  ASSERT_EQ(file.size(), 50u + 172u);
  for (std::size_t n = 0; n <= file.size(); ++n) {
    const ByteView prefix(file.data(), n);
    auto vf = parse_variable_file(prefix, Container::auth2);
    if (n < 40) {
      ASSERT_FALSE(vf.ok()) << n;
      EXPECT_EQ(vf.error().message,
                "byte offset 0: EFI_VARIABLE_AUTHENTICATION_2 needs 40 bytes (EFI_TIME + "
                "WIN_CERTIFICATE_UEFI_GUID header), file has " +
                    std::to_string(n));
      continue;
    }
    if (n < 50) {
      ASSERT_FALSE(vf.ok()) << n;
      EXPECT_EQ(vf.error().message,
                "byte offset 16: dwLength 34 exceeds the " + std::to_string(n - 16) + " bytes after the timestamp");
      continue;
    }
    ASSERT_TRUE(vf.ok()) << n;
    const std::size_t in = n - 50;  // payload bytes present
    const std::size_t complete = in >= 172 ? 2 : in >= 80 ? 1 : 0;
    EXPECT_EQ(vf->lists.lists.size(), complete) << n;
    const bool at_boundary = in == 0 || in == 80 || in == 172;
    ASSERT_EQ(vf->lists.error.has_value(), !at_boundary) << n;
    if (at_boundary) continue;
    const std::size_t list_at = complete == 0 ? 50 : 130, left = n - list_at;
    EXPECT_EQ(vf->lists.error_offset, list_at) << n;
    EXPECT_EQ(vf->lists.error->code, KErr::ebadmsg);
    const std::string head = "EFI_SIGNATURE_LIST at byte offset " + std::to_string(list_at) + ": ";
    if (left < 28)
      EXPECT_EQ(vf->lists.error->message, head + std::to_string(left) + " bytes left, fewer than the 28-byte header");
    else
      EXPECT_EQ(vf->lists.error->message, head + "signature_list_size " + std::to_string(complete == 0 ? 80 : 92) +
                                              " exceeds the " + std::to_string(left) + " bytes left");
  }
  // dwLength 0: refused before anything else is read.
  auto vf = parse_variable_file(auth2(*EfiTime::parse("2020-01-01 00:00:00"), {}, payload, 0x0200, 0x0ef1, 0));
  ASSERT_FALSE(vf.ok());
  EXPECT_EQ(vf.error().message,
            "byte offset 16: dwLength 0 is smaller than the 24-byte WIN_CERTIFICATE_UEFI_GUID header");
}

TEST(EfiInputs, CliHostileFiles) {
  TempDir d;
  const std::string cli = test::modsign_cli();
  // efivarfs of 0-3 bytes: no attributes.
  for (std::size_t n = 0; n < 4; ++n) {
    spit(d / "v", Bytes(n, 0x07));
    auto r = run(cli + " dbx list --form efivarfs " + q(d / "v"));
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "modsign: " + d / "v" + ": EBADMSG: byte offset 0: efivarfs file of " + std::to_string(n) +
                         " bytes has no 4-byte attributes\n");
  }
  // The same 3 bytes detected as bare lists: EBADMSG before any list.
  spit(d / "v", Bytes(3, 0x07));
  auto r3 = run(cli + " dbx list " + q(d / "v"));
  EXPECT_EQ(r3.status, 3);
  EXPECT_EQ(r3.err, "modsign: " + d / "v" +
                        ": EBADMSG: EFI_SIGNATURE_LIST at byte offset 0: 3 bytes left, fewer than "
                        "the 28-byte header (the kernel stops here; nothing was loaded)\n");
  // Non-regular inputs, for list and merge; merge writes nothing.
  run("mkfifo " + q(d / "fifo"));
  run("mkdir " + q(d / "dir"));
  const std::pair<std::string, std::string> inputs[] = {{d / "dir", "is a directory"},
                                                        {d / "fifo", "is a FIFO, not a regular file"},
                                                        {"/dev/zero", "is a device, not a regular file"}};
  for (const auto& [path, why] : inputs) {
    auto r = run(cli + " dbx list " + q(path));
    EXPECT_EQ(r.status, 3) << path;
    EXPECT_EQ(r.err, "modsign: " + path + ": " + why + "\n");
    r = run(cli + " dbx merge -o " + q(d / "out") + " " + q(path));
    EXPECT_EQ(r.status, 3) << path;
    EXPECT_EQ(r.err, "modsign: " + path + ": " + why + "\n");
    EXPECT_FALSE(std::ifstream(d / "out").good());
  }
  // Output in a missing directory: exit 3, nothing left behind.
  spit(d / "a.esl", good_list(guids::cert_sha256, {{kOwnerA, fill(32, 1)}}));
  auto r = run(cli + " dbx merge -o " + q(d / "nodir/out") + " " + q(d / "a.esl"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d / "nodir/out" + ": cannot create temporary file: No such file or directory\n");
  // Output = input: read first, replaced atomically with the merged bytes.
  spit(d / "b.esl", good_list(guids::cert_sha256, {{kOwnerA, fill(32, 1)}, {kOwnerA, fill(32, 1)}}));
  r = run(cli + " dbx merge -o " + q(d / "b.esl") + " " + q(d / "b.esl"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(d / "b.esl"), slurp(d / "a.esl"));
  // --owner: upper case is the same GUID; braces, missing dashes, 35 characters are usage errors.
  const std::string h = to_hex(fill(32, 1));
  r = run(cli + " dbx add-hash --owner 11111111-2222-3333-4444-55555555555A -o " + q(d / "u.esl") + " " + h);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(d / "u.esl"),
            good_list(guids::cert_sha256, {{*Guid::parse("11111111-2222-3333-4444-55555555555a"), fill(32, 1)}}));
  for (const std::string bad : {"{11111111-2222-3333-4444-555555555555}", "11111111222233334444555555555555",
                                "11111111-2222-3333-4444-55555555555", "11111111-2222-3333-4444-55555555555g"}) {
    r = run(cli + " dbx add-hash --owner " + q(bad) + " -o " + q(d / "x") + " " + h);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_EQ(r.err, "modsign: --owner: not a GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx): " + bad + "\n");
  }
  r = run(cli + " dbx add-hash --owner " + kOwnerA.str() + " -o " + q(d / "x") + " " + h.substr(0, 62) + "zz");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "modsign: not a SHA-256 hash (64 hex digits): " + h.substr(0, 62) + "zz\n");
  EXPECT_FALSE(std::ifstream(d / "x").good());
}

TEST(EfiInputs, MergeRefusesEntriesWithoutData) {
  // signature_size 16: parses (the kernel's handler refuses the entry, EINVAL), but an
  // entry of no data cannot be written: exit 3 naming the file and list, OUT untouched
  // (it used to end in "modsign: internal error: group_entries: an entry without data").
  TempDir d;
  Bytes f = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 1)}});
  append(f, raw_list(guids::cert_sha256, 28 + 16, 0, 16, kOwnerA.bytes));
  spit(d / "z.esl", f);
  spit(d / "out", Bytes{1, 2, 3});
  auto r = run(test::modsign_cli() + " dbx merge -o " + q(d / "out") + " " + q(d / "z.esl"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err,
            "modsign: " + d / "z.esl" +
                ": list 2 (EFI_CERT_SHA256, byte offset 76): signature_size 16, entries without data; not merged\n");
  EXPECT_EQ(slurp(d / "out"), (Bytes{1, 2, 3}));
}
