// tools/campaign-record (issue 24): CI's check that the recorded mutation campaign still
// covers the code.  A record written over a tree passes; a covered file changed or removed
// afterwards fails the check with exit 1, naming the file and the record's commit.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_support.hpp"

namespace modsign::test {
namespace {

namespace fs = std::filesystem;

std::string tool() { return q(source_dir() + "/tools/campaign-record"); }

class CampaignRecord : public testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(d_ / "cms");
    fs::create_directories(d_ / "tools/conformance");
    fs::create_directories(d_ / "docs");
    spit(d_ / "cms/pkcs7_parser.cpp", "// mirrors pkcs7_parser.c\n");
    spit(d_ / "tools/conformance/mutate.py", "import random\n");
    spit(d_ / "covered.txt", "cms/pkcs7_parser.cpp\ntools/conformance/mutate.py\nnot/there.cpp\n");
    const test::Run w = run(tool() + " write --root " + q(d_.path()) + " --files " + q(d_ / "covered.txt") +
                            " --meta commit=abc1234 --meta seed=7");
    ASSERT_EQ(w.status, 0) << w.err;
    EXPECT_EQ(w.out, "campaign-record: wrote docs/conformance-mutants.record.json: 2 covered files\n");
  }
  test::Run check() { return run(tool() + " check --root " + q(d_.path())); }
  TempDir d_;
};

TEST_F(CampaignRecord, AnUnchangedTreePasses) {
  const test::Run r = check();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "campaign-record: docs/conformance-mutants.record.json (commit abc1234): the 2 covered files are "
            "as recorded\n");
}

TEST_F(CampaignRecord, AChangedCoveredFileFailsNamingIt) {
  spit(d_ / "cms/pkcs7_parser.cpp", "// mirrors pkcs7_parser.c, changed\n");
  const test::Run r = check();
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "campaign-record: the mutation campaign recorded in docs/conformance-mutants.record.json (commit abc1234) "
            "no longer covers this code:\n"
            "  changed since abc1234: cms/pkcs7_parser.cpp\n"
            "run tools/mutant-campaign (docs/development.md, Tiers) and commit the new record\n");
}

TEST_F(CampaignRecord, ARemovedCoveredFileFails) {
  fs::remove(d_ / "tools/conformance/mutate.py");
  const test::Run r = check();
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("  gone since abc1234: tools/conformance/mutate.py\n"), std::string::npos) << r.err;
}

TEST_F(CampaignRecord, AFileTheCampaignDidNotCoverMayChange) {
  spit(d_ / "cms/other.cpp", "// not covered\n");
  EXPECT_EQ(check().status, 0);
}

TEST_F(CampaignRecord, AMissingOrBrokenRecordIsAnError) {
  spit(d_ / "docs/conformance-mutants.record.json", "{\"covered\": {}}");
  test::Run r = check();
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not a campaign record"), std::string::npos) << r.err;
  fs::remove(d_ / "docs/conformance-mutants.record.json");
  r = check();
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not a campaign record"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace modsign::test
