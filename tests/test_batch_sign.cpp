// Batch signing and verification (issue 5): many modules and -r DIR on a pool of --jobs
// threads, output in input order, the per-file messages of a mixed tree, the summary and
// exit status, --quiet, the durability policies (CommitBatch), and ML-DSA signatures made
// by one backend verified by the other.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "batch_support.hpp"
#include "cms/signed_data.hpp"
#include "common/file.hpp"
#include "crypto/crypto.hpp"
#include "module/module_signature.hpp"

using namespace modsign;
using namespace modsign::test::batch_tests;

namespace {

// "modsign: sign: 6 done, 0 failed, 0 skipped, 28182 bytes, 0.012 s, 2 jobs\n"; with
// entries under -r DIR that could not be handled, ", 1 not handled" after "skipped".  For
// verify (checks: a negative verdict is no failure) "6 checked, 0 errors".
std::regex summary_re(const std::string& verb, int done, int failed, int skipped, std::uint64_t bytes, int jobs,
                      int not_handled = 0) {
  const bool checks = verb == "verify";
  return std::regex(
      "modsign: " + verb + ": " + std::to_string(done) + (checks ? " checked, " : " done, ") + std::to_string(failed) +
      (!checks       ? " failed, "
       : failed == 1 ? " error, "
                     : " errors, ") +
      std::to_string(skipped) + " skipped, " +
      (not_handled ? std::to_string(not_handled) + " not handled, " : std::string()) + std::to_string(bytes) +
      " bytes, [0-9]+\\.[0-9]{3} s, " + std::to_string(jobs) + (jobs == 1 ? " job" : " jobs") + "\n");
}

/// `err` up to verify's table of outcomes (which follows its summary line).
std::string before_table(const std::string& err) { return err.substr(0, err.find("modsign: verify: outcomes")); }

std::uint64_t tree_bytes() {
  std::uint64_t sum = 0;
  for (std::size_t i = 1; i <= kTree.size(); ++i) sum += 1000 + 777u * i;
  return sum;
}

}  // namespace

// RSA PKCS#1 v1.5 is deterministic: a batch over the tree on 2 threads, on 1 thread, and
// one `modsign sign FILE` per module give byte-identical modules and the same stdout.
TEST_F(Batch, RsaBatchEqualsSingleFileByteForByte) {
  const auto single = make_tree(d_ / "single");
  std::string single_out;
  for (const auto& p : single) {
    auto r = test::run(sign_cmd("rsa-2048") + q(p));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");  // one module: no summary
    single_out += r.out;
  }
  std::string outs[2];
  std::vector<Bytes> files[2];
  for (int jobs : {1, 2}) {
    test::TempDir t;
    const auto paths = make_tree(t / "single");  // same path length and names as `single`
    auto r = test::run(sign_cmd("rsa-2048") + "-r " + q(t / "single") + " --jobs " + std::to_string(jobs));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(std::regex_match(r.err, summary_re("sign", 6, 0, 0, tree_bytes(), jobs))) << r.err;
    std::string out = r.out;
    for (std::size_t pos; (pos = out.find(t.path())) != std::string::npos;)
      out.replace(pos, t.path().size(), d_.path());
    outs[jobs - 1] = out;
    for (const auto& p : paths) files[jobs - 1].push_back(test::slurp(p));
  }
  EXPECT_EQ(outs[0], single_out);
  EXPECT_EQ(outs[1], single_out);
  ASSERT_EQ(files[0].size(), single.size());
  for (std::size_t i = 0; i < single.size(); ++i) {
    const Bytes one = test::slurp(single[i]);
    EXPECT_EQ(files[0][i], one) << single[i];
    EXPECT_EQ(files[1][i], one) << single[i];
    auto split = module::split(one);
    ASSERT_TRUE(split.ok());
    EXPECT_EQ(Bytes(split->content.begin(), split->content.end()),
              content(1000 + 777u * (i + 1), static_cast<std::uint8_t>(i + 1)));
  }
  // The first line names the first module of the sorted tree.
  EXPECT_EQ(single_out.rfind(d_ / "single/a.ko: signed (RSA, no signedAttrs, sha512, CMS ", 0), 0u) << single_out;
}

