// UEFI signature databases: GUIDs, EFI_TIME, and EFI_SIGNATURE_LIST parsing with the
// kernel's checks (parse_efi_signature_list, efi_parser.c).
#include <gtest/gtest.h>

#include <set>

#include "crypto/algorithms.hpp"
#include "efi_support.hpp"

using namespace modsign;
using namespace modsign::test::efi_tests;

// ---------------------------------------------------------------------------------------
// GUIDs and EFI_TIME

TEST(EfiGuid, KernelByteLayout) {
  // include/linux/efi.h:401-403 EFI_GUID(a,b,c,d...) byte order; kernel-semantics §7.1.
  EXPECT_EQ(to_hex(guids::cert_sha256.bytes), "2616c4c14c509240aca941f936934328");
  EXPECT_EQ(to_hex(guids::cert_x509.bytes), "a159c0a5e494a74a87b5ab155c2bf072");
  EXPECT_EQ(to_hex(guids::cert_x509_sha256.bytes), "92a4d23bc0967940b420fcf98ef103ed");
  EXPECT_EQ(guids::cert_sha256.str(), "c1c41626-504c-4092-aca9-41f936934328");
  EXPECT_EQ(guids::image_security_database.str(), "d719b2cb-3d3a-4596-a3bc-dad00e67656f");
  EXPECT_EQ(guids::shim_lock.str(), "605dab50-e046-4300-abb6-3dd810dd8b23");
  EXPECT_EQ(guids::cert_type_pkcs7.str(), "4aafd29d-68df-49ee-8aa9-347d375665a7");
  EXPECT_EQ(guids::microsoft_owner.str(), "77fa9abd-0359-4d32-bd60-28f4e78f784b");
}

TEST(EfiGuid, ParseFormatAndNames) {
  auto g = Guid::parse("C1C41626-504C-4092-ACA9-41F936934328");
  ASSERT_TRUE(g);
  EXPECT_EQ(*g, guids::cert_sha256);
  EXPECT_EQ(guid_name(*g), "EFI_CERT_SHA256_GUID");
  EXPECT_EQ(type_name(*g), "EFI_CERT_SHA256");
  EXPECT_EQ(type_name(guids::cert_x509_sha256), "EFI_CERT_X509_SHA256");
  EXPECT_EQ(type_name(kUnknown), "01020304-0506-0708-090a-0b0c0d0e0f10");
  EXPECT_EQ(to_hex(kUnknown.bytes), "0403020106050807090a0b0c0d0e0f10");
  EXPECT_EQ(guid_name(kUnknown), "");
  EXPECT_TRUE(is_known_signature_type(guids::cert_x509));
  EXPECT_FALSE(is_known_signature_type(guids::cert_type_pkcs7));
  EXPECT_FALSE(is_known_signature_type(guids::shim_lock));
  for (const char* bad : {"", "c1c41626-504c-4092-aca9-41f93693432", "c1c41626-504c-4092-aca9-41f9369343288",
                          "c1c41626x504c-4092-aca9-41f936934328", "g1c41626-504c-4092-aca9-41f936934328",
                          "{c1c41626-504c-4092-aca9-41f936934328}"})
    EXPECT_FALSE(Guid::parse(bad)) << bad;
}

TEST(EfiTime, Layout) {
  // Microsoft's fixed dbx timestamp 2010-03-06 19:17:21; UEFI 2.10 §8.3 field order.
  EfiTime t = *EfiTime::parse("2010-03-06 19:17:21");
  EXPECT_EQ(to_hex(t.bytes()),
            "da0703061311150000000000"
            "00000000");
  t.nanosecond = 0x01020304;
  t.time_zone = -60;
  t.daylight = 1;
  t.pad1 = 0xaa;
  t.pad2 = 0xbb;
  const auto b = t.bytes();
  EXPECT_EQ(to_hex(b), "da070306131115aa04030201c4ff01bb");
  EXPECT_EQ(EfiTime::from_bytes(b.data()), t);
  EXPECT_EQ(t.str(), "2010-03-06 19:17:21");
  EXPECT_TRUE(EfiTime::parse("2024-02-29T00:00:00Z"));
  for (const char* bad : {"2010-13-01 00:00:00", "2010-03-06 24:00:00", "2010-03-06", "2010/03/06 19:17:21"})
    EXPECT_FALSE(EfiTime::parse(bad)) << bad;
}

// ---------------------------------------------------------------------------------------
// Parsing: the kernel's checks (§9 items 42-44)

