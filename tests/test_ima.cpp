// IMA template data, template hashes and measurement-list replay, confirmed with the
// sha1sum / sha256sum command-line tools.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "asn1/der.hpp"
#include "cms/signed_data.hpp"
#include "crypto/crypto.hpp"
#include "digest/ima.hpp"
#include "module/compression.hpp"
#include "module/module_signature.hpp"
#include "test_support.hpp"

using namespace modsign;
using cms::KernelModel;
using crypto::HashAlgo;
using test::q;

namespace {
using test::tool_hash;
void put_u32le(Bytes& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
Bytes str(const std::string& s) { return Bytes(s.begin(), s.end()); }
}  // namespace

TEST(Ima, ImaNgTemplateDataSpelledOut) {
  const Bytes file = str("hello\n");
  auto e = digest::ima_template("ima-ng", "/a", file, std::nullopt, KernelModel::v7_0());
  ASSERT_TRUE(e.ok());
  // u32le 40 | "sha256:" NUL SHA-256("hello\n") | u32le 3 | "/a" NUL
  const std::string expected =
      "28000000"
      "7368613235363a00"
      "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
      "03000000"
      "2f6100";
  EXPECT_EQ(to_hex(e->data), expected);
  EXPECT_EQ(to_hex(e->sha1), tool_hash("sha1sum", from_hex(expected)));
  EXPECT_EQ(to_hex(e->sha256), tool_hash("sha256sum", from_hex(expected)));
  // ima-sig: the sig field carries security.ima only for a 0x03 (digital signature v2) value.
  auto s = digest::ima_template("ima-sig", "/a", file, Bytes{0x03, 0x02, 0x04, 0xaa}, KernelModel::v7_0());
  EXPECT_EQ(to_hex(s->data), expected +
                                 "04000000"
                                 "030204aa");
  // A digest-ng value naming sm3 (17): the kernel hashes with sm3 (ima_alloc_tfm has no
  // fallback below HASH_ALGO__LAST), which modsign cannot compute: no record is invented.
  auto h = digest::ima_template("ima-sig", "/a", file, Bytes{0x04, 0x11}, KernelModel::v7_0());
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().code, KErr::enopkg);
  // One naming no enum hash_algo value (48): ima_get_hash_algo falls back to ima_hash.
  auto g = digest::ima_template("ima-sig", "/a", file, Bytes{0x04, 0x30}, KernelModel::v7_0());
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(to_hex(g->data), expected + "00000000");
  EXPECT_EQ(g->notes.size(), 1u);
  EXPECT_FALSE(digest::ima_template("ima-foo", "/a", file, std::nullopt, KernelModel::v7_0()).ok());
}

TEST(Ima, ImaModsigFieldsPerProfile) {
  const Bytes content = test::pattern(4000);
  auto key = crypto::PrivateKey::generate(crypto::KeyAlgo::rsa, 2048);
  auto cert = crypto::Certificate::self_signed(key, "CN=ima", 10).value();
  cms::BuildOptions o;
  o.digest = HashAlgo::sha256;
  const Bytes cms_der = cms::build_detached(key, cert, content, o).value();
  const Bytes file = module::append_signature(content, cms_der);
  auto e = digest::ima_template("ima-modsig", "/m.ko", file, std::nullopt, KernelModel::v7_0());
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_EQ(e->fields.size(), 5u);
  EXPECT_EQ(to_hex(e->fields[0].data), "7368613235363a00" + tool_hash("sha256sum", file));     // whole file
  EXPECT_EQ(to_hex(e->fields[3].data), "7368613235363a00" + tool_hash("sha256sum", content));  // d-modsig
  EXPECT_EQ(e->fields[4].data, cms_der);
  EXPECT_EQ(to_hex(e->sha1), tool_hash("sha1sum", e->data));
  // ML-DSA without signedAttrs on 7.0: no d-modsig digest, no entry; with the side SHA-256 there is.
  auto mk = crypto::PrivateKey::generate(crypto::KeyAlgo::ml_dsa_65);
  auto mc = crypto::Certificate::self_signed(mk, "CN=ima ml", 10).value();
  const Bytes mfile = module::append_signature(content, cms::build_detached(mk, mc, content, {}).value());
  auto none = digest::ima_template("ima-modsig", "/m.ko", mfile, std::nullopt, KernelModel::v7_0());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, KErr::einval);
  auto side =
      digest::ima_template("ima-modsig", "/m.ko", mfile, std::nullopt, KernelModel::v7_0(), HashAlgo::sha256, true);
  ASSERT_TRUE(side.ok());
  EXPECT_EQ(to_hex(side->fields[3].data), "7368613235363a00" + tool_hash("sha256sum", content));
}