// ML-DSA signatures are hedged, so the batch is checked by verification: every module
// loads, verify's stdout (text and JSON) is the same for --jobs 1 and --jobs 2 and equals
// one `modsign verify FILE` per module.
TEST_F(Batch, MlDsaBatchVerifiesAndVerifyOutputIsIndependentOfJobs) {
  const auto paths = make_tree(d_ / "t");
  auto r = test::run(sign_cmd("ml-dsa-65") + "-r " + q(d_ / "t") + " --jobs 2");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string single_text, single_json;
  for (const auto& p : paths) {
    auto s = test::run(M() + " verify --cert " + q(crt("ml-dsa-65")) + " " + q(p));
    ASSERT_EQ(s.status, 0) << s.out << s.err;
    EXPECT_EQ(s.out,
              p + ": loads (OK): signature verified: mldsa65 signature, trusted key \"modsign module signing key\"" +
                  test::trusted_key_ids(crt("ml-dsa-65")) + test::kLoadScope + "\n");
    single_text += s.out;
    s = test::run(M() + " verify --json --cert " + q(crt("ml-dsa-65")) + " " + q(p));
    ASSERT_EQ(s.status, 0) << s.err;
    single_json += s.out;
  }
  std::uint64_t signed_bytes = 0;
  for (const auto& p : paths) signed_bytes += std::filesystem::file_size(p);
  for (const char* jobs : {"1", "2", "4"}) {
    auto v = test::run(M() + " verify --cert " + q(crt("ml-dsa-65")) + " -r " + q(d_ / "t") + " --jobs " + jobs);
    EXPECT_EQ(v.status, 0) << v.err;
    EXPECT_EQ(v.out, single_text) << "--jobs " << jobs;
    v = test::run(M() + " verify --json --cert " + q(crt("ml-dsa-65")) + " -r " + q(d_ / "t") + " --jobs " + jobs);
    EXPECT_EQ(v.status, 0) << v.err;
    EXPECT_EQ(v.out, single_json) << "--jobs " << jobs;
    EXPECT_TRUE(std::regex_match(v.err, summary_re("verify", 6, 0, 0, signed_bytes, std::atoi(jobs)))) << v.err;
  }
  // Verification failures are counted as failed, with exit status 1, in input order.
  Bytes b = test::slurp(paths[2]);
  b[10] ^= 1;
  test::spit(paths[2], b);
  auto v = test::run(M() + " verify --cert " + q(crt("ml-dsa-65")) + " -r " + q(d_ / "t") + " --jobs 2");
  EXPECT_EQ(v.status, 1);
  const auto nl1 = v.out.find('\n'), nl2 = v.out.find('\n', nl1 + 1), nl3 = v.out.find('\n', nl2 + 1);
  EXPECT_EQ(v.out.substr(nl2 + 1, nl3 - nl2),
            paths[2] + ": refused (EKEYREJECTED): Sig 1: signature does not verify [kernel v7.0]\n");
  EXPECT_TRUE(std::regex_match(before_table(v.err), summary_re("verify", 6, 0, 0, signed_bytes, 2))) << v.err;
}

