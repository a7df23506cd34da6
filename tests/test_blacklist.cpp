// The system blacklist: descriptions vetted as blacklist_vet_description() does, the
// kernel's lookups, CONFIG_SYSTEM_BLACKLIST_HASH_LIST files (checked against the kernel's
// own awk script when gawk is installed), bin:/tbs: entries confirmed with sha256sum and
// openssl, the checker, and the CLI end to end (blacklist entry/check/lint/merge, verify
// --blacklist/--revoked).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "blacklist/check.hpp"
#include "blacklist/description.hpp"
#include "blacklist/hash_list.hpp"
#include "crypto/crypto.hpp"
#include "module/compression.hpp"
#include "module/module_signature.hpp"
#include "test_support.hpp"

using namespace modsign;
using namespace modsign::blacklist;
using test::q;

namespace {

std::string M() { return test::modsign_cli(); }

KErr vet(std::string_view d) {
  auto st = vet_description(d);
  return st ? KErr::none : st.error().code;
}

std::string hexes(std::size_t n, char c = 'a') { return std::string(n, c); }

std::string sh(const std::string& cmd) {
  auto r = test::run(cmd);
  EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
  return r.out;
}

/// First word of `sha256sum`-style output.
std::string first_word(const std::string& s) { return s.substr(0, s.find_first_of(" \n")); }

}  // namespace

// ------------------------------------------------------------------ descriptions (§9 item 39)

TEST(BlacklistVet, Item39Cases) {
  EXPECT_EQ(vet("tbs:ABCD"), KErr::einval);
  EXPECT_EQ(vet("tbs:abc"), KErr::einval);
  EXPECT_EQ(vet("bin:"), KErr::einval);
  EXPECT_EQ(vet("sha:ab"), KErr::einval);
  EXPECT_EQ(vet("tbs:" + hexes(130)), KErr::enopkg);
  EXPECT_EQ(vet("tbs:" + hexes(128)), KErr::none);
}

TEST(BlacklistVet, PrefixColonAndCharacterRules) {
  EXPECT_EQ(vet("bin:0123456789abcdef"), KErr::none);
  EXPECT_EQ(vet("tbs:00"), KErr::none);
  EXPECT_EQ(vet("TBS:ab"), KErr::einval);   // prefix is case-sensitive
  EXPECT_EQ(vet("Bin:ab"), KErr::einval);
  EXPECT_EQ(vet("tbsab"), KErr::einval);    // no colon
  EXPECT_EQ(vet(""), KErr::einval);
  EXPECT_EQ(vet(":ab"), KErr::einval);
  EXPECT_EQ(vet("tb:ab"), KErr::einval);
  EXPECT_EQ(vet("tbsx:ab"), KErr::einval);  // the 4th character must be ':'
  EXPECT_EQ(vet(" tbs:ab"), KErr::einval);
  EXPECT_EQ(vet("bbs:ab"), KErr::einval);   // mixes both prefixes
  EXPECT_EQ(vet("tbs:"), KErr::einval);     // empty hash
  EXPECT_EQ(vet("tbs:zz"), KErr::einval);
  EXPECT_EQ(vet("tbs:ab:cd"), KErr::einval);
  EXPECT_EQ(vet("tbs:aB"), KErr::einval);
  EXPECT_EQ(vet("tbs:a b"), KErr::einval);
  EXPECT_EQ(vet("bin:" + hexes(127)), KErr::einval);  // odd
  EXPECT_EQ(vet("bin:" + hexes(126)), KErr::none);
  // More than 128 characters is ENOPKG whatever follows the first 128, even an odd count
  // or a bad character at position 129 ...
  EXPECT_EQ(vet("bin:" + hexes(129)), KErr::enopkg);
  EXPECT_EQ(vet("bin:" + hexes(128) + "Z"), KErr::enopkg);
  // ... but a bad character among the first 128 is found first: EINVAL.
  EXPECT_EQ(vet("bin:A" + hexes(129)), KErr::einval);
  EXPECT_EQ(vet("bin:" + hexes(127) + "G" + hexes(10)), KErr::einval);
  // A C string: the description ends at a NUL byte.
  EXPECT_EQ(vet(std::string_view("bin:ab\0ZZ", 9)), KErr::none);
  EXPECT_EQ(vet(std::string_view("bin:\0ab", 7)), KErr::einval);
  auto st = vet_description("tbs:" + hexes(130));
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "hash of 130 characters is longer than 128");
}

// ------------------------------------------------------------------ lookups (§9 item 40)

TEST(BlacklistLookup, Item40ReturnValues) {
  Sources s;
  const Bytes h = crypto::digest(crypto::HashAlgo::sha256, Bytes{'x'});
  auto r = mark_hash_blacklisted(s, h, HashType::binary, Origin{"list", "line 1"});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r);
  EXPECT_EQ(*s.keyring.descriptions.begin(), "bin:" + to_hex(h));
  EXPECT_EQ(s.keyring.descriptions.begin()->size(), 68u);
  EXPECT_EQ(is_binary_blacklisted(s.keyring, h), KErr::eperm);
  EXPECT_EQ(is_hash_blacklisted(s.keyring, h, HashType::binary), KErr::ekeyrejected);
  EXPECT_EQ(is_hash_blacklisted(s.keyring, h, HashType::x509_tbs), KErr::none);
  const Bytes other = crypto::digest(crypto::HashAlgo::sha256, Bytes{'y'});
  EXPECT_EQ(is_binary_blacklisted(s.keyring, other), KErr::none);
  EXPECT_EQ(is_binary_blacklisted(s.keyring, Bytes{}), KErr::none);  // looks up "bin:"
  EXPECT_EQ(raw_hash(Bytes{}, HashType::binary), "bin:");
  EXPECT_EQ(raw_hash(Bytes{0xAB, 0x01}, HashType::x509_tbs), "tbs:ab01");
  // A second mark is the kernel's -EEXIST: false, one key, both origins.
  r = mark_hash_blacklisted(s, h, HashType::binary, Origin{"dbx", "list 1 entry 1"});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
  EXPECT_EQ(s.keyring.descriptions.size(), 1u);
  EXPECT_EQ(s.description_origins["bin:" + to_hex(h)].size(), 2u);
  // mark_hash_blacklisted vets what it builds: 0 bytes EINVAL, 65 bytes ENOPKG, 64 fine.
  EXPECT_EQ(mark_hash_blacklisted(s, Bytes{}, HashType::binary, {}).error().code, KErr::einval);
  EXPECT_EQ(mark_hash_blacklisted(s, Bytes(65, 1), HashType::binary, {}).error().code, KErr::enopkg);
  EXPECT_TRUE(mark_hash_blacklisted(s, Bytes(64, 1), HashType::binary, {}).ok());
}