TEST(Ima, MeasurementListRoundTripAndReplay) {
  // Three records in a SHA-1 list: ima-ng, ima-modsig with a 3,318-byte sig field and a
  // 5 KiB modsig field, and a violation (all-zero digest).
  auto field = [](Bytes& out, const Bytes& f) {
    put_u32le(out, static_cast<std::uint32_t>(f.size()));
    out.insert(out.end(), f.begin(), f.end());
  };
  auto rec = [](std::uint32_t pcr, const Bytes& digest, const std::string& name, const Bytes& data) {
    Bytes r;
    put_u32le(r, pcr);
    r.insert(r.end(), digest.begin(), digest.end());
    put_u32le(r, static_cast<std::uint32_t>(name.size()));
    r.insert(r.end(), name.begin(), name.end());
    put_u32le(r, static_cast<std::uint32_t>(data.size()));
    r.insert(r.end(), data.begin(), data.end());
    return r;
  };
  Bytes ng;
  field(ng, from_hex("7368613235363a00" + std::string(64, '1')));
  field(ng, str(std::string("/bin/true") + std::string(1, '\0')));
  Bytes ms;
  field(ms, from_hex("7368613235363a00" + std::string(64, '2')));
  field(ms, str(std::string("/lib/modules/x.ko") + std::string(1, '\0')));
  field(ms, Bytes(3318, 0x03));
  field(ms, from_hex("7368613531323a00" + std::string(128, '3')));
  field(ms, Bytes(5120, 0x30));
  const Bytes h1 = from_hex(tool_hash("sha1sum", ng)), h2 = from_hex(tool_hash("sha1sum", ms));
  Bytes list = rec(10, h1, "ima-ng", ng);
  const Bytes r2 = rec(10, h2, "ima-modsig", ms);
  list.insert(list.end(), r2.begin(), r2.end());
  const Bytes r3 = rec(10, Bytes(20, 0), "ima-ng", ng);
  list.insert(list.end(), r3.begin(), r3.end());

  auto recs = digest::parse_measurement_list(list, HashAlgo::sha1);
  ASSERT_TRUE(recs.ok()) << recs.error().message;
  ASSERT_EQ(recs->size(), 3u);
  EXPECT_EQ((*recs)[1].template_name, "ima-modsig");
  EXPECT_EQ((*recs)[1].data, ms);
  EXPECT_EQ((*recs)[0].recomputed, h1);
  EXPECT_EQ((*recs)[1].recomputed, h2);
  EXPECT_TRUE((*recs)[2].violation);
  EXPECT_EQ((*recs)[0].file_name, "/bin/true");
  EXPECT_EQ((*recs)[1].file_name, "/lib/modules/x.ko");
  EXPECT_EQ((*recs)[2].file_name, "/bin/true");
  // PCR-10 = SHA1(SHA1(SHA1(0^20 ‖ h1) ‖ h2) ‖ FF^20), step by step with sha1sum.
  Bytes pcr(20, 0);
  for (const Bytes& ext : {h1, h2, Bytes(20, 0xff)}) {
    Bytes buf = pcr;
    buf.insert(buf.end(), ext.begin(), ext.end());
    pcr = from_hex(tool_hash("sha1sum", buf));
  }
  auto pcrs = digest::replay_pcrs(*recs, HashAlgo::sha1);
  EXPECT_EQ(to_hex(pcrs.at(10)), to_hex(pcr));

  // The CLI: matching expected PCRs exit 0; a wrong one exit 1; a tampered record is named.
  test::TempDir d;
  test::spit(d / "list", list);
  test::spit(d / "pcrs", "PCR-10: " + to_hex(pcr) + "\n");
  auto r = test::run(test::modsign_cli() + " ima replay --pcrs " + q(d / "pcrs") + " " + q(d / "list"));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PCR-10: " + to_hex(pcr) + "  matches"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 records, 1 violation, 0 template hash mismatches"), std::string::npos) << r.out;
  // The violation record is named (index, offset, file); --strict makes it a failure.
  const std::string off3 = std::to_string(list.size() - r3.size());
  EXPECT_NE(r.out.find("record 3 (ima-ng, offset " + off3 + "): violation: /bin/true\n"), std::string::npos) << r.out;
  r = test::run(test::modsign_cli() + " ima replay --strict --pcrs " + q(d / "pcrs") + " " + q(d / "list"));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  r = test::run(test::modsign_cli() + " ima replay --json " + q(d / "list"));
  EXPECT_EQ(r.status, 0);
  {
    auto jv = nlohmann::json::parse(r.out);
    EXPECT_EQ(jv["violations"], 1);
    EXPECT_EQ(jv["violation_records"], nlohmann::json::parse("[{\"record\":3,\"offset\":" + off3 +
                                                             ",\"template\":\"ima-ng\",\"file\":\"/bin/true\"}]"));
  }
  test::spit(d / "pcrs", "10: " + std::string(40, '0') + "\n");
  EXPECT_EQ(test::run(test::modsign_cli() + " ima replay --pcrs " + q(d / "pcrs") + " " + q(d / "list")).status, 1);
  Bytes tampered = list;
  tampered[tampered.size() - 100] ^= 1;  // inside the third record's data: its digest is a violation, so
  tampered[200] ^= 1;                    // also change the second record's data
  test::spit(d / "t", tampered);
  r = test::run(test::modsign_cli() + " ima replay --json " + q(d / "t"));
  EXPECT_EQ(r.status, 1);
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["template_hash_mismatches"].size(), 1u);
  EXPECT_EQ(j["template_hash_mismatches"][0]["record"], 2);
}

