// IMA in the kernel's own byte order (issue 27): a big-endian kernel (s390x) writes the u32
// fields of its binary measurement list and hashes each template field's length big-endian,
// unless it boots with ima_canonical_fmt (security/integrity/ima/ima_fs.c
// ima_measurements_show and default_canonical_fmt_setup, ima_crypto.c
// ima_calc_field_array_hash_tfm, ima_template_lib.c ima_show_template_data_binary, Linux
// 7.2.13).  Every template hash is checked against sha1sum/sha256sum of the bytes spelled out.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include <modsign/ima.hpp>
#include <modsign/kernel_config.hpp>

#include "digest/ima_fs.hpp"
#include "digest/ima_template_lib.hpp"
#include "test_support.hpp"

using namespace modsign;
using crypto::HashAlgo;
using test::q;

namespace {
using test::tool_hash;
Bytes str(const std::string& s) { return Bytes(s.begin(), s.end()); }
cms::KernelModel profile(bool big, bool canonical) {
  cms::KernelModel p = cms::KernelModel::v7(2);
  p.big_endian = big;
  p.ima_canonical_fmt = canonical;
  return p;
}
// The blacklisted-hash ima-buf record of test_ima.cpp's BufferTemplateMatchesTheKernels-
// BlacklistedHashRecords, whose little-endian form Linux 7.2.13 recorded (x86_64).
const char* const kDigest = "5c0b666bd81961e2bcd771ec639e599348287c5666b35c2a805f2855f57be9f5";
std::string buf_fields(const char* len_dng, const char* len_name, const char* len_buf) {
  return std::string(len_dng) + "7368613235363a00" + tool_hash("sha256sum", from_hex(kDigest)) + len_name +
         "626c61636b6c69737465642d6861736800" + len_buf + kDigest;
}
}  // namespace

TEST(ImaByteOrder, OnlyABigEndianKernelWithoutCanonicalFmtIsBigEndian) {
  EXPECT_FALSE(digest::ima_list_big_endian(profile(false, false)));
  EXPECT_FALSE(digest::ima_list_big_endian(profile(false, true)));  // a no-op on little-endian
  EXPECT_TRUE(digest::ima_list_big_endian(profile(true, false)));
  EXPECT_FALSE(digest::ima_list_big_endian(profile(true, true)));
  KernelProfile pub;
  EXPECT_EQ(pub.byte_order(), ByteOrder::little);
  EXPECT_EQ(pub.ima_byte_order(), ByteOrder::little);
  pub.set_byte_order(ByteOrder::big);
  EXPECT_EQ(pub.ima_byte_order(), ByteOrder::big);
  pub.set_ima_canonical_fmt(true);
  EXPECT_EQ(pub.ima_byte_order(), ByteOrder::little);
  EXPECT_EQ(byte_order_name(ByteOrder::big), "big-endian");
}

TEST(ImaByteOrder, BufferTemplateLengthsInTheKernelsOrder) {
  const Bytes digest = from_hex(kDigest);
  const auto le = digest::ima_buffer_template("blacklisted-hash", digest, HashAlgo::sha256, profile(false, false));
  const auto be = digest::ima_buffer_template("blacklisted-hash", digest, HashAlgo::sha256, profile(true, false));
  const auto canon = digest::ima_buffer_template("blacklisted-hash", digest, HashAlgo::sha256, profile(true, true));
  EXPECT_EQ(to_hex(le.data), buf_fields("28000000", "11000000", "20000000"));
  EXPECT_EQ(to_hex(be.data), buf_fields("00000028", "00000011", "00000020"));
  EXPECT_EQ(to_hex(le.sha1), "19ed02e0158d44d8f0e513131461d2f83daa9f97");  // as Linux 7.2.13 x86_64 recorded
  EXPECT_EQ(to_hex(be.sha1), tool_hash("sha1sum", be.data));
  EXPECT_EQ(to_hex(be.sha256), tool_hash("sha256sum", be.data));
  EXPECT_NE(be.sha1, le.sha1);
  // ima_canonical_fmt on the big-endian kernel: what the little-endian kernel records.
  EXPECT_EQ(canon.data, le.data);
  EXPECT_EQ(canon.sha1, le.sha1);
  // The fields themselves do not change.
  ASSERT_EQ(be.fields.size(), le.fields.size());
  for (std::size_t i = 0; i < be.fields.size(); ++i) EXPECT_EQ(be.fields[i].data, le.fields[i].data);
}

