// The failure of one input among several (run_guarded, the CLI's one error mapping): the
// commands that go on after a bad input name that input, give it its --json record (line N
// is input N), exit 3, and go on with the next.
//   - A failure inside a library modsign calls (LibraryError: here libzstd cannot make a
//     context, its ZSTD_createDCtx/ZSTD_createCCtx replaced through LD_PRELOAD by
//     tests/shims/zstd_fail.cpp) is an internal error of the input it happened on.
//   - dbx hash and dbx check: a file that is not a PE image, a missing one.
//   - ima verify: a missing FILE is named as such, not as a missing FILE.sig or a failed
//     getxattr.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_support.hpp"
#include "module/compress.hpp"

using namespace modsign;
using namespace modsign::test::cli_tests;

namespace {

std::vector<nlohmann::json> json_lines(const std::string& out) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) lines.push_back(nlohmann::json::parse(l));
  return lines;
}

class LibraryErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    test::spit(d_ / "u.ko", test::pattern(4096));
    test::spit(d_ / "v.ko", test::pattern(4096));
    test::spit(d_ / "r.ko.zst", module::compress(test::pattern(4096), module::Compression::zstd));
  }
  /// modsign ARGS INPUTS (default: u.ko r.ko.zst v.ko) with the failing libzstd first
  /// (ASan's runtime need not come first for it; the tier's own ASAN_OPTIONS are kept).
  test::Run failing(const std::string& args, std::string inputs = "") {
    if (inputs.empty()) inputs = q(d_ / "u.ko") + " " + q(d_ / "r.ko.zst") + " " + q(d_ / "v.ko");
    return test::run("ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0\" LD_PRELOAD=" +
                     q(MODSIGN_ZSTD_FAIL_SHIM) + " " + test::modsign_cli() + " " + args + " " + inputs);
  }
  std::string failure_line() const {
    return "modsign: " + d_ / "r.ko.zst" + ": internal error: ZSTD_createDCtx failed\n";
  }
  test::TempDir d_;
};

}  // namespace

TEST_F(LibraryErrors, PrepareAndSignFileNameTheInput) {
  auto r = test::run(test::modsign_cli() + " keygen --algo rsa-2048 --out " + q(d_ / "k.pem") + " --cert-out " +
                     q(d_ / "k.crt"));
  ASSERT_EQ(r.status, 0) << r.err;
  r = failing("sign -q --jobs 1 --recompress --prepare - --cert " + q(d_ / "k.crt"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, failure_line());
  r = failing("sign-file sha256 " + q(d_ / "k.pem") + " " + q(d_ / "k.crt"), q(d_ / "r.ko.zst"));
  EXPECT_EQ(r.status, 1);  // sign-file's status for every failure
  EXPECT_EQ(r.err, failure_line());
}

TEST_F(LibraryErrors, InfoAndDigestGiveTheInputItsRecordAndGoOn) {
  for (const char* cmd : {"info --json", "digest --json"}) {
    SCOPED_TRACE(cmd);
    const auto r = failing(cmd);
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.err, failure_line());
    const auto lines = json_lines(r.out);
    ASSERT_EQ(lines.size(), 3u) << r.out;
    EXPECT_EQ(lines[0]["path"], d_ / "u.ko");
    EXPECT_EQ(lines[1],
              nlohmann::json({{"path", d_ / "r.ko.zst"}, {"error", "internal error: ZSTD_createDCtx failed"}}));
    EXPECT_EQ(lines[2]["path"], d_ / "v.ko");
    EXPECT_EQ(lines[2]["signed"], false);
  }
}

TEST_F(LibraryErrors, VerifyGivesTheInputItsRecordAndGoesOn) {
  const auto r = failing("verify -q --json --jobs 1");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, failure_line());
  const auto lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0]["outcome"], "loads-tainted");
  EXPECT_EQ(lines[1]["outcome"], "error");
  EXPECT_EQ(lines[1]["errno"], nullptr);
  EXPECT_EQ(lines[1]["reason"], "internal error: ZSTD_createDCtx failed");
  EXPECT_EQ(lines[2]["path"], d_ / "v.ko");
  EXPECT_EQ(lines[2]["outcome"], "loads-tainted");
}

TEST(ItemFailures, DbxHashAndCheckGiveEveryFileItsRecord) {
  test::TempDir d;
  test::spit(d / "u.ko", test::pattern(100));
  test::spit(d / "e.esl", std::string());
  for (const std::string& cmd : {std::string("dbx hash --json"), "dbx check --json --dbx " + q(d / "e.esl")}) {
    SCOPED_TRACE(cmd);
    const auto r = test::run(test::modsign_cli() + " " + cmd + " " + q(d / "u.ko") + " " + q(d / "missing.efi"));
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.err, "modsign: " + d / "u.ko" + ": no MS-DOS header: the file does not start with \"MZ\"\nmodsign: " +
                         d / "missing.efi" + ": No such file or directory\n");
    const auto lines = json_lines(r.out);
    ASSERT_EQ(lines.size(), 2u) << r.out;
    EXPECT_EQ(lines[0], nlohmann::json({{"path", d / "u.ko"},
                                        {"error", "no MS-DOS header: the file does not start with \"MZ\""}}));
    EXPECT_EQ(lines[1], nlohmann::json({{"path", d / "missing.efi"}, {"error", "No such file or directory"}}));
  }
}

TEST(ItemFailures, ImaVerifyNamesAMissingFileNotItsSigOrXattr) {
  test::TempDir d;
  auto r = test::run(test::modsign_cli() + " keygen --algo ecdsa-p256 --out " + q(d / "k.pem") + " --cert-out " +
                     q(d / "k.crt"));
  ASSERT_EQ(r.status, 0) << r.err;
  std::filesystem::create_directory(d / "dir");
  r = test::run(test::modsign_cli() + " ima verify -q --sigfile --keyring " + q(d / "k.crt") + " " + q(d / "missing") +
                " " + q(d / "dir"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err,
            "modsign: " + d / "missing" + ": No such file or directory\nmodsign: " + d / "dir" + ": is a directory\n");
  // And without --sigfile: not "getxattr security.ima: No such file or directory".
  r = test::run(test::modsign_cli() + " ima verify -q --keyring " + q(d / "k.crt") + " " + q(d / "missing"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d / "missing" + ": No such file or directory\n");
}
