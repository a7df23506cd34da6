// The BadInput fixture shared by test_bad_input*.cpp: keys made once, a fresh test
// directory per test, and expect_refused() (status, stderr, and no file changed).
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <string>

#include "crypto/crypto.hpp"
#include "test_support.hpp"

namespace bad_input_test {

using namespace modsign;
using test::q;

inline std::string M() { return test::modsign_cli(); }

/// SHA-256 of every file under `dir` (relative names), FIFOs and devices by type only.  A
/// file over 64 MiB (the sparse 1 GiB inputs) is named by inode, size and change time
/// instead: no write leaves its ctime as it was, and hashing it took minutes per test.
inline std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> s;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const auto rel = std::filesystem::relative(e.path(), dir).string();
    struct stat st {};
    if (e.is_regular_file() && ::stat(e.path().c_str(), &st) == 0 && st.st_size > (std::int64_t{64} << 20))
      s[rel] = std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_ctim.tv_sec) +
               "." + std::to_string(st.st_ctim.tv_nsec);
    else if (e.is_regular_file())
      s[rel] = to_hex(crypto::digest(crypto::HashAlgo::sha256, test::slurp(e.path().string())));
    else s[rel] = e.is_directory() ? "dir" : "special";
  }
  return s;
}

// Keys made once by `modsign keygen` (mode 0600): ECDSA P-256 and ML-DSA-65.
class BadInput : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    keys_ = new test::TempDir();
    for (auto [algo, name] : {std::pair{"ecdsa-p256", "ec"}, std::pair{"ml-dsa-65", "ml"}}) {
      auto r = test::run(M() + " keygen --algo " + algo + " --out " + q(*keys_ / (std::string(name) + ".pem")) +
                         " --cert-out " + q(*keys_ / (std::string(name) + ".crt")));
      ASSERT_EQ(r.status, 0) << r.err;
    }
  }
  static void TearDownTestSuite() { delete keys_; }
  static std::string key(const std::string& n) { return *keys_ / n; }

  void SetUp() override { keys_before_ = snapshot(keys_->path()); }
  void TearDown() override { EXPECT_EQ(snapshot(keys_->path()), keys_before_) << "the key directory changed"; }

  /// A module of 3000 pattern bytes in the test directory.
  std::string module(const std::string& name = "m.ko") {
    test::spit(d_ / name, test::pattern(3000));
    return d_ / name;
  }
  /// The module signed with the ECDSA key.
  std::string signed_module(const std::string& name = "s.ko") {
    const std::string p = module(name);
    auto r = test::run(M() + " sign --key " + q(key("ec.pem")) + " --cert " + q(key("ec.crt")) + " " + q(p));
    EXPECT_EQ(r.status, 0) << r.err;
    return p;
  }
  /// Run `cmd`; expect `status` and `err` on stderr, and the test directory unchanged.
  test::Run expect_refused(const std::string& cmd, int status, const std::string& err) {
    const auto before = snapshot(d_.path());
    auto r = test::run(cmd);
    EXPECT_EQ(r.status, status) << cmd << "\n" << r.err;
    EXPECT_EQ(r.err, err) << cmd;
    EXPECT_EQ(snapshot(d_.path()), before) << "files changed: " << cmd;
    return r;
  }
  std::string sign() const { return M() + " sign --key " + q(key("ec.pem")) + " --cert " + q(key("ec.crt")) + " "; }
  std::string verify() const { return M() + " verify --cert " + q(key("ec.crt")) + " "; }

  static inline test::TempDir* keys_ = nullptr;
  std::map<std::string, std::string> keys_before_;
  test::TempDir d_;
};

}  // namespace bad_input_test
