// UEFI signature databases: GUIDs, EFI_SIGNATURE_LIST parsing with the kernel's checks
// (parse_efi_signature_list, efi_parser.c), containers, the dbx/db handlers
// (keyring_handler.c), writing and merging, and the `modsign dbx` CLI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "blacklist/efi.hpp"
#include "crypto/algorithms.hpp"
#include "test_support.hpp"

using namespace modsign;
using namespace modsign::blacklist;
using namespace modsign::blacklist::efi;
using modsign::test::q;
using modsign::test::run;
using modsign::test::slurp;
using modsign::test::spit;
using modsign::test::TempDir;

namespace {

void put32(Bytes& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(std::uint8_t(v >> (8 * i)));
}
void append(Bytes& b, ByteView v) { b.insert(b.end(), v.begin(), v.end()); }
void append(Bytes& b, const Guid& g) { b.insert(b.end(), g.bytes.begin(), g.bytes.end()); }

/// A list header with the given raw fields, followed by `body`.
Bytes raw_list(const Guid& type, std::uint32_t lsize, std::uint32_t hsize, std::uint32_t esize, ByteView body = {}) {
  Bytes b;
  append(b, type);
  put32(b, lsize);
  put32(b, hsize);
  put32(b, esize);
  append(b, body);
  return b;
}
/// A well-formed list of entries of equal size, sizes computed by hand (not by write_lists).
Bytes good_list(const Guid& type, const std::vector<std::pair<Guid, Bytes>>& entries, ByteView header = {}) {
  Bytes body(header.begin(), header.end());
  for (const auto& [o, d] : entries) {
    append(body, o);
    append(body, d);
  }
  const auto esize = std::uint32_t(16 + entries.front().second.size());
  return raw_list(type, std::uint32_t(28 + body.size()), std::uint32_t(header.size()), esize, body);
}
Bytes fill(std::size_t n, std::uint8_t start) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = std::uint8_t(start + i);
  return b;
}

const Guid kOwnerA = *Guid::parse("11111111-2222-3333-4444-555555555555");
const Guid kOwnerB = *Guid::parse("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee");
const Guid kUnknown = *Guid::parse("01020304-0506-0708-090a-0b0c0d0e0f10");