// The mixed tree of the issue: an unreadable entry, an already signed module and a
// compressed one give their documented lines (stderr, input order) and exit status 3;
// every other module is signed.  Root reads files whatever their mode, so the tree's
// "unreadable" entries are a FIFO (never opened: it would block) and a dangling symbolic
// link (not followed), both skipped, plus a named file that does not exist (failed); when
// not root, a chmod 000 module is added (failed).
TEST_F(Batch, MixedTreeGivesPerFileMessagesAndExitStatus) {
  const std::string t = d_ / "t";
  const auto paths = make_tree(t);
  // b.ko already signed.
  ASSERT_EQ(test::run(sign_cmd("rsa-2048") + q(t + "/b.ko")).status, 0);
  const Bytes b_before = test::slurp(t + "/b.ko");
  // A compressed module, a FIFO and a dangling link named like modules.
  test::spit(t + "/drivers/x.ko", content(3000, 9));
  ASSERT_EQ(test::run("xz --check=crc32 " + q(t + "/drivers/x.ko")).status, 0);
  const Bytes xz_before = test::slurp(t + "/drivers/x.ko.xz");
  ASSERT_EQ(::mkfifo((t + "/fifo.ko").c_str(), 0644), 0);
  ASSERT_EQ(::symlink("/nonexistent/module.ko", (t + "/link.ko").c_str()), 0);
  const bool root = ::geteuid() == 0;
  if (!root) {
    test::spit(t + "/fs/locked.ko", content(100, 3));
    ::chmod((t + "/fs/locked.ko").c_str(), 0);
  }
  const std::string gone = d_ / "gone.ko";
  auto r = test::run(sign_cmd("rsa-2048") + q(gone) + " -r " + q(t) + " --jobs 2");
  EXPECT_EQ(r.status, 3) << r.err;
  std::string want_err = "modsign: " + gone +
                         ": No such file or directory\n"
                         "modsign: " +
                         t +
                         "/b.ko: module is already signed (use --replace to strip the old signature and re-sign)\n"
                         "modsign: " +
                         t +
                         "/drivers/x.ko.xz: skipped: compressed module (--recompress signs it and "
                         "recompresses it in the same format)\n"
                         "modsign: " +
                         t + "/fifo.ko: skipped: FIFO, not a regular file\n";
  if (!root) want_err += "modsign: " + t + "/fs/locked.ko: Permission denied\n";
  want_err += "modsign: " + t + "/link.ko: skipped: symbolic link, not followed\n";
  const auto summary_at = r.err.find("modsign: sign: ");
  ASSERT_NE(summary_at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.substr(0, summary_at), want_err);
  // Bytes read: the five modules signed and the already signed b.ko.
  const std::uint64_t read_bytes = tree_bytes() - (1000 + 777u * 2) + b_before.size();
  EXPECT_TRUE(std::regex_match(r.err.substr(summary_at), summary_re("sign", 5, root ? 2 : 3, 3, read_bytes, 2)))
      << r.err.substr(summary_at);
  // stdout: one line per signed module, in input order.
  std::string want_out;
  for (const auto& p : paths)
    if (p != t + "/b.ko") want_out += p + ": signed (RSA, no signedAttrs, sha512, CMS ";
  std::string got_out;
  for (std::size_t pos = 0; pos < r.out.size();) {
    const auto nl = r.out.find('\n', pos);
    const std::string line = r.out.substr(pos, nl - pos);
    got_out += line.substr(0, line.find("CMS ") + 4);
    pos = nl + 1;
  }
  EXPECT_EQ(got_out, want_out);
  // Every other module is signed and verifies; the rest is untouched.
  for (const auto& p : paths) {
    auto v = test::run(M() + " verify --cert " + q(crt("rsa-2048")) + " " + q(p));
    EXPECT_EQ(v.status, 0) << p << v.out << v.err;
  }
  EXPECT_EQ(test::slurp(t + "/b.ko"), b_before);
  EXPECT_EQ(test::slurp(t + "/drivers/x.ko.xz"), xz_before);
  // No temporary file is left behind.
  for (const auto& e : std::filesystem::recursive_directory_iterator(t))
    EXPECT_EQ(e.path().filename().string().rfind(".modsign.", 0), std::string::npos) << e.path();
  // With --recompress the compressed module is signed too (and only it is new work).
  r = test::run(sign_cmd("rsa-2048") + "--recompress -r " + q(t + "/drivers") + " --jobs 2");
  EXPECT_EQ(r.status, 3) << r.err;  // c.ko and net/d.ko are signed by now: "already signed"
  EXPECT_NE(r.out.find(t + "/drivers/x.ko.xz: signed (RSA, no signedAttrs, sha512, CMS "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", recompressed xz)\n"), std::string::npos) << r.out;
  auto v = test::run(M() + " verify --cert " + q(crt("rsa-2048")) + " " + q(t + "/drivers/x.ko.xz"));
  EXPECT_EQ(v.status, 0) << v.out;
}