TEST(Ima, BadMeasurementLists) {
  Bytes r;
  put_u32le(r, 10);
  r.insert(r.end(), 20, 0x11);
  put_u32le(r, 6);
  const std::string n = "ima-ng";
  r.insert(r.end(), n.begin(), n.end());
  put_u32le(r, 1000);  // data length beyond the file
  r.insert(r.end(), 10, 0);
  auto e = digest::parse_measurement_list(r, HashAlgo::sha1);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, KErr::ebadmsg);
  EXPECT_EQ(e.error().message,
            "record 1 at offset 0: template data length 1000 (read little-endian) beyond the end of the list");
  auto t = digest::parse_measurement_list(ByteView(r).first(10), HashAlgo::sha1);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "record 1 at offset 0: truncated record header");
  // A field length beyond its template data.
  Bytes f;
  put_u32le(f, 10);
  f.insert(f.end(), 20, 0x11);
  put_u32le(f, 6);
  f.insert(f.end(), n.begin(), n.end());
  put_u32le(f, 8);
  put_u32le(f, 99);
  put_u32le(f, 0);
  auto b = digest::parse_measurement_list(f, HashAlgo::sha1);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message, "record 1 at offset 0: field length 99 (read little-endian) beyond the template data");
  // CLI: exit 3, nothing written, and an unknown template for `ima template` is a usage error.
  test::TempDir d;
  test::spit(d / "bad", r);
  auto c = test::run(test::modsign_cli() + " ima replay " + q(d / "bad"));
  EXPECT_EQ(c.status, 3);
  EXPECT_EQ(c.err,
            "modsign: " + (d / "bad") +
                ": record 1 at offset 0: template data length 1000 (read little-endian) beyond the end of the list\n");
  test::spit(d / "f", str("x"));
  c = test::run(test::modsign_cli() + " ima template --template ima-nope " + q(d / "f"));
  EXPECT_EQ(c.status, 2);
  EXPECT_EQ(c.err,
            "modsign: --template: unknown template 'ima-nope' (ima-ng, ima-sig, ima-modsig, ima-ngv2, ima-sigv2)\n");
  EXPECT_EQ(c.out, "");
  EXPECT_EQ(test::run("ls -A " + q(d.path())).out, "bad\nf\n");
}

TEST(Ima, KernelFieldRules) {
  const Bytes file = str("hello\n");
  // n-ng: spaces become '_' (ima_write_template_field_data, DATA_FMT_STRING).
  auto e = digest::ima_template("ima-ng", "/a b", file, std::nullopt, KernelModel::v7_0());
  EXPECT_EQ(to_hex(e->fields[1].data), "2f615f6200");
  // d-ng follows the hash a v2 signature xattr names (hash_algo 6 = sha512).
  const Bytes xattr = from_hex("03020611223344000441424344");
  auto s = digest::ima_template("ima-sig", "/a", file, xattr, KernelModel::v7_0());
  EXPECT_EQ(to_hex(s->fields[0].data),
            "7368613531323a00"
            "e7c22b994c59d9cf2b48e549b1e24666636045930d3da7c1acb299d1c3b7f931f94aae41edda2c2b207a36e10f8bcb8d45223e5487"
            "8f5b316e7ce3b6bc019629");
  EXPECT_EQ(s->fields[2].data, xattr);
  // A digest-ng xattr (0x04) names its hash in byte 1 (6 = sha512) and is not a signature.
  auto v = digest::ima_template("ima-sig", "/a", file, from_hex("0406aabb"), KernelModel::v7_0());
  EXPECT_EQ(to_hex(v->fields[0].data).substr(0, 16), "7368613531323a00");
  EXPECT_EQ(to_hex(v->fields[2].data), "");
  // An fs-verity signature (0x06, v3, hash 4 = sha256) is recorded in the sig field.
  auto f = digest::ima_template("ima-sig", "/a", file, from_hex("060304aabbccdd"), KernelModel::v7_0());
  EXPECT_EQ(to_hex(f->fields[2].data), "060304aabbccdd");
  EXPECT_EQ(to_hex(f->fields[0].data).substr(0, 16), "7368613235363a00");
}