/// A self-signed RSA-2048 certificate of exactly `size` DER bytes (subject CN padded, serial
/// 1 or 256 for parity), made once with the openssl CLI, with its key for signing.
struct SizedCert {
  TempDir dir;
  Bytes der;
  std::string key, pem;
};
const SizedCert& cert_932() {
  static SizedCert* c = [] {
    auto* s = new SizedCert;
    s->key = s->dir / "k.pem";
    s->pem = s->dir / "c.pem";
    auto r = run(test::openssl() + " genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out " + q(s->key));
    EXPECT_EQ(r.status, 0) << r.err;
    for (const char* serial : {"1", "256"}) {
      for (int n = 1; n < 128 && s->der.size() != 932; ++n) {
        // CN (at most 64 characters), then O: each character adds 2 bytes (subject = issuer).
        std::string subj = "/CN=" + std::string(std::min(n, 64), 'x');
        if (n > 64) subj += "/O=" + std::string(n - 64, 'o');
        r = run(test::openssl() + " req -x509 -new -key " + q(s->key) + " -subj " + q(subj) +
                " -days 30 -set_serial " + serial + " -outform DER -out " + q(s->dir / "c.der"));
        EXPECT_EQ(r.status, 0) << r.err;
        s->der = slurp(s->dir / "c.der");
        if (s->der.size() > 932) break;
      }
      if (s->der.size() == 932) break;
    }
    run(test::openssl() + " x509 -inform DER -in " + q(s->dir / "c.der") + " -out " + q(s->pem));
    return s;
  }();
  return *c;
}

}  // namespace

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
  EXPECT_EQ(to_hex(t.bytes()), "da0703061311150000000000" "00000000");
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
  EXPECT_EQ(to_hex(ByteView(data).subspan(32)), "e80701020304050000000000" "00000000");
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
      {"list_size 27", raw_list(t, 27, 0, 48, fill(48, 0)), "signature_list_size 27 is smaller than the 28-byte header"},
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
  EXPECT_EQ(s.keyring.descriptions, (std::set<std::string>{"bin:" + to_hex(fill(32, 1)), "bin:" + to_hex(fill(32, 2))}));
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
  EXPECT_THROW(add_to_sources(parse_signature_lists(f), Variable::db, "d", s), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------
// A synthetic dbx like the firmware's: hash lists next to a certificate list

namespace {
Bytes synthetic_dbx(const Bytes& cert, Bytes& tbs_data) {
  tbs_data = x509_sha256_data(fill(32, 0x90), *EfiTime::parse("2023-05-09 00:00:00"));
  Bytes f = good_list(guids::cert_sha256, {{guids::microsoft_owner, fill(32, 0x00)}, {guids::microsoft_owner, fill(32, 0x20)}});
  append(f, good_list(guids::cert_sha256, {{kOwnerA, fill(32, 0x40)}}));
  append(f, good_list(guids::cert_x509, {{guids::microsoft_owner, cert}}));
  append(f, good_list(guids::cert_sha256, {{kOwnerB, fill(32, 0x60)}, {kOwnerB, fill(32, 0x80)}, {kOwnerB, fill(32, 0xa0)}}));
  append(f, good_list(guids::cert_x509_sha256, {{guids::microsoft_owner, tbs_data}}));
  return f;
}
}  // namespace

TEST(EfiDbx, SyntheticDbxWith932ByteCertificate) {
  const SizedCert& c = cert_932();
  ASSERT_EQ(c.der.size(), 932u);
  Bytes tbs_data;
  const Bytes f = synthetic_dbx(c.der, tbs_data);
  EXPECT_EQ(detect_container(f), Container::esl);
  auto vf = parse_variable_file(f);
  ASSERT_TRUE(vf.ok());
  const ParsedLists& p = vf->lists;
  ASSERT_FALSE(p.error) << p.error->message;
  ASSERT_EQ(p.lists.size(), 5u);
  EXPECT_EQ(p.lists[0].offset, 0u);
  EXPECT_EQ(p.lists[1].offset, 124u);
  EXPECT_EQ(p.lists[2].offset, 200u);
  EXPECT_EQ(p.lists[2].signature_size, 948u);
  EXPECT_EQ(p.lists[2].list_size, 976u);
  EXPECT_EQ(p.lists[3].offset, 1176u);
  EXPECT_EQ(p.lists[4].offset, 1176u + 28 + 144);
  EXPECT_EQ(p.lists[2].entries.at(0).data, c.der);
  EXPECT_EQ(p.lists[3].entries.at(2).data, fill(32, 0xa0));
  EXPECT_EQ(p.lists[3].entries.at(2).owner, kOwnerB);

  const VariableEffects fx = apply_handlers(p, Variable::dbx);
  ASSERT_EQ(fx.entries.size(), 8u);
  const std::vector<EntryKind> kinds = {EntryKind::binary_hash, EntryKind::binary_hash, EntryKind::binary_hash,
                                        EntryKind::revoked_certificate, EntryKind::binary_hash, EntryKind::binary_hash,
                                        EntryKind::binary_hash, EntryKind::tbs_hash};
  for (std::size_t i = 0; i < kinds.size(); ++i) EXPECT_EQ(fx.entries[i].kind, kinds[i]) << i;
  EXPECT_EQ(fx.entries[3].text, "revoked certificate");
  ASSERT_TRUE(fx.entries[3].cert);
  EXPECT_EQ(fx.entries[3].cert->der(), c.der);
  EXPECT_EQ(fx.entries[7].description, "tbs:" + to_hex(tbs_data));
  ASSERT_EQ(fx.revoked_certificates.size(), 1u);

  Sources s;
  ASSERT_TRUE(add_to_sources(p, Variable::dbx, "dbx.esl", s).ok());
  EXPECT_EQ(s.keyring.descriptions.size(), 7u);
  ASSERT_EQ(s.keyring.revoked.size(), 1u);
  EXPECT_EQ(s.revoked_origins.at(0).where, "list 3 entry 1 (EFI_CERT_X509)");
  EXPECT_EQ(s.description_origins.at("bin:" + to_hex(fill(32, 0x80))).at(0).where, "list 4 entry 2 (EFI_CERT_SHA256)");
  EXPECT_EQ(s.notes.size(), 1u);

  // db: the same certificate becomes a platform keyring certificate; hashes are ignored.
  const VariableEffects db = apply_handlers(p, Variable::db);
  ASSERT_EQ(db.keyring_certificates.size(), 1u);
  EXPECT_EQ(db.keyring_certificates[0].der(), c.der);
  EXPECT_EQ(db.entries[3].text, "platform keyring certificate");
  EXPECT_EQ(db.entries[0].kind, EntryKind::ignored);
  EXPECT_TRUE(db.revoked_certificates.empty());
}

TEST(EfiDbx, UnparseableRevokedCertificate) {
  // add_key_to_revocation_list -> key_create_or_update("asymmetric") fails (EBADMSG from
  // every parser): "Problem with revocation key (-74)", nothing added.
  Bytes junk = fill(100, 0x30);
  const ParsedLists p = parse_signature_lists(good_list(guids::cert_x509, {{kOwnerA, junk}}));
  const VariableEffects fx = apply_handlers(p, Variable::dbx);
  ASSERT_EQ(fx.entries.size(), 1u);
  EXPECT_EQ(fx.entries[0].key_error, KErr::ebadmsg);
  EXPECT_EQ(fx.entries[0].text, "revoked certificate (not added: EBADMSG)");
  Sources s;
  ASSERT_TRUE(add_to_sources(p, Variable::dbx, "d", s).ok());
  EXPECT_TRUE(s.keyring.revoked.empty());
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0], "d: list 1 entry 1 (EFI_CERT_X509): not added to .blacklist (EBADMSG)");
}