TEST(EfiParse, RoundTripExactBytes) {
  Bytes file = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 0x10)}, {kOwnerB, fill(32, 0x40)}});
  append(file, good_list(kUnknown, {{kOwnerA, fill(5, 1)}}, fill(3, 0xf0)));  // with a SignatureHeader
  append(file, good_list(guids::cert_x509_sha256, {{kOwnerB, fill(48, 0x80)}}));
  const ParsedLists p = parse_signature_lists(file);
  ASSERT_FALSE(p.error);
  ASSERT_EQ(p.lists.size(), 3u);
  EXPECT_EQ(p.lists[0].list_size, 28u + 2 * 48);
  EXPECT_EQ(p.lists[0].signature_size, 48u);
  EXPECT_EQ(p.lists[0].entries[1].owner, kOwnerB);
  EXPECT_EQ(p.lists[0].entries[1].offset, 28u + 48);
  EXPECT_EQ(p.lists[1].offset, 124u);
  EXPECT_EQ(p.lists[1].header, fill(3, 0xf0));
  EXPECT_EQ(p.lists[1].entries[0].offset, 124u + 28 + 3);
  EXPECT_EQ(p.lists[2].entries[0].data, fill(48, 0x80));
  EXPECT_EQ(write_lists(p.lists), file);
  EXPECT_TRUE(p.status().ok());
}

TEST(EfiParse, Item42ListSizeBeyondRemaining) {
  Bytes f = raw_list(guids::cert_sha256, 28 + 48 + 1, 0, 48, fill(48, 0));
  const ParsedLists p = parse_signature_lists(f);
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->code, KErr::ebadmsg);
  EXPECT_EQ(p.error->message, "EFI_SIGNATURE_LIST at byte offset 0: signature_list_size 77 exceeds the 76 bytes left");
  EXPECT_TRUE(p.lists.empty());
  EXPECT_EQ(p.status().error().code, KErr::ebadmsg);
}

TEST(EfiParse, Item42SignatureSize15) {
  const ParsedLists p = parse_signature_lists(raw_list(guids::cert_sha256, 28 + 30, 0, 15, fill(30, 0)));
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->code, KErr::ebadmsg);
  EXPECT_EQ(p.error->message,
            "EFI_SIGNATURE_LIST at byte offset 0: signature_size 15 is smaller than the 16-byte SignatureOwner");
}

TEST(EfiParse, Item42UnknownTypeSkipped) {
  Bytes f = good_list(kUnknown, {{kOwnerA, fill(32, 0)}});
  const ParsedLists p = parse_signature_lists(f);
  EXPECT_TRUE(p.status().ok());  // the kernel returns 0
  ASSERT_EQ(p.lists.size(), 1u);
  const VariableEffects fx = apply_handlers(p, Variable::dbx);
  ASSERT_EQ(fx.entries.size(), 1u);
  EXPECT_EQ(fx.entries[0].kind, EntryKind::ignored);
  EXPECT_EQ(fx.entries[0].text, "ignored");
  Sources s;
  EXPECT_TRUE(add_to_sources(p, Variable::dbx, "f", s).ok());
  EXPECT_TRUE(s.keyring.descriptions.empty());
  EXPECT_TRUE(s.keyring.revoked.empty());
  EXPECT_TRUE(s.notes.empty());
}

TEST(EfiParse, UnknownTypeIsStillSizeChecked) {
  // efi_parser.c:66-79 run before get_handler_for_guid (:81).
  const ParsedLists p = parse_signature_lists(raw_list(kUnknown, 28 + 40, 0, 48, fill(40, 0)));
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->message,
            "EFI_SIGNATURE_LIST at byte offset 0: the 40 bytes of entries are fewer than signature_size 48");
}

TEST(EfiParse, Item43Sha256BecomesBin) {
  const Bytes h = from_hex("c0ffee00deadbeefabcdef0123456789c0ffee00deadbeefabcdef0123456789");
  const ParsedLists p = parse_signature_lists(good_list(guids::cert_sha256, {{guids::microsoft_owner, h}}));
  const VariableEffects fx = apply_handlers(p, Variable::dbx);
  ASSERT_EQ(fx.entries.size(), 1u);
  EXPECT_EQ(fx.entries[0].kind, EntryKind::binary_hash);
  EXPECT_EQ(fx.entries[0].description, "bin:c0ffee00deadbeefabcdef0123456789c0ffee00deadbeefabcdef0123456789");
  EXPECT_EQ(fx.entries[0].key_error, KErr::none);
  Sources s;
  ASSERT_TRUE(add_to_sources(p, Variable::MokListXRT, "mokx", s).ok());
  ASSERT_EQ(s.keyring.descriptions.size(), 1u);
  EXPECT_EQ(*s.keyring.descriptions.begin(), fx.entries[0].description);
  const auto& o = s.description_origins.at(fx.entries[0].description);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].file, "mokx");
  EXPECT_EQ(o[0].where, "list 1 entry 1 (EFI_CERT_SHA256)");
  // db ignores hashes (get_handler_for_db handles EFI_CERT_X509 only).
  EXPECT_EQ(apply_handlers(p, Variable::db).entries[0].kind, EntryKind::ignored);
}