TEST(Ima, MlDsaOnV6HasNoModsigButAnEntry) {
  // v6 cannot parse the ML-DSA signature: ima_read_modsig fails, IMA has no modsig, and the
  // ima-modsig entry is recorded with empty d-modsig and modsig fields.
  auto mk = crypto::PrivateKey::generate(crypto::KeyAlgo::ml_dsa_44);
  auto mc = crypto::Certificate::self_signed(mk, "CN=v6", 10).value();
  const Bytes content = test::pattern(2000);
  const Bytes file = module::append_signature(content, cms::build_detached(mk, mc, content, {}).value());
  auto e = digest::ima_template("ima-modsig", "/m.ko", file, std::nullopt, KernelModel::v6());
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_TRUE(e->fields[3].data.empty());
  EXPECT_TRUE(e->fields[4].data.empty());
}

TEST(Ima, ExpectedPcrFileFormats) {
  // A one-record SHA-1 list; PCR-10 = SHA1(0^20 ‖ h).
  Bytes data;
  put_u32le(data, 3);
  data.insert(data.end(), {'a', 'b', 'c'});
  const Bytes h = from_hex(tool_hash("sha1sum", data));
  Bytes list;
  put_u32le(list, 10);
  list.insert(list.end(), h.begin(), h.end());
  put_u32le(list, 6);
  list.insert(list.end(), {'i', 'm', 'a', '-', 'n', 'g'});
  put_u32le(list, static_cast<std::uint32_t>(data.size()));
  list.insert(list.end(), data.begin(), data.end());
  Bytes z(20, 0);
  z.insert(z.end(), h.begin(), h.end());
  const std::string pcr = tool_hash("sha1sum", z);
  std::string spaced;
  for (std::size_t i = 0; i < pcr.size(); i += 2) spaced += (i ? " " : "") + pcr.substr(i, 2);
  for (auto& c : spaced) c = static_cast<char>(std::toupper(c));
  test::TempDir d;
  test::spit(d / "list", list);
  auto run = [&](const std::string& pcrs) {
    test::spit(d / "pcrs", pcrs);
    return test::run(test::modsign_cli() + " ima replay --pcrs " + q(d / "pcrs") + " " + q(d / "list"));
  };
  EXPECT_EQ(run("PCR-10: " + pcr + "\n").status, 0);
  EXPECT_EQ(run("PCR-10: " + spaced + "\n").status, 0);  // TPM 1.2 sysfs
  EXPECT_EQ(run("sha1:\n  0 : 0x" + std::string(40, '0') + "\n  10: 0x" + pcr + "\nsha256:\n  10: 0x" +
                std::string(64, 'a') + "\n")
                .status,
            0);  // tpm2_pcrread: only the sha1 section counts
  EXPECT_EQ(run("PCR-10: " + std::string(40, '1') + "\n").status, 1);
  EXPECT_EQ(run("").status, 3);  // nothing to compare
  {
    // An empty list does not "match" an expected PCR-10: it extends none of them (exit 3).
    test::spit(d / "empty", Bytes{});
    test::spit(d / "pcrs", "PCR-10: " + pcr + "\n");
    const auto r = test::run(test::modsign_cli() + " ima replay --pcrs " + q(d / "pcrs") + " " + q(d / "empty"));
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.err, "modsign: " + (d / "pcrs") + ": gives none of the PCRs the list extends (none)\n");
  }
  // A file that names none of the PCRs the list extends compared nothing of the list: exit 3
  // (man page), not "matches" for a PCR-11 of zeros (issue 29) nor a mismatch.
  for (const std::string& other : {std::string(40, '0'), pcr}) {
    const auto r = run("PCR-11: " + other + "\n");
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "modsign: " + (d / "pcrs") + ": gives none of the PCRs the list extends (10)\n");
  }
  // With one the list extends, a PCR it never extends keeps its reset value: compared with zeros.
  EXPECT_EQ(run("PCR-10: " + pcr + "\nPCR-11: " + std::string(40, '0') + "\n").status, 0);
  EXPECT_EQ(run("PCR-10: " + pcr + "\nPCR-11: " + pcr + "\n").status, 1);
  EXPECT_EQ(run("PCR-10: " + pcr.substr(0, 38) + "\n").status, 3);  // not a SHA-1 value
  EXPECT_EQ(run("PCR-10: zz" + pcr + "\n").status, 3);
  EXPECT_EQ(run("PCR-10: " + pcr + "\nPCR-10: " + pcr + "\n").status, 3);
}