// verify -r ends with a table of outcomes (issue 30): each outcome and errno once, with how
// many modules had it, loads first; not under --quiet or --json, nor for one module.
TEST_F(Batch, VerifyTreeEndsWithAnOutcomeTable) {
  const std::string t = d_ / "t";
  const auto paths = make_tree(t);  // a.ko b.ko drivers/c.ko drivers/net/d.ko fs/e.ko fs/z.ko
  ASSERT_EQ(test::run(sign_cmd("rsa-2048") + q(paths[0]) + " " + q(paths[1]) + " " + q(paths[3])).status, 0);
  ASSERT_EQ(test::run(sign_cmd("ml-dsa-44") + q(paths[2])).status, 0);  // a key the kernel does not trust
  Bytes d = test::slurp(paths[3]);  // the RSA signature's last byte, before module_signature and the marker
  d[d.size() - 12 - 28 - 1] ^= 1;
  test::spit(paths[3], d);
  ASSERT_EQ(::mkfifo((t + "/fifo.ko").c_str(), 0644), 0);
  const std::string verify = M() + " verify --cert " + q(crt("rsa-2048")) + " ";
  std::filesystem::create_directories(d_ / "none");  // a -r DIR with no module: not handled
  auto r = test::run(verify + "-r " + q(t) + " -r " + q(d_ / "none"));
  EXPECT_EQ(r.status, 3) << r.err;  // the FIFO is not covered
  const auto table_at = r.err.find("modsign: verify: outcomes");
  ASSERT_NE(table_at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.substr(table_at),
            "modsign: verify: outcomes under kernel v7.0:\n"
            "  loads (OK)                  2\n"
            "  loads-tainted (ENODATA)     2\n"
            "  loads-tainted (ENOKEY)      1\n"
            "  refused (EKEYREJECTED)      1\n"
            "  skipped                     1\n"
            "  not handled                 1\n");
  EXPECT_LT(r.err.find("modsign: verify: 6 checked, 0 errors, 1 skipped, 1 not handled, "), table_at) << r.err;
  // The kernel with its switches (a new user read a waived run as a default 7.0's).
  r = test::run(verify + "--enforce --lockdown " + q(paths[0]) + " " + q(paths[1]));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("modsign: verify: outcomes under kernel v7.0+enforce+lockdown:\n  loads (OK)     2\n"),
            std::string::npos)
      << r.err;
  for (const char* quiet : {"-q ", "--json "}) {
    r = test::run(verify + quiet + "-r " + q(t));
    EXPECT_EQ(r.status, 3) << quiet;
    EXPECT_EQ(r.err.find("outcomes"), std::string::npos) << quiet << r.err;
  }
  r = test::run(verify + q(paths[0]));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// verify with no key at all: every signed module is ENOKEY, and one note says why (a new
// user's trial found no word of it); an unsigned module alone needs no such note.
TEST_F(Batch, VerifyWithoutKeysSaysSoOnce) {
  const auto paths = make_tree(d_ / "t");
  ASSERT_EQ(test::run(sign_cmd("rsa-2048") + q(paths[0]) + " " + q(paths[1])).status, 0);
  const std::string note =
      "modsign: note: the keyring holds no key (give them with --keyring/--cert FILE; a kernel build's own key is "
      "its certs/signing_key.x509), so every signature is predicted ENOKEY\n";
  auto r = test::run(M() + " verify -q " + q(paths[0]) + " " + q(paths[1]) + " " + q(paths[2]));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, note);
  r = test::run(M() + " verify " + q(paths[2]));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, "");
  r = test::run(M() + " verify --cert " + q(crt("ml-dsa-44")) + " " + q(paths[0]));
  EXPECT_EQ(r.status, 1) << r.err;  // ENOKEY too, but a key was given
  EXPECT_EQ(r.err, "");
}

// A -r DIR that cannot be read is an input error (exit 3) after the other inputs are done.
TEST_F(Batch, UnreadableDirectoryIsAnInputError) {
  const auto paths = make_tree(d_ / "t");
  const std::string missing = d_ / "no-such-dir";
  auto r = test::run(sign_cmd("rsa-2048") + "--jobs 2 -r " + q(missing) + " -r " + q(d_ / "t/fs"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err.rfind("modsign: " + missing + ": No such file or directory\n", 0), 0u) << r.err;
  EXPECT_TRUE(std::regex_match(r.err.substr(r.err.find('\n') + 1),
                               summary_re("sign", 2, 0, 0, (1000 + 777u * 5) + (1000 + 777u * 6), 2, 1)))
      << r.err;
  auto v = test::run(M() + " verify -q --cert " + q(crt("rsa-2048")) + " -r " + q(missing) + " " + q(paths[4]));
  EXPECT_EQ(v.status, 3);
  EXPECT_EQ(v.err, "modsign: " + missing + ": No such file or directory\n");
}

// --quiet: no line for modules that succeed, no summary, no progress; problems still shown.
TEST_F(Batch, QuietKeepsOnlyProblems) {
  const auto paths = make_tree(d_ / "t");
  auto r = test::run(sign_cmd("ml-dsa-44") + "-q -r " + q(d_ / "t"));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  r = test::run(sign_cmd("ml-dsa-44") + "--quiet " + q(paths[0]) + " " + q(paths[1]));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "modsign: " + paths[0] +
                       ": module is already signed (use --replace to strip the old signature and re-sign)\n"
                       "modsign: " +
                       paths[1] +
                       ": module is already signed (use --replace to strip the old signature and re-sign)\n");
  auto v = test::run(M() + " verify -q --cert " + q(crt("ml-dsa-44")) + " -r " + q(d_ / "t"));
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.out, "");
  EXPECT_EQ(v.err, "");
  // JSON lines are the result: --quiet keeps them.
  v = test::run(M() + " verify -q --json --cert " + q(crt("ml-dsa-44")) + " -r " + q(d_ / "t"));
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(std::count(v.out.begin(), v.out.end(), '\n'), 6);
  EXPECT_EQ(v.err, "");
}