// ------------------------------------------------------------------ hash-list files

TEST(HashList, EntriesWithPositions) {
  const std::string text = "\"bin:aa\",\n  \"tbs:0b\" ,\r\n\t\"bin:aa\"\n";
  auto l = parse_hash_list(text);
  EXPECT_TRUE(l.problems.empty());
  EXPECT_TRUE(l.awk_accepts());
  ASSERT_EQ(l.entries.size(), 3u);
  EXPECT_EQ(l.entries[0].description, "bin:aa");
  EXPECT_EQ(l.entries[1].description, "tbs:0b");
  EXPECT_EQ(l.entries[1].line, 2u);
  EXPECT_EQ(l.entries[1].column, 3u);
  EXPECT_EQ(l.entries[2].line, 3u);
  EXPECT_EQ(l.entries[2].column, 2u);
  EXPECT_EQ(l.entries[2].item, 3u);
  ASSERT_EQ(l.duplicates.size(), 1u);
  EXPECT_EQ(format_problem("f", l.duplicates[0]),
            "f:3:2: duplicate of an earlier entry (the kernel logs \"Duplicate blacklisted hash\" and keeps one)");
}

TEST(HashList, LinePreciseErrors) {
  auto first = [](const std::string& text) {
    auto l = parse_hash_list(text);
    EXPECT_FALSE(l.problems.empty()) << text;
    return l.problems.empty() ? std::string() : format_problem("h.txt", l.problems[0]);
  };
  EXPECT_EQ(first("\"bin:aa\",\n\"tbs:ABCD\"\n"),
            "h.txt:2:6: upper-case hex digit 'A' (awk: Not a lowercase hexadecimal string (item 2))");
  EXPECT_EQ(first("\"tbs:abc\""), "h.txt:1:6: odd number of hex digits (3) (awk: Not an even number of hexadecimal "
                                  "characters (item 1))");
  EXPECT_EQ(first("\"bin:\""), "h.txt:1:6: no hex digits after the prefix (awk: Not a lowercase hexadecimal string (item 1))");
  EXPECT_EQ(first("\"sha:ab\""), "h.txt:1:2: entry does not start with \"tbs:\" or \"bin:\" (awk: Unknown prefix (item 1))");
  EXPECT_EQ(first("\"TBS:ab\""), "h.txt:1:2: entry does not start with \"tbs:\" or \"bin:\" (awk: Unknown prefix (item 1))");
  EXPECT_EQ(first("\"tbsab\""), "h.txt:1:2: entry does not start with \"tbs:\" or \"bin:\" (awk: Unknown prefix (item 1))");
  EXPECT_EQ(first("\"tbs:" + hexes(130) + "\""),
            "h.txt:1:6: hash of 130 hex digits, more than 128 (the kernel refuses it: ENOPKG) (awk: Hash string too long "
            "(item 1))");
  EXPECT_EQ(first("\"tbs:zz\""), "h.txt:1:6: not a hex digit: 'z' (awk: Not a lowercase hexadecimal string (item 1))");
  EXPECT_EQ(first("bin:aa"), "h.txt:1:1: 'b' where a '\"' should open a string (awk: Not a string (item 1))");
  EXPECT_EQ(first("\"bin:aa\",\n"), "h.txt:1:9: ',' after the last entry (only blanks follow it) (awk: Not a string (item 2))");
  EXPECT_EQ(first("\"bin:aa\",,\"bin:bb\""), "h.txt:1:10: empty item between two ',' (awk: Not a string (item 2))");
  // No comma at all, or a comma with nothing before it: the message does not invent one.
  EXPECT_EQ(first("\n"), "h.txt:1:1: no string: the file holds only blanks (awk: Not a string (item 1))");
  EXPECT_EQ(first(" \t\r\n"), "h.txt:1:1: no string: the file holds only blanks (awk: Not a string (item 1))");
  EXPECT_EQ(first(",\"bin:aa\""), "h.txt:1:1: ',' with no string before it (awk: Not a string (item 1))");
  EXPECT_EQ(first("\n,\"bin:aa\""), "h.txt:2:1: ',' with no string before it (awk: Not a string (item 1))");
  EXPECT_EQ(first("\"bin:aa\" \"bin:bb\""),
            "h.txt:1:10: '\"' after the closing '\"' (one string per item) (awk: Not a string (item 1))");
  EXPECT_EQ(first("\"bin:a,a\""),
            "h.txt:1:1: string not closed before the next ',' (an entry cannot contain ',') (awk: Not a string (item 1))");
  EXPECT_EQ(first("/* list */ \"bin:aa\""), "h.txt:1:1: '/' where a '\"' should open a string (awk: Not a string (item 1))");
  EXPECT_EQ(first("\"bin:aa\"\f"), "h.txt:1:9: byte 0x0c after the closing '\"' (one string per item) (awk: Not a string "
                                  "(item 1))");
  EXPECT_EQ(first("\"bin:a\\x61\""), "h.txt:1:7: not a hex digit: '\\' (awk: Not a lowercase hexadecimal string (item 1))");
  // Build failures the awk script lets through.
  EXPECT_EQ(first(""), "h.txt:1:1: empty file: the build would compile `{ , NULL }` (certs/Makefile appends \", NULL\")");
  EXPECT_EQ(first("\"bin:aa\","),
            "h.txt:1:9: file ends with ',': the build appends \", NULL\" and the C array does not compile (\",, NULL\")");
  EXPECT_TRUE(parse_hash_list("").awk_accepts());
  EXPECT_TRUE(parse_hash_list("\"bin:aa\",").awk_accepts());
  EXPECT_FALSE(parse_hash_list("\"bin:aa\",\n").awk_accepts());
  // Every problem is reported, not only the first (the awk script stops at the first).
  auto l = parse_hash_list("\"bin:AA\",\n\"xyz:00\",\n\"bin:abc\"\n");
  ASSERT_EQ(l.problems.size(), 3u);
  EXPECT_EQ(l.problems[1].line, 2u);
  EXPECT_EQ(l.problems[2].item, 3u);
  EXPECT_TRUE(l.entries.empty());
}