// The "blacklisted-hash" ima-buf record of ima_check_blacklist(), spelled out, and against
// the two records Linux 7.2.13 wrote under tools/kernel-conformance (kernel mldsa-ima,
// ima_hash=sha256): one for a modsig digest hit, one for a file-hash hit, whose buffer the
// kernel leaves empty.
TEST(Ima, BufferTemplateMatchesTheKernelsBlacklistedHashRecords) {
  const Bytes digest = from_hex("5c0b666bd81961e2bcd771ec639e599348287c5666b35c2a805f2855f57be9f5");
  auto e = digest::ima_buffer_template("blacklisted-hash", digest, HashAlgo::sha256, KernelModel::v7(2));
  EXPECT_EQ(e.name, "ima-buf");
  ASSERT_EQ(e.fields.size(), 3u);
  EXPECT_EQ(e.fields[0].name, "d-ng");
  EXPECT_EQ(e.fields[1].name, "n-ng");
  EXPECT_EQ(e.fields[2].name, "buf");
  const std::string want =
      "28000000"
      "7368613235363a00" +
      tool_hash("sha256sum", digest) +
      "11000000"
      "626c61636b6c69737465642d6861736800"
      "20000000" +
      to_hex(digest);
  EXPECT_EQ(to_hex(e.data), want);
  EXPECT_EQ(to_hex(e.sha1), "19ed02e0158d44d8f0e513131461d2f83daa9f97");  // as recorded by 7.2.13
  EXPECT_EQ(to_hex(e.sha1), tool_hash("sha1sum", e.data));
  EXPECT_EQ(to_hex(e.sha256), tool_hash("sha256sum", e.data));

  auto empty = digest::ima_buffer_template("blacklisted-hash", {}, HashAlgo::sha256, KernelModel::v7(2));
  EXPECT_EQ(to_hex(empty.data),
            "28000000"
            "7368613235363a00"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
            "11000000"
            "626c61636b6c69737465642d6861736800"
            "00000000");
  EXPECT_EQ(to_hex(empty.sha1), "3ed42715de7bcf37dd7f7d2fc58891c130c1ed47");  // as recorded by 7.2.13

  auto s512 = digest::ima_buffer_template("x", str("ab"), HashAlgo::sha512, KernelModel::v7(2));
  // d-ng: 72 bytes = "sha512:" NUL and the 64-byte SHA-512 of the buffer.
  EXPECT_EQ(to_hex(s512.data).substr(0, 24),
            "48000000"
            "7368613531323a00");
  EXPECT_EQ(to_hex(s512.data).substr(24, 128), tool_hash("sha512sum", str("ab")));
  EXPECT_EQ(to_hex(s512.data).substr(152),
            "02000000"
            "7800"
            "02000000"
            "6162");
}

namespace {
/// A detached ContentInfo(SignedData) with one ML-DSA-65 SignerInfo whose signedAttrs are
/// {contentType id-data, messageDigest SHA-512(content), 1.2.3.4 {OCTET STRING pad}}, the pad
/// chosen so that the signedAttrs DER ([0] header included) is `attrs_len` bytes.  The
/// signature is zeros: IMA measures before it verifies.  Returns {cms, signedAttrs DER}.
std::pair<Bytes, Bytes> mldsa_cms_with_attrs(ByteView content, std::size_t attrs_len) {
  const Bytes oid_sha512 = from_hex("608648016503040203"), oid_data = from_hex("2a864886f70d010701");
  auto attrs_of = [&](std::size_t pad) {
    asn1::Writer w;
    w.add(asn1::context_cons(0), [&](asn1::Writer& a) {
      a.add(asn1::kSequence, [&](asn1::Writer& s) {
        s.oid(from_hex("2a864886f70d010903")).add(asn1::kSet, [&](asn1::Writer& v) { v.oid(oid_data); });
      });
      a.add(asn1::kSequence, [&](asn1::Writer& s) {
        s.oid(from_hex("2a864886f70d010904")).add(asn1::kSet, [&](asn1::Writer& v) {
          v.octet_string(crypto::digest(HashAlgo::sha512, content));
        });
      });
      a.add(asn1::kSequence, [&](asn1::Writer& s) {
        s.oid(from_hex("2a0304")).add(asn1::kSet, [&](asn1::Writer& v) { v.octet_string(Bytes(pad, 0x5a)); });
      });
    });
    return w.take();
  };
  Bytes attrs;
  for (std::size_t pad = 0; pad < attrs_len; ++pad)
    if ((attrs = attrs_of(pad)).size() == attrs_len) break;
  EXPECT_EQ(attrs.size(), attrs_len);
  asn1::Writer ci;
  ci.add(asn1::kSequence, [&](asn1::Writer& c) {
    c.oid(from_hex("2a864886f70d010702")).add(asn1::context_cons(0), [&](asn1::Writer& e) {
      e.add(asn1::kSequence, [&](asn1::Writer& sd) {
        sd.integer(1);
        sd.add(asn1::kSet,
               [&](asn1::Writer& s) { s.add(asn1::kSequence, [&](asn1::Writer& a) { a.oid(oid_sha512); }); });
        sd.add(asn1::kSequence, [&](asn1::Writer& s) { s.oid(oid_data); });
        sd.add(asn1::kSet, [&](asn1::Writer& sis) {
          sis.add(asn1::kSequence, [&](asn1::Writer& si) {
            si.integer(1);
            si.add(asn1::kSequence, [&](asn1::Writer& ias) {
              ias.add(asn1::kSequence, [&](asn1::Writer& name) {
                name.add(asn1::kSet, [&](asn1::Writer& rdn) {
                  rdn.add(asn1::kSequence,
                          [&](asn1::Writer& atv) { atv.oid(from_hex("550403")).tlv(asn1::kUtf8String, str("x")); });
                });
              });
              ias.integer(1);
            });
            si.add(asn1::kSequence, [&](asn1::Writer& a) { a.oid(oid_sha512); });
            si.raw(attrs);
            si.add(asn1::kSequence, [&](asn1::Writer& a) { a.oid(from_hex("608648016503040312")); });
            si.octet_string(Bytes(3309, 0));
          });
        });
      });
    });
  });
  return {ci.take(), attrs};
}
}  // namespace