TEST(EfiParse, Item44X509Sha256NeverMatches) {
  const Bytes tbs = crypto::digest(crypto::HashAlgo::sha256, fill(100, 0));
  const Bytes data = x509_sha256_data(tbs, *EfiTime::parse("2024-01-02 03:04:05"));
  ASSERT_EQ(data.size(), 48u);
  EXPECT_EQ(to_hex(ByteView(data).subspan(32)),
            "e80701020304050000000000"
            "00000000");
  const ParsedLists p = parse_signature_lists(good_list(guids::cert_x509_sha256, {{kOwnerA, data}}));
  ASSERT_EQ(p.lists.at(0).signature_size, 64u);
  const VariableEffects fx = apply_handlers(p, Variable::dbx);
  ASSERT_EQ(fx.entries.size(), 1u);
  EXPECT_EQ(fx.entries[0].kind, EntryKind::tbs_hash);
  EXPECT_EQ(fx.entries[0].description, "tbs:" + to_hex(data));
  EXPECT_EQ(fx.entries[0].description.size(), 4u + 96);
  EXPECT_TRUE(fx.entries[0].never_matches);
  EXPECT_EQ(fx.entries[0].text, "tbs:" + to_hex(data) + " (never matches)");
  Sources s;
  ASSERT_TRUE(add_to_sources(p, Variable::dbx, "dbx", s).ok());
  EXPECT_EQ(s.keyring.descriptions.count("tbs:" + to_hex(data)), 1u);
  EXPECT_FALSE(s.keyring.is_tbs_blacklisted(tbs));  // the SHA-256 lookup x509_get_sig_params makes
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("dbx: list 1 entry 1 (EFI_CERT_X509_SHA256): tbs:"), std::string::npos) << s.notes[0];
  EXPECT_NE(s.notes[0].find("never equals the tbs:<64 hex> SHA-256 lookup"), std::string::npos) << s.notes[0];
}

TEST(EfiParse, HashLengthVetting) {
  // get_raw_hash + blacklist_vet_description: 0 bytes -> "bin:" (EINVAL), 65 bytes -> 130 hex (ENOPKG).
  Bytes f = good_list(guids::cert_sha256, {{kOwnerA, fill(64, 0)}});
  append(f, good_list(guids::cert_sha256, {{kOwnerA, fill(65, 0)}}));
  append(f, raw_list(guids::cert_x509_sha256, 28 + 16, 0, 16, fill(16, 0)));
  const ParsedLists p = parse_signature_lists(f);
  ASSERT_FALSE(p.error);
  const VariableEffects fx = apply_handlers(p, Variable::dbx);
  ASSERT_EQ(fx.entries.size(), 3u);
  EXPECT_EQ(fx.entries[0].key_error, KErr::none);
  EXPECT_EQ(fx.entries[1].key_error, KErr::enopkg);
  EXPECT_EQ(fx.entries[2].key_error, KErr::einval);
  EXPECT_EQ(fx.entries[2].text, "tbs: (not added: EINVAL)");
  Sources s;
  ASSERT_TRUE(add_to_sources(p, Variable::dbx, "d", s).ok());
  EXPECT_EQ(s.keyring.descriptions.size(), 1u);
  ASSERT_EQ(s.notes.size(), 2u);  // two refused; a refused tbs: gets no "never matches" note
  EXPECT_EQ(s.notes[0], "d: list 2 entry 1 (EFI_CERT_SHA256): not added to .blacklist (ENOPKG)");
  EXPECT_EQ(s.notes[1], "d: list 3 entry 1 (EFI_CERT_X509_SHA256): not added to .blacklist (EINVAL)");
}

