// Helpers shared by the test_batch_*.cpp files: the modsign CLI, module contents, and the
// Batch fixture (keys made once with `modsign keygen`, a small module tree).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace modsign::test::batch_tests {

using test::q;

inline std::string M() { return test::modsign_cli(); }

// Module contents of different sizes: byte i = (i * 7 + 3 + seed) & 0xff.
inline Bytes content(std::size_t n, std::uint8_t seed) {
  Bytes b = test::pattern(n);
  for (auto& c : b) c = static_cast<std::uint8_t>(c + seed);
  return b;
}

// The names of a small module tree (input order of -r: sorted paths).
inline const std::vector<std::string> kTree = {"a.ko",    "b.ko",   "drivers/c.ko", "drivers/net/d.ko",
                                               "fs/e.ko", "fs/z.ko"};

class Batch : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    for (const char* algo : {"rsa-2048", "ml-dsa-44", "ml-dsa-65", "ml-dsa-87"}) {
      auto r = test::run(M() + " keygen --algo " + algo + " --out " + q(*dir_ / (std::string(algo) + ".pem")) +
                         " --cert-out " + q(*dir_ / (std::string(algo) + ".crt")));
      ASSERT_EQ(r.status, 0) << r.err;
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string key(const std::string& algo) { return *dir_ / (algo + ".pem"); }
  static std::string crt(const std::string& algo) { return *dir_ / (algo + ".crt"); }

  // Writes the unsigned tree under `root`; returns the paths in -r order.
  std::vector<std::string> make_tree(const std::string& root) {
    std::vector<std::string> paths;
    std::uint8_t seed = 1;
    for (const auto& n : kTree) {
      const std::string p = root + "/" + n;
      std::filesystem::create_directories(std::filesystem::path(p).parent_path());
      test::spit(p, content(1000 + 777u * seed, seed));
      paths.push_back(p);
      ++seed;
    }
    return paths;
  }
  std::string sign_cmd(const std::string& algo) {
    return M() + " sign --key " + q(key(algo)) + " --cert " + q(crt(algo)) + " ";
  }

  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

}  // namespace modsign::test::batch_tests
