// The public blacklist and dbx calls (include/modsign/blacklist.hpp, dbx.hpp), through the
// installed headers only; keys and lists made by openssl and efitools, hashes confirmed
// with openssl/sha256sum.
#include <gtest/gtest.h>

#include <modsign/blacklist.hpp>
#include <modsign/dbx.hpp>
#include <modsign/trust.hpp>

#include "test_support.hpp"

using namespace modsign;
using test::q;

namespace {
using test::sh;

std::string first_word(const std::string& s) { return s.substr(0, s.find_first_of(" \n")); }
std::string text(const Bytes& b) { return std::string(b.begin(), b.end()); }

// An RSA key and self-signed certificate (openssl), an unsigned and a signed module (the
// same 4096 bytes; signed by the modsign CLI, sha256, no signedAttrs).
class ApiBlacklist : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const std::string o = test::openssl();
    sh(o + " req -x509 -newkey rsa:2048 -nodes -keyout " + q(f("k.key")) + " -out " + q(f("k.crt")) +
       " -sha256 -subj /CN=api-blacklist -days 30 2>&1 && " + o + " x509 -in " + q(f("k.crt")) + " -outform DER -out " +
       q(f("k.der")));
    test::spit(f("plain.ko"), test::pattern(4096));
    test::spit(f("signed.ko"), test::pattern(4096));
    sh(test::modsign_cli() + " sign --key " + q(f("k.key")) + " --cert " + q(f("k.crt")) + " --hash sha256 " +
       q(f("signed.ko")));
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string f(const std::string& n) { return *dir_ / n; }
  static std::string sha256sum(const std::string& path) { return first_word(sh("sha256sum " + q(path))); }
  /// H(TBSCertificate): asn1parse -strparse 4 writes the TBSCertificate TLV.
  static std::string tbs_sha256() {
    sh(test::openssl() + " asn1parse -inform DER -in " + q(f("k.der")) + " -strparse 4 -noout -out " + q(f("tbs.der")));
    return sha256sum(f("tbs.der"));
  }
  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

}  // namespace

TEST_F(ApiBlacklist, HashListProblemsWithLineNumbersAsLintPrintsThem) {
  const std::string path = d_ / "list";
  test::spit(path, std::string("\"bin:00aa\",\n\"BIN:00\",\n  \"tbs:abc\",\n\"bin:00aa\"\n"));
  const HashList l = read_hash_list(path);
  ASSERT_EQ(l.entries.size(), 2u);
  EXPECT_EQ(l.entries[0].description, "bin:00aa");
  EXPECT_EQ(l.entries[1].line, 4u);
  EXPECT_FALSE(l.awk_accepts());
  ASSERT_EQ(l.problems.size(), 2u);
  EXPECT_EQ(l.problems[0].line, 2u);
  EXPECT_EQ(l.problems[0].column, 2u);  // the prefix, after the quote
  EXPECT_EQ(l.problems[0].item, 2u);
  EXPECT_EQ(l.problems[0].stage, HashListStage::awk);
  EXPECT_EQ(l.problems[1].line, 3u);
  EXPECT_EQ(l.problems[1].item, 3u);
  EXPECT_EQ(l.problems[1].awk, "Not an even number of hexadecimal characters (item 3)");
  ASSERT_EQ(l.duplicates.size(), 1u);
  EXPECT_EQ(l.duplicates[0].line, 4u);
  // `blacklist lint` prints exactly these lines.
  const auto r = test::run(test::modsign_cli() + " blacklist lint " + q(path));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, format_hash_list_problem(path, l.problems[0]) + "\n" +
                       format_hash_list_problem(path, l.problems[1]) + "\n" +
                       format_hash_list_problem(path, l.duplicates[0]) + " [warning]\n");
  EXPECT_EQ(format_hash_list_problem(path, l.problems[1]).substr(0, path.size() + 5),
            path + ":3:8:");  // the hex digits
}