// What -r skips by design (a symbolic link, a compressed module, a file named twice) is no
// problem: --quiet leaves it out; the same run without --quiet says each (found by a trial).
TEST_F(Batch, QuietHidesSkipsThatAreNoFailure) {
  const std::string t = d_ / "s";
  std::filesystem::create_directories(t);
  test::spit(t + "/a.ko", content(2000, 4));
  test::spit(t + "/x.ko", content(3000, 9));
  ASSERT_EQ(test::run("xz --check=crc32 " + q(t + "/x.ko")).status, 0);
  ASSERT_EQ(::symlink("a.ko", (t + "/link.ko").c_str()), 0);
  auto r = test::run(sign_cmd("rsa-2048") + "-q -r " + q(t) + " " + q(t + "/a.ko"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(test::run(M() + " verify --cert " + q(crt("rsa-2048")) + " " + q(t + "/a.ko")).status, 0);
  const std::size_t cms_bytes = test::slurp(t + "/a.ko").size() - 2000 - 12 - 28;
  // strip as sign: a compressed module under -r is left alone unless --recompress (a
  // trial: strip -r failed on it, exit 3, where sign -r skipped it, exit 0).
  r = test::run(M() + " strip -j 1 -r " + q(t));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, t + "/a.ko: signature removed (" + std::to_string(cms_bytes) + " bytes of CMS)\n");
  EXPECT_EQ(r.err.substr(0, r.err.find("modsign: strip: ")),
            "modsign: " + t + "/link.ko: skipped: symbolic link, not followed\n" + "modsign: " + t +
                "/x.ko.xz: skipped: compressed module (--recompress strips it and recompresses it in the same "
                "format)\n");
  r = test::run(M() + " strip -q -r " + q(t));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
}

// The three --sync policies write the same bytes (RSA: deterministic).
TEST_F(Batch, SyncPoliciesWriteTheSameModules) {
  std::vector<std::vector<Bytes>> got;
  for (const char* policy : {"batch", "each", "none"}) {
    test::TempDir t;
    const auto paths = make_tree(t / "m");
    auto r = test::run(sign_cmd("rsa-2048") + "-q --sync " + policy + " -r " + q(t / "m"));
    ASSERT_EQ(r.status, 0) << policy << r.err;
    got.emplace_back();
    for (const auto& p : paths) got.back().push_back(test::slurp(p));
  }
  EXPECT_EQ(got[0], got[1]);
  EXPECT_EQ(got[0], got[2]);
  auto r = test::run(sign_cmd("rsa-2048") + "--sync later " + q(d_ / "x.ko"));
  EXPECT_EQ(r.status, 2);
}

// CommitBatch without committer threads: staged outputs replace nothing before finish();
// finish() puts them in place and reports one that cannot be; an unfinished batch leaves
// no temporary file.
TEST(CommitBatch, StagesUntilFinishAndReportsFailures) {
  test::TempDir d;
  test::spit(d / "x.ko", std::string("old"));
  std::filesystem::create_directory(d / "sub");
  {
    CommitBatch b(SyncPolicy::batch, 0);
    write_file_atomic(d / "x.ko", test::pattern(5), 0644, true, {&b, 7});
    write_file_atomic(d / "sub/y.ko", test::pattern(6), 0644, true, {&b, 7});
    write_file_atomic(d / "z.ko", test::pattern(3));  // no route: at once
    EXPECT_EQ(test::slurp(d / "x.ko"), Bytes({'o', 'l', 'd'}));
    EXPECT_FALSE(std::filesystem::exists(d / "sub/y.ko"));
    EXPECT_EQ(test::slurp(d / "z.ko"), test::pattern(3));
    // y's temporary file disappears (removed behind modsign's back): y fails, x still goes
    // in place.  (Renaming its directory no longer does: the output is renamed in the
    // directory opened for it, wherever that is by then.)
    for (const auto& e : std::filesystem::directory_iterator(d / "sub"))
      if (e.path().filename().string().rfind(".modsign.", 0) == 0) std::filesystem::remove(e.path());
    auto failures = b.finish();
    ASSERT_EQ(failures.size(), 1u);
    EXPECT_EQ(failures[0].item, 7u);
    EXPECT_EQ(failures[0].message, d / "sub/y.ko" + ": fsync: No such file or directory");
    EXPECT_EQ(test::slurp(d / "x.ko"), test::pattern(5));
    EXPECT_TRUE(b.finish().empty());  // nothing left
  }
  {
    CommitBatch b(SyncPolicy::batch, 0);
    write_file_atomic(d / "w.ko", test::pattern(4), 0644, true, {&b, 0});
  }  // destroyed without finish(): the temporary file is removed, w.ko never appears
  std::size_t temporaries = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(d.path()))
    temporaries += e.path().filename().string().rfind(".modsign.", 0) == 0;
  // None: before the directory descriptors, renaming sub stranded y's temporary file in
  // sub2 (the hostile pass's F5: ".modsign.XXXXXX" left without any signal).
  EXPECT_EQ(temporaries, 0u);
  EXPECT_FALSE(std::filesystem::exists(d / "w.ko"));
}