TEST(ImaByteOrder, ImaNgAndImaSigTemplatesOnABigEndianKernel) {
  const Bytes file = str("hello\n");
  const std::string dng =
      "7368613235363a00"
      "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";
  auto be = digest::ima_template("ima-sig", "/a", file, Bytes{0x03, 0x02, 0x04, 0xaa}, profile(true, false));
  ASSERT_TRUE(be.ok());
  const std::string want = "00000028" + dng +
                           "00000003"
                           "2f6100"
                           "00000004"
                           "030204aa";
  EXPECT_EQ(to_hex(be->data), want);
  EXPECT_EQ(to_hex(be->sha1), tool_hash("sha1sum", from_hex(want)));
  EXPECT_EQ(to_hex(be->sha256), tool_hash("sha256sum", from_hex(want)));
  auto canon = digest::ima_template("ima-sig", "/a", file, Bytes{0x03, 0x02, 0x04, 0xaa}, profile(true, true));
  EXPECT_EQ(to_hex(canon->data), "28000000" + dng +
                                     "03000000"
                                     "2f6100"
                                     "04000000"
                                     "030204aa");
  // The public facade takes the order from the KernelProfile.
  KernelProfile pub = *KernelProfile::parse("v7.2");
  pub.set_byte_order(ByteOrder::big);
  auto api = ima_template("ima-ng", "/a", file, std::nullopt, pub);
  ASSERT_TRUE(api.ok());
  EXPECT_EQ(to_hex(api->data), "00000028" + dng +
                                   "00000003"
                                   "2f6100");
}

namespace {
// One record of a binary measurement list, its u32 fields in `big` order, its digest the
// SHA-1 of `data` by sha1sum (or all zero: a violation).
void put(Bytes& out, std::uint32_t v, bool big) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * (big ? 3 - i : i))));
}
Bytes field_data(bool big) {
  Bytes d;
  const Bytes dng = from_hex("7368613235363a00" + std::string(64, '1'));
  const Bytes name = str(std::string("/usr/bin/true") + '\0');
  put(d, static_cast<std::uint32_t>(dng.size()), big);
  d.insert(d.end(), dng.begin(), dng.end());
  put(d, static_cast<std::uint32_t>(name.size()), big);
  d.insert(d.end(), name.begin(), name.end());
  return d;
}
Bytes record(bool big, const Bytes& data, bool violation = false) {
  Bytes r;
  put(r, 10, big);
  const Bytes digest = violation ? Bytes(20, 0) : from_hex(tool_hash("sha1sum", data));
  r.insert(r.end(), digest.begin(), digest.end());
  put(r, 6, big);
  for (char c : std::string("ima-ng")) r.push_back(static_cast<std::uint8_t>(c));
  put(r, static_cast<std::uint32_t>(data.size()), big);
  r.insert(r.end(), data.begin(), data.end());
  return r;
}
}  // namespace