// The kernel's own check-blacklist-hashes.awk (gawk: it uses match() with an array) gives
// the same verdict and the same failing item.
TEST(HashList, AgreesWithTheKernelAwkScript) {
  const std::string kernel_awk = "/root/.cache/modsign/kernel-src/linux-source-7.2/certs/check-blacklist-hashes.awk";
  if (test::run("command -v gawk").status != 0) GTEST_SKIP() << "gawk not installed";
  if (test::run("test -r " + q(kernel_awk)).status != 0) GTEST_SKIP() << "kernel source not unpacked";
  test::TempDir d;
  const std::vector<std::string> cases = {
      "\"bin:aa\",\n\"tbs:bb\"\n", "\"bin:aa\",\n", "", "\n", "\"bin:aa\",", "\"bin:aa\",,\"bin:bb\"", "\"bin:a\\x61\"",
      " \"bin:aa\" \f", "\"TBS:aa\"", "\"tbs:" + hexes(128) + "\"", "\"tbs:" + hexes(130) + "\"", "\"bin:abc\"",
      "\"bin:\"", "  \"bin:00\"\t,\r\n\"tbs:ff\"  ", "\"bin:a,a\"", "\"bin:aa\" x", "\"bin:AA\",\"bin:bb\"",
      // hostile syntax: NUL bytes, VT, empty string, C string concatenation, escaped quote,
      // unterminated string, commas only, CR-only line ends, non-ASCII (valid UTF-8)
      std::string("\"bin:aa\"\0", 9), std::string("\"bin:a\0a\"", 10), "\"bin:aa\"\v", "\"\"", "\"bin:aa\"\"bb\"",
      "\"bin:aa\\\"bb\"", "\"bin:aa", "\"bin:aa,\"bin:bb\"", ",", ",,,", ",\"bin:aa\"", "\"bin:aa\",\r\"bin:bb\"\r",
      "\"bin:\xc3\xa9\"", "\"tbs:" + hexes(127) + "\"", "\"tbs:" + hexes(129) + "\"", "\"tbs:" + hexes(129, 'A') + "\""};
  for (const auto& c : cases) {
    test::spit(d / "list", c);
    auto r = test::run("gawk -f " + q(kernel_awk) + " " + q(d / "list"));
    auto l = parse_hash_list(c);
    EXPECT_EQ(r.status == 0, l.awk_accepts()) << "[" << c << "] awk: " << r.out;
    if (r.status != 0 && !l.problems.empty()) {
      // awk prints "<message> (item N): <value>"; modsign's awk field is "<message> (item N)".
      EXPECT_EQ(r.out.substr(0, r.out.find("):") + 1), l.problems[0].awk) << c;
    }
  }
}

TEST(HashList, WriteExactBytes) {
  auto w = write_hash_list({"bin:aa", "tbs:" + hexes(64, 'b')});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, "\"bin:aa\",\n\"tbs:" + hexes(64, 'b') + "\"\n");
  EXPECT_EQ(*write_hash_list({"bin:00"}), "\"bin:00\"\n");
  auto e = write_hash_list({});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, KErr::einval);
  e = write_hash_list({"bin:aa", "tbs:ABC"});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message, "entry \"tbs:ABC\": character 1 of the hash is not a lower-case hex digit");
  // What modsign writes reads back unchanged and without problems.
  auto back = parse_hash_list(*w);
  EXPECT_TRUE(back.problems.empty());
  ASSERT_EQ(back.entries.size(), 2u);
  EXPECT_EQ(back.entries[1].description, "tbs:" + hexes(64, 'b'));
}

TEST(HashList, MergeKeepsFirstSeenOrderAndCountsDuplicates) {
  auto a = parse_hash_list("\"bin:03\",\"bin:01\",\"bin:03\"");
  auto b = parse_hash_list("\"bin:02\",\n\"bin:01\",\n\"tbs:01\"\n");
  auto m = merge_hash_lists({a, b});
  EXPECT_EQ(m.descriptions, (std::vector<std::string>{"bin:03", "bin:01", "bin:02", "tbs:01"}));
  EXPECT_EQ(m.duplicates, 2u);
}

TEST(HashList, LoadIntoSourcesWithOrigins) {
  Sources s;
  auto l = parse_hash_list("\"bin:aa\",\n\"bin:aa\",\n\"tbs:bb\"\n");
  ASSERT_TRUE(load_hash_list(s, "x.list", l).ok());
  EXPECT_EQ(s.keyring.descriptions, (std::set<std::string>{"bin:aa", "tbs:bb"}));
  ASSERT_EQ(s.description_origins["bin:aa"].size(), 2u);
  EXPECT_EQ(s.description_origins["bin:aa"][1].where, "line 2");
  auto bad = load_hash_list(s, "y.list", parse_hash_list("\"bin:aa\",\n\"bin:Q\""));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "y.list:2:6: not a hex digit: 'Q' (awk: Not a lowercase hexadecimal string (item 2))");
}

// ------------------------------------------------------------------ TBS hashes (§9 item 41)

namespace {
struct CertFiles {
  std::string pem, der;
};
CertFiles make_cert(const test::TempDir& d, const std::string& name, const std::string& md) {
  CertFiles c{d / (name + ".pem"), d / (name + ".der")};
  sh(test::openssl() + " req -x509 -newkey rsa:2048 -nodes -keyout " + q(d / (name + ".key")) + " -out " + q(c.pem) +
     " -" + md + " -subj /CN=" + name + " -days 30 2>&1");
  sh(test::openssl() + " x509 -in " + q(c.pem) + " -outform DER -out " + q(c.der));
  return c;
}
/// H(TBSCertificate) with the openssl command line only: asn1parse -strparse 4 writes the
/// TBSCertificate TLV (offset 4 after the outer SEQUENCE's 4-byte header), dgst hashes it.
std::string openssl_tbs_hash(const test::TempDir& d, const std::string& der, const std::string& md) {
  sh(test::openssl() + " asn1parse -inform DER -in " + q(der) + " -strparse 4 -noout -out " + q(d / "tbs.der"));
  const std::string out = sh(test::openssl() + " dgst -" + md + " -r " + q(d / "tbs.der"));
  return first_word(out);
}
}  // namespace

