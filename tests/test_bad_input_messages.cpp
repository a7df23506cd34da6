// Bad input whose message must say what is wrong and how to fix it (issue 17 §3):
// a hash entry given as a file name, a module over the in-memory limit, a key file without
// its certificate, text given as an EFI signature list.
#include <gtest/gtest.h>

#include <string>

#include "bad_input_support.hpp"
#include "test_support.hpp"

using namespace bad_input_test;

TEST_F(BadInput, HashEntryGivenAsFileName) {
  // "tbs:<hex>" / "bin:<hex>" where a file name is expected: said to look like a hash entry.
  const std::string p = module();
  const std::string tbs = "tbs:" + std::string(64, 'a'), bin = "bin:" + std::string(64, 'b');
  const std::string hint =
      " (this looks like a blacklist hash entry, not a file name: put it in a hash-list file, one ";
  expect_refused("cd " + q(d_.path()) + " && " + verify() + "--blacklist " + tbs + " " + q(p), 3,
                 "modsign: " + tbs + ": No such file or directory" + hint + "\"tbs:<hex>\" a line)\n");
  expect_refused("cd " + q(d_.path()) + " && " + M() + " verify --cert " + bin + " " + q(p), 3,
                 "modsign: " + bin + ": No such file or directory" + hint + "\"bin:<hex>\" a line)\n");
  // An ordinary missing name keeps the plain message (MissingFile).
  expect_refused(verify() + "--blacklist " + q(d_ / "tbs.txt") + " " + q(p), 3,
                 "modsign: " + (d_ / "tbs.txt") + ": No such file or directory\n");
}

TEST_F(BadInput, ModuleLargerThanTheReadLimitNamesMaxSize) {
  // A sparse 1 GiB + 1 byte file: every command that reads a module into memory refuses it
  // naming --max-size (digest and verify stream it instead); ima template takes --max-size.
  const std::string big = d_ / "big.ko";
  ASSERT_EQ(test::run("truncate -s 1073741825 " + q(big)).status, 0);
  const std::string why = "modsign: " + big +
                          ": file is 1073741825 bytes, more than the 1073741824 bytes modsign reads "
                          "into memory (raise --max-size)\n";
  expect_refused(M() + " info " + q(big), 3, why);
  expect_refused(M() + " ima template " + q(big), 3, why);
  expect_refused(M() + " blacklist entry " + q(big), 3, why);
  expect_refused(M() + " ima template --max-size 1048576 " + q(big), 3, why);
  EXPECT_NE(test::run(M() + " ima template --help").out.find("--max-size"), std::string::npos);
}

TEST_F(BadInput, KeyOnlyFileWithoutCertSuggestsCert) {
  // A key-only file and no --cert: the key file is searched for the certificate, and the
  // message says to give it.
  const std::string p = module();
  expect_refused(M() + " sign --key " + q(key("ec.pem")) + " " + q(p), 3,
                 "modsign: " + key("ec.pem") +
                     ": no X.509 certificate found (neither DER nor PEM CERTIFICATE); the key file holds no "
                     "certificate: give it with --cert\n");
}

TEST_F(BadInput, TextGivenAsEfiSignatureList) {
  // JSON (dbx list --json output) or a hash list given to dbx list / merge.
  test::spit(d_ / "dbx.json", std::string("{\"lists\": []}\n"));
  test::spit(d_ / "hashes.txt", std::string("\"bin:" + std::string(64, 'a') + "\"\n"));
  const std::string why =
      ": EBADMSG: this is text, not an EFI signature list (EFI_SIGNATURE_LIST is binary: a "
      "SignatureType GUID, then u32 sizes)\n";
  expect_refused(M() + " dbx list " + q(d_ / "dbx.json"), 3, "modsign: " + (d_ / "dbx.json") + why);
  expect_refused(M() + " dbx list --json " + q(d_ / "hashes.txt"), 3, "modsign: " + (d_ / "hashes.txt") + why);
  expect_refused(M() + " dbx merge -o " + q(d_ / "out.esl") + " " + q(d_ / "hashes.txt"), 3,
                 "modsign: " + (d_ / "hashes.txt") + why);
}
