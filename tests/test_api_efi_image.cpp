// The public calls of include/modsign/efi_image.hpp on in-memory data: read_efi_database,
// parse_msft_dbx_json, diff_efi_databases, efi_database_lists, verify_efi_image,
// pe_section_data, sbat_level_of_shim.
#include <gtest/gtest.h>

#include "modsign/efi_image.hpp"
#include "test_support.hpp"

using namespace modsign;

namespace {
const std::string kSeed = test::source_dir() + "/tests/fuzz/corpus/pe/pe32plus-x86-64";
const std::string kSbatSeed = test::source_dir() + "/tests/fuzz/corpus/sbat/pe-with-sbat";
}  // namespace

TEST(ApiEfiImage, JsonDatabaseDiffAndLists) {
  const std::string json =
      R"({"images": {"x64": [{"authenticodeHash": ")" + std::string(64, 'A') +
      R"(", "hashType": "SHA256", "flatHash": ")" + std::string(64, 'F') +
      R"(", "filename": "a.efi"}], "arm": [{"authenticodeHash": ")" + std::string(64, 'C') +
      R"(", "filename": "b.efi"}]}, "svns": [{"value": "01612B139DD5598843AB1C185C3CB2EB92000009000000000000000000000000", "filename": "bootmgfw.efi"}]})";
  const EfiDatabase all = parse_msft_dbx_json(json, "", "j.json", "/nonexistent");
  ASSERT_EQ(all.entries.size(), 3u);
  EXPECT_EQ(all.form, "msft-json");
  EXPECT_EQ(all.entries[0].origin, "images.x64[0] (a.efi)");
  EXPECT_EQ(all.entries[1].origin, "images.arm[0] (b.efi)");
  EXPECT_EQ(all.entries[2].owner, efi_guids::svn_owner);
  EXPECT_EQ(to_hex(all.entries[0].data), std::string(64, 'a'));
  const EfiDatabase arm = parse_msft_dbx_json(json, "arm", "j.json", "/nonexistent");
  ASSERT_EQ(arm.entries.size(), 2u);
  const EfiDatabaseDiff d = diff_efi_databases(all, arm);
  EXPECT_FALSE(d.equal());
  ASSERT_EQ(d.only_in_a.size(), 1u);
  EXPECT_EQ(d.only_in_a[0].origin, "images.x64[0] (a.efi)");
  EXPECT_TRUE(d.only_in_b.empty());
  EXPECT_EQ(d.common, 2u);
  // Written as lists and read back (ESL form): the same entries.
  test::TempDir t;
  test::spit(t / "arm.esl", efi_database_lists(arm));
  const EfiDatabase back = read_efi_database(t / "arm.esl");
  EXPECT_EQ(back.form, "esl");
  EXPECT_TRUE(diff_efi_databases(back, arm).equal());
  EXPECT_EQ(back.entries[0].offset, 28u);
  EXPECT_THROW(parse_msft_dbx_json(json, "mips", "j.json", "/nonexistent"), InputError);
  EXPECT_THROW(parse_msft_dbx_json("[]", "", "j.json", "/nonexistent"), InputError);
}

TEST(ApiEfiImage, VerifyUnsignedByHashAndSbatSection) {
  const Bytes img = test::slurp(kSbatSeed);
  auto info = authenticode_image(img);
  ASSERT_TRUE(info.ok());
  const auto sec = pe_section_data(img, *info, ".sbat");
  ASSERT_TRUE(sec.has_value());
  EXPECT_EQ(sec->size(), 233u);
  EXPECT_FALSE(pe_section_data(img, *info, ".sbatlevel").has_value());
  EXPECT_EQ(sbat_level_of_shim(img, SbatPolicy::latest).error().message, "no .sbatlevel section");

  EfiImagePolicy p;
  auto v = verify_efi_image(img, "x.efi", p);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->refused);
  EXPECT_EQ(v->rule, EfiImageRule::not_allowed_by_db);
  EfiDatabase db;
  db.file = "db";
  // Only SHA-256 decides for an unsigned image: its SHA-1 in db admits nothing.
  db.entries.push_back({"db", efi_guids::cert_sha1, efi_guids::microsoft_owner, info->sha1, 1, 1, 28, "", ""});
  p.db.push_back(db);
  v = verify_efi_image(img, "x.efi", p);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->rule, EfiImageRule::not_allowed_by_db);
  p.db[0].entries.push_back({"db", efi_guids::cert_sha256, efi_guids::microsoft_owner, info->sha256, 2, 1, 76, "", ""});
  v = verify_efi_image(img, "x.efi", p);
  EXPECT_FALSE(v->refused);
  EXPECT_EQ(v->rule, EfiImageRule::allowed_by_db_hash);
  EXPECT_EQ(v->entry->offset, 76u);
  // The same hash in dbx wins.
  EfiDatabase dbx;
  dbx.entries.push_back({"dbx", efi_guids::cert_sha256, efi_guids::microsoft_owner, info->sha256, 1, 3, 124, "", ""});
  p.dbx.push_back(dbx);
  v = verify_efi_image(img, "x.efi", p);
  EXPECT_TRUE(v->refused);
  EXPECT_EQ(v->rule, EfiImageRule::hash_in_dbx);
  EXPECT_EQ(v->entry->offset, 124u);
  // Not a PE image: EBADMSG from the reader, named.
  auto bad = verify_efi_image(Bytes(100, 0), "junk.efi", p);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, KErr::ebadmsg);
  EXPECT_EQ(bad.error().message.rfind("junk.efi: ", 0), 0u);
}
