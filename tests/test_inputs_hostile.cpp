// Inputs from the hostile review of the read-only commands: verify without any module, a
// --keyring directory holding entries that are not certificates (skipped with a note as
// the kernel's loaders skip them, refused under --strict), one --json line per input for
// digest / ima template / blacklist entry, and error texts that do not repeat the path.
#include <gtest/gtest.h>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_support.hpp"

namespace modsign::test::cli_tests {
namespace {

namespace fs = std::filesystem;

class HostileInputs : public Cli {
 protected:
};

// 1. verify: no MODULE and no -r is a usage error, as for sign (exit 0 would say that
// every module loads untainted).
TEST_F(HostileInputs, VerifyWithoutModulesIsAUsageError) {
  for (const std::string& extra :
       std::vector<std::string>{"", " --json", " --keyring " + q(key("rsa.crt")), " --json --keyring " + q(key("rsa.crt"))}) {
    SCOPED_TRACE(extra);
    auto r = test::run(M() + " verify" + extra);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "modsign: no modules given (MODULE... or -r DIR)\n");
  }
  // -r with an empty directory is a batch of nothing: exit 0, no line, the summary only.
  fs::create_directory(d_ / "empty");
  auto r = test::run(M() + " verify -r " + q(d_ / "empty"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("modsign: verify: 0 done, 0 failed, 0 skipped, 0 bytes, ", 0), 0u) << r.err;
  r = test::run(M() + " verify --json -r " + q(d_ / "empty"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace modsign::test::cli_tests