// CommitBatch with committer threads (what `sign` uses): outputs from several threads are
// fsynced and renamed in the background; after finish() every one is in place, with the
// mode of the file it replaced, and no temporary file is left.
TEST(CommitBatch, CommittersPutEveryOutputInPlace) {
  test::TempDir d;
  for (int i = 0; i < 40; ++i) {
    test::spit(d / ("m" + std::to_string(i) + ".ko"), std::string("old"));
    ::chmod((d / ("m" + std::to_string(i) + ".ko")).c_str(), 0640);
  }
  CommitBatch b(SyncPolicy::batch, 3);
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&, t] {
      for (int i = t; i < 40; i += 4) {
        write_file_atomic(d / ("m" + std::to_string(i) + ".ko"), test::pattern(100 + static_cast<std::size_t>(i)), 0644,
                          true, {&b, static_cast<std::size_t>(i)});
      }
    });
  for (auto& w : workers) w.join();
  EXPECT_TRUE(b.finish().empty());
  for (int i = 0; i < 40; ++i) {
    const std::string p = d / ("m" + std::to_string(i) + ".ko");
    EXPECT_EQ(test::slurp(p), test::pattern(100 + static_cast<std::size_t>(i))) << p;
    struct stat st {};
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u) << p;
  }
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(d.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 40u);
}

// Cross-backend: ML-DSA-44/65/87 signatures made with --backend openssl verify with
// --backend botan and the reverse (with and without signedAttrs), and the default
// (auto) backend agrees with both.
TEST_F(Batch, CrossBackendSignaturesVerifyBothWays) {
  for (const std::string algo : {"ml-dsa-44", "ml-dsa-65", "ml-dsa-87"}) {
    for (const std::string attrs : {"", "--signed-attrs "}) {
      for (const std::string sb : {"openssl", "botan", "auto"}) {
        const std::string m = d_ / (algo + sb + ".ko");
        test::spit(m, content(5000, 42));
        auto r = test::run(sign_cmd(algo) + attrs + "--backend " + sb + " " + q(m));
        ASSERT_EQ(r.status, 0) << r.err;
        const Bytes signed_module = test::slurp(m);  // split() returns views into it
        auto split = module::split(signed_module);
        ASSERT_TRUE(split.ok());
        auto sd = cms::parse(split->cms);
        ASSERT_TRUE(sd.ok());
        const std::size_t sig_len = algo == "ml-dsa-44" ? 2420 : algo == "ml-dsa-65" ? 3309 : 4627;
        EXPECT_EQ(sd->signers.at(0).signature.size(), sig_len);
        for (const std::string vb : {"openssl", "botan", "auto"}) {
          auto v = test::run(M() + " verify --backend " + vb + (attrs.empty() ? "" : " --waive-mldsa-authattrs") +
                             " --cert " + q(crt(algo)) + " " + q(m));
          EXPECT_EQ(v.status, 0) << algo << " " << attrs << "signed with " << sb << ", verified with " << vb << ": "
                                 << v.out;
          const std::string lvl = algo.substr(7);
          EXPECT_EQ(v.out.rfind(m + ": loads (OK): signature verified: mldsa" + lvl + " signature", 0), 0u) << v.out;
        }
      }
    }
  }
  // An altered module is refused by both backends with the same line.
  const std::string m = d_ / "ml-dsa-65openssl.ko";
  Bytes b = test::slurp(m);
  b[7] ^= 0x80;
  test::spit(m, b);
  auto o = test::run(M() + " verify --backend openssl --cert " + q(crt("ml-dsa-65")) + " " + q(m));
  auto g = test::run(M() + " verify --backend botan --cert " + q(crt("ml-dsa-65")) + " " + q(m));
  EXPECT_EQ(o.status, 1);
  EXPECT_EQ(g.status, 1);
  EXPECT_EQ(o.out, g.out);
}

