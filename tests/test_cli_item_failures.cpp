// A failure inside a library modsign calls (LibraryError: here libzstd cannot make a
// context, its ZSTD_createDCtx/ZSTD_createCCtx replaced through LD_PRELOAD by
// tests/shims/zstd_fail.cpp) is an internal error of the input it happened on: the commands
// that go on after a bad input name that input, give it its --json record, exit 3, and go on
// with the next (run_guarded, the CLI's one error mapping).
#include <gtest/gtest.h>

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
  /// modsign ARGS u.ko r.ko.zst v.ko with the failing libzstd first (ASan's runtime need
  /// not come first for it).
  test::Run failing(const std::string& args) {
    return test::run("ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=" + q(MODSIGN_ZSTD_FAIL_SHIM) + " " +
                     test::modsign_cli() + " " + args + " " + q(d_ / "u.ko") + " " + q(d_ / "r.ko.zst") + " " +
                     q(d_ / "v.ko"));
  }
  std::string failure_line() const {
    return "modsign: " + d_ / "r.ko.zst" + ": internal error: ZSTD_createDCtx failed\n";
  }
  test::TempDir d_;
};

}  // namespace

TEST_F(LibraryErrors, InfoGivesTheInputItsRecordAndGoesOn) {
  const auto r = failing("info --json");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, failure_line());
  const auto lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0]["signed"], false);
  EXPECT_EQ(lines[1], nlohmann::json({{"path", d_ / "r.ko.zst"}, {"error", "internal error: ZSTD_createDCtx failed"}}));
  EXPECT_EQ(lines[2]["path"], d_ / "v.ko");
  EXPECT_EQ(lines[2]["signed"], false);
}

TEST_F(LibraryErrors, DigestGivesTheInputItsRecordAndGoesOn) {
  const auto r = failing("digest --json");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, failure_line());
  const auto lines = json_lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[1], nlohmann::json({{"path", d_ / "r.ko.zst"}, {"error", "internal error: ZSTD_createDCtx failed"}}));
  EXPECT_EQ(lines[2]["path"], d_ / "v.ko");
  EXPECT_EQ(lines[0]["path"], d_ / "u.ko");
  EXPECT_EQ(lines[2]["file_sha256"], lines[0]["file_sha256"]);  // the same bytes
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