TEST(BlacklistTbs, Sha256OfTbsCertificateMatchesOpensslOnBothProfiles) {
  test::TempDir d;
  auto c = make_cert(d, "tbs256", "sha256");
  auto cert = crypto::Certificate::from_der(test::slurp(c.der));
  ASSERT_TRUE(cert.ok());
  const std::string want = "tbs:" + openssl_tbs_hash(d, c.der, "sha256");
  ASSERT_EQ(want.size(), 68u);
  EXPECT_EQ(certificate_entry(*cert, kernel::KernelProfile::v7_0()), want);
  EXPECT_EQ(certificate_entry(*cert, kernel::KernelProfile::v6()), want);  // its own hash is SHA-256 too
  auto r = test::run(M() + " blacklist entry " + q(c.pem));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "\"" + want + "\"\n");
  r = test::run(M() + " blacklist entry --kernel v6 " + q(c.der));
  EXPECT_EQ(r.out, "\"" + want + "\"\n");
  // A PEM bundle: one item per certificate, named FILE#N.
  auto c2 = make_cert(d, "second", "sha256");
  sh("cat " + q(c.pem) + " " + q(c2.pem) + " > " + q(d / "bundle.pem"));
  const std::string want2 = "tbs:" + openssl_tbs_hash(d, c2.der, "sha256");
  r = test::run(M() + " blacklist entry " + q(d / "bundle.pem"));
  EXPECT_EQ(r.out, "\"" + want + "\",\n\"" + want2 + "\"\n");
  test::spit(d / "l2", "\"" + want2 + "\"");
  r = test::run(M() + " blacklist check --list " + q(d / "l2") + " " + q(d / "bundle.pem"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1), (d / "bundle.pem") + "#1: not stopped\n");
  EXPECT_EQ(r.out.find((d / "bundle.pem") + "#2: stopped by " + want2 + " (" + (d / "l2") + " line 1): "),
            r.out.find('\n') + 1);
}

TEST(BlacklistTbs, Item41Sha384WithRsaCertificate) {
  test::TempDir d;
  auto c = make_cert(d, "tbs384", "sha384");
  auto cert = crypto::Certificate::from_der(test::slurp(c.der));
  ASSERT_TRUE(cert.ok());
  const std::string s256 = "tbs:" + openssl_tbs_hash(d, c.der, "sha256");
  const std::string s384 = "tbs:" + openssl_tbs_hash(d, c.der, "sha384");
  EXPECT_EQ(s384.size(), 4u + 96u);
  EXPECT_EQ(certificate_entry(*cert, kernel::KernelProfile::v7_0()), s256);
  EXPECT_EQ(certificate_entry(*cert, kernel::KernelProfile::v6()), s384);
  // Listed by its SHA-256: 7.0 blacklists it, v6 does not (it looks up the SHA-384).
  Sources s;
  ASSERT_TRUE(load_hash_list(s, "l", parse_hash_list("\"" + s256 + "\"")).ok());
  auto v7 = check_certificate(*cert, s, kernel::KernelProfile::v7_0());
  ASSERT_TRUE(v7.stopped());
  EXPECT_EQ(v7.stops[0].entry, s256);
  EXPECT_EQ(v7.stops[0].err, KErr::ekeyrejected);
  EXPECT_EQ(v7.stops[0].origins[0].where, "line 1");
  EXPECT_FALSE(check_certificate(*cert, s, kernel::KernelProfile::v6()).stopped());
  // And the other way round.
  Sources s6;
  ASSERT_TRUE(load_hash_list(s6, "l", parse_hash_list("\"" + s384 + "\"")).ok());
  EXPECT_TRUE(check_certificate(*cert, s6, kernel::KernelProfile::v6()).stopped());
  EXPECT_FALSE(check_certificate(*cert, s6, kernel::KernelProfile::v7_0()).stopped());
  // The CLI: exit 1 when stopped, JSON per item.
  test::spit(d / "l", "\"" + s256 + "\"\n");
  auto r = test::run(M() + " blacklist check --list " + q(d / "l") + " " + q(c.pem));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find(" (")), c.pem + ": stopped by " + s256);
  r = test::run(M() + " blacklist check --kernel v6 --json --list " + q(d / "l") + " " + q(c.pem));
  EXPECT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stopped"], false);
  EXPECT_EQ(j["entry"], s384);
  EXPECT_EQ(j["kind"], "certificate");
}

