// Helpers shared by the test_blacklist_*.cpp files: the modsign CLI, shell commands that
// must succeed, hex strings, SHA-256 of bytes, and the BlacklistCli fixture.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "blacklist/check.hpp"
#include "blacklist/hash_list.hpp"
#include "crypto/crypto.hpp"
#include "test_support.hpp"

namespace modsign::test::blacklist_tests {

using namespace modsign::blacklist;
using test::q;

inline std::string M() { return test::modsign_cli(); }

inline std::string hexes(std::size_t n, char c = 'a') { return std::string(n, c); }

inline std::string sh(const std::string& cmd) {
  auto r = test::run(cmd);
  EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
  return r.out;
}

/// First word of `sha256sum`-style output.
inline std::string first_word(const std::string& s) { return s.substr(0, s.find_first_of(" \n")); }

/// Keys made once with `modsign keygen`: RSA-2048 (certificate signed with SHA-256) and ML-DSA-65.
class BlacklistCli : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    auto r = test::run(M() + " keygen --algo rsa-2048 --out " + q(*dir_ / "rsa.pem") + " --cert-out " +
                       q(*dir_ / "rsa.crt") + " --subject 'CN=blacklist test RSA'");
    ASSERT_EQ(r.status, 0) << r.err;
    r = test::run(M() + " keygen --algo ml-dsa-65 --out " + q(*dir_ / "mldsa.pem") + " --cert-out " +
                  q(*dir_ / "mldsa.crt"));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string key(const std::string& n) { return *dir_ / n; }
  /// A module signed by modsign: `n` pattern bytes, then the signature.
  std::string signed_module(const std::string& name, const std::string& key_name, const std::string& cert_name,
                            const std::string& hash, std::size_t n = 5000) {
    const std::string p = d_ / name;
    test::spit(p, test::pattern(n));
    auto r = test::run(M() + " sign --key " + q(key(key_name)) + " --cert " + q(key(cert_name)) + " --hash " + hash +
                       " " + q(p));
    EXPECT_EQ(r.status, 0) << r.err;
    return p;
  }
  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

inline std::string sha256_of(const Bytes& b) { return to_hex(crypto::digest(crypto::HashAlgo::sha256, b)); }

}  // namespace modsign::test::blacklist_tests