TEST(EfiDbx, RevokedCertificateRefusals) {
  const SizedCert& c = cert_932();
  TempDir d;
  // RSASSA-PSS-signed: the kernel's X.509 parser has no OID for it -> ENOPKG, not added.
  auto r = run(test::openssl() + " req -x509 -new -key " + q(c.key) + " -subj /CN=pss -days 1 -sigopt rsa_padding_mode:pss " +
               "-sha256 -outform DER -out " + q(d / "pss.der"));
  ASSERT_EQ(r.status, 0) << r.err;
  Bytes f = good_list(guids::cert_x509, {{kOwnerA, slurp(d / "pss.der")}});
  append(f, good_list(guids::cert_x509, {{kOwnerA, c.der}}));
  append(f, good_list(guids::cert_x509, {{kOwnerB, c.der}}));  // the same certificate again
  const ParsedLists p = parse_signature_lists(f);
  const VariableEffects fx = apply_handlers(p, Variable::dbx);
  ASSERT_EQ(fx.entries.size(), 3u);
  EXPECT_EQ(fx.entries[0].key_error, KErr::enopkg);
  EXPECT_EQ(fx.entries[0].text, "revoked certificate (not added: ENOPKG)");
  EXPECT_EQ(fx.entries[1].key_error, KErr::none);
  EXPECT_EQ(fx.revoked_certificates.size(), 2u);
  Sources s;
  ASSERT_TRUE(add_to_sources(p, Variable::dbx, "d", s).ok());
  ASSERT_EQ(s.keyring.revoked.size(), 1u);  // the repeat replaces the same key
  EXPECT_EQ(fx.entries[0].key_error_reason, "unsupported certificate signature algorithm 1.2.840.113549.1.1.10");
  // Worded as `--revoked` words a certificate the kernel cannot load.
  EXPECT_EQ(s.notes, (std::vector<std::string>{"d list 1 entry 1 (EFI_CERT_X509) is not loaded by a v7.0 kernel (ENOPKG: "
                                               "unsupported certificate signature algorithm 1.2.840.113549.1.1.10)",
                                               "d: list 3 entry 1 (EFI_CERT_X509): revoked certificate already loaded"}));
  // Its TBS SHA-256 already blacklisted (e.g. by the build-time hash list): x509_key_preparse
  // refuses it with EKEYREJECTED; with a v6 profile the lookup uses the signature's hash
  // (SHA-256 here too).
  auto cert = crypto::Certificate::from_der(c.der);
  ASSERT_TRUE(cert.ok());
  Sources t;
  t.add_description("tbs:" + to_hex(crypto::digest(crypto::HashAlgo::sha256, cert->tbs())), {"hashes", "line 1"});
  ASSERT_TRUE(add_to_sources(parse_signature_lists(good_list(guids::cert_x509, {{kOwnerA, c.der}})), Variable::dbx, "d", t).ok());
  EXPECT_TRUE(t.keyring.revoked.empty());
  EXPECT_EQ(t.notes, (std::vector<std::string>{"d: list 1 entry 1 (EFI_CERT_X509): not added to .blacklist (EKEYREJECTED: "
                                               "its TBS is blacklisted)"}));
  const VariableEffects db = apply_handlers(parse_signature_lists(good_list(guids::cert_x509, {{kOwnerA, c.der}})),
                                            Variable::db, kernel::KernelProfile::v6(), &t.keyring);
  EXPECT_EQ(db.entries.at(0).key_error, KErr::ekeyrejected);
  EXPECT_TRUE(db.keyring_certificates.empty());
}

