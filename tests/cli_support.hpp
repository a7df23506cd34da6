// Helpers shared by the test_cli_*.cpp files: the modsign CLI and the Cli fixture (one key
// set made once with `modsign keygen`, fresh unsigned modules per test).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "test_support.hpp"

namespace modsign::test::cli_tests {

using test::q;

inline std::string M() { return test::modsign_cli(); }

// One key set for the whole suite: ML-DSA-65 key+cert in one file and separately, plus an
// ECDSA key, made by `modsign keygen` itself.
class Cli : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    auto r = test::run(M() + " keygen --out " + q(*dir_ / "mldsa.pem") + " --cert-out " + q(*dir_ / "mldsa.crt") +
                       " --subject 'CN=CLI test key,O=modsign'");
    ASSERT_EQ(r.status, 0) << r.err;
    r = test::run(M() + " keygen --algo ml-dsa-65 --out " + q(*dir_ / "combined.pem"));
    ASSERT_EQ(r.status, 0) << r.err;
    r = test::run(M() + " keygen --algo ecdsa-p256 --out " + q(*dir_ / "ec.pem") + " --cert-out " +
                  q(*dir_ / "ec.crt"));
    ASSERT_EQ(r.status, 0) << r.err;
    r = test::run(M() + " keygen --algo rsa-2048 --out " + q(*dir_ / "rsa.pem") + " --cert-out " +
                  q(*dir_ / "rsa.crt"));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string key(const std::string& n) { return *dir_ / n; }

  // A fresh unsigned "module" in the per-test directory.
  std::string module(const std::string& name = "mod.ko", std::size_t n = 4096) {
    const std::string p = d_ / name;
    test::spit(p, test::pattern(n));
    return p;
  }
  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

}  // namespace modsign::test::cli_tests
