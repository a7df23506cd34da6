// `modsign ima sign` and `modsign ima verify` (issue 16 §1): the outputs (security.ima,
// FILE.sig, manifest), the --json verdict keys, the exit statuses, and the refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "test_support.hpp"

namespace modsign::test {
namespace {

using nlohmann::json;

std::string M() { return modsign_cli(); }

class CliImaSign : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    for (const auto& [name, spec] : {std::pair<std::string, std::string>{"ec", "ec -pkeyopt ec_paramgen_curve:P-384"},
                                     {"ml", "mldsa65"},
                                     {"other", "ec -pkeyopt ec_paramgen_curve:P-256"}}) {
      auto r = run(openssl() + " req -x509 -new -newkey " + spec + " -nodes -keyout " + q(*dir_ / (name + ".pem")) +
                   " -subj '/CN=cli " + name + "' -days 30 -out " + q(*dir_ / (name + ".crt")));
      ASSERT_EQ(r.status, 0) << r.err;
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string f(const std::string& n) { return *dir_ / n; }
  std::string sign(const std::string& key) {
    return M() + " ima sign --key " + q(f(key + ".pem")) + " --cert " + q(f(key + ".crt"));
  }
  json verify_json(const std::string& args) {
    const auto r = run(M() + " ima verify --json " + args);
    EXPECT_EQ(r.out.empty(), false) << r.err;
    return json::parse(r.out.substr(0, r.out.find('\n')));
  }
  TempDir d_;
  static TempDir* dir_;
};
TempDir* CliImaSign::dir_ = nullptr;

TEST_F(CliImaSign, SetxattrThenVerifyPasses) {
  spit(d_ / "a", pattern(5000));
  auto r = run(sign("ml") + " " + q(d_ / "a"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(": v3 sha256 keyid "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", ML-DSA-65, 3318 bytes (security.ima set)"), std::string::npos) << r.out;
  const json j = verify_json("--keyring " + q(f("ml.crt")) + " --appraise-type sigv3 " + q(d_ / "a"));
  EXPECT_EQ(j["status"], "pass");
  EXPECT_EQ(j["open"], "0");
  EXPECT_EQ(j["cause"], nullptr);
  EXPECT_EQ(j["digsig_errno"], "0");
  EXPECT_EQ(j["version"], 3);
  EXPECT_EQ(j["hash_algo"], "sha256");
  EXPECT_EQ(j["algorithm"], "ml-dsa-65");
  EXPECT_EQ(j["appraise_type"], "sigv3");
  EXPECT_EQ(j["kernel"], "v7.2");
  EXPECT_EQ(j["xattr_size"], 3318);
  EXPECT_EQ(run(M() + " ima verify --keyring " + q(f("ml.crt")) + " " + q(d_ / "a")).status, 0);
  // The wrong keyring: a negative verdict, exit 1.
  r = run(M() + " ima verify --keyring " + q(f("other.crt")) + " " + q(d_ / "a"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find(": imasig: fail (EACCES): invalid-signature: ENOKEY: "), std::string::npos) << r.out;
  // 7.1 has no ML-DSA branch in asymmetric_verify_v3.
  const json old = verify_json("--kernel v7.1 --keyring " + q(f("ml.crt")) + " " + q(d_ / "a"));
  EXPECT_EQ(old["status"], "fail");
  EXPECT_EQ(old["digsig_errno"], "ENOPKG");
  const json rule = verify_json("--kernel v6.1 --appraise-type sigv3 --keyring " + q(f("ml.crt")) + " " + q(d_ / "a"));
  EXPECT_EQ(rule["status"], "policy-refused");
  EXPECT_EQ(rule["policy_errno"], "EINVAL");
  EXPECT_EQ(rule["open"], nullptr);
}

TEST_F(CliImaSign, SigfileAndManifestOutputs) {
  spit(d_ / "b", pattern(100));
  spit(d_ / "c", pattern(200));
  auto r = run(sign("ec") + " --sigfile " + q(d_ / "b") + " " + q(d_ / "c"));
  ASSERT_EQ(r.status, 0) << r.err;
  const Bytes sig = slurp(d_ / "b.sig");
  EXPECT_EQ(sig[0], 3);
  EXPECT_EQ(sig[1], 2);
  EXPECT_EQ(sig[2], 4);
  const auto x = run("python3 -c 'import os,sys; print(\"security.ima\" in os.listxattr(sys.argv[1]))' " + q(d_ / "b"));
  EXPECT_EQ(x.out, "False\n") << "--sigfile sets no xattr: " << x.err;
  const json j = verify_json("--sigfile --keyring " + q(f("ec.crt")) + " " + q(d_ / "b"));
  EXPECT_EQ(j["status"], "pass");
  EXPECT_EQ(j["algorithm"], "ecdsa-p384");
  r = run(sign("ec") + " --v3 --hash sha512 --deterministic --manifest " + q(d_ / "m.jsonl") + " " + q(d_ / "b") + " " +
          q(d_ / "c"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string text(reinterpret_cast<const char*>(slurp(d_ / "m.jsonl").data()), slurp(d_ / "m.jsonl").size());
  const json first = json::parse(text.substr(0, text.find('\n')));
  EXPECT_EQ(first["path"], d_ / "b");
  EXPECT_EQ(first["xattr"], "security.ima");
  const Bytes value = from_hex(first["security.ima"].get<std::string>());
  EXPECT_EQ(first["size"], value.size());
  EXPECT_EQ(value[1], 3);
  EXPECT_EQ(value[2], 6);
  EXPECT_EQ(first["file_size"], 100);
  EXPECT_EQ(first["sha256"], run("sha256sum " + q(d_ / "b")).out.substr(0, 64));
  EXPECT_EQ(first["hash"], "sha512:" + run("sha512sum " + q(d_ / "b")).out.substr(0, 128));
  const json v = verify_json("--appraise-type sigv3 --kernel v7.1 --keyring " + q(f("ec.crt")) + " --xattr-hex " +
                             first["security.ima"].get<std::string>() + " " + q(d_ / "b"));
  EXPECT_EQ(v["status"], "pass");
  EXPECT_EQ(v["hash_algo"], "sha512");
}

TEST_F(CliImaSign, RefusalsAndUsage) {
  // A file system without xattrs: exit 3, the file and the reason named.
  auto r = run(sign("ec") + " /proc/version");
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("modsign: /proc/version: setxattr security.ima: the file system does not support security.* "
                       "extended attributes (EOPNOTSUPP)"),
            std::string::npos)
      << r.err;
  spit(d_ / "x", "x");
  r = run(sign("ec") + " --sigfile --manifest " + q(d_ / "m") + " " + q(d_ / "x"));
  EXPECT_EQ(r.status, 2) << r.err;
  r = run(sign("ec") + " --keyid xyz " + q(d_ / "x"));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--keyid: 'xyz' is not a 32-bit key id"), std::string::npos) << r.err;
  r = run(sign("ec") + " --hash md5 " + q(d_ / "x"));
  EXPECT_EQ(r.status, 2) << r.err;
  // A manifest is not written when a file fails.
  r = run(sign("ec") + " --manifest " + q(d_ / "m2") + " " + q(d_ / "x") + " " + q(d_ / "missing"));
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(run("test -e " + q(d_ / "m2")).status, 0);
  EXPECT_NE(r.err.find("modsign: " + d_ / "m2" + ": not written: a file could not be signed\n"), std::string::npos)
      << r.err;
  // On standard output too: nothing is printed, and stderr says so (session 19's hostile review).
  r = run(sign("ec") + " --manifest - " + q(d_ / "x") + " " + q(d_ / "missing"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("modsign: --manifest -: not written: a file could not be signed\n"), std::string::npos) << r.err;
  // verify: an unreadable file is exit 3; --xattr-hex with two files is usage.
  EXPECT_EQ(run(M() + " ima verify " + q(d_ / "missing")).status, 3);
  EXPECT_EQ(run(M() + " ima verify --xattr-hex 0302 " + q(d_ / "x") + " " + q(d_ / "x")).status, 2);
  // No xattr at all: IMA-signature-required.
  const json j = verify_json(q(d_ / "x"));
  EXPECT_EQ(j["cause"], "IMA-signature-required");
  EXPECT_EQ(j["open"], "EACCES");
  EXPECT_EQ(j["version"], nullptr);
  EXPECT_EQ(j["digsig_errno"], nullptr);
}

TEST_F(CliImaSign, TreeAndTemplateRecordOfTheValue) {
  run("mkdir -p " + q(d_ / "t/s"));
  spit(d_ / "t/1", pattern(10));
  spit(d_ / "t/s/2", pattern(20));
  auto r = run(sign("ec") + " -q -j 2 --manifest - -r " + q(d_ / "t"));
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
  const json second = json::parse(r.out.substr(r.out.find('\n') + 1));
  EXPECT_EQ(second["path"], d_ / "t/s/2");
  // ima template --security-ima records the given value in the sig field.
  r = run(M() + " ima template --json --template ima-sig --security-ima " + second["security.ima"].get<std::string>() +
          " " + q(d_ / "t/s/2"));
  ASSERT_EQ(r.status, 0) << r.err;
  const json t = json::parse(r.out);
  EXPECT_EQ(t["fields"][2]["name"], "sig");
  EXPECT_EQ(t["fields"][2]["hex"], second["security.ima"]);
  // ima-sigv2: d-ngv2 = "ima:sha256:" NUL digest; the template hash is SHA-256 of the data.
  r = run(M() + " ima template --json --template ima-sigv2 --path /x --security-ima " +
          second["security.ima"].get<std::string>() + " " + q(d_ / "t/s/2"));
  ASSERT_EQ(r.status, 0) << r.err;
  const json t2 = json::parse(r.out);
  const std::string digest = run("sha256sum " + q(d_ / "t/s/2")).out.substr(0, 64);
  EXPECT_EQ(t2["fields"][0]["name"], "d-ngv2");
  EXPECT_EQ(t2["fields"][0]["hex"], "696d613a7368613235363a00" + digest);
  EXPECT_EQ(t2["fields"][1]["hex"], "2f7800");
  const auto h = run("python3 -c 'import hashlib,sys; print(hashlib.sha256(bytes.fromhex(sys.argv[1])).hexdigest())' " +
                     t2["template_data"].get<std::string>());
  EXPECT_EQ(t2["template_hash_sha256"], h.out.substr(0, 64));
}

// Linux 6.1-6.6 end enum hash_algo at 20 (SHA-3 came with 6.7): a SHA-3 signature is ENOPKG
// there (asymmetric_verify: hash_algo >= HASH_ALGO__LAST), and ima_hash=sha3-256 is refused.
TEST_F(CliImaSign, Sha3SignatureIsNoHashOfLinux61) {
  spit(d_ / "a", std::string("hello"));
  auto r = run(sign("ec") + " -q --hash sha3-256 --sigfile " + q(d_ / "a"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(d_ / "a.sig").at(2), 20);
  r = run(M() + " ima verify --kernel v6.1 --keyring " + q(f("ec.crt")) + " --sigfile " + q(d_ / "a"));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(
      r.out.find(": imasig: fail (EACCES): invalid-signature: ENOPKG: integrity_digsig_verify: hash_algo 20 is no "
                 "enum hash_algo value of Linux 6.1-6.6 (SHA-3 came with 6.7)"),
      std::string::npos)
      << r.out;
  r = run(M() + " ima verify --kernel v6 --keyring " + q(f("ec.crt")) + " --sigfile " + q(d_ / "a"));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  r = run(M() + " ima verify --kernel v6.1 --ima-hash sha3-256 --keyring " + q(f("ec.crt")) + " --sigfile " +
          q(d_ / "a"));
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  // The record: d-ng falls back to ima_hash (sha256 of "hello").
  r = run(M() + " ima template --kernel v6.1 --template ima-sig --security-ima " + to_hex(slurp(d_ / "a.sig")) + " " +
          q(d_ / "a"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(
      r.out.find("d-ng (40 bytes): 7368613235363a002cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"),
      std::string::npos)
      << r.out;
}

// --sigfile -r: the FILE.sig files in the tree are the signatures, neither signed nor checked.
// A --manifest that cannot be written is said before anything is signed (new user's
// trial: it was said after the whole run, whose summary read as success), exit 3.
TEST_F(CliImaSign, ManifestDestinationCheckedFirst) {
  spit(d_ / "a", std::string("one"));
  for (const std::string& dest : {std::string("/dev/null"), d_ / "missing/m.jsonl"}) {
    const auto r = run(sign("ec") + " --manifest " + q(dest) + " " + q(d_ / "a"));
    EXPECT_EQ(r.status, 3) << dest;
    EXPECT_EQ(r.out, "") << dest;
    EXPECT_EQ(r.err, dest == "/dev/null"
                         ? "modsign: /dev/null: is a device, not a regular file; not replacing it\n"
                         : "modsign: " + dest + ": cannot create temporary file: No such file or directory\n");
  }
  const auto left = snapshot_dir(d_.path());
  EXPECT_EQ(left.size(), 1u);  // "a" alone: no temporary left behind
}

TEST_F(CliImaSign, SigfileTreeRoundTrip) {
  run("mkdir " + q(d_ / "t"));
  spit(d_ / "t/f", std::string("x"));
  auto r = run(sign("ec") + " -q --sigfile -r " + q(d_ / "t"));
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(sign("ec") + " --sigfile -r " + q(d_ / "t"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(d_ / "t/f.sig: skipped: signature file (--sigfile), not a file to sign or check"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(run("ls " + q(d_ / "t")).out, "f\nf.sig\n");
  r = run(M() + " ima verify --keyring " + q(f("ec.crt")) + " --sigfile -r " + q(d_ / "t"));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("ima verify: 1 checked, 0 errors, 1 skipped"), std::string::npos) << r.err;
}

// No output may be an input: a --manifest naming one, a FILE.sig that links to one.
TEST_F(CliImaSign, OutputsNeverOverwriteInputs) {
  spit(d_ / "a", std::string("hello"));
  spit(d_ / "b", std::string("world"));
  auto r = run(sign("ec") + " --manifest " + q(d_ / "a") + " " + q(d_ / "a") + " " + q(d_ / "b"));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find(d_ / "a: is the same file as the input " + d_ / "a" + "; refusing to overwrite it"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(slurp(d_ / "a"), (Bytes{'h', 'e', 'l', 'l', 'o'}));
  spit(d_ / "p", std::string("q"));
  run("ln -s " + q(d_ / "b") + " " + q(d_ / "p.sig"));
  r = run(sign("ec") + " --sigfile " + q(d_ / "p") + " " + q(d_ / "b"));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find(d_ / "p.sig: is the same file as the input " + d_ / "b" + "; refusing to overwrite it"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(slurp(d_ / "b"), (Bytes{'w', 'o', 'r', 'l', 'd'}));
}

// ima fit --device on a FIFO or a directory: refused before any read (a FIFO would block).
TEST_F(CliImaSign, FitDeviceMustBeAnImageOrBlockDevice) {
  run("mkfifo " + q(d_ / "ff"));
  auto r = run("timeout 20 " + M() + " ima fit --device " + q(d_ / "ff"));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.err, "modsign: " + d_ / "ff" + ": a FIFO, not a block device or file system image\n");
  r = run(M() + " ima fit --device " + q(d_.path()));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.err, "modsign: " + d_.path() + ": a directory, not a block device or file system image\n");
}

}  // namespace
}  // namespace modsign::test