// ---------------------------------------------------------------------------------------
// Containers

namespace {
/// timestamp ‖ WIN_CERTIFICATE_UEFI_GUID{dwLength, 0x0200, 0x0EF1, PKCS7 GUID, p7} ‖ payload
Bytes auth2(const EfiTime& t, ByteView p7, ByteView payload, std::uint16_t rev = 0x0200, std::uint16_t type = 0x0ef1,
            std::optional<std::uint32_t> dw = std::nullopt) {
  Bytes b;
  const auto tb = t.bytes();
  append(b, tb);
  put32(b, dw ? *dw : std::uint32_t(24 + p7.size()));
  b.push_back(std::uint8_t(rev));
  b.push_back(std::uint8_t(rev >> 8));
  b.push_back(std::uint8_t(type));
  b.push_back(std::uint8_t(type >> 8));
  append(b, guids::cert_type_pkcs7);
  append(b, p7);
  append(b, payload);
  return b;
}
}  // namespace

TEST(EfiContainer, AuthenticatedUpdateWithRealPkcs7) {
  const SizedCert& c = cert_932();
  TempDir d;
  const Bytes payload = good_list(guids::cert_sha256, {{guids::microsoft_owner, fill(32, 7)}});
  spit(d / "payload", payload);
  auto r = run(test::openssl() + " cms -sign -binary -md sha256 -outform DER -in " + q(d / "payload") + " -signer " +
               q(c.pem) + " -inkey " + q(c.key) + " -out " + q(d / "p7.der"));
  ASSERT_EQ(r.status, 0) << r.err;
  const Bytes p7 = slurp(d / "p7.der");
  const EfiTime ts = *EfiTime::parse("2010-03-06 19:17:21");
  const Bytes file = auth2(ts, p7, payload);
  EXPECT_EQ(detect_container(file), Container::auth2);
  auto vf = parse_variable_file(file);
  ASSERT_TRUE(vf.ok()) << vf.error().message;
  EXPECT_EQ(vf->form, Container::auth2);
  ASSERT_TRUE(vf->auth);
  EXPECT_EQ(vf->auth->timestamp, ts);
  EXPECT_EQ(vf->auth->dw_length, 24 + p7.size());
  EXPECT_EQ(vf->auth->revision, 0x0200);
  EXPECT_EQ(vf->auth->certificate_type, 0x0ef1);
  EXPECT_EQ(vf->auth->pkcs7, p7);
  EXPECT_EQ(vf->payload_offset, 40 + p7.size());
  ASSERT_FALSE(vf->lists.error);
  ASSERT_EQ(vf->lists.lists.size(), 1u);
  EXPECT_EQ(vf->lists.lists[0].offset, 40 + p7.size());
  EXPECT_EQ(vf->lists.lists[0].entries.at(0).data, fill(32, 7));
  // The CertData we extracted is the SignedData openssl made: it verifies over the payload.
  spit(d / "extracted.der", vf->auth->pkcs7);
  r = run(test::openssl() + " cms -verify -binary -inform DER -in " + q(d / "extracted.der") + " -content " +
          q(d / "payload") + " -CAfile " + q(c.pem) + " -out /dev/null");
  EXPECT_EQ(r.status, 0) << r.err;
  // Forcing esl reads the timestamp as a list header: EBADMSG, nothing parsed.
  auto as_esl = parse_variable_file(file, Container::esl);
  ASSERT_TRUE(as_esl.ok());
  ASSERT_TRUE(as_esl->lists.error);
  EXPECT_TRUE(as_esl->lists.lists.empty());
}

