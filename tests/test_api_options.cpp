// The public calls the CLI's option checks and file handling go through, with the exact
// messages the CLI prints after "modsign: ": ima_hash_setup (ima_main.c hash_setup),
// KernelProfile::set_waive_mldsa_authattrs, ima_buffer_template (the "blacklisted-hash"
// record, against the one Linux 7.2.13 wrote), read_file and write_file_atomic.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <regex>

#include <modsign/modsign.hpp>

#include "common/file.hpp"
#include "test_support.hpp"

using namespace modsign;

namespace {

KernelProfile profile(const char* name) { return *KernelProfile::parse(name); }

std::string usage_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) { return e.what(); }
  return "(no UsageError)";
}

}  // namespace

TEST(ApiOptions, ImaHashSetupGivesTheKernelName) {
  EXPECT_EQ(ima_hash_setup("sha256", profile("v7.0")), "sha256");
  EXPECT_EQ(ima_hash_setup("SHA512", profile("v6")), "sha512");
  EXPECT_EQ(ima_hash_setup("md5", profile("v6.1")), "md5");
  EXPECT_EQ(ima_hash_setup("sha1", profile("v6.1")), "sha1");
  EXPECT_EQ(ima_hash_setup("Sha3-256", profile("v7.0")), "sha3-256");
  EXPECT_EQ(ima_hash_setup("sha3-512", profile("v6")), "sha3-512");
}

TEST(ApiOptions, ImaHashSetupRefusesUnknownNamesAndSha3On61) {
  EXPECT_EQ(usage_message([] { ima_hash_setup("whirlpool", profile("v7.0")); }),
            "unsupported --ima-hash 'whirlpool' (md5|sha1|sha224|sha256|sha384|sha512|sha3-256|sha3-384|sha3-512)");
  EXPECT_EQ(usage_message([] { ima_hash_setup("", profile("v6")); }),
            "unsupported --ima-hash '' (md5|sha1|sha224|sha256|sha384|sha512|sha3-256|sha3-384|sha3-512)");
  EXPECT_EQ(usage_message([] { ima_hash_setup("SHA3-384", profile("v6.1")); }),
            "--ima-hash sha3-384 does not exist under --kernel v6.1: Linux 6.1-6.6 have no SHA-3 in "
            "hash_algo_name[], so ima_hash=sha3-384 is refused and IMA keeps its default");
  EXPECT_EQ(usage_message([] { ima_hash_setup("sha3-256", profile("6.1")); }),
            "--ima-hash sha3-256 does not exist under --kernel v6.1: Linux 6.1-6.6 have no SHA-3 in "
            "hash_algo_name[], so ima_hash=sha3-256 is refused and IMA keeps its default");
}

TEST(ApiOptions, WaiverExistsOnlyOn7x) {
  for (const char* name : {"v7.0", "v7.1", "v7.2"}) {  // a new user read "v7.0 only" and found v7.2 accepted
    auto v7 = profile(name);
    v7.set_waive_mldsa_authattrs(true);
    EXPECT_TRUE(v7.waive_mldsa_authattrs()) << name;
    v7.set_waive_mldsa_authattrs(false);
    EXPECT_FALSE(v7.waive_mldsa_authattrs()) << name;
  }
  for (const char* name : {"v6", "v6.1"}) {
    auto p = profile(name);
    EXPECT_EQ(usage_message([&] { p.set_waive_mldsa_authattrs(true); }),
              "--waive-mldsa-authattrs exists only for a v7.x --kernel (v7.0, v7.1, v7.2)")
        << name;
    EXPECT_FALSE(p.waive_mldsa_authattrs()) << name;  // left unchanged
    p.set_waive_mldsa_authattrs(false);               // off never throws
    EXPECT_FALSE(p.waive_mldsa_authattrs()) << name;
  }
}

// The record Linux 7.2.13 wrote for a modsig digest hit (tools/kernel-conformance, kernel
// mldsa-ima, ima_hash=sha256), as tests/test_ima.cpp has it through the internal call.
TEST(ApiOptions, BufferTemplateIsTheKernelsBlacklistedHashRecord) {
  const Bytes digest = from_hex("5c0b666bd81961e2bcd771ec639e599348287c5666b35c2a805f2855f57be9f5");
  const TemplateEntry e = ima_buffer_template("blacklisted-hash", digest, "SHA256");
  EXPECT_EQ(e.name, "ima-buf");
  ASSERT_EQ(e.fields.size(), 3u);
  EXPECT_EQ(e.fields[2].name, "buf");
  EXPECT_EQ(e.fields[2].data, digest);
  EXPECT_EQ(to_hex(e.sha1), "19ed02e0158d44d8f0e513131461d2f83daa9f97");
  EXPECT_EQ(to_hex(ima_buffer_template("blacklisted-hash", {}).sha1), "3ed42715de7bcf37dd7f7d2fc58891c130c1ed47");
  EXPECT_EQ(usage_message([] { ima_buffer_template("x", {}, "sha0"); }), "unknown IMA hash 'sha0'");
}

TEST(ApiOptions, WholeFileReadAndAtomicWrite) {
  test::TempDir d;
  const std::string f = d / "out.bin";
  const Bytes data = test::pattern(4097);
  write_file_atomic(f, data, 0600, false);
  EXPECT_EQ(read_file(f), data);
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(test::slurp(f), data);
  try {
    read_file(f, 4096);
    ADD_FAILURE() << "no IoError for a file over max_size";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), f + ": file is 4097 bytes, more than the 4096 bytes modsign accepts here");
  }
  try {
    read_file(d / "missing");
    ADD_FAILURE() << "no IoError for a missing file";
  } catch (const IoError& e) { EXPECT_EQ(std::string(e.what()), d / "missing" + ": No such file or directory"); }
  EXPECT_EQ(kMaxModuleSize, std::uint64_t{1} << 30);
  EXPECT_EQ(kMaxSmallFileSize, std::uint64_t{16} << 20);
}

// The OpenSSL and Botan lines of `modsign --version` come from the library.
TEST(ApiOptions, CryptoLibraryVersions) {
  const std::string v = crypto_library_versions();
  EXPECT_TRUE(std::regex_match(v, std::regex("OpenSSL [0-9]+\\.[0-9]+\\.[0-9]+[^\n]*\nBotan [0-9]+\\.[0-9]+\\.[0-9]+")))
      << v;
  const auto cli = test::run(test::modsign_cli() + " --version");
  EXPECT_EQ(cli.status, 0);
  EXPECT_EQ(cli.out.rfind(std::string("modsign ") + version() + "\n" + v + "\n", 0), 0u) << cli.out;
}

// label(): the name and every switch that changes a module's verdict, as verify's outcome
// table and JSON "profile" name the kernel (a new user read a waived run as a default 7.0).
TEST(ApiOptions, ProfileLabelNamesEverySwitch) {
  KernelProfile p;
  EXPECT_EQ(p.label(), "v7.0");
  p.set_waive_mldsa_authattrs(true);
  p.set_enforce(true);
  EXPECT_EQ(p.label(), "v7.0+waiver+enforce");
  p.set_lockdown(true);
  p.set_module_decompress("none");
  p.set_absent_sig_algos({"ecdsa"});
  p.set_absent_hashes({"sm3"});
  EXPECT_EQ(p.label(), "v7.0+waiver+enforce+lockdown+decompress=none+no-ecdsa+no-sm3");
  EXPECT_EQ(p.name(), "v7.0");
  EXPECT_EQ(KernelProfile::parse("v6.1")->label(), "v6.1");
}