TEST(Ima, MlDsaSignedAttrsDigestFieldAndTheKernelsBuffer) {
  // pkcs7_get_digest() gives IMA the re-tagged signedAttrs of an ML-DSA signer as the d-modsig
  // digest.  ima_eventdigest_init_common() builds "sha512:" NUL digest in a 201-byte stack
  // buffer: 193 bytes of signedAttrs fill it exactly, 194 overflow it (the 7.2.13 x86_64
  // kernel oopses; tools/kernel-conformance case mldsa65-signedattrs-194-overflow).
  EXPECT_EQ(digest::kImaDigestFieldMax, 201u);
  const Bytes content = test::pattern(3000);
  auto [cms193, attrs193] = mldsa_cms_with_attrs(content, 193);
  auto fits = digest::ima_template("ima-modsig", "/m.ko", module::append_signature(content, cms193), std::nullopt,
                                   KernelModel::v7_0());
  ASSERT_TRUE(fits.ok()) << fits.error().message;
  Bytes retagged = attrs193;
  retagged[0] = 0x31;
  EXPECT_EQ(to_hex(fits->fields[3].data), "7368613531323a00" + to_hex(retagged));
  EXPECT_EQ(fits->fields[3].data.size(), 201u);
  auto [cms194, attrs194] = mldsa_cms_with_attrs(content, 194);
  auto over = digest::ima_template("ima-modsig", "/m.ko", module::append_signature(content, cms194), std::nullopt,
                                   KernelModel::v7_0());
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, KErr::emsgsize);
  const std::string want =
      "d-modsig: 202 bytes (\"sha512:\" NUL and the 194-byte digest pkcs7_get_digest returns, here the re-tagged "
      "signedAttrs) exceed the 201-byte stack buffer of ima_eventdigest_init_common";
  EXPECT_EQ(over.error().message.substr(0, want.size()), want);
  // The ima-ng template has no d-modsig field: the same file is recorded.
  EXPECT_TRUE(digest::ima_template("ima-ng", "/m.ko", module::append_signature(content, cms194), std::nullopt,
                                   KernelModel::v7_0())
                  .ok());
  test::TempDir d;
  test::spit(d / "m.ko", module::append_signature(content, cms194));
  auto r = test::run(test::modsign_cli() + " ima template --path /m.ko " + q(d / "m.ko"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.substr(0, r.err.find(" (")), "modsign: " + (d / "m.ko") + ": EMSGSIZE: d-modsig: 202 bytes");
  // Ordinary signers stay below the limit: `openssl cms -sign -nosmimecap` gives an ML-DSA-65
  // signer contentType, signingTime and messageDigest, 140 bytes (sMIMECapabilities, its
  // default, makes the kernel's parser refuse the message outright: EKEYREJECTED).
  const std::string o = test::openssl();
  ASSERT_EQ(test::run(o + " genpkey -algorithm ML-DSA-65 -out " + q(d / "k.pem")).status, 0);
  ASSERT_EQ(
      test::run(o + " req -x509 -new -key " + q(d / "k.pem") + " -subj /CN=cms -days 10 -out " + q(d / "c.pem")).status,
      0);
  test::spit(d / "content", content);
  ASSERT_EQ(test::run(o + " cms -sign -binary -nosmimecap -md sha512 -nocerts -outform DER -in " + q(d / "content") +
                      " -signer " + q(d / "c.pem") + " -inkey " + q(d / "k.pem") + " -out " + q(d / "s.p7"))
                .status,
            0);
  auto cms = digest::ima_template("ima-modsig", "/m.ko", module::append_signature(content, test::slurp(d / "s.p7")),
                                  std::nullopt, KernelModel::v7_0());
  ASSERT_TRUE(cms.ok()) << cms.error().message;
  EXPECT_EQ(cms->fields[3].data.size(), 8u + 140u);
}