TEST(EfiContainer, Auth2HeaderErrors) {
  const EfiTime ts = *EfiTime::parse("2010-03-06 19:17:21");
  const Bytes p7 = fill(10, 0x30), payload = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 0)}});
  auto err = [](const Bytes& f) {
    auto vf = parse_variable_file(f, Container::auth2);
    return vf.ok() ? std::string("ok") : std::string(errno_name(vf.error().code)) + " " + vf.error().message;
  };
  EXPECT_EQ(err(auth2(ts, p7, payload, 0x0100)), "EBADMSG byte offset 20: wRevision 0x0100, not 0x0200");
  EXPECT_EQ(err(auth2(ts, p7, payload, 0x0200, 0x0002)),
            "EBADMSG byte offset 22: wCertificateType 0x0002, not WIN_CERT_TYPE_EFI_GUID 0x0ef1");
  EXPECT_EQ(err(auth2(ts, p7, payload, 0x0200, 0x0ef1, 0xffffffffu)),
            "EBADMSG byte offset 16: dwLength 4294967295 exceeds the 110 bytes after the timestamp");
  EXPECT_EQ(err(auth2(ts, p7, payload, 0x0200, 0x0ef1, 23)),
            "EBADMSG byte offset 16: dwLength 23 is smaller than the 24-byte WIN_CERTIFICATE_UEFI_GUID header");
  EXPECT_EQ(err(Bytes(39, 0)),
            "EBADMSG byte offset 0: EFI_VARIABLE_AUTHENTICATION_2 needs 40 bytes (EFI_TIME + WIN_CERTIFICATE_UEFI_GUID "
            "header), file has 39");
  Bytes wrong_guid = auth2(ts, p7, payload);
  wrong_guid[24] ^= 1;
  EXPECT_EQ(err(wrong_guid), "EBADMSG byte offset 24: CertType 4aafd29c-68df-49ee-8aa9-347d375665a7, not EFI_CERT_TYPE_PKCS7_GUID");
  EXPECT_EQ(detect_container(wrong_guid), Container::esl);
  // dwLength exactly to the end: no payload, zero lists, kernel status 0.
  auto vf = parse_variable_file(auth2(ts, p7, {}));
  ASSERT_TRUE(vf.ok());
  EXPECT_TRUE(vf->lists.lists.empty());
  EXPECT_TRUE(vf->lists.status().ok());
}

TEST(EfiContainer, EfivarfsDump) {
  Bytes f;
  put32(f, kAttrNonVolatile | kAttrBootserviceAccess | kAttrRuntimeAccess | kAttrTimeBasedAuthenticatedWriteAccess);
  const Bytes esl = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 9)}});
  append(f, esl);
  EXPECT_EQ(detect_container(f), Container::efivarfs);
  auto vf = parse_variable_file(f);
  ASSERT_TRUE(vf.ok());
  EXPECT_EQ(vf->form, Container::efivarfs);
  EXPECT_EQ(vf->attributes, 0x27u);
  EXPECT_EQ(vf->payload_offset, 4u);
  ASSERT_EQ(vf->lists.lists.size(), 1u);
  EXPECT_EQ(vf->lists.lists[0].offset, 4u);
  EXPECT_EQ(vf->lists.lists[0].entries[0].offset, 32u);
  // Attribute byte with bit 0x80 set: not efivarfs to dbxtool's guess; parsed as bare lists.
  f[0] = 0x80;
  EXPECT_EQ(detect_container(f), Container::esl);
  EXPECT_EQ(detect_container(esl), Container::esl);
  EXPECT_EQ(detect_container({}), Container::esl);
  auto tiny = parse_variable_file(Bytes{1, 0}, Container::efivarfs);
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(tiny.error().message, "byte offset 0: efivarfs file of 2 bytes has no 4-byte attributes");
  EXPECT_EQ(parse_container("auto"), Container::detect);
  EXPECT_EQ(parse_container("auth2"), Container::auth2);
  EXPECT_FALSE(parse_container("auth"));
}

// ---------------------------------------------------------------------------------------
// Writing and merging