TEST_F(ApiBlacklist, MergeGivesFirstSeenOrderAndTheBytesMergeWrites) {
  test::spit(d_ / "a", std::string("\"bin:aa\",\n\"bin:bb\"\n"));
  test::spit(d_ / "b", std::string("\"bin:bb\", \"tbs:cc\""));
  const HashListMerge m = merge_hash_list_files({d_ / "a", d_ / "b"});
  EXPECT_EQ(m.descriptions, (std::vector<std::string>{"bin:aa", "bin:bb", "tbs:cc"}));
  EXPECT_EQ(m.duplicates, 1u);
  const auto t = write_hash_list(m.descriptions);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, "\"bin:aa\",\n\"bin:bb\",\n\"tbs:cc\"\n");
  sh(test::modsign_cli() + " blacklist merge -o " + q(d_ / "out") + " " + q(d_ / "a") + " " + q(d_ / "b"));
  EXPECT_EQ(text(test::slurp(d_ / "out")), *t);
  EXPECT_EQ(write_hash_list({}).error().code, KErr::einval);
  EXPECT_EQ(write_hash_list({"bin:ABCD"}).error().code, KErr::einval);
  // A file the build refuses stops the merge, named with its first problem.
  test::spit(d_ / "bad", std::string("\"bin:aa\","));
  try {
    merge_hash_list_files({d_ / "a", d_ / "bad"});
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).substr(0, (d_ / "bad").size() + 5), d_ / "bad" + ":1:9:");
  }
  EXPECT_THROW(merge_hash_list_files({d_ / "missing"}), IoError);
}

TEST_F(ApiBlacklist, EntriesOfModulesAndCertificates) {
  const KernelProfile v7;
  // Unsigned: IMA's SHA-256 of the whole file.
  const auto plain = blacklist_entry_for_module(test::slurp(f("plain.ko")), v7);
  EXPECT_EQ(plain.source, ModuleBlacklistEntry::Source::ima_hash);
  EXPECT_EQ(plain.description, "bin:" + sha256sum(f("plain.ko")));
  EXPECT_EQ(plain.algo, "sha256");
  EXPECT_FALSE(plain.side_sha256.has_value());
  // Signed (RSA, no signedAttrs): the modsig digest, SHA-256 of the 4096 bytes before the trailer.
  const auto sgn = blacklist_entry_for_module(test::slurp(f("signed.ko")), v7);
  EXPECT_EQ(sgn.source, ModuleBlacklistEntry::Source::d_modsig);
  EXPECT_EQ(sgn.description, "bin:" + sha256sum(f("plain.ko")));
  EXPECT_EQ(sgn.side_sha256, "bin:" + sha256sum(f("plain.ko")));
  EXPECT_EQ(sgn.explanation, "d-modsig: sha256 of the 4096 bytes before the signature trailer");
  // With ima_hash=sha512 the unsigned module's key is SHA-512 of the file.
  const auto p512 = blacklist_entry_for_module(test::slurp(f("plain.ko")), v7, "sha512");
  EXPECT_EQ(p512.description, "bin:" + first_word(sh("sha512sum " + q(f("plain.ko")))));
  EXPECT_THROW(blacklist_entry_for_module(test::slurp(f("plain.ko")), v7, "crc32"), std::invalid_argument);

  // Certificate: tbs: SHA-256 of the TBSCertificate, on both profiles (its signature hash is SHA-256).
  const std::string tbs = "tbs:" + tbs_sha256();
  const auto c = blacklist_entry_for_certificate(test::slurp(f("k.der")), v7);
  EXPECT_EQ(c.tbs, tbs);
  EXPECT_EQ(c.explanation, "");
  EXPECT_EQ(c.der, test::slurp(f("k.der")));
  EXPECT_EQ(blacklist_entry_for_certificate(test::slurp(f("k.der")), *KernelProfile::parse("v6")).tbs, tbs);
  EXPECT_THROW(blacklist_entry_for_certificate(test::slurp(f("plain.ko")), v7, "x"), InputError);

  // By file: a PEM certificate file and a module; labels as `blacklist entry` names them.
  const auto items = blacklist_entries_for_file(f("k.crt"), v7);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].label, f("k.crt"));
  ASSERT_TRUE(items[0].certificate.has_value());
  EXPECT_EQ(items[0].certificate->tbs, tbs);
  sh("cat " + q(f("k.crt")) + " " + q(f("k.crt")) + " > " + q(d_ / "two.pem"));
  const auto two = blacklist_entries_for_file(d_ / "two.pem", v7);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].label, d_ / "two.pem" + "#2");
  const auto mod = blacklist_entries_for_file(f("signed.ko"), v7);
  ASSERT_EQ(mod.size(), 1u);
  ASSERT_TRUE(mod[0].module.has_value());
  EXPECT_EQ(mod[0].module->description, sgn.description);
  // A damaged PEM file is refused, its message naming the file.
  test::spit(d_ / "dmg.crt", std::string("-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n"));
  try {
    (void)blacklist_entries_for_file(d_ / "dmg.crt", v7);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), d_ / "dmg.crt" + ": PEM block 1 is damaged (bad base64 or armour)");
  }
}