// Keys, EVP_PKEYs and certificates are shared by the worker threads; each thread has its
// own operation contexts (OpenSSL EVP_PKEY_CTX per call, Botan signer/verifier per thread).
// Four threads sign and verify with one key through both backends at once.
TEST(BatchThreads, SharedKeySignsAndVerifiesConcurrently) {
  auto key = crypto::PrivateKey::generate(crypto::KeyAlgo::ml_dsa_65);
  auto rsa = crypto::PrivateKey::generate(crypto::KeyAlgo::rsa, 2048);
  std::atomic<int> good{0}, bad{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < 12; ++i) {
        const Bytes msg = content(100 + 10 * i, static_cast<std::uint8_t>(t));
        const auto sb = (i + t) % 2 ? crypto::Backend::botan : crypto::Backend::openssl;
        const auto vb = (i + t) % 2 ? crypto::Backend::openssl : crypto::Backend::botan;
        auto sig = crypto::sign_message(key, crypto::HashAlgo::sha512, msg, sb);
        auto rs = crypto::sign_message(rsa, crypto::HashAlgo::sha256, msg);
        const bool ok = sig.ok() && rs.ok() &&
                        crypto::verify_message(key.public_key(), crypto::HashAlgo::sha512, msg, *sig, vb).ok() &&
                        crypto::verify_message(rsa.public_key(), crypto::HashAlgo::sha256, msg, *rs).ok();
        Bytes other = msg;
        other[0] ^= 1;
        bool rejects = false;
        if (sig.ok()) {
          auto st = crypto::verify_message(key.public_key(), crypto::HashAlgo::sha512, other, *sig, vb);
          rejects = !st.ok() && st.error().code == KErr::ekeyrejected;
        }
        (ok && rejects ? good : bad)++;
      }
    });
  for (auto& t : pool) t.join();
  EXPECT_EQ(good.load(), 48);
  EXPECT_EQ(bad.load(), 0);
}

// A symbolic link under -r never stands for its target (user trial): whether the link
// sorts before the real module (t/a.ko -> sub/fat.ko) or after it (t/z.ko), sign, strip
// and verify skip it as "symbolic link, not followed", and the real module is handled.
TEST_F(Batch, SymlinkUnderDirIsSkippedBeforeDuplicateCheck) {
  const std::string t = d_ / "t";
  std::filesystem::create_directories(t + "/sub");
  const std::string fat = t + "/sub/fat.ko";
  test::spit(fat, content(2000, 5));
  ASSERT_EQ(::symlink("sub/fat.ko", (t + "/a.ko").c_str()), 0);
  ASSERT_EQ(::symlink("sub/fat.ko", (t + "/z.ko").c_str()), 0);
  ASSERT_EQ(test::run(sign_cmd("rsa-2048") + q(fat)).status, 0);  // already signed, as the trial's module was
  auto r = test::run(sign_cmd("rsa-2048") + "--replace -r " + q(t) + " --jobs 2");
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string skip_links = "modsign: " + t +
                                 "/a.ko: skipped: symbolic link, not followed\n"
                                 "modsign: " +
                                 t + "/z.ko: skipped: symbolic link, not followed\n";
  const auto summary_at = r.err.find("modsign: sign: ");
  ASSERT_NE(summary_at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.substr(0, summary_at), skip_links);
  const std::uint64_t signed_size = test::slurp(fat).size();
  EXPECT_TRUE(std::regex_match(r.err.substr(summary_at), summary_re("sign", 1, 0, 2, signed_size, 2)))
      << r.err.substr(summary_at);
  EXPECT_EQ(r.out.rfind(fat + ": signed (RSA, no signedAttrs, sha512, CMS ", 0), 0u) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
  // verify reports the links the same way and verifies fat.ko once; a verdict that does
  // not cover a module name found under -r is not a success (exit 3; issue 29).
  r = test::run(M() + " verify --cert " + q(crt("rsa-2048")) + " -r " + q(t) + " --jobs 1");
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.out, fat + ": loads (OK): signature verified: rsa signature, trusted key \"modsign module signing key\"" +
                       test::trusted_key_ids(crt("rsa-2048")) + test::kLoadScope + "\n");
  EXPECT_EQ(r.err.substr(0, r.err.find("modsign: verify: ")), skip_links);
  // strip too; without -r a named symbolic link is followed (and is the same file).
  r = test::run(M() + " strip -r " + q(t));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, fat + ": signature removed (" + std::to_string(signed_size - 2000 - 28 - 12) + " bytes of CMS)\n");
  EXPECT_EQ(r.err.substr(0, r.err.find("modsign: strip: ")), skip_links);  // then strip's summary, as sign's
  EXPECT_TRUE(
      std::regex_match(r.err.substr(r.err.find("modsign: strip: ")), summary_re("strip", 1, 0, 2, signed_size, 2)))
      << r.err;
  EXPECT_EQ(test::slurp(fat), content(2000, 5));
  r = test::run(M() + " strip " + q(fat) + " " + q(t + "/a.ko"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, fat + ": not signed, unchanged\n");
  EXPECT_EQ(r.err.substr(0, r.err.find("modsign: strip: ")),
            "modsign: " + t + "/a.ko: skipped: same file as " + fat + "; handled once\n");
}