TEST(EfiWrite, ListsOfAllThreeTypes) {
  const SizedCert& c = cert_932();
  const Bytes tbs = x509_sha256_data(fill(32, 0x55), *EfiTime::parse("2020-01-01 00:00:00"));
  const std::vector<FlatEntry> in = {
      {guids::cert_sha256, kOwnerA, fill(32, 1)},      {guids::cert_x509, kOwnerA, c.der},
      {guids::cert_sha256, kOwnerB, fill(32, 2)},      {guids::cert_sha256, kOwnerA, fill(32, 3)},
      {guids::cert_x509_sha256, kOwnerB, tbs},         {guids::cert_x509, kOwnerB, c.der},
  };
  const auto lists = group_entries(in);
  ASSERT_EQ(lists.size(), 5u);  // sha256/A [1,3], x509, sha256/B [2], x509_sha256, x509
  Bytes expect = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 1)}, {kOwnerA, fill(32, 3)}});
  append(expect, good_list(guids::cert_x509, {{kOwnerA, c.der}}));
  append(expect, good_list(guids::cert_sha256, {{kOwnerB, fill(32, 2)}}));
  append(expect, good_list(guids::cert_x509_sha256, {{kOwnerB, tbs}}));
  append(expect, good_list(guids::cert_x509, {{kOwnerB, c.der}}));
  const Bytes out = write_lists(lists);
  EXPECT_EQ(out, expect);
  EXPECT_EQ(out.size(), 5 * 28u + 2 * 48 + 948 + 48 + 64 + 948);
  EXPECT_THROW(x509_sha256_data(fill(31, 0), EfiTime{}), std::invalid_argument);
  EXPECT_THROW(group_entries({{guids::cert_sha256, kOwnerA, {}}}), std::invalid_argument);
  SignatureList mixed;
  mixed.type = guids::cert_sha256;
  mixed.entries = {{kOwnerA, fill(32, 0), 0}, {kOwnerA, fill(31, 0), 0}};
  EXPECT_THROW(write_lists({mixed}), std::invalid_argument);
  EXPECT_THROW(write_lists({SignatureList{}}), std::invalid_argument);
}

TEST(EfiWrite, MergeDeduplicates) {
  const SizedCert& c = cert_932();
  Bytes f1 = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 1)}, {kOwnerA, fill(32, 2)}});
  append(f1, good_list(guids::cert_x509, {{kOwnerA, c.der}}));
  Bytes f2 = good_list(guids::cert_sha256, {{kOwnerB, fill(32, 2)}, {kOwnerB, fill(32, 3)}, {kOwnerA, fill(32, 1)}});
  append(f2, good_list(guids::cert_x509, {{kOwnerA, c.der}}));
  // Same data under another type is a different entry.
  append(f2, good_list(guids::cert_x509_sha256, {{kOwnerA, x509_sha256_data(fill(32, 1), EfiTime{})}}));
  append(f2, good_list(kUnknown, {{kOwnerA, fill(32, 1)}}));
  Merge m;
  m.add(parse_signature_lists(f1), "one");
  m.add(parse_signature_lists(f2), "two");
  EXPECT_EQ(m.duplicates, 3u);  // sha256 2 (owner B dropped), sha256 1, x509
  ASSERT_EQ(m.owner_conflicts.size(), 1u);
  EXPECT_EQ(m.owner_conflicts[0],
            "two: list 1 entry 1: EFI_CERT_SHA256 already present with owner 11111111-2222-3333-4444-555555555555; "
            "owner aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee dropped");
  ASSERT_EQ(m.entries.size(), 6u);
  Bytes expect = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 1)}, {kOwnerA, fill(32, 2)}});
  append(expect, good_list(guids::cert_x509, {{kOwnerA, c.der}}));
  append(expect, good_list(guids::cert_sha256, {{kOwnerB, fill(32, 3)}}));
  append(expect, good_list(guids::cert_x509_sha256, {{kOwnerA, x509_sha256_data(fill(32, 1), EfiTime{})}}));
  append(expect, good_list(kUnknown, {{kOwnerA, fill(32, 1)}}));
  EXPECT_EQ(m.serialize(), expect);
  // Merging the result with itself changes nothing.
  Merge again;
  again.add(parse_signature_lists(expect), "a");
  again.add(parse_signature_lists(expect), "b");
  EXPECT_EQ(again.duplicates, 6u);
  EXPECT_TRUE(again.owner_conflicts.empty());
  EXPECT_EQ(again.serialize(), expect);
}

// ---------------------------------------------------------------------------------------
// CLI

