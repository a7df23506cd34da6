// Batch signing and verification after the review of the batch mode: thread limits,
// SIGTERM and SIGHUP, CommitBatch::settle, usage errors, names that are not UTF-8.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "batch_support.hpp"
#include "common/file.hpp"

using namespace modsign;
using namespace modsign::test::batch_tests;

// Review of the batch mode (issue: robustness).  Shell helper: the names of the temporary
// files left anywhere under `root`.
namespace {
std::vector<std::string> temporaries_under(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root))
    if (e.path().filename().string().rfind(".modsign.", 0) == 0) out.push_back(e.path().string());
  return out;
}
// n modules of 200 bytes (pattern) named m<i>.ko under `dir`.
void tiny_modules(const std::string& dir, int n) {
  std::filesystem::create_directories(dir);
  for (int i = 0; i < n; ++i) test::spit(dir + "/m" + std::to_string(i) + ".ko", test::pattern(200));
}
// True for the bytes of pattern(200) followed by an appended signature.
bool signed_tiny(const Bytes& b) {
  const std::string marker = "~Module signature appended~\n";
  const Bytes p = test::pattern(200);
  return b.size() > 200 + marker.size() && std::equal(p.begin(), p.end(), b.begin()) &&
         std::string(b.end() - static_cast<std::ptrdiff_t>(marker.size()), b.end()) == marker;
}
}  // namespace

// --jobs larger than the threads the system lets modsign create (here: 2 GB thread
// stacks in a 10 GB address space, room for about 3): modsign used to abort ("terminate
// called without an active exception", exit 134) and leave .modsign.XXXXXX files; now it
// runs on the threads it could create (workers, committers, finish()'s helpers), signs
// every module and names that number in the summary.
TEST_F(Batch, JobsBeyondTheThreadLimitRunOnTheThreadsThatExist) {
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MODSIGN_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(MODSIGN_TEST_SANITIZED) || \
    defined(MODSIGN_SANITIZED)
  GTEST_SKIP() << "an address-space limit does not work with sanitizers";
#endif
  tiny_modules(d_ / "m", 300);
  auto r = test::run("ulimit -s 2000000 && ulimit -v 10000000 && " + sign_cmd("ml-dsa-44") + "--jobs 100000 -r " +
                     q(d_ / "m"));
  ASSERT_EQ(r.status, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(r.err, m,
                               std::regex("modsign: sign: 300 done, 0 failed, 0 skipped, 60000 bytes, "
                                          "[0-9]+\\.[0-9]{3} s, ([0-9]+) jobs\n")))
      << r.err;
  const int jobs = std::stoi(m[1]);
  EXPECT_GT(jobs, 1);
  EXPECT_LT(jobs, 300);  // the limit did bite
  for (int i = 0; i < 300; ++i) EXPECT_TRUE(signed_tiny(test::slurp(d_ / ("m/m" + std::to_string(i) + ".ko")))) << i;
  EXPECT_TRUE(temporaries_under(d_.path()).empty());
}

// SIGTERM in the middle of a batch (--sync batch, outputs staged for the committers):
// modsign used to leave hundreds of .modsign.XXXXXX files; now it removes them and ends
// by the signal (exit 143 in sh).  Every module is either untouched or completely signed.
TEST_F(Batch, SigtermMidBatchLeavesNoTemporaryFiles) {
  tiny_modules(d_ / "m", 2000);
  auto r = test::run(sign_cmd("ml-dsa-44") + "--jobs 2 -r " + q(d_ / "m") + " > " + q(d_ / "out") + " 2> " +
                     q(d_ / "err") + " & pid=$!; while [ ! -s " + q(d_ / "out") +
                     " ]; do sleep 0.01; done; kill -TERM $pid; wait $pid; echo $?");
  ASSERT_EQ(r.out, "143\n") << r.err;  // killed mid-run, not finished
  EXPECT_EQ(temporaries_under(d_.path()), std::vector<std::string>{});
  int untouched = 0, signed_ = 0;
  for (int i = 0; i < 2000; ++i) {
    const Bytes b = test::slurp(d_ / ("m/m" + std::to_string(i) + ".ko"));
    if (b == test::pattern(200)) ++untouched;
    else if (signed_tiny(b)) ++signed_;
  }
  EXPECT_EQ(untouched + signed_, 2000);
  EXPECT_GT(signed_, 0);
  EXPECT_GT(untouched, 0);
}

// A signal that was ignored when modsign started (nohup, `trap '' HUP`) stays ignored:
// the batch runs to its end.
TEST_F(Batch, IgnoredSighupStaysIgnored) {
  tiny_modules(d_ / "m", 1000);
  auto r = test::run("trap '' HUP; " + sign_cmd("ml-dsa-44") + "-q --jobs 2 -r " + q(d_ / "m") + " > " + q(d_ / "out") +
                     " 2> " + q(d_ / "err") + " & pid=$!; sleep 0.2; kill -HUP $pid; wait $pid; echo $?");
  ASSERT_EQ(r.out, "0\n") << r.err;
  EXPECT_EQ(test::slurp(d_ / "err"), Bytes{});
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(signed_tiny(test::slurp(d_ / ("m/m" + std::to_string(i) + ".ko")))) << i;
}