TEST(EfiParse, MalformedSizesAllEbadmsg) {
  struct Case {
    const char* name;
    Bytes file;
    std::string what;
  };
  const Guid t = guids::cert_sha256;
  std::vector<Case> cases = {
      {"27 bytes", Bytes(27, 0), "27 bytes left, fewer than the 28-byte header"},
      {"list_size 0xffffffff", raw_list(t, 0xffffffffu, 0, 48, fill(48, 0)),
       "signature_list_size 4294967295 exceeds the 76 bytes left"},
      {"list_size 27", raw_list(t, 27, 0, 48, fill(48, 0)),
       "signature_list_size 27 is smaller than the 28-byte header"},
      {"list_size 0", raw_list(t, 0, 0, 48, fill(48, 0)), "signature_list_size 0 is smaller than the 28-byte header"},
      {"header_size 0xffffffff", raw_list(t, 76, 0xffffffffu, 48, fill(48, 0)),
       "signature_header_size 4294967295 exceeds the 48 bytes after the list header"},
      // 32-bit wrap: 76-28-0xffffffd0 == 96 (mod 2^32) = two 48-byte entries to a u32 parser.
      {"header_size wraps to 96", raw_list(t, 76, 0xffffffd0u, 48, fill(48, 0)),
       "signature_header_size 4294967248 exceeds the 48 bytes after the list header"},
      {"header_size 49", raw_list(t, 76, 49, 48, fill(48, 0)),
       "signature_header_size 49 exceeds the 48 bytes after the list header"},
      {"signature_size 0", raw_list(t, 76, 0, 0, fill(48, 0)),
       "signature_size 0 is smaller than the 16-byte SignatureOwner"},
      {"signature_size 0xffffffff", raw_list(t, 76, 0, 0xffffffffu, fill(48, 0)),
       "the 48 bytes of entries are fewer than signature_size 4294967295"},
      // signature_size * count would wrap in 32 bits: 0x80000018 * 2 == 0x30 == 48.
      {"signature_size*2 wraps", raw_list(t, 76, 0, 0x80000018u, fill(48, 0)),
       "the 48 bytes of entries are fewer than signature_size 2147483672"},
      {"no entries", raw_list(t, 28, 0, 48), "the 0 bytes of entries are fewer than signature_size 48"},
      {"not a multiple", raw_list(t, 28 + 50, 0, 48, fill(50, 0)),
       "the 50 bytes of entries are not a multiple of signature_size 48"},
      {"header eats entries", raw_list(t, 28 + 48, 8, 48, fill(48, 0)),
       "the 40 bytes of entries are fewer than signature_size 48"},
  };
  for (const auto& c : cases) {
    const ParsedLists p = parse_signature_lists(c.file, 100);
    ASSERT_TRUE(p.error) << c.name;
    EXPECT_EQ(p.error->code, KErr::ebadmsg) << c.name;
    EXPECT_EQ(p.error->message, "EFI_SIGNATURE_LIST at byte offset 100: " + c.what) << c.name;
    EXPECT_EQ(p.error_offset, 100u) << c.name;
    EXPECT_TRUE(p.lists.empty()) << c.name;
  }
}

TEST(EfiParse, ErrorKeepsEarlierLists) {
  Bytes f = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 1)}});
  append(f, good_list(guids::cert_sha256, {{kOwnerA, fill(32, 2)}}));
  append(f, raw_list(guids::cert_sha256, 1000, 0, 48, fill(48, 3)));
  append(f, good_list(guids::cert_sha256, {{kOwnerA, fill(32, 4)}}));
  const ParsedLists p = parse_signature_lists(f);
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error_offset, 152u);
  ASSERT_EQ(p.lists.size(), 2u);
  Sources s;
  const Status st = add_to_sources(p, Variable::dbx, "d", s);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, KErr::ebadmsg);
  EXPECT_EQ(s.keyring.descriptions,
            (std::set<std::string>{"bin:" + to_hex(fill(32, 1)), "bin:" + to_hex(fill(32, 2))}));
}

TEST(EfiParse, DuplicateHashKeepsFirstOrigin) {
  Bytes f = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 1)}, {kOwnerB, fill(32, 1)}});
  Sources s;
  ASSERT_TRUE(add_to_sources(parse_signature_lists(f), Variable::dbx, "d", s).ok());
  EXPECT_EQ(s.keyring.descriptions.size(), 1u);
  const auto& o = s.description_origins.at("bin:" + to_hex(fill(32, 1)));
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].where, "list 1 entry 1 (EFI_CERT_SHA256)");
  EXPECT_EQ(o[1].where, "list 1 entry 2 (EFI_CERT_SHA256)");
  EXPECT_THROW((void)add_to_sources(parse_signature_lists(f), Variable::db, "d", s), std::invalid_argument);
}