TEST(BlacklistTbs, MlDsaCertificateHasNoV6Entry) {
  test::TempDir d;
  sh(M() + " keygen --algo ml-dsa-44 --out " + q(d / "k.pem") + " --cert-out " + q(d / "k.crt"));
  auto certs = crypto::Certificate::load_all(d / "k.crt");
  ASSERT_TRUE(certs.ok());
  const auto& cert = (*certs)[0];
  EXPECT_EQ(certificate_entry(cert, kernel::KernelProfile::v6()), std::nullopt);
  EXPECT_EQ(certificate_entry(cert, kernel::KernelProfile::v7_0()),
            "tbs:" + to_hex(crypto::digest(crypto::HashAlgo::sha256, cert.tbs())));
  auto r = test::run(M() + " blacklist entry --kernel v6 " + q(d / "k.crt"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("no tbs: entry under v6"), std::string::npos) << r.err;
}

// ------------------------------------------------------------------ module entries and the CLI

namespace {

/// Keys made once with `modsign keygen`: RSA-2048 (certificate signed with SHA-256) and ML-DSA-65.
class BlacklistCli : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    auto r = test::run(M() + " keygen --algo rsa-2048 --out " + q(*dir_ / "rsa.pem") + " --cert-out " +
                       q(*dir_ / "rsa.crt") + " --subject 'CN=blacklist test RSA'");
    ASSERT_EQ(r.status, 0) << r.err;
    r = test::run(M() + " keygen --algo ml-dsa-65 --out " + q(*dir_ / "mldsa.pem") + " --cert-out " +
                  q(*dir_ / "mldsa.crt"));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string key(const std::string& n) { return *dir_ / n; }
  /// A module signed by modsign: `n` pattern bytes, then the signature.
  std::string signed_module(const std::string& name, const std::string& key_name, const std::string& cert_name,
                            const std::string& hash, std::size_t n = 5000) {
    const std::string p = d_ / name;
    test::spit(p, test::pattern(n));
    auto r = test::run(M() + " sign --key " + q(key(key_name)) + " --cert " + q(key(cert_name)) + " --hash " + hash +
                       " " + q(p));
    EXPECT_EQ(r.status, 0) << r.err;
    return p;
  }
  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

std::string sha256_of(const Bytes& b) { return to_hex(crypto::digest(crypto::HashAlgo::sha256, b)); }

}  // namespace

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
  EXPECT_EQ(r.err, "modsign: " + mod + ": no bin: entry exists under v7.0: pkcs7_get_digest() fails (EINVAL: No digest "
                   "available), so ima_check_blacklist() looks up \"bin:\", which no key can be; the side SHA-256 "
                   "entry " + side + " (--side-sha256) would stop it under the proposed behaviour\n"
                   "modsign: no entries to write\n");
  r = test::run(M() + " blacklist entry --side-sha256 -o " + q(d_ / "side") + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.err;
  const Bytes side_list = test::slurp(d_ / "side");
  EXPECT_EQ(std::string(side_list.begin(), side_list.end()), "\"" + side + "\"\n");
  r = test::run(M() + " blacklist check --list " + q(d_ / "side") + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, mod + ": not stopped\n  note: no bin: entry can stop it under v7.0 through the modsig: pkcs7_get_digest() fails "
                         "(EINVAL: No digest available), so ima_check_blacklist() looks up \"bin:\", which no key can "
                         "be; under the proposed behaviour (side SHA-256 of the signed content) " + side + " would\n"
                         "  note: " + side + " is listed, but v7.0 does not look it up\n");
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
  EXPECT_NE(ex.find("-byte re-tagged signedAttrs, longer than the 128 hex digits a key may hold"), std::string::npos) << ex;
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
  EXPECT_EQ(r.out, mod + ": refused (EKEYREJECTED): Key is on the revocation list\n");
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
  r = test::run(M() + " verify --enforce --json --cert " + q(key("rsa.crt")) + " --blacklist " + q(d_ / "tbs") + " " + q(mod));
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "refused");
  EXPECT_EQ(j["errno"], "EKEYREJECTED");
  // The same certificate embedded in the PKCS#7 (openssl cms, no signedAttrs): pkcs7_verify
  // finds it blacklisted: EKEYREJECTED, fatal even without enforcement.
  const std::string content = d_ / "content";
  test::spit(content, test::pattern(5000));
  sh(test::openssl() + " cms -sign -binary -noattr -nosmimecap -md sha256 -outform DER -in " + q(content) +
     " -signer " + q(key("rsa.crt")) + " -inkey " + q(key("rsa.pem")) + " -out " + q(d_ / "p7"));
  const std::string emb = d_ / "emb.ko";
  test::spit(emb, module::append_signature(test::pattern(5000), test::slurp(d_ / "p7")));
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
  r = test::run(M() + " blacklist check --json --list " + q(d_ / "tbs") + " --keyring " + q(key("rsa.crt")) + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stops"][0]["errno"], "ENOKEY");
  r = test::run(M() + " blacklist check --json --list " + q(d_ / "tbs") + " " + q(emb));
  EXPECT_EQ(r.status, 1);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stops"][0]["errno"], "EKEYREJECTED");
  auto certs = crypto::Certificate::load_all(key("rsa.crt"));
  EXPECT_EQ(j["stops"][0]["entry"],
            "tbs:" + sha256_of(Bytes((*certs)[0].tbs().begin(), (*certs)[0].tbs().end())));
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
  EXPECT_EQ(r.err.rfind("modsign: note: " + key("mldsa.crt") + " certificate 1 is not loaded by a v6 kernel (ENOPKG", 0), 0u)
      << r.err;
  // The same ML-DSA certificate as an EFI_CERT_X509 entry of a --dbx file gives the same
  // note, in blacklist check and verify alike.
  ASSERT_EQ(test::run(M() + " blacklist entry --format esl --owner 77fa9abd-0359-4d32-bd60-28f4e78f784b -o " + q(d_ / "ml.esl") + " " + q(key("mldsa.crt"))).status, 0);
  const std::string dbx_note = "modsign: note: " + (d_ / "ml.esl") +
                               " list 1 entry 1 (EFI_CERT_X509) is not loaded by a v6 kernel (ENOPKG";
  r = test::run(M() + " blacklist check --kernel v6 --dbx " + q(d_ / "ml.esl") + " " + q(mod));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, mod + ": not stopped\n");
  EXPECT_EQ(r.err.rfind(dbx_note, 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const std::string revoked_note = test::run(M() + " blacklist check --kernel v6 --revoked " + q(key("mldsa.crt")) + " " + q(mod)).err;
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
  EXPECT_EQ(r.out, (d_ / "good") + ":3:1: duplicate of an earlier entry (the kernel logs \"Duplicate blacklisted hash\" "
                                   "and keeps one) [warning]\n" + (d_ / "good") + ": ok, 3 entries, 1 duplicates\n");
  test::spit(d_ / "bad", "\"bin:aa\",\n\"tbs:ABCD\",\n\"bin:abc\",\n");
  r = test::run(M() + " blacklist lint " + q(d_ / "bad"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, (d_ / "bad") + ":2:6: upper-case hex digit 'A' (awk: Not a lowercase hexadecimal string (item 2))\n" +
                       (d_ / "bad") + ":3:6: odd number of hex digits (3) (awk: Not an even number of hexadecimal "
                                      "characters (item 3))\n" +
                       (d_ / "bad") + ":3:10: ',' after the last entry (only blanks follow it) (awk: Not a string (item 4))\n");
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
  EXPECT_EQ(r.err, "modsign: " + (d_ / "bad") + ":2:6: upper-case hex digit 'A' (awk: Not a lowercase hexadecimal "
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
  auto f = test::run(q(std::string(MODSIGN_SOURCE_DIR) + "/tools/fetch-debian-kernel"));
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
  const std::string want = "bin:" + first_word(sh("head -c " + std::to_string(content) + " " + q(mod) + " | sha256sum"));
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
  Bytes want = {0x26, 0x16, 0xc4, 0xc1, 0x4c, 0x50, 0x92, 0x40, 0xac, 0xa9, 0x41, 0xf9, 0x36, 0x93, 0x43, 0x28,  // EFI_CERT_SHA256
                76, 0, 0, 0, 0, 0, 0, 0, 48, 0, 0, 0,
                0xbd, 0x9a, 0xfa, 0x77, 0x59, 0x03, 0x32, 0x4d, 0xbd, 0x60, 0x28, 0xf4, 0xe7, 0x8f, 0x78, 0x4b};  // owner
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
  EXPECT_EQ(r.out, mod + ": refused (EKEYREJECTED): Key is on the revocation list\n");
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

// The kernel's tools/certs/print-cert-tbs-hash.sh (which Kconfig recommends) hashes the TBS
// with the certificate's own signature hash: the v6 key, not the 7.0 one.  With OpenSSL 3
// its `openssl x509 -in -` cannot read standard input, so it prints the hash of nothing
// and exits 1.
TEST(BlacklistTbs, KernelPrintCertTbsHashScript) {
  const std::string script = "/root/.cache/modsign/kernel-src/linux-source-7.2/tools/certs/print-cert-tbs-hash.sh";
  if (test::run("test -r " + q(script)).status != 0) GTEST_SKIP() << "kernel source not unpacked";
  test::TempDir d;
  auto c = make_cert(d, "script384", "sha384");
  auto cert = crypto::Certificate::from_der(test::slurp(c.der));
  ASSERT_TRUE(cert.ok());
  const std::string bin = MODSIGN_OPENSSL_BIN;
  const std::string dir = bin.substr(0, bin.rfind('/'));
  auto r = test::run("PATH=" + q(dir) + ":$PATH bash " + q(script) + " " + q(c.pem));
  const std::string empty384 = "tbs:" + to_hex(crypto::digest(crypto::HashAlgo::sha384, Bytes{}));
  if (r.status == 0) {
    EXPECT_EQ(r.out, *certificate_entry(*cert, kernel::KernelProfile::v6()));
  } else {
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.out, empty384) << r.err;
  }
  EXPECT_NE(r.out, *certificate_entry(*cert, kernel::KernelProfile::v7_0()));
}

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

// ima_collect_modsig(): a PKCS#7 that carries its own content makes
// pkcs7_supply_detached_data() fail (EINVAL, "Data already supplied") and the function
// returns before pkcs7_get_digest(): IMA has a modsig without a digest and looks up "bin:",
// so no key can stop the module — even though the attached content is the module content.
TEST_F(BlacklistCli, AttachedContentModsigHasNoBinEntry) {
  const std::string content = d_ / "content";
  test::spit(content, test::pattern(5000));
  sh(test::openssl() + " cms -sign -binary -nodetach -noattr -nosmimecap -md sha256 -outform DER -in " + q(content) +
     " -signer " + q(key("rsa.crt")) + " -inkey " + q(key("rsa.pem")) + " -out " + q(d_ / "p7"));
  const std::string mod = d_ / "att.ko";
  test::spit(mod, module::append_signature(test::pattern(5000), test::slurp(d_ / "p7")));
  auto r = test::run(M() + " blacklist entry --json " + q(mod));
  EXPECT_EQ(r.status, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["entry"], nullptr);
  EXPECT_EQ(j["source"], "none");
  EXPECT_EQ(j["explanation"], "ima_collect_modsig(): pkcs7_supply_detached_data() fails (EINVAL: Data already supplied "
                              "(the PKCS#7 carries its own content)), so ima_check_blacklist() looks up \"bin:\", which "
                              "no key can be");
  // The content's SHA-256 — what a detached signature's d-modsig would be — does not stop it.
  const std::string content_key = "bin:" + first_word(sh("sha256sum " + q(content)));
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
  EXPECT_EQ(r.out, mod + ": refused (EBADMSG): PKCS#7 signature with non-detached data\n");
  r = test::run(M() + " verify --cert " + q(key("rsa.crt")) + " --revoked " + q(key("rsa.crt")) + " " + q(mod));
  EXPECT_EQ(r.out, mod + ": refused (EBADMSG): PKCS#7 signature with non-detached data\n");
  r = test::run(M() + " blacklist check --revoked " + q(key("rsa.crt")) + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, mod + ": not stopped\n  note: no bin: entry can stop it under v7.0 through the modsig: "
                         "ima_collect_modsig(): pkcs7_supply_detached_data() fails (EINVAL: Data already supplied (the "
                         "PKCS#7 carries its own content)), so ima_check_blacklist() looks up \"bin:\", which no key "
                         "can be; under the proposed behaviour (side SHA-256 of the signed content) " + content_key +
                         " would\n  note: module_sig_check: verify_pkcs7_message_sig() fails (EBADMSG: PKCS#7 signature "
                         "with non-detached data), before any certificate check\n");
}

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
  EXPECT_EQ(j["stops"][0]["condition"], "an IMA appraise rule for MODULE_CHECK that allows modsig (appraise_type=imasig|modsig)");
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
    return std::string("28000000" "7368613235363a00") + first_word(sh("sha256sum " + q(d_ / "buf"))) +
           "11000000" "626c61636b6c69737465642d6861736800" + (buf.empty() ? "00000000" : "20000000") + buf_hex;
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
  EXPECT_EQ(std::string(j["stops"][0]["ima_record"]["template_data"]).substr(0, 24), "48000000" "7368613531323a00");
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

// Every command with --kernel takes the same three profiles as verify.
TEST_F(BlacklistCli, EveryKernelOptionTakesV61) {
  const std::string mod = signed_module("k.ko", "rsa.pem", "rsa.crt", "sha256");
  const std::string dmodsig = first_word(sh("head -c 5000 " + q(mod) + " | sha256sum"));
  for (const std::string cmd : {"digest", "ima template", "blacklist entry", "blacklist check", "verify"}) {
    auto r = test::run(M() + " " + cmd + " --kernel v6.1 " + q(mod));
    EXPECT_NE(r.status, 2) << cmd << ": " << r.err;
    EXPECT_EQ(r.err.find("--kernel"), std::string::npos) << cmd << ": " << r.err;
    r = test::run(M() + " " + cmd + " --kernel v5 " + q(mod));
    EXPECT_EQ(r.status, 2) << cmd;
    EXPECT_NE(r.err.find("--kernel: v5 not in {v6.1,v6,v7.0}"), std::string::npos) << cmd << ": " << r.err;
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
  EXPECT_EQ(r.out, mod + ": loads tainted: signing key not loaded: " + tbs + " (" + (d_ / "tbs") +
                       " line 1): x509_key_preparse() keeps the certificate out of the keyring "
                       "(crypto/asymmetric_keys/x509_public_key.c:189-191, EKEYREJECTED); pkcs7_validate_trust() then "
                       "finds no key for the signer (crypto/asymmetric_keys/pkcs7_trust.c:158-187): ENOKEY "
                       "[module_sig_check(): ENOKEY loads the module tainted; refused (EKEYREJECTED) when signatures "
                       "are enforced, EPERM under lockdown (kernel/module/signing.c:105-131)]\n");
  // The headline follows the enforcement policy, as verify's outcome does.
  const std::string tail = " line 1): x509_key_preparse() keeps the certificate out of the keyring "
                           "(crypto/asymmetric_keys/x509_public_key.c:189-191, EKEYREJECTED); pkcs7_validate_trust() then "
                           "finds no key for the signer (crypto/asymmetric_keys/pkcs7_trust.c:158-187): ENOKEY "
                           "[module_sig_check(): ENOKEY loads the module tainted; refused (EKEYREJECTED) when signatures "
                           "are enforced, EPERM under lockdown (kernel/module/signing.c:105-131)]\n";
  r = test::run(M() + " blacklist check --enforce --list " + q(d_ / "tbs") + " --keyring " + q(key("rsa.crt")) + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, mod + ": refused (EKEYREJECTED, signatures enforced): signing key not loaded: " + tbs + " (" +
                       (d_ / "tbs") + tail);
  r = test::run(M() + " blacklist check --lockdown --list " + q(d_ / "tbs") + " --keyring " + q(key("rsa.crt")) + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, mod + ": refused (EPERM, lockdown): signing key not loaded: " + tbs + " (" + (d_ / "tbs") + tail);
  // JSON: outcome and errno agree with verify's for the same sources.
  for (const auto& [flags, outcome, err, stopped] :
       std::vector<std::tuple<std::string, std::string, std::string, bool>>{
           {"", "loads-tainted", "ENOKEY", false}, {"--enforce ", "refused", "EKEYREJECTED", true},
           {"--lockdown ", "refused", "EPERM", true}}) {
    r = test::run(M() + " blacklist check --json " + flags + "--list " + q(d_ / "tbs") + " --keyring " + q(key("rsa.crt")) +
                  " " + q(mod));
    EXPECT_EQ(r.status, 1) << flags;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["outcome"], outcome) << flags;
    EXPECT_EQ(j["errno"], err) << flags;
    EXPECT_EQ(j["stopped"], stopped) << flags;
    EXPECT_EQ(j["stops"][0]["errno"], "ENOKEY") << flags;
    auto v = test::run(M() + " verify --json " + flags + "--cert " + q(key("rsa.crt")) + " --blacklist " + q(d_ / "tbs") +
                       " " + q(mod));
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
  const std::string content = d_ / "content";
  test::spit(content, test::pattern(5000));
  sh(test::openssl() + " cms -sign -binary -noattr -nosmimecap -md sha256 -outform DER -in " + q(content) +
     " -signer " + q(key("rsa.crt")) + " -inkey " + q(key("rsa.pem")) + " -out " + q(d_ / "p7"));
  const std::string emb = d_ / "emb.ko";
  test::spit(emb, module::append_signature(test::pattern(5000), test::slurp(d_ / "p7")));
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
  sh(test::openssl() + " req -x509 -new -key " + q(d_ / "other.pem") + " -subj '/CN=blacklist test RSA' -set_serial 0x" +
     serial + " -days 30 -out " + q(d_ / "same-id.crt"));
  const std::string real = key("rsa.crt"), fake = d_ / "same-id.crt";
  auto r = test::run(M() + " verify --cert " + q(real) + " --revoked " + q(fake) + " --revoked " + q(real) + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out;
  r = test::run(M() + " blacklist check --revoked " + q(fake) + " --revoked " + q(real) + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.rfind(mod + ": not stopped\n  note: revoked certificate CN = blacklist test RSA vouches for the signer, "
                              "but pkcs7_validate_trust() over the whole .blacklist keyring fails first (EKEYREJECTED: ",
                        0),
            0u)
      << r.out;
  r = test::run(M() + " verify --cert " + q(real) + " --revoked " + q(real) + " --revoked " + q(fake) + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, mod + ": refused (EKEYREJECTED): Key is on the revocation list\n");
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
  const std::string content = d_ / "content";
  test::spit(content, test::pattern(5000));
  sh(test::openssl() + " cms -sign -binary -noattr -nosmimecap -md sha256 -outform DER -in " + q(content) +
     " -signer " + q(key("rsa.crt")) + " -inkey " + q(key("rsa.pem")) + " -certfile " + q(d_ / "other.crt") +
     " -out " + q(d_ / "p7"));
  const std::string mod = d_ / "two-certs.ko";
  test::spit(mod, module::append_signature(test::pattern(5000), test::slurp(d_ / "p7")));
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
  EXPECT_EQ(j["notes"], nlohmann::json::array({"certificate with " + bystander +
                                               " is in the PKCS#7 but no signer's chain reaches it"}));
}

// RSA with signedAttrs (openssl cms without -noattr): pkcs7_get_digest() returns the hash
// of the signedAttrs re-tagged as a SET (pkcs7_verify.c:114-115), not of the module, and
// that is the bin: key — confirmed with openssl asn1parse and sha256sum.
TEST_F(BlacklistCli, RsaWithSignedAttrsKeyIsHashOfRetaggedAttributes) {
  const std::string content = d_ / "content";
  test::spit(content, test::pattern(5000));
  sh(test::openssl() + " cms -sign -binary -nosmimecap -nocerts -md sha256 -outform DER -in " + q(content) +
     " -signer " + q(key("rsa.crt")) + " -inkey " + q(key("rsa.pem")) + " -out " + q(d_ / "p7"));
  const std::string mod = d_ / "sa.ko";
  test::spit(mod, module::append_signature(test::pattern(5000), test::slurp(d_ / "p7")));
  // The signedAttrs: the [0] at depth 5 (ContentInfo > content > SignedData > signerInfos > SignerInfo).
  const std::string line = sh(test::openssl() + " asn1parse -inform DER -in " + q(d_ / "p7") +
                              " | grep 'd=5 .*cont \\[ 0 \\]' | head -n 1");
  std::size_t off = 0, hl = 0, len = 0;
  ASSERT_EQ(std::sscanf(line.c_str(), " %zu:d=5 hl=%zu l=%zu", &off, &hl, &len), 3) << line;
  const std::string want = "bin:" + first_word(sh("(printf '\\061'; tail -c +" + std::to_string(off + 2) + " " +
                                                  q(d_ / "p7") + " | head -c " + std::to_string(hl + len - 1) +
                                                  ") | sha256sum"));
  auto r = test::run(M() + " blacklist entry --json " + q(mod));
  EXPECT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["entry"], want);
  EXPECT_EQ(j["source"], "d-modsig");
  EXPECT_EQ(j["explanation"], "d-modsig: sha256 of the signedAttrs (pkcs7_get_digest with signedAttrs)");
  EXPECT_NE(j["entry"], "bin:" + first_word(sh("sha256sum " + q(content))));
  test::spit(d_ / "list", "\"" + want + "\"\n");
  r = test::run(M() + " blacklist check --json --list " + q(d_ / "list") + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["stops"][0]["entry"], want);
  EXPECT_EQ(j["stops"][0]["errno"], "EPERM");
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
  EXPECT_EQ(r.out, attrs + ": refused (EACCES): invalid-signature: EKEYREJECTED: ima_modsig_verify: Invalid module sig "
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
  EXPECT_EQ(r.out, foreign + ": refused (EBADMSG): PKCS#7 signature with non-detached data\n");
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
  EXPECT_EQ(r.out, c64 + ": refused (EACCES): no-modsig: ENOENT: ima_read_modsig: no appended signature; no "
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
  EXPECT_EQ(r.out, cut + ": refused (EINVAL): decompress: EINVAL: module_decompress: xz-compressed module: "
                         "truncated xz data; IMA never appraises the image\n");
  r = test::run(M() + " ima appraise --kernel v6 --keyring " + q(key("rsa.crt")) + " " + q(cut));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, cut + ": refused (EACCES): no-modsig: ENOENT: ima_read_modsig: no appended signature; no "
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
  EXPECT_EQ(lines[1]["reason"], d_ / "missing.ko" + ": No such file or directory");
  EXPECT_EQ(lines[2]["outcome"], "error");
  EXPECT_EQ(lines[2]["reason"], d_ / "fifo.ko" + ": is a FIFO, not a regular file");
  EXPECT_EQ(lines[3]["cause"], "no-modsig");
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
  EXPECT_EQ(lines[0], nlohmann::json::parse(R"({"path":")" + d_ / "missing.ko" +
                                            R"(","kind":null,"kernel":"v7.0","stopped":false,"outcome":"error",)"
                                            R"("errno":null,"stops":[],"entry":null,"source":null,"notes":[],)"
                                            R"("reason":")" + d_ / "missing.ko" + R"(: No such file or directory"})"));
  EXPECT_EQ(lines[1]["path"], mod);
  EXPECT_EQ(lines[1]["outcome"], "not-stopped");
  EXPECT_EQ(lines[2]["outcome"], "error");
  EXPECT_EQ(lines[2]["reason"], d_ / "dmg.crt" + ": PEM block 1 is damaged (bad base64 or armour)");
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
  const std::string dmodsig_sha3 = "bin:" + first_word(sh("head -c 5000 " + q(sha3) + " | " + test::openssl() +
                                                            " dgst -sha3-256 -r"));
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
    if (w.source == "ima-hash") {
      EXPECT_EQ(j["d_modsig"], nullptr);
    }
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
  const std::string note = "modsign: note: " + crt + " certificate 1 is not loaded by a v6.1 kernel (ENOPKG: unsupported "
                           "certificate signature algorithm 2.16.840.1.101.3.4.3.14 (no SHA-3 before Linux 6.7))\n";
  // As the trusted key: v6 trusts it, v6.1 never loads it (a note says so).
  auto r = test::run(M() + " verify --kernel v6 --keyring " + q(crt) + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  r = test::run(M() + " verify --kernel v6.1 --keyring " + q(crt) + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, note);
  EXPECT_EQ(r.out, mod + ": loads-tainted (ENOKEY): module with unavailable key: no trusted key matches the signer; "
                         "module verification failed: signature and/or required key missing - tainting kernel\n");
  r = test::run(M() + " ima appraise --kernel v6.1 --keyring " + q(crt) + " " + q(mod));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, note);
  EXPECT_EQ(r.out, mod + ": refused (EACCES): invalid-signature: ENOKEY: ima_modsig_verify: no trusted key matches the "
                         "signer\n");
  r = test::run(M() + " ima appraise --kernel v6 --keyring " + q(crt) + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  r = test::run(M() + " blacklist check --kernel v6.1 " + q(crt));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, crt + ": not stopped\n  note: the v6.1 kernel cannot use this certificate at all (ENOPKG: unsupported "
                         "certificate signature algorithm 2.16.840.1.101.3.4.3.14 (no SHA-3 before Linux 6.7))\n");
  // No tbs: key under v6.1 (the certificate is never parsed); v6 hashes the TBS with SHA3-256.
  r = test::run(M() + " blacklist entry --kernel v6.1 " + q(crt));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "modsign: " + crt + ": no tbs: entry under v6.1: x509_cert_parse() refuses the certificate (ENOPKG: "
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
  const std::string content = d_ / "content";
  test::spit(content, test::pattern(5000));
  sh(test::openssl() + " cms -sign -binary -noattr -nosmimecap -md sha256 -outform DER -in " + q(content) + " -signer " +
     q(key("rsa.crt")) + " -inkey " + q(key("rsa.pem")) + " -certfile " + q(crt) + " -out " + q(d_ / "p7"));
  const std::string emb = d_ / "emb.ko";
  test::spit(emb, module::append_signature(test::pattern(5000), test::slurp(d_ / "p7")));
  r = test::run(M() + " verify --kernel v6 --keyring " + q(key("rsa.crt")) + " " + q(emb));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  r = test::run(M() + " verify --kernel v6.1 --keyring " + q(key("rsa.crt")) + " " + q(emb));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.rfind(emb + ": loads-tainted (ENOPKG): module with unsupported crypto: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("2.16.840.1.101.3.4.3.14 (no SHA-3 before Linux 6.7)"), std::string::npos) << r.out;
}