TEST(ImaByteOrder, MeasurementListReadInTheOrderItsFirstRecordShows) {
  const Bytes bd = field_data(true);
  Bytes list = record(true, bd);
  const Bytes second = record(true, bd, true);
  list.insert(list.end(), second.begin(), second.end());
  auto recs = digest::parse_measurement_list(list, HashAlgo::sha1);
  ASSERT_TRUE(recs.ok()) << recs.error().message;
  ASSERT_EQ(recs->size(), 2u);
  EXPECT_EQ((*recs)[0].byte_order, ByteOrder::big);
  EXPECT_EQ((*recs)[0].pcr, 10u);
  EXPECT_EQ((*recs)[0].template_name, "ima-ng");
  EXPECT_EQ((*recs)[0].data, bd);
  EXPECT_FALSE((*recs)[0].template_hash_mismatch());
  EXPECT_EQ((*recs)[0].file_name, "/usr/bin/true");
  EXPECT_TRUE((*recs)[1].violation);
  EXPECT_EQ((*recs)[1].file_name, "/usr/bin/true");
  // The same records little-endian (a little-endian kernel, or ima_canonical_fmt): the
  // template hash covers the lengths, so it differs; both replay to their own PCR.
  const Bytes ld = field_data(false);
  auto le = digest::parse_measurement_list(record(false, ld), HashAlgo::sha1);
  ASSERT_TRUE(le.ok());
  EXPECT_EQ((*le)[0].byte_order, ByteOrder::little);
  EXPECT_FALSE((*le)[0].template_hash_mismatch());
  EXPECT_NE((*le)[0].digest, (*recs)[0].digest);
  // Told the wrong order, the list is refused at its first record.
  auto wrong = digest::parse_measurement_list(list, HashAlgo::sha1, ByteOrder::little);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, KErr::ebadmsg);
  EXPECT_EQ(wrong.error().message, "record 1 at offset 0: template name length 100663296 (read little-endian)");
  // A later record in the other order is refused too (one kernel writes one order).
  Bytes mixed = record(false, ld);
  const Bytes other = record(true, bd);
  mixed.insert(mixed.end(), other.begin(), other.end());
  auto m = digest::parse_measurement_list(mixed, HashAlgo::sha1);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message, "record 2 at offset " + std::to_string(record(false, ld).size()) +
                                   ": template name length 100663296 (read little-endian)");
  // Neither order gives a name length of 1-255: not a list.
  Bytes junk(4 + 20 + 4 + 8, 0x41);
  auto j = digest::parse_measurement_list(junk, HashAlgo::sha1);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error().message,
            "record 1 at offset 0: template name length 0x41414141 (as stored) is 1-255 in neither byte order (not a "
            "binary measurement list with 20-byte sha1 template hashes)");
}