// Past the 201-byte buffer the kernel's behaviour is undefined and the build's: the 7.2.13
// x86_64 build oopses at 202 bytes, the s390x build records fields up to 265 bytes whole (the
// saved return address begins at byte 265 of the field) and kills the task at 266
// (tools/kernel-conformance kernel mldsa-ima-s390x, cases mldsa65-signedattrs-*); the arm64
// build records them up to 209 bytes (x30 saved from byte 209) and oopses at 210
// (kernel mldsa-ima-arm64).
TEST(Ima, DigestFieldOverflowIsTheMachines) {
  EXPECT_EQ(digest::ima_digest_field_survivable(Machine::x86_64), 201u);
  EXPECT_EQ(digest::ima_digest_field_survivable(Machine::arm64), 209u);
  EXPECT_EQ(digest::ima_digest_field_survivable(Machine::s390x), 265u);
  KernelModel s390x = KernelModel::v7_0();
  s390x.machine = Machine::s390x;
  s390x.big_endian = true;
  const Bytes content = test::pattern(3000);
  for (std::size_t attrs_len : {194u, 257u}) {
    SCOPED_TRACE(attrs_len);
    auto [cms, attrs] = mldsa_cms_with_attrs(content, attrs_len);
    const Bytes file = module::append_signature(content, cms);
    auto x86 = digest::ima_template("ima-modsig", "/m.ko", file, std::nullopt, KernelModel::v7_0());
    ASSERT_FALSE(x86.ok());
    EXPECT_EQ(x86.error().code, KErr::emsgsize);
    auto e = digest::ima_template("ima-modsig", "/m.ko", file, std::nullopt, s390x);
    ASSERT_TRUE(e.ok()) << e.error().message;
    Bytes retagged = attrs;
    retagged[0] = 0x31;
    EXPECT_EQ(to_hex(e->fields[3].data), "7368613531323a00" + to_hex(retagged));
    EXPECT_EQ(e->fields[3].data.size(), 8 + attrs_len);
    EXPECT_EQ(to_hex(e->sha1), tool_hash("sha1sum", e->data));
    ASSERT_EQ(e->notes.size(), 1u);
    const std::string want =
        "d-modsig: " + std::to_string(8 + attrs_len) + " bytes (\"sha512:\" NUL and the " + std::to_string(attrs_len) +
        "-byte digest pkcs7_get_digest returns, here the re-tagged signedAttrs) exceed the 201-byte "
        "stack buffer of ima_eventdigest_init_common (security/integrity/ima/ima_template_lib.c): "
        "the kernel writes " +
        std::to_string(8 + attrs_len - 201) + (attrs_len == 194 ? " byte" : " bytes") +
        " past it, short of the saved return address on s390x";
    EXPECT_EQ(e->notes[0].substr(0, want.size()), want);
  }
  auto [cms258, attrs258] = mldsa_cms_with_attrs(content, 258);
  auto over =
      digest::ima_template("ima-modsig", "/m.ko", module::append_signature(content, cms258), std::nullopt, s390x);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, KErr::emsgsize);
  EXPECT_NE(over.error().message.find("266 bytes"), std::string::npos) << over.error().message;
  EXPECT_NE(over.error().message.find("over the saved return address on s390x"), std::string::npos);
  // arm64: 201 bytes of signedAttrs (a 209-byte field) recorded, 202 oops.
  KernelModel arm64 = KernelModel::v7_0();
  arm64.machine = Machine::arm64;
  auto [cms201, attrs201] = mldsa_cms_with_attrs(content, 201);
  auto edge =
      digest::ima_template("ima-modsig", "/m.ko", module::append_signature(content, cms201), std::nullopt, arm64);
  ASSERT_TRUE(edge.ok()) << edge.error().message;
  EXPECT_EQ(edge->fields[3].data.size(), 209u);
  EXPECT_EQ(to_hex(edge->sha1), tool_hash("sha1sum", edge->data));
  ASSERT_EQ(edge->notes.size(), 1u);
  EXPECT_NE(edge->notes[0].find("8 bytes past it, short of the saved return address on arm64"), std::string::npos)
      << edge->notes[0];
  auto [cms202, attrs202] = mldsa_cms_with_attrs(content, 202);
  over = digest::ima_template("ima-modsig", "/m.ko", module::append_signature(content, cms202), std::nullopt, arm64);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, KErr::emsgsize);
  EXPECT_NE(over.error().message.find("210 bytes"), std::string::npos) << over.error().message;
  EXPECT_NE(over.error().message.find("over the saved return address (x30) on arm64"), std::string::npos);

  // The CLI: --kernel-arch s390x (big-endian by default), the note on stderr.
  test::TempDir d;
  auto [cms194, attrs194] = mldsa_cms_with_attrs(content, 194);
  test::spit(d / "m.ko", module::append_signature(content, cms194));
  auto r = test::run(test::modsign_cli() + " ima template --json --kernel-arch s390x --path /m.ko " + q(d / "m.ko"));
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kernel_arch"], "s390x");
  EXPECT_EQ(j["byte_order"], "big-endian");
  EXPECT_EQ(j["fields"][3]["length"], 202);
  EXPECT_EQ(j["notes"].size(), 1u);
  EXPECT_EQ(r.err.substr(0, r.err.find(" (")), "modsign: " + (d / "m.ko") + ": note: d-modsig: 202 bytes");
  EXPECT_EQ(j["side_sha256"], false);
  // An order the architecture cannot have is a usage error; an arm64 kernel may be either.
  r = test::run(test::modsign_cli() + " ima template --kernel-arch s390x --byte-order little " + q(d / "m.ko"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "modsign: --byte-order little: an s390x kernel is big-endian\n");
  EXPECT_EQ(r.out, "");
  r = test::run(test::modsign_cli() + " ima appraise --kernel-arch x86_64 --byte-order big " + q(d / "m.ko"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "modsign: --byte-order big: an x86_64 kernel is little-endian\n");
  r = test::run(test::modsign_cli() + " ima template --json --kernel-arch arm64 --byte-order big --template ima-ng " +
                q(d / "m.ko"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["byte_order"], "big-endian");
  r = test::run(test::modsign_cli() + " ima template --kernel-arch arm64 --path /m.ko " + q(d / "m.ko"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("short of the saved return address on arm64"), std::string::npos) << r.err;
  r = test::run(test::modsign_cli() + " ima template --kernel-arch x86_64 --path /m.ko " + q(d / "m.ko"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("and oopses (x86_64;"), std::string::npos) << r.err;
  r = test::run(test::modsign_cli() + " ima template --kernel-arch ppc64 " + q(d / "m.ko"));
  EXPECT_EQ(r.status, 2);
}

TEST(Ima, CompressedModuleRecordMixesFileHashAndImageModsig) {
  // 7.x loads a .ko.xz with MODULE_INIT_COMPRESSED_FILE: IMA hashes the file as stored on the
  // first (deferred) read and reads the modsig from the decompressed image on the second.
  const Bytes content = test::pattern(5000);
  auto key = crypto::PrivateKey::generate(crypto::KeyAlgo::rsa, 2048);
  auto cert = crypto::Certificate::self_signed(key, "CN=xz", 10).value();
  cms::BuildOptions o;
  o.digest = HashAlgo::sha256;
  const Bytes cms_der = cms::build_detached(key, cert, content, o).value();
  const Bytes xz = module::compress(module::append_signature(content, cms_der), module::Compression::xz);
  test::TempDir d;
  test::spit(d / "m.ko.xz", xz);
  ASSERT_EQ(test::run("xz -t " + q(d / "m.ko.xz")).status, 0);  // a stream xz itself reads
  auto e = digest::ima_template("ima-modsig", "/m.ko.xz", xz, std::nullopt, KernelModel::v7_0());
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(to_hex(e->fields[0].data), "7368613235363a00" + tool_hash("sha256sum", xz));       // d-ng: the .xz
  EXPECT_EQ(to_hex(e->fields[3].data), "7368613235363a00" + tool_hash("sha256sum", content));  // d-modsig: image
  EXPECT_EQ(e->fields[4].data, cms_der);
  // v6: IMA sees the compressed file only, which carries no modsig.
  auto v6 = digest::ima_template("ima-modsig", "/m.ko.xz", xz, std::nullopt, KernelModel::v6());
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->fields[0].data, e->fields[0].data);
  EXPECT_TRUE(v6->fields[3].data.empty());
  EXPECT_TRUE(v6->fields[4].data.empty());
  // A stream module_decompress() refuses: finit_module fails before any measurement.
  Bytes bad = xz;
  bad.resize(bad.size() - 8);
  auto t = digest::ima_template("ima-modsig", "/m.ko.xz", bad, std::nullopt, KernelModel::v7_0());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, KErr::einval);
  const std::string want = "module_decompress() refuses this xz stream (";
  EXPECT_EQ(t.error().message.substr(0, want.size()), want);
}