TEST_F(ApiBlacklist, CheckVerdictsNameTheEntryItsOriginAndTheErrno) {
  const KernelProfile v7;
  const std::string tbs = "tbs:" + tbs_sha256();
  const std::string bin = "bin:" + sha256sum(f("plain.ko"));
  test::spit(d_ / "list", std::string("\"bin:00\",\n\"" + bin + "\"\n"));
  const TrustStore bl = TrustStore::load(TrustSources{{}, {d_ / "list"}, {}, {}}, v7);
  // The unsigned module: IMA's bin: lookup, EPERM, from line 2.
  const BlacklistVerdict m = check_module_blacklist(test::slurp(f("plain.ko")), bl, v7);
  ASSERT_EQ(m.stops.size(), 1u);
  EXPECT_EQ(m.stops[0].entry, bin);
  EXPECT_EQ(m.stops[0].err, KErr::eperm);
  ASSERT_EQ(m.stops[0].origins.size(), 1u);
  EXPECT_EQ(m.stops[0].origins[0].file, d_ / "list");
  EXPECT_EQ(m.stops[0].origins[0].where, "line 2");
  EXPECT_EQ(m.outcome, "refused");
  EXPECT_EQ(m.err, KErr::eperm);
  EXPECT_EQ(m.stops[0].ima_buffer, Bytes{});  // IMA's file hash: the record's buffer is empty
  // The certificate is not listed there: not stopped.
  const BlacklistVerdict c0 = check_certificate_blacklist(test::slurp(f("k.der")), bl, v7);
  EXPECT_FALSE(c0.stopped());
  EXPECT_EQ(c0.outcome, "not-stopped");
  EXPECT_EQ(c0.err, KErr::none);
  EXPECT_EQ(c0.tbs, tbs);

  // Its tbs: listed (line 1): the certificate is refused from every keyring (EKEYREJECTED) ...
  test::spit(d_ / "tbs", std::string("\"" + tbs + "\"\n"));
  const TrustStore both = TrustStore::load(TrustSources{{f("k.crt")}, {d_ / "tbs"}, {}, {}}, v7);
  const BlacklistVerdict c = check_certificate_blacklist(test::slurp(f("k.der")), both, v7);
  ASSERT_EQ(c.stops.size(), 1u);
  EXPECT_EQ(c.stops[0].entry, tbs);
  EXPECT_EQ(c.stops[0].err, KErr::ekeyrejected);
  EXPECT_EQ(c.stops[0].origins.at(0).where, "line 1");
  EXPECT_EQ(c.outcome, "refused");
  EXPECT_EQ(c.err, KErr::ekeyrejected);
  // ... so the module it signed finds no key: ENOKEY, tainted; refused under enforce
  // (EKEYREJECTED) and lockdown (EPERM), as module_sig_check() decides.
  const BlacklistVerdict s = check_module_blacklist(test::slurp(f("signed.ko")), both, v7);
  ASSERT_EQ(s.stops.size(), 1u);
  EXPECT_EQ(s.stops[0].entry, tbs);
  EXPECT_EQ(s.stops[0].err, KErr::enokey);
  EXPECT_EQ(s.outcome, "loads-tainted");
  EXPECT_EQ(s.err, KErr::enokey);
  EXPECT_EQ(s.soft_refusal, "");
  EXPECT_EQ(c.soft_refusal, "");  // EKEYREJECTED itself, not a soft failure refused
  KernelProfile enforce;
  enforce.set_enforce(true);
  const BlacklistVerdict se = check_module_blacklist(test::slurp(f("signed.ko")), both, enforce);
  EXPECT_EQ(se.outcome, "refused");
  EXPECT_EQ(se.err, KErr::ekeyrejected);
  EXPECT_EQ(se.soft_refusal, "signatures enforced");
  KernelProfile lockdown;
  lockdown.set_lockdown(true);
  EXPECT_EQ(check_module_blacklist(test::slurp(f("signed.ko")), both, lockdown).err, KErr::eperm);
  EXPECT_EQ(check_module_blacklist(test::slurp(f("signed.ko")), both, lockdown).soft_refusal, "lockdown");
  KernelProfile enforce_and_lockdown = enforce;  // sig_enforce is checked first
  enforce_and_lockdown.set_lockdown(true);
  EXPECT_EQ(check_module_blacklist(test::slurp(f("signed.ko")), both, enforce_and_lockdown).soft_refusal,
            "signatures enforced");
  // By file, as `blacklist check` reports it.
  const auto v = check_blacklist_file(f("signed.ko"), both, v7);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].label, f("signed.ko"));
  EXPECT_EQ(v[0].verdict.outcome, "loads-tainted");
  const auto r = test::run(test::modsign_cli() + " blacklist check --json --keyring " + q(f("k.crt")) +
                           " --blacklist " + q(d_ / "tbs") + " " + q(f("signed.ko")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find(R"("errno":"ENOKEY","kernel":"v7.0","kind":"module")"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(R"("outcome":"loads-tainted")"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(R"("stopped":false)"), std::string::npos) << r.out;
}

TEST_F(ApiBlacklist, DbxParseOfEfitoolsListsWithExactOffsets) {
  const std::string owner = "11111111-2222-3333-4444-555555555555";
  sh("cert-to-efi-sig-list -g " + owner + " " + q(f("k.crt")) + " " + q(d_ / "c.esl"));
  const Bytes der = test::slurp(f("k.der"));
  const EfiVariableFile vf = read_efi_variable_file(d_ / "c.esl");
  EXPECT_EQ(vf.form, EfiContainer::esl);
  EXPECT_EQ(vf.payload_offset, 0u);
  ASSERT_FALSE(vf.lists.error.has_value());
  ASSERT_EQ(vf.lists.lists.size(), 1u);
  const EfiSignatureList& l = vf.lists.lists[0];
  EXPECT_EQ(efi_type_name(l.type), "EFI_CERT_X509");
  EXPECT_EQ(l.offset, 0u);
  EXPECT_EQ(l.list_size, 28 + 16 + der.size());
  EXPECT_EQ(l.signature_size, 16 + der.size());
  EXPECT_EQ(l.header_size, 0u);
  ASSERT_EQ(l.entries.size(), 1u);
  EXPECT_EQ(l.entries[0].offset, 28u);
  EXPECT_EQ(l.entries[0].owner.str(), owner);
  EXPECT_EQ(l.entries[0].data, der);
  // Our add-cert writes the same bytes as efitools.
  EXPECT_EQ(efi_x509_lists({der}, *EfiGuid::parse(owner)), test::slurp(d_ / "c.esl"));

  // In dbx the certificate is revoked; its TBS hash is the 7.0 tbs: key.
  const EfiListing ls = list_efi_variable(vf, EfiVariable::dbx, KernelProfile());
  ASSERT_EQ(ls.entries.size(), 1u);
  EXPECT_EQ(ls.entries[0].effect.kind, EfiEntryKind::revoked_certificate);
  EXPECT_EQ(ls.entries[0].effect.text, "revoked certificate");
  ASSERT_TRUE(ls.entries[0].certificate.has_value());
  EXPECT_EQ(ls.entries[0].certificate->tbs_sha256, tbs_sha256());
  EXPECT_EQ(ls.entries[0].certificate->sha256, sha256sum(f("k.der")));
  EXPECT_EQ(ls.summary.revoked, 1u);
  EXPECT_EQ(ls.summary.entries, 1u);
  EXPECT_EQ(list_efi_variable(vf, EfiVariable::db, KernelProfile()).summary.platform, 1u);

  // A signed update (auth-2) from sign-efi-sig-list: timestamp, then the PKCS#7, then the list.
  sh("sign-efi-sig-list -t '2024-01-02 03:04:05' -k " + q(f("k.key")) + " -c " + q(f("k.crt")) + " dbx " +
     q(d_ / "c.esl") + " " + q(d_ / "c.auth") + " >/dev/null");
  const Bytes auth = test::slurp(d_ / "c.auth");
  const EfiVariableFile av = read_efi_variable_file(d_ / "c.auth");
  EXPECT_EQ(av.form, EfiContainer::auth2);
  ASSERT_TRUE(av.auth.has_value());
  EXPECT_EQ(av.auth->timestamp.str(), "2024-01-02 03:04:05");
  EXPECT_EQ(av.auth->revision, 0x0200);
  EXPECT_EQ(av.auth->certificate_type, 0x0EF1);
  EXPECT_EQ(av.auth->pkcs7_offset, 40u);
  EXPECT_EQ(av.payload_offset, 16u + av.auth->dw_length);
  EXPECT_EQ(av.auth->pkcs7.size(), av.auth->dw_length - 24u);
  EXPECT_EQ(auth.size(), av.payload_offset + l.list_size);
  ASSERT_EQ(av.lists.lists.size(), 1u);
  EXPECT_EQ(av.lists.lists[0].offset, av.payload_offset);
  EXPECT_EQ(av.lists.lists[0].entries[0].offset, av.payload_offset + 28);
  // Forced as a bare list, the auth-2 header is no EFI_SIGNATURE_LIST: EBADMSG at offset 0.
  const EfiVariableFile forced = read_efi_variable_file(d_ / "c.auth", EfiContainer::esl);
  ASSERT_TRUE(forced.lists.error.has_value());
  EXPECT_EQ(forced.lists.error->code, KErr::ebadmsg);
  EXPECT_EQ(forced.lists.error_offset, 0u);

  // efivarfs copy: 4 attribute bytes, then the list.
  Bytes ev{0x27, 0, 0, 0};
  const Bytes esl = test::slurp(d_ / "c.esl");
  ev.insert(ev.end(), esl.begin(), esl.end());
  const EfiVariableFile evf = parse_efi_variable_file(ev, EfiContainer::detect, "ev");
  EXPECT_EQ(evf.form, EfiContainer::efivarfs);
  EXPECT_EQ(evf.attributes, 0x27u);
  EXPECT_EQ(evf.lists.lists.at(0).entries.at(0).offset, 32u);
  EXPECT_THROW(parse_efi_variable_file(Bytes{1, 2}, EfiContainer::efivarfs, "short"), InputError);

  // Merge drops the duplicate; add-hash writes one EFI_CERT_SHA256 list.
  const EfiMerge mg = merge_efi_variable_files({d_ / "c.esl", d_ / "c.auth"});
  EXPECT_EQ(mg.entries, 1u);
  EXPECT_EQ(mg.input_entries, 2u);
  EXPECT_EQ(mg.duplicates, 1u);
  EXPECT_EQ(mg.lists, esl);
  const Bytes h(32, 0xab);
  const Bytes hl = efi_sha256_list({h, h}, *EfiGuid::parse(owner));
  EXPECT_EQ(hl.size(), 28u + 2 * (16 + 32));
  const EfiVariableFile hv = parse_efi_variable_file(hl, EfiContainer::esl, "h");
  EXPECT_EQ(efi_type_name(hv.lists.lists.at(0).type), "EFI_CERT_SHA256");
  EXPECT_EQ(list_efi_variable(hv, EfiVariable::dbx, KernelProfile()).entries.at(1).effect.description,
            "bin:" + to_hex(h));
  EXPECT_THROW(efi_sha256_list({Bytes(20, 1)}, *EfiGuid::parse(owner)), InputError);
  EXPECT_EQ(dbx_sha256_of_bin_key("bin:" + std::string(40, 'a')).error().code, KErr::einval);
}