// The same file named twice is handled once by sign and verify alike, and the message for
// the later name does not claim an outcome: here the first occurrence fails (already
// signed, no --replace).
TEST_F(Batch, SameFileTwiceIsHandledOnceWithTruthfulMessage) {
  const std::string m = d_ / "m.ko";
  test::spit(m, content(1500, 7));
  ASSERT_EQ(test::run(sign_cmd("rsa-2048") + q(m)).status, 0);
  const Bytes before = test::slurp(m);
  const std::string other = std::string(d_.path()) + "/./m.ko";
  auto r = test::run(sign_cmd("rsa-2048") + q(m) + " " + q(other) + " --jobs 1");
  EXPECT_EQ(r.status, 3) << r.err;
  const auto summary_at = r.err.find("modsign: sign: ");
  ASSERT_NE(summary_at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.substr(0, summary_at),
            "modsign: " + m +
                ": module is already signed (use --replace to strip the old signature and re-sign)\n"
                "modsign: " +
                other + ": skipped: same file as " + m + "; handled once\n");
  EXPECT_TRUE(std::regex_match(r.err.substr(summary_at), summary_re("sign", 0, 1, 1, before.size(), 1)))
      << r.err.substr(summary_at);
  EXPECT_EQ(test::slurp(m), before);
  // verify: once, the same message; JSON gives a skipped record with every key.
  r = test::run(M() + " verify --cert " + q(crt("rsa-2048")) + " " + q(m) + " " + q(other) + " --jobs 1");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, m + ": loads (OK): signature verified: rsa signature, trusted key \"modsign module signing key\"" +
                       test::trusted_key_ids(crt("rsa-2048")) + test::kLoadScope + "\n");
  EXPECT_EQ(r.err.substr(0, r.err.find("modsign: verify: ")),
            "modsign: " + other + ": skipped: same file as " + m + "; handled once\n");
  EXPECT_TRUE(std::regex_match(before_table(r.err.substr(r.err.find("modsign: verify: "))),
                               summary_re("verify", 1, 0, 1, before.size(), 1)))
      << r.err;
  r = test::run(M() + " verify --json --cert " + q(crt("rsa-2048")) + " " + q(m) + " " + q(other) + " --jobs 1");
  EXPECT_EQ(r.status, 0) << r.err;
  const auto nl = r.out.find('\n');
  ASSERT_NE(nl, std::string::npos);
  const auto j1 = nlohmann::json::parse(r.out.substr(0, nl));
  const auto j2 = nlohmann::json::parse(r.out.substr(nl + 1));
  EXPECT_EQ(j2["outcome"], "skipped");
  EXPECT_EQ(j2["reason"], "same file as " + m + "; handled once");
  EXPECT_TRUE(j2["errno"].is_null());
  EXPECT_TRUE(j2["compressed"].is_null());
  std::vector<std::string> k1, k2;
  for (auto it = j1.begin(); it != j1.end(); ++it) k1.push_back(it.key());
  for (auto it = j2.begin(); it != j2.end(); ++it) k2.push_back(it.key());
  EXPECT_EQ(k1, k2);  // one schema for verdicts and skipped/error records
}