namespace {
std::string cli() { return test::modsign_cli(); }
const std::string kMs = "77fa9abd-0359-4d32-bd60-28f4e78f784b";
}  // namespace

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
  EXPECT_EQ(r.out,
            "file: " + d / "dbx" + "\n"
            "form: efivarfs (attributes + data)\n"
            "attributes: 0x00000027\n"
            "payload: byte offset 4\n"
            "variable: dbx\n"
            "list 1: EFI_CERT_SHA256, byte offset 4, 1 entry of 48 bytes\n"
            "  entry 1.1: owner " + kMs + ": " + to_hex(h1) + " -> bin:" + to_hex(h1) + "\n"
            "list 2: EFI_CERT_X509_SHA256, byte offset 80, 1 entry of 64 bytes\n"
            "  entry 2.1: owner 11111111-2222-3333-4444-555555555555: " + tbs_hex + " -> tbs:" + tbs_hex +
            " (never matches)\n"
            "list 3: 01020304-0506-0708-090a-0b0c0d0e0f10, byte offset 172, 1 entry of 20 bytes\n"
            "  entry 3.1: owner aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee: 00010203 -> ignored\n"
            "note: list 2 entry 1 (EFI_CERT_X509_SHA256): tbs:" + tbs_hex.substr(0, 16) +
            "... is keyed over all 48 bytes of the entry (32-byte TBS hash + 16-byte TimeOfRevocation), so it never "
            "equals the tbs:<64 hex> SHA-256 lookup of x509_get_sig_params() and blocks nothing\n"
            "summary: 3 lists, 3 entries: 1 bin, 1 tbs (1 never matching), 0 revoked, 0 platform, 1 ignored\n");
  // --variable db: nothing but X.509 is handled.
  r = run(cli() + " dbx list --variable db " + q(d / "dbx"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("-> ignored\nlist 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("summary: 3 lists, 3 entries: 0 bin, 0 tbs (0 never matching), 0 revoked, 0 platform, 3 ignored\n"),
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
  const std::string cn = "ev\xc2\x9b" "1mil\xc3\xa9";
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
  EXPECT_NE(r.out.find("\n  entry 1.1: owner " + kMs + ": X.509 \"CN = ev\\xc2\\x9b1mil\xc3\xa9\", SHA-256 fingerprint " +
                       hex + " -> revoked certificate\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos);
  r = run(cli() + " dbx list --json " + q(d / "dbx.esl"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["lists"][0]["entries"][0]["certificate"]["subject"], "CN = " + cn);
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
  EXPECT_EQ(slurp(d / "a.esl"),
            good_list(guids::cert_sha256, {{guids::microsoft_owner, fill(32, 1)}, {guids::microsoft_owner, fill(32, 2)}}));
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
                       "modsign: " + d / "m.esl" + ": 3 entries in 2 lists from 4 in 2 files; 1 duplicate removed\n");
  Bytes expect = good_list(guids::cert_sha256, {{guids::microsoft_owner, fill(32, 1)}, {guids::microsoft_owner, fill(32, 2)}});
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
  // The README's `modsign dbx` example, byte for byte (hash = SHA-256 of nothing, cross-checked with sha256sum).
  TempDir d;
  auto sum = run("printf '' | sha256sum");
  ASSERT_EQ(sum.status, 0);
  const std::string e = sum.out.substr(0, 64);
  ASSERT_EQ(e, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  auto r = run("cd " + q(d.path()) + " && " + cli() + " dbx add-hash --owner " + kMs + " -o dbx.esl " + e + " && " + cli() +
               " dbx list dbx.esl");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "file: dbx.esl\n"
            "form: esl (EFI_SIGNATURE_LIST data)\n"
            "payload: byte offset 0\n"
            "variable: dbx\n"
            "list 1: EFI_CERT_SHA256, byte offset 0, 1 entry of 48 bytes\n"
            "  entry 1.1: owner 77fa9abd-0359-4d32-bd60-28f4e78f784b: " + e + " -> bin:" + e + "\n"
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

// ---------------------------------------------------------------------------------------
// Review: hostile inputs and kernel exactness

TEST(EfiReview, NeverMatchesDependsOnKernelGeneration) {
  // 7.0 looks up tbs:<SHA-256 of the TBS> (32 bytes); v6 the TBS digest in the certificate's
  // own signature hash (x509_get_sig_params), so 20/28/32/48/64-byte keys can match there.
  Bytes f = good_list(guids::cert_x509_sha256, {{kOwnerA, fill(48, 0)}});
  append(f, good_list(guids::cert_x509_sha256, {{kOwnerA, fill(20, 0)}}));
  append(f, good_list(guids::cert_x509_sha256, {{kOwnerA, fill(40, 0)}}));
  append(f, good_list(guids::cert_x509_sha256, {{kOwnerA, fill(32, 0)}}));
  const ParsedLists p = parse_signature_lists(f);
  ASSERT_FALSE(p.error);
  const VariableEffects v7 = apply_handlers(p, Variable::dbx, kernel::KernelProfile::v7_0());
  const VariableEffects v6 = apply_handlers(p, Variable::dbx, kernel::KernelProfile::v6());
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
  EXPECT_EQ(v7.notes[0], "list 1 entry 1 (EFI_CERT_X509_SHA256): tbs:0001020304050607... is keyed over all 48 bytes of "
                         "the entry (32-byte TBS hash + 16-byte TimeOfRevocation), so it never equals the tbs:<64 hex> "
                         "SHA-256 lookup of x509_get_sig_params() and blocks nothing");
  EXPECT_EQ(v7.notes[2], "list 3 entry 1 (EFI_CERT_X509_SHA256): tbs:0001020304050607... is keyed over all 40 bytes of "
                         "the entry, so it never equals the tbs:<64 hex> SHA-256 lookup of x509_get_sig_params() and "
                         "blocks nothing");
  ASSERT_EQ(v6.notes.size(), 1u);
  EXPECT_EQ(v6.notes[0], "list 3 entry 1 (EFI_CERT_X509_SHA256): tbs:0001020304050607... is keyed over all 40 bytes of "
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

TEST(EfiReview, CertificateWithTrailingBytesIsLoaded) {
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
  EXPECT_EQ(db.notes[0], "list 1 entry 1 (EFI_CERT_X509): the 4 bytes after the certificate are ignored (the kernel's "
                         "ASN.1 decoder does not check for trailing data)");
  Sources s;
  ASSERT_TRUE(add_to_sources(p, Variable::dbx, "dbx", s).ok());
  ASSERT_EQ(s.keyring.revoked.size(), 1u);
  EXPECT_EQ(s.keyring.revoked[0].der(), c.der);
  // Bytes cut from the certificate are still EBADMSG.
  Bytes cut(c.der.begin(), c.der.end() - 1);
  const VariableEffects bad = apply_handlers(parse_signature_lists(good_list(guids::cert_x509, {{kOwnerA, cut}})),
                                             Variable::db);
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

TEST(EfiReview, TruncatedAtEveryOffset) {
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
      EXPECT_EQ(vf.error().message, "byte offset 0: EFI_VARIABLE_AUTHENTICATION_2 needs 40 bytes (EFI_TIME + "
                                    "WIN_CERTIFICATE_UEFI_GUID header), file has " + std::to_string(n));
      continue;
    }
    if (n < 50) {
      ASSERT_FALSE(vf.ok()) << n;
      EXPECT_EQ(vf.error().message, "byte offset 16: dwLength 34 exceeds the " + std::to_string(n - 16) +
                                        " bytes after the timestamp");
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
  EXPECT_EQ(vf.error().message, "byte offset 16: dwLength 0 is smaller than the 24-byte WIN_CERTIFICATE_UEFI_GUID header");
}

TEST(EfiReview, CliHostileFiles) {
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
  EXPECT_EQ(r3.err, "modsign: " + d / "v" + ": EBADMSG: EFI_SIGNATURE_LIST at byte offset 0: 3 bytes left, fewer than "
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
  EXPECT_EQ(slurp(d / "u.esl"), good_list(guids::cert_sha256, {{*Guid::parse("11111111-2222-3333-4444-55555555555a"),
                                                                fill(32, 1)}}));
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

TEST(EfiReview, MergeRefusesEntriesWithoutData) {
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
  EXPECT_EQ(r.err, "modsign: " + d / "z.esl" +
                       ": list 2 (EFI_CERT_SHA256, byte offset 76): signature_size 16, entries without data; not merged\n");
  EXPECT_EQ(slurp(d / "out"), (Bytes{1, 2, 3}));
}
