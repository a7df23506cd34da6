// The public digest and IMA calls (include/modsign/digest.hpp, ima.hpp): digest_module_file,
// ima_template, ima_template_file, parse_measurement_list, parse_expected_pcrs, replay_pcrs
// and ima_appraise_modsig, through the installed headers only.  The module is signed by
// openssl itself (`openssl cms -sign`, trailer written here), and every hash is confirmed
// with sha1sum / sha256sum over bytes this file rebuilds.
#include <gtest/gtest.h>

#include <modsign/modsign.hpp>

#include "test_support.hpp"

using namespace modsign;
using test::q;

namespace {
using test::tool_hash;

Bytes str(const std::string& s) { return Bytes(s.begin(), s.end()); }
void put_u32le(Bytes& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
Bytes cat(std::initializer_list<ByteView> parts) {
  Bytes out;
  for (auto p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
/// u32le length ‖ data, per field.
Bytes template_data(std::initializer_list<ByteView> fields) {
  Bytes out;
  for (auto f : fields) {
    put_u32le(out, static_cast<std::uint32_t>(f.size()));
    out.insert(out.end(), f.begin(), f.end());
  }
  return out;
}
/// "sha256:" NUL digest, as d-ng and d-modsig hold it.
Bytes field(const std::string& algo, const std::string& hex) { return cat({str(algo + ":"), Bytes{0}, from_hex(hex)}); }

KernelProfile profile(const char* name) { return KernelProfile::parse(name).value(); }

class ApiIma : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    auto r = test::run(test::openssl() + " req -x509 -new -newkey rsa:2048 -nodes -keyout " + q(*dir_ / "k.pem") +
                       " -subj '/CN=api ima/O=modsign' -days 30 -out " + q(*dir_ / "k.crt"));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }

  /// `content` ‖ PKCS#7 (openssl cms, no signedAttrs, SHA-256) ‖ struct module_signature ‖
  /// marker, written to `name`; the PKCS#7 DER goes to *der.
  std::string signed_module(const std::string& name, const Bytes& content, Bytes* der = nullptr) {
    test::spit(d_ / "content", content);
    auto r = test::run(test::openssl() + " cms -sign -binary -noattr -nosmimecap -md sha256 -outform DER -in " +
                       q(d_ / "content") + " -signer " + q(file("k.crt")) + " -inkey " + q(file("k.pem")) + " -out " +
                       q(d_ / "p7"));
    EXPECT_EQ(r.status, 0) << r.err;
    const Bytes p7 = test::slurp(d_ / "p7");
    if (der) *der = p7;
    Bytes trailer(12, 0);
    trailer[2] = 2;  // id_type PKEY_ID_PKCS7
    for (int i = 0; i < 4; ++i) trailer[8 + i] = static_cast<std::uint8_t>(p7.size() >> (8 * (3 - i)));
    const std::string p = d_ / name;
    test::spit(p, cat({content, p7, trailer, str("~Module signature appended~\n")}));
    return p;
  }
  static std::string file(const std::string& n) { return *dir_ / n; }
  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

}  // namespace

TEST_F(ApiIma, DigestViewOfASignedAndAnUnsignedModule) {
  const Bytes content = test::pattern(5000);
  const std::string m = signed_module("m.ko", content);
  const std::string side = tool_hash("sha256sum", content);
  const DigestView v = digest_module_file(m, profile("v7.0"));
  const ModuleDigests& d = v.digests;
  EXPECT_TRUE(d.signed_module);
  EXPECT_TRUE(d.modsig_parsed);
  EXPECT_EQ(d.content_length, 5000u);
  EXPECT_EQ(to_hex(d.side_sha256), side);
  EXPECT_EQ(d.kernel.status, KErr::none);
  EXPECT_EQ(d.kernel.algo, "sha256");
  EXPECT_EQ(to_hex(d.kernel.bytes), side);  // no signedAttrs: the digest of the content
  EXPECT_TRUE(d.kernel.over_content);
  EXPECT_FALSE(d.kernel.raw_attributes);
  ASSERT_TRUE(d.d_modsig.has_value());
  EXPECT_EQ(*d.d_modsig, field("sha256", side));
  EXPECT_TRUE(d.blacklist_visible);
  EXPECT_FALSE(d.compressed);
  EXPECT_EQ(to_hex(d.file_sha256), tool_hash("sha256sum", test::slurp(m)));
  EXPECT_EQ(v.bin_source, DigestView::BinSource::d_modsig);
  EXPECT_EQ(v.bin_entry, "bin:" + side);

  // Unsigned: ENOENT from ima_read_modsig, and the key is IMA's hash of the whole file.
  test::spit(d_ / "plain.ko", test::pattern(3000));
  const DigestView u = digest_module_file(d_ / "plain.ko", profile("v7.0"));
  EXPECT_FALSE(u.digests.signed_module);
  EXPECT_EQ(u.digests.kernel.status, KErr::enoent);
  EXPECT_EQ(u.digests.kernel.reason, "no appended signature (ima_read_modsig: ENOENT)");
  EXPECT_EQ(u.digests.content_length, 3000u);
  EXPECT_FALSE(u.digests.d_modsig.has_value());
  const std::string whole = tool_hash("sha256sum", test::pattern(3000));
  EXPECT_EQ(to_hex(u.digests.side_sha256), whole);
  EXPECT_EQ(u.bin_source, DigestView::BinSource::ima_hash);
  EXPECT_EQ(u.bin_entry, "bin:" + whole);

  // Bad input throws, naming the file.
  EXPECT_THROW(digest_module_file(d_ / "missing.ko", profile("v7.0")), IoError);
  test::spit(d_ / "bad.ko.xz", Bytes{0xfd, '7', 'z', 'X', 'Z', 0, 1, 2, 3, 4, 5, 6});
  try {
    digest_module_file(d_ / "bad.ko.xz", profile("v7.0"));
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) { EXPECT_TRUE(std::string(e.what()).starts_with(d_ / "bad.ko.xz" + ": ")) << e.what(); }
}

TEST_F(ApiIma, TemplateEntriesOfAModule) {
  // ima-ng of a fixed file, spelled out: u32le 40 | "sha256:" NUL SHA-256("hello\n") | u32le 3 | "/a" NUL.
  const std::string ng_hex =
      "28000000"
      "7368613235363a00"
      "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
      "03000000"
      "2f6100";
  auto ng = ima_template("ima-ng", "/a", str("hello\n"), std::nullopt, profile("v7.0"));
  ASSERT_TRUE(ng.ok()) << ng.error().message;
  EXPECT_EQ(ng->name, "ima-ng");
  EXPECT_EQ(to_hex(ng->data), ng_hex);
  EXPECT_EQ(to_hex(ng->sha1), tool_hash("sha1sum", from_hex(ng_hex)));
  EXPECT_EQ(to_hex(ng->sha256), tool_hash("sha256sum", from_hex(ng_hex)));
  EXPECT_EQ(to_hex(ng->sha1), "3f00ab080f2cc878408a494c812ef931c6915a4c");
  EXPECT_EQ(to_hex(ng->sha256), "d5def25a6ea60b56ada404d4c6c6ceaf9e149361a165e44e85877eeb1eee459a");

  const Bytes content = test::pattern(5000);
  Bytes der;
  const std::string m = signed_module("m.ko", content, &der);
  const Bytes file = test::slurp(m);
  const Bytes dng = field("sha256", tool_hash("sha256sum", file));
  const Bytes name = cat({str("/lib/modules/m.ko"), Bytes{0}});
  const Bytes dmodsig = field("sha256", tool_hash("sha256sum", content));

  // ima-sig: an IMA signature (0x03) in security.ima is the sig field.
  const Bytes xattr{0x03, 0x02, 0x04, 0xaa, 0xbb};
  auto sig = ima_template("ima-sig", "/lib/modules/m.ko", file, xattr, profile("v7.0"));
  ASSERT_TRUE(sig.ok());
  const Bytes sig_data = template_data({dng, name, xattr});
  EXPECT_EQ(sig->data, sig_data);
  EXPECT_EQ(to_hex(sig->sha1), tool_hash("sha1sum", sig_data));
  EXPECT_EQ(to_hex(sig->sha256), tool_hash("sha256sum", sig_data));

  // ima-modsig: d-ng | n-ng | sig (empty) | d-modsig | modsig (the PKCS#7 DER).
  auto ms = ima_template_file("ima-modsig", m, "/lib/modules/m.ko", profile("v7.0"));
  ASSERT_TRUE(ms.ok()) << ms.error().message;
  ASSERT_EQ(ms->fields.size(), 5u);
  EXPECT_EQ(ms->fields[2].name, "sig");
  EXPECT_TRUE(ms->fields[2].data.empty());  // tmp files carry no security.ima
  const Bytes ms_data = template_data({dng, name, Bytes{}, dmodsig, der});
  EXPECT_EQ(ms->data, ms_data);
  EXPECT_EQ(to_hex(ms->sha1), tool_hash("sha1sum", ms_data));
  EXPECT_EQ(to_hex(ms->sha256), tool_hash("sha256sum", ms_data));
  // Recorded path defaults to the file's; spaces become '_'.
  auto named = ima_template_file("ima-ng", m, "", profile("v7.0"));
  EXPECT_EQ(named->fields[1].data, cat({str(m), Bytes{0}}));
  auto spaced = ima_template("ima-ng", "/a b", str("x"), std::nullopt, profile("v7.0"));
  EXPECT_EQ(spaced->fields[1].data, cat({str("/a_b"), Bytes{0}}));
  // ima_hash=sha1 changes d-ng only.
  auto s1 = ima_template("ima-ng", "/a", str("hello\n"), std::nullopt, profile("v7.0"), {"sha1", false});
  EXPECT_EQ(s1->fields[0].data, field("sha1", tool_hash("sha1sum", str("hello\n"))));

  EXPECT_THROW((void)ima_template("ima-foo", "/a", file, std::nullopt, profile("v7.0")), UsageError);
  EXPECT_THROW((void)ima_template("ima-ng", "/a", file, std::nullopt, profile("v7.0"), {"sha7", false}), UsageError);
  EXPECT_THROW((void)ima_template_file("ima-ng", d_ / "missing", "", profile("v7.0")), IoError);
}

TEST_F(ApiIma, MeasurementListReplay) {
  // Two SHA-1 records on PCR 10 (ima-ng, then a violation) and one on PCR 11.
  const Bytes d1 = from_hex(
      "28000000"
      "7368613235363a00"
      "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
      "03000000"
      "2f6100");
  const Bytes d2 = template_data({field("sha256", std::string(64, '0')), cat({str("/b"), Bytes{0}})});
  const Bytes h1 = from_hex(tool_hash("sha1sum", d1)), h2 = from_hex(tool_hash("sha1sum", d2));
  auto record = [](std::uint32_t pcr, ByteView digest, ByteView data) {
    Bytes r;
    put_u32le(r, pcr);
    r.insert(r.end(), digest.begin(), digest.end());
    put_u32le(r, 6);
    const Bytes n = str("ima-ng");
    r.insert(r.end(), n.begin(), n.end());
    put_u32le(r, static_cast<std::uint32_t>(data.size()));
    r.insert(r.end(), data.begin(), data.end());
    return r;
  };
  const Bytes list = cat({record(10, h1, d1), record(10, Bytes(20, 0), d2), record(11, h2, d2)});
  auto recs = parse_measurement_list(list, "sha1");
  ASSERT_TRUE(recs.ok()) << recs.error().message;
  ASSERT_EQ(recs->size(), 3u);
  EXPECT_EQ((*recs)[0].pcr, 10u);
  EXPECT_EQ((*recs)[0].template_name, "ima-ng");
  EXPECT_EQ((*recs)[0].data, d1);
  EXPECT_EQ((*recs)[0].recomputed, h1);
  EXPECT_FALSE((*recs)[0].template_hash_mismatch());
  EXPECT_TRUE((*recs)[1].violation);
  EXPECT_EQ((*recs)[1].offset, record(10, h1, d1).size());
  EXPECT_EQ((*recs)[2].recomputed, h2);

  // PCR-10 = SHA1(SHA1(0^20 ‖ h1) ‖ FF^20), PCR-11 = SHA1(0^20 ‖ h2), step by step with sha1sum.
  const Bytes p10a = from_hex(tool_hash("sha1sum", cat({Bytes(20, 0), h1})));
  const std::string p10 = tool_hash("sha1sum", cat({p10a, Bytes(20, 0xff)}));
  const std::string p11 = tool_hash("sha1sum", cat({Bytes(20, 0), h2}));
  auto pcrs = replay_pcrs(*recs, "sha1");
  ASSERT_EQ(pcrs.size(), 2u);
  EXPECT_EQ(pcrs[0].index, 10u);
  EXPECT_EQ(to_hex(pcrs[0].value), p10);
  EXPECT_EQ(pcrs[1].index, 11u);
  EXPECT_EQ(to_hex(pcrs[1].value), p11);
  EXPECT_TRUE(pcrs[0].matches() && !pcrs[0].expected);

  // Expected values in the sysfs and tpm2_pcrread forms; PCR 12 is never extended: zeros.
  std::string upper = p11;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string text = "PCR-10: " + p10 + "\nsha1:\n  11: 0x" + upper + "\n  12: 0x" + std::string(40, '0') +
                           "\nsha256:\n  10: 0x" + std::string(64, 'a') + "\n";
  auto ex = parse_expected_pcrs(text, "sha1");
  ASSERT_TRUE(ex.ok()) << ex.error().message;
  ASSERT_EQ(ex->size(), 3u);
  EXPECT_EQ(to_hex(ex->at(11)), p11);
  auto checked = replay_pcrs(*recs, "sha1", *ex);
  ASSERT_EQ(checked.size(), 3u);
  EXPECT_EQ(checked[2].index, 12u);
  EXPECT_EQ(checked[2].value, Bytes(20, 0));
  for (const auto& p : checked) EXPECT_TRUE(p.matches()) << p.index;
  auto wrong = replay_pcrs(*recs, "sha1", {{10, Bytes(20, 1)}});
  EXPECT_FALSE(wrong[0].matches());

  // Errors as data.
  auto err = [](const std::string& t, const char* bank = "sha1") {
    return parse_expected_pcrs(t, bank).error().message;
  };
  EXPECT_EQ(err("PCR-10: zz\n"), "line 1: not a PCR value: PCR-10: zz");
  EXPECT_EQ(err("10: " + p10 + "\n\n10: " + p10), "line 3: PCR 10 given twice");
  EXPECT_EQ(err("10: abcd"), "PCR 10: 2 bytes, a sha1 PCR has 20");
  EXPECT_EQ(err("sha256:\n 10: 0x" + std::string(64, 'a')), "no PCR value for bank sha1 in this file");
  EXPECT_EQ(parse_expected_pcrs("x", "sha1").error().code, KErr::einval);
  Bytes tampered = list;
  tampered[4] ^= 1;  // the first recorded template hash
  EXPECT_TRUE(parse_measurement_list(tampered, "sha1")->front().template_hash_mismatch());
  auto cut = parse_measurement_list(ByteView(list).first(30), "sha1");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().code, KErr::ebadmsg);
  EXPECT_EQ(cut.error().message, "record 1 at offset 0: template name beyond the end of the list");
  EXPECT_EQ(pcr_bank_size("SHA256"), 32u);
  EXPECT_FALSE(pcr_bank_size("crc32").has_value());
  EXPECT_THROW((void)parse_measurement_list(list, "crc32"), UsageError);
}

TEST_F(ApiIma, AppraisalOfGoodTamperedBlacklistedAndUnsignedModules) {
  const Bytes content = test::pattern(5000);
  const std::string m = signed_module("m.ko", content);
  const std::string side = tool_hash("sha256sum", content);
  const TrustStore ima = TrustStore::load(TrustSources{{file("k.crt")}, {}, {}, {}}, profile("v7.0"));

  const Appraisal good = ima_appraise_modsig(m, ima, profile("v7.0"));
  EXPECT_TRUE(good.passes());
  EXPECT_EQ(good.err, KErr::none);
  EXPECT_EQ(good.check_err, KErr::none);
  EXPECT_EQ(good.reason, "");
  EXPECT_EQ(good.trusted_by, std::vector<std::string>{"api ima"});
  EXPECT_FALSE(good.ima_record.has_value());

  // One content byte changed: the RSA signature no longer verifies.
  Bytes t = test::slurp(m);
  t[100] ^= 1;
  test::spit(d_ / "tampered.ko", t);
  const Appraisal bad = ima_appraise_modsig(d_ / "tampered.ko", ima, profile("v7.0"));
  EXPECT_FALSE(bad.passes());
  EXPECT_EQ(bad.cause, "invalid-signature");
  EXPECT_EQ(bad.err, KErr::eacces);
  EXPECT_EQ(bad.check_err, KErr::ekeyrejected);
  EXPECT_TRUE(bad.reason.starts_with("ima_modsig_verify: ")) << bad.reason;

  // The d-modsig digest listed: ima_check_blacklist refuses first, and its ima-buf record
  // d-ng | n-ng "blacklisted-hash" | buf = the digest.
  test::spit(d_ / "list", "\"bin:" + side + "\"\n");
  const TrustStore listed = TrustStore::load(TrustSources{{file("k.crt")}, {d_ / "list"}, {}, {}}, profile("v7.0"));
  const Appraisal bl = ima_appraise_modsig(m, listed, profile("v7.0"));
  EXPECT_EQ(bl.cause, "blacklisted");
  EXPECT_EQ(bl.err, KErr::eacces);
  EXPECT_EQ(bl.check_err, KErr::eperm);
  EXPECT_EQ(bl.reason, "ima_check_blacklist: bin:" + side + " is listed");
  EXPECT_EQ(bl.blacklist_entry, "bin:" + side);
  ASSERT_TRUE(bl.ima_record.has_value());
  const Bytes buf = from_hex(side);
  const Bytes rec =
      template_data({field("sha256", tool_hash("sha256sum", buf)), cat({str("blacklisted-hash"), Bytes{0}}), buf});
  EXPECT_EQ(bl.ima_record->name, "ima-buf");
  EXPECT_EQ(bl.ima_record->data, rec);
  EXPECT_EQ(to_hex(bl.ima_record->sha1), tool_hash("sha1sum", rec));
  EXPECT_EQ(to_hex(bl.ima_record->sha256), tool_hash("sha256sum", rec));

  // Unsigned: no modsig, no security.ima.
  test::spit(d_ / "plain.ko", test::pattern(3000));
  const Appraisal none = ima_appraise_modsig(d_ / "plain.ko", ima, profile("v7.0"));
  EXPECT_EQ(none.cause, "no-modsig");
  EXPECT_EQ(none.check_err, KErr::enoent);
  EXPECT_EQ(none.reason, "ima_read_modsig: no appended signature; no security.ima either (IMA-signature-required)");

  // xz with a CRC64 check: 7.x fails in module_decompress (EINVAL); v6 sees the compressed file.
  auto r = test::run("cp " + q(m) + " " + q(d_ / "c.ko") + " && xz -C crc64 " + q(d_ / "c.ko"));
  ASSERT_EQ(r.status, 0) << r.err;
  // What finit_module refuses with EINVAL before IMA appraises anything.
  auto expect_einval_first = [&](const std::string& file, const TrustStore& t, const std::string& cause,
                                 const std::string& reason) {
    const Appraisal a = ima_appraise_modsig(file, t, profile("v7.0"));
    EXPECT_EQ(a.cause, cause) << file;
    EXPECT_EQ(a.err, KErr::einval) << file;
    EXPECT_EQ(a.check_err, KErr::einval) << file;
    EXPECT_EQ(a.reason, reason) << file;
  };
  expect_einval_first(d_ / "c.ko.xz", ima, "decompress",
                      "module_decompress: xz stream uses a CRC64 check; the kernel's xz decoder accepts only CRC32 or "
                      "none, so in-kernel decompression (module_decompress) fails with EINVAL: recompress with `xz "
                      "--check=crc32`; IMA never appraises the image");
  // An empty file: kernel_read_file() refuses it before IMA is asked, and before the
  // blacklist (its file hash is listed) is consulted.
  test::spit(d_ / "empty.ko", Bytes{});
  test::spit(d_ / "list-empty", "\"bin:" + tool_hash("sha256sum", Bytes{}) + "\"\n");
  const TrustStore empty_listed =
      TrustStore::load(TrustSources{{file("k.crt")}, {d_ / "list-empty"}, {}, {}}, profile("v7.0"));
  expect_einval_first(d_ / "empty.ko", empty_listed, "empty",
                      "the module file is empty (kernel_read_file: EINVAL before IMA's appraisal and the signature "
                      "check); IMA never appraises it");
  // A stream no decompressor accepts is the same prediction, not an input error.
  test::spit(d_ / "bad.ko.xz", Bytes{0xfd, '7', 'z', 'X', 'Z', 0, 1, 2, 3, 4, 5, 6});
  const Appraisal corrupt = ima_appraise_modsig(d_ / "bad.ko.xz", ima, profile("v7.0"));
  EXPECT_EQ(corrupt.cause, "decompress");
  EXPECT_EQ(corrupt.err, KErr::einval);
  EXPECT_TRUE(corrupt.reason.starts_with("module_decompress: xz-compressed module: ")) << corrupt.reason;
  const TrustStore ima6 = TrustStore::load(TrustSources{{file("k.crt")}, {}, {}, {}}, profile("v6"));
  const Appraisal c6 = ima_appraise_modsig(d_ / "c.ko.xz", ima6, profile("v6"));
  EXPECT_EQ(c6.cause, "no-modsig");
  EXPECT_EQ(c6.check_err, KErr::enoent);
  // And the digest view agrees: under v6 IMA has no modsig for it.
  const DigestView v6 = digest_module_file(d_ / "c.ko.xz", profile("v6"));
  EXPECT_TRUE(v6.digests.compressed);
  EXPECT_EQ(v6.digests.kernel.status, KErr::enoent);
  EXPECT_EQ(v6.digests.kernel.reason, "under v6 IMA reads the compressed file, which has no appended signature");
  EXPECT_EQ(v6.bin_source, DigestView::BinSource::ima_hash);
  EXPECT_EQ(v6.bin_entry, "bin:" + tool_hash("sha256sum", test::slurp(d_ / "c.ko.xz")));

  EXPECT_THROW(ima_appraise_modsig(d_ / "missing.ko", ima, profile("v7.0")), IoError);
  EXPECT_THROW(ima_appraise_modsig(m, ima, profile("v7.0"), {"sha7", 1u << 30}), UsageError);
}