TEST(ImaByteOrder, CliReplaySaysTheOrderAndTemplateTakesIt) {
  test::TempDir d;
  test::spit(d / "be", record(true, field_data(true)));
  auto r = test::run(test::modsign_cli() + " ima replay " + q(d / "be"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("1 record, 0 violations, 0 template hash mismatches (big-endian list, as its first record "
                       "says)\n"),
            std::string::npos)
      << r.out;
  r = test::run(test::modsign_cli() + " ima replay --json --byte-order big " + q(d / "be"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["byte_order"], "big-endian");
  r = test::run(test::modsign_cli() + " ima replay --byte-order little " + q(d / "be"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + (d / "be") +
                       ": record 1 at offset 0: template name length 100663296 (read "
                       "little-endian)\n");
  EXPECT_EQ(r.out, "");
  // A PCR no policy can name (ima_policy.c INVALID_PCR: 0-63): not a kernel's list.
  Bytes pcr = record(true, field_data(true));
  pcr[0] = pcr[1] = pcr[2] = pcr[3] = 0xff;
  test::spit(d / "pcr", pcr);
  r = test::run(test::modsign_cli() + " ima replay " + q(d / "pcr"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + (d / "pcr") +
                       ": record 1 at offset 0: PCR 4294967295 (read big-endian): no kernel "
                       "measures into it (a policy's pcr= is 0-63, ima_policy.c INVALID_PCR)\n");
  EXPECT_EQ(r.out, "");
  pcr[0] = pcr[1] = pcr[2] = 0;
  pcr[3] = 63;
  test::spit(d / "pcr", pcr);
  EXPECT_EQ(test::run(test::modsign_cli() + " ima replay " + q(d / "pcr")).status, 0);

  test::spit(d / "f", str("hello\n"));
  // Without --kernel-arch the kernel is x86_64's, which is never big-endian.
  r = test::run(test::modsign_cli() + " ima template --template ima-ng --path /a --byte-order big " + q(d / "f"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "modsign: --byte-order big: an x86_64 kernel is little-endian (the default --kernel-arch; give "
            "--kernel-arch s390x or arm64)\n");
  EXPECT_EQ(r.out, "");
  r = test::run(test::modsign_cli() +
                " ima template --json --template ima-ng --path /a --kernel-arch arm64 "
                "--byte-order big " +
                q(d / "f"));
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const std::string want =
      "00000028"
      "7368613235363a00"
      "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
      "00000003"
      "2f6100";
  EXPECT_EQ(j["template_data"], want);
  EXPECT_EQ(j["byte_order"], "big-endian");
  EXPECT_EQ(j["ima_canonical_fmt"], false);
  EXPECT_EQ(j["field_length_order"], "big-endian");
  EXPECT_EQ(j["template_hash_sha1"], tool_hash("sha1sum", from_hex(want)));
  r = test::run(test::modsign_cli() +
                " ima template --template ima-ng --path /a --kernel-arch arm64 --byte-order big "
                "--ima-canonical-fmt " +
                q(d / "f"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "template: ima-ng (kernel v7.2, arm64, big-endian, ima_canonical_fmt)");
  r = test::run(test::modsign_cli() + " ima template --byte-order middle " + q(d / "f"));
  EXPECT_EQ(r.status, 2);
}

// securityfs shows binary_runtime_measurements with size 0 (a seq_file), as procfs shows its
// files: such a list is read to its end, not taken as empty.  /proc/version is no list, so
// what was read is refused, naming its first bytes.
TEST(ImaByteOrder, ReplayReadsAFileWhoseSizeShowsZero) {
  const std::string version = test::sh("cat /proc/version");
  ASSERT_GT(version.size(), 32u);
  auto r = test::run(test::modsign_cli() + " ima replay /proc/version");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "");
  const std::string want = "modsign: /proc/version: record 1 at offset 0: template name length 0x" +
                           to_hex(Bytes(version.begin() + 24, version.begin() + 28)) + " (as stored)";
  EXPECT_EQ(r.err.substr(0, want.size()), want) << r.err;
  // --pcrs reads the same way: sysfs shows 4096 bytes for a few (TPM 1.2's
  // /sys/class/tpm/tpm0/pcrs; here /sys/devices/system/cpu/online, no PCR values), procfs 0.
  test::TempDir d;
  test::spit(d / "list", Bytes{});
  for (const std::string pseudo : {"/sys/devices/system/cpu/online", "/proc/version"}) {
    const std::string first = test::sh("head -n 1 " + pseudo);
    r = test::run(test::modsign_cli() + " ima replay --pcrs " + pseudo + " " + q(d / "list"));
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.err, "modsign: " + pseudo + ": line 1: not a PCR value: " + first.substr(0, first.find('\n')) + "\n");
  }
}

// kernel_profile_of(): CONFIG_CPU_BIG_ENDIAN=y (every s390 configuration sets it) is a
// big-endian kernel.
TEST(ImaByteOrder, KernelConfigGivesTheByteOrder) {
  test::TempDir d;
  test::spit(d / "s390.config", std::string("# Linux/s390 7.2.13 Kernel Configuration\nCONFIG_S390=y\n"
                                            "CONFIG_CPU_BIG_ENDIAN=y\nCONFIG_MODULE_SIG=y\n"));
  test::spit(d / "x86.config", std::string("# Linux/x86 7.2.13 Kernel Configuration\nCONFIG_X86_64=y\n"
                                           "CONFIG_MODULE_SIG=y\n"));
  EXPECT_EQ(kernel_profile_of(read_kernel_config(d / "s390.config")).byte_order(), ByteOrder::big);
  EXPECT_EQ(kernel_profile_of(read_kernel_config(d / "x86.config")).byte_order(), ByteOrder::little);
  EXPECT_FALSE(kernel_profile_of(read_kernel_config(d / "s390.config")).ima_canonical_fmt());
  // The machine, from CONFIG_S390 and CONFIG_ARM64.
  test::spit(d / "arm64.config", std::string("# Linux/arm64 7.2.13 Kernel Configuration\nCONFIG_ARM64=y\n"
                                             "CONFIG_MODULE_SIG=y\n"));
  EXPECT_EQ(kernel_profile_of(read_kernel_config(d / "s390.config")).machine(), Machine::s390x);
  EXPECT_EQ(kernel_profile_of(read_kernel_config(d / "x86.config")).machine(), Machine::x86_64);
  EXPECT_EQ(kernel_profile_of(read_kernel_config(d / "arm64.config")).machine(), Machine::arm64);
  EXPECT_EQ(kernel_profile_of(read_kernel_config(d / "arm64.config")).byte_order(), ByteOrder::little);
}