// settle(): an item's outputs are settled only once fsynced and renamed; the callback
// names the item whose last output settled, and settle() then hands over its failure
// messages (which finish() no longer returns).  run_batch prints an item's "signed" line
// only after this, so a module whose fsync fails gets its failure line instead.
TEST(CommitBatch, SettleWaitsForTheItemsOutputsAndTakesItsFailures) {
  test::TempDir d;
  std::filesystem::create_directory(d / "sub");
  test::spit(d / "x.ko", std::string("old"));
  CommitBatch b(SyncPolicy::batch, 0);
  write_file_atomic(d / "x.ko", test::pattern(5), 0644, true, {&b, 3});
  write_file_atomic(d / "sub/y.ko", test::pattern(6), 0644, true, {&b, 4});
  std::vector<std::string> msgs;
  EXPECT_FALSE(b.settle(3, &msgs));
  EXPECT_FALSE(b.settle(4, &msgs));
  EXPECT_TRUE(b.settle(5, &msgs));  // nothing staged for it
  // y's fsync fails: its temporary file removed behind modsign's back.
  for (const auto& e : std::filesystem::directory_iterator(d / "sub"))
    if (e.path().filename().string().rfind(".modsign.", 0) == 0) std::filesystem::remove(e.path());
  std::mutex mu;
  std::map<std::size_t, std::vector<std::string>> got;
  b.on_settled([&](std::size_t item) {
    std::vector<std::string> m;
    EXPECT_TRUE(b.settle(item, &m));
    std::lock_guard<std::mutex> lock(mu);
    got[item] = m;
  });
  EXPECT_TRUE(b.finish().empty());  // y's failure was taken by settle()
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[3], std::vector<std::string>{});
  EXPECT_EQ(got[4], std::vector<std::string>{d / "sub/y.ko" + ": fsync: No such file or directory"});
  EXPECT_EQ(test::slurp(d / "x.ko"), test::pattern(5));
  EXPECT_TRUE(msgs.empty());
}

// strip --dest with -r is refused as sign's is (it used to be accepted when DIR held one
// module), and nothing is written.
TEST_F(Batch, StripDestWithDirIsAUsageError) {
  std::filesystem::create_directory(d_ / "m");
  test::spit(d_ / "m/a.ko", test::pattern(300));
  auto s = test::run(sign_cmd("rsa-2048") + q(d_ / "m/a.ko"));
  ASSERT_EQ(s.status, 0) << s.err;
  const Bytes before = test::slurp(d_ / "m/a.ko");
  auto r = test::run(M() + " strip --dest " + q(d_ / "out.ko") + " -r " + q(d_ / "m"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "modsign: --dest needs exactly one MODULE\n");
  EXPECT_FALSE(std::filesystem::exists(d_ / "out.ko"));
  EXPECT_EQ(test::slurp(d_ / "m/a.ko"), before);
}

// A file name that is not UTF-8 (byte 0xff) and one with an escape character: the text
// line prints the name's bytes, control bytes as \xNN; verify --json replaces the invalid
// byte by U+FFFD (EF BF BD) instead of failing the line, in input order.
TEST_F(Batch, NonUtf8NamesInTextAndJson) {
  std::filesystem::create_directory(d_ / "m");
  const std::string bad = d_ / "m/\xff.ko", esc = d_ / "m/\x1b[1m.ko";
  test::spit(bad, test::pattern(300));
  test::spit(esc, test::pattern(301));
  auto s = test::run(sign_cmd("ml-dsa-44") + "-q " + q(bad) + " " + q(esc));
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(s.out, "");
  auto t = test::run(M() + " verify --keyring " + q(crt("ml-dsa-44")) + " --jobs 2 " + q(bad) + " " + q(esc));
  ASSERT_EQ(t.status, 0) << t.err;
  std::istringstream lines(t.out);
  std::string l1, l2;
  std::getline(lines, l1);
  std::getline(lines, l2);
  EXPECT_EQ(l1.rfind(bad + ": loads (OK)", 0), 0u) << l1;
  EXPECT_EQ(l2.rfind(d_ / "m/\\x1b[1m.ko: loads (OK)", 0), 0u) << l2;
  auto j = test::run(M() + " verify --json --keyring " + q(crt("ml-dsa-44")) + " --jobs 2 " + q(bad) + " " + q(esc));
  ASSERT_EQ(j.status, 0) << j.err;
  std::istringstream jl(j.out);
  std::getline(jl, l1);
  std::getline(jl, l2);
  EXPECT_EQ(nlohmann::json::parse(l1).at("path"), d_ / "m/\xef\xbf\xbd.ko");
  EXPECT_EQ(nlohmann::json::parse(l2).at("path"), esc);
  EXPECT_EQ(nlohmann::json::parse(l1).at("outcome"), "loads");
  // A C1 control as UTF-8 (C2 9B, CSI: "\xc2\x9b2J" clears an xterm screen) is escaped in
  // text lines and messages, in every command; other UTF-8 (C2 A9, the copyright sign) is not.
  const std::string csi = d_ /
                          "m/\xc2\x9b"
                          "2J\xc2\xa9.ko";
  const std::string shown = d_ /
                            "m/\\xc2\\x9b"
                            "2J\xc2\xa9.ko";
  test::spit(csi, test::pattern(302));
  auto c = test::run(M() + " verify --keyring " + q(crt("ml-dsa-44")) + " " + q(csi));
  EXPECT_EQ(c.status, 1);
  EXPECT_EQ(c.out.rfind(shown + ": loads-tainted (ENODATA)", 0), 0u) << c.out;
  c = test::run(M() + " ima appraise " + q(csi));
  EXPECT_EQ(c.status, 1);
  EXPECT_EQ(c.out.rfind(shown + ": refused (EACCES): no-modsig", 0), 0u) << c.out;
  c = test::run(M() + " blacklist check " + q(csi + ".missing"));
  EXPECT_EQ(c.status, 3);
  EXPECT_EQ(c.err, "modsign: " + shown + ".missing: No such file or directory\n");
}
