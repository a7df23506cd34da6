// The system blacklist: descriptions vetted as blacklist_vet_description() does, the
// kernel's lookups, and CONFIG_SYSTEM_BLACKLIST_HASH_LIST files (checked against the
// kernel's own awk script when gawk is installed).
#include <gtest/gtest.h>

#include "blacklist/description.hpp"
#include "blacklist_support.hpp"

using namespace modsign;
using namespace modsign::test::blacklist_tests;

namespace {

KErr vet(std::string_view d) {
  auto st = vet_description(d);
  return st ? KErr::none : st.error().code;
}

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
  EXPECT_EQ(vet("TBS:ab"), KErr::einval);  // prefix is case-sensitive
  EXPECT_EQ(vet("Bin:ab"), KErr::einval);
  EXPECT_EQ(vet("tbsab"), KErr::einval);  // no colon
  EXPECT_EQ(vet(""), KErr::einval);
  EXPECT_EQ(vet(":ab"), KErr::einval);
  EXPECT_EQ(vet("tb:ab"), KErr::einval);
  EXPECT_EQ(vet("tbsx:ab"), KErr::einval);  // the 4th character must be ':'
  EXPECT_EQ(vet(" tbs:ab"), KErr::einval);
  EXPECT_EQ(vet("bbs:ab"), KErr::einval);  // mixes both prefixes
  EXPECT_EQ(vet("tbs:"), KErr::einval);    // empty hash
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
  EXPECT_EQ(first("\"tbs:abc\""),
            "h.txt:1:6: odd number of hex digits (3) (awk: Not an even number of hexadecimal "
            "characters (item 1))");
  EXPECT_EQ(first("\"bin:\""),
            "h.txt:1:6: no hex digits after the prefix (awk: Not a lowercase hexadecimal string (item 1))");
  EXPECT_EQ(first("\"sha:ab\""),
            "h.txt:1:2: entry does not start with \"tbs:\" or \"bin:\" (awk: Unknown prefix (item 1))");
  EXPECT_EQ(first("\"TBS:ab\""),
            "h.txt:1:2: entry does not start with \"tbs:\" or \"bin:\" (awk: Unknown prefix (item 1))");
  EXPECT_EQ(first("\"tbsab\""),
            "h.txt:1:2: entry does not start with \"tbs:\" or \"bin:\" (awk: Unknown prefix (item 1))");
  EXPECT_EQ(
      first("\"tbs:" + hexes(130) + "\""),
      "h.txt:1:6: hash of 130 hex digits, more than 128 (the kernel refuses it: ENOPKG) (awk: Hash string too long "
      "(item 1))");
  EXPECT_EQ(first("\"tbs:zz\""), "h.txt:1:6: not a hex digit: 'z' (awk: Not a lowercase hexadecimal string (item 1))");
  EXPECT_EQ(first("bin:aa"), "h.txt:1:1: 'b' where a '\"' should open a string (awk: Not a string (item 1))");
  EXPECT_EQ(first("\"bin:aa\",\n"),
            "h.txt:1:9: ',' after the last entry (only blanks follow it) (awk: Not a string (item 2))");
  EXPECT_EQ(first("\"bin:aa\",,\"bin:bb\""), "h.txt:1:10: empty item between two ',' (awk: Not a string (item 2))");
  // No comma at all, or a comma with nothing before it: the message does not invent one.
  EXPECT_EQ(first("\n"), "h.txt:1:1: no string: the file holds only blanks (awk: Not a string (item 1))");
  EXPECT_EQ(first(" \t\r\n"), "h.txt:1:1: no string: the file holds only blanks (awk: Not a string (item 1))");
  EXPECT_EQ(first(",\"bin:aa\""), "h.txt:1:1: ',' with no string before it (awk: Not a string (item 1))");
  EXPECT_EQ(first("\n,\"bin:aa\""), "h.txt:2:1: ',' with no string before it (awk: Not a string (item 1))");
  EXPECT_EQ(first("\"bin:aa\" \"bin:bb\""),
            "h.txt:1:10: '\"' after the closing '\"' (one string per item) (awk: Not a string (item 1))");
  EXPECT_EQ(
      first("\"bin:a,a\""),
      "h.txt:1:1: string not closed before the next ',' (an entry cannot contain ',') (awk: Not a string (item 1))");
  EXPECT_EQ(first("/* list */ \"bin:aa\""),
            "h.txt:1:1: '/' where a '\"' should open a string (awk: Not a string (item 1))");
  EXPECT_EQ(first("\"bin:aa\"\f"),
            "h.txt:1:9: byte 0x0c after the closing '\"' (one string per item) (awk: Not a string "
            "(item 1))");
  EXPECT_EQ(first("\"bin:a\\x61\""),
            "h.txt:1:7: not a hex digit: '\\' (awk: Not a lowercase hexadecimal string (item 1))");
  // Build failures the awk script lets through.
  EXPECT_EQ(first(""),
            "h.txt:1:1: empty file: the build would compile `{ , NULL }` (certs/Makefile appends \", NULL\")");
  EXPECT_EQ(
      first("\"bin:aa\","),
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
  const std::string kernel_awk = test::kernel_source_dir() + "/certs/check-blacklist-hashes.awk";
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
      "\"bin:\xc3\xa9\"", "\"tbs:" + hexes(127) + "\"", "\"tbs:" + hexes(129) + "\"",
      "\"tbs:" + hexes(129, 'A') + "\""};
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
