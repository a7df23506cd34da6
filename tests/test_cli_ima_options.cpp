// The review findings of `modsign ima sign|verify|template|fit|estimate` (issue 16): one
// profile name per kernel release in every ima command, the hash IMA collects with, the
// geometry options, tree walks, superblock and mount errors, stdout errors, --json
// records and option errors, each with exact messages, exit statuses and bytes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "digest/ima_appraise.hpp"
#include "digest/proc_namespace.hpp"
#include "test_support.hpp"

namespace modsign::test {
namespace {

using nlohmann::json;

std::string M() { return modsign_cli(); }

class CliImaOptions : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    auto r = run(openssl() + " req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-384 -nodes -keyout " +
                 q(*dir_ / "ec.pem") + " -subj '/CN=review ec' -days 30 -out " + q(*dir_ / "ec.crt"));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string f(const std::string& n) { return *dir_ / n; }
  static std::string sign() { return M() + " ima sign --key " + q(f("ec.pem")) + " --cert " + q(f("ec.crt")); }
  TempDir d_;
  static TempDir* dir_;
};
TempDir* CliImaOptions::dir_ = nullptr;

std::string sha(const std::string& tool, const std::string& path) {
  return run(tool + " " + q(path)).out.substr(0, tool == "sha512sum" ? 128 : 64);
}

// 1. The profile names: `ima template` takes v7.1/v7.2 as `ima verify` does, and a version 3
// value names the file hash (ima_get_hash_algo) only from 7.1, as it is appraised only there.
TEST(ImaOptions, V3HashAlgoIsVersionAware) {
  const Bytes v3{3, 3, 6, 0, 0, 0, 0, 0, 1, 0};  // sigv3, sha512, one signature byte
  const Bytes v2{3, 2, 6, 0, 0, 0, 0, 0, 1, 0};
  EXPECT_EQ(digest::ima_get_hash_algo(v3, 4, cms::KernelModel::v7_0()), 4);
  EXPECT_EQ(digest::ima_get_hash_algo(v3, 4, cms::KernelModel::v6()), 4);
  EXPECT_EQ(digest::ima_get_hash_algo(v3, 4, cms::KernelModel::v7(1)), 6);
  EXPECT_EQ(digest::ima_get_hash_algo(v3, 4, cms::KernelModel::v7(2)), 6);
  EXPECT_EQ(digest::ima_get_hash_algo(v2, 4, cms::KernelModel::v7_0()), 6);
  EXPECT_EQ(digest::ima_get_hash_algo(v2, 4, cms::KernelModel::v6_1()), 6);
}

TEST_F(CliImaOptions, TemplateProfilesMeanWhatVerifyProfilesMean) {
  spit(d_ / "a", std::string("hello"));
  auto r = run(sign() + " -q --v3 --hash sha512 --sigfile " + q(d_ / "a"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string value = to_hex(slurp(d_ / "a.sig"));
  auto tmpl = [&](const std::string& kernel) {
    auto t =
        run(M() + " ima template --json --template ima-sig " + kernel + " --security-ima " + value + " " + q(d_ / "a"));
    EXPECT_EQ(t.status, 0) << t.err;
    return json::parse(t.out.empty() ? "{}" : t.out);
  };
  const std::string d512 = to_hex(Bytes{'s', 'h', 'a', '5', '1', '2', ':', 0}) + sha("sha512sum", d_ / "a");
  const std::string d256 = to_hex(Bytes{'s', 'h', 'a', '2', '5', '6', ':', 0}) + sha("sha256sum", d_ / "a");
  // 7.0: no sigv3, so ima_get_hash_algo ignores the header and IMA hashes with ima_hash.
  json t = tmpl("--kernel v7.0");
  EXPECT_EQ(t["kernel"], "v7.0");
  EXPECT_EQ(t["fields"][0]["hex"], d256);
  t = tmpl("--kernel v7.1");
  EXPECT_EQ(t["kernel"], "v7.1");
  EXPECT_EQ(t["fields"][0]["hex"], d512);
  t = tmpl("");  // the default is 7.2, as for ima verify
  EXPECT_EQ(t["kernel"], "v7.2");
  EXPECT_EQ(t["fields"][0]["hex"], d512);
  // ima verify gives v7.0 the same meaning: version 3 is refused there, hashed with ima_hash.
  r = run(M() + " ima verify --json --kernel v7.0 --keyring " + q(f("ec.crt")) + " --sigfile " + q(d_ / "a"));
  EXPECT_EQ(r.status, 1) << r.err;
  const json v = json::parse(r.out);
  EXPECT_EQ(v["cause"], "invalid-signature-version");
  EXPECT_EQ(v["file_hash"], "sha256:" + sha("sha256sum", d_ / "a"));
  EXPECT_EQ(run(M() + " ima appraise --kernel v7.2 --help").status, 0);
  r = run(M() + " ima template --kernel v7.3 " + q(d_ / "a"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("v7.3 not in {v6.1,v6,v7.0,v7.1,v7.2}"), std::string::npos) << r.err;
}

// 2. A value naming a hash modsign cannot compute: the kernel hashes with it (no fallback to
// ima_hash below HASH_ALGO__LAST), so no sha256 record is invented; beyond it, the kernel's
// fallback to ima_hash is taken and said in a note.
TEST_F(CliImaOptions, TemplateNeverInventsTheFallbackHash) {
  spit(d_ / "a", std::string("hello"));
  auto r = run(M() + " ima template --template ima-sig --security-ima 03020300000000000100 " + q(d_ / "a"));
  EXPECT_EQ(r.status, 3) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "modsign: " + d_ / "a" +
                       ": security.ima names hash_algo 3 (rmd160): IMA hashes the file with it, with no fallback to "
                       "ima_hash (ima_alloc_tfm falls back only beyond HASH_ALGO__LAST), and records no entry on a "
                       "kernel without rmd160 (crypto_alloc_shash fails); modsign cannot compute it\n");
  r = run(M() + " ima template --json --path /x --template ima-sig --security-ima 03020000000000000100 " + q(d_ / "a"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(json::parse(r.out)["error"].get<std::string>().substr(0, 44),
            "security.ima names hash_algo 0 (md4): IMA ha");
  r = run(M() + " ima template --json --template ima-sig --security-ima 03021e00000000000100 " + q(d_ / "a"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string note =
      "security.ima (type 3, version 2, hash_algo 30) names no hash this kernel takes (ima_get_hash_algo: version 2 "
      "or 3, more than 9 bytes, hash_algo below 23): d-ng uses ima_hash, sha256";
  EXPECT_EQ(r.err, "modsign: " + d_ / "a" + ": note: " + note + "\n");
  const json t = json::parse(r.out);
  EXPECT_EQ(t["notes"], json::array({note}));
  EXPECT_EQ(t["fields"][0]["hex"], to_hex(Bytes{'s', 'h', 'a', '2', '5', '6', ':', 0}) + sha("sha256sum", d_ / "a"));
}

// Runs `cmd` without the capabilities that let root read any directory (so a mode 000
// directory is unreadable, as for any other user); "" when setpriv is not there.
std::string without_dac_override(const std::string& cmd) {
  if (::geteuid() != 0) return cmd;
  if (run("setpriv --bounding-set=-dac_override,-dac_read_search true").status != 0) return "";
  return "setpriv --bounding-set=-dac_override,-dac_read_search " + cmd;
}
// Runs `script` (sh) in a private mount namespace; false when unshare(1) cannot make one.
bool can_unshare() { return ::geteuid() == 0 && run("unshare --mount true").status == 0; }

// 3. What --device/--mount read is not overridden: the geometry options exclude them.
TEST_F(CliImaOptions, GeometryOptionsExcludeDeviceAndMount) {
  auto r = run(M() + " ima fit --device " + q(d_ / "none.img") + " --block-size 4096");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--device excludes --block-size"), std::string::npos) << r.err;
  r = run(M() + " ima fit --mount / --ea-inode");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--mount excludes --ea-inode"), std::string::npos) << r.err;
  r = run(M() + " ima estimate -r " + q(d_.path()) + " --device " + q(d_ / "none.img") + " --inode-size 512");
  EXPECT_EQ(r.status, 2) << r.err;
  r = run(M() + " ima fit --mount / --inline-xattr-size 100");
  EXPECT_EQ(r.status, 2) << r.err;
  r = run(M() + " ima fit --device " + q(d_ / "none.img") + " --fs ext4:4096");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err, "modsign: --fs ext4:4096: the size is read from --device " + d_ / "none.img" +
                       "; give --fs ext4 or no --fs\n");
  // A size of 0 is not "the default" (hostile review): a usage error.
  r = run(M() + " ima fit --fs ext4:0");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err, "modsign: --fs ext4:0: SIZE must be a positive number of bytes\n");
  for (const char* opt : {"--block-size 0", "--inode-size 0", "--node-size 0"}) {
    r = run(M() + " ima fit --fs ext4 " + opt);
    EXPECT_EQ(r.status, 2) << opt << ": " << r.err;
    EXPECT_EQ(r.out, "") << opt;
    // CLI11's range error, by meaning (its wording changes between versions: "Value 0 not in
    // range 1 to 1048576" in 2.1, "[1 - 1048576]" in 2.6): the option and the bound named.
    const std::string name = std::string(opt).substr(0, std::string(opt).find(' '));
    EXPECT_NE(r.err.find(name), std::string::npos) << opt << ": " << r.err;
    EXPECT_NE(r.err.find("1048576"), std::string::npos) << opt << ": " << r.err;
  }
}

// 4. estimate -r: a file reached twice counts once (said in a note); an unreadable
// directory is named, the rest counted, exit 3 (as sign -r).
TEST_F(CliImaOptions, EstimateCountsFilesOnceAndNamesUnreadableDirectories) {
  run("mkdir -p " + q(d_ / "t/ok") + " " + q(d_ / "t/locked"));
  spit(d_ / "t/ok/f", std::string("12345"));
  spit(d_ / "t/locked/g", std::string("x"));
  ASSERT_EQ(run("ln " + q(d_ / "t/ok/f") + " " + q(d_ / "t/ok/hard")).status, 0);
  const std::string est = M() + " ima estimate --json --fs ext4 --algo ml-dsa-65 -r " + q(d_ / "t");
  auto r = run(est + " -r " + q(d_ / "t/ok"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["files"], 2);  // f (with its link) and g
  EXPECT_EQ(json::parse(r.out)["naive_bytes"], 2 * 3318);
  EXPECT_EQ(r.err,
            "modsign: note: 3 paths reach files already counted (a hard link, or a tree or file given twice): "
            "each file is counted once, by device and inode\n");
  ASSERT_EQ(run("chmod 000 " + q(d_ / "t/locked")).status, 0);
  const std::string locked = without_dac_override(est);
  if (locked.empty()) {
    run("chmod 755 " + q(d_ / "t/locked"));
    GTEST_SKIP() << "setpriv cannot drop CAP_DAC_OVERRIDE here";
  }
  r = run(locked);
  run("chmod 755 " + q(d_ / "t/locked"));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("modsign: " + d_ / "t/locked" + ": Permission denied\n"), std::string::npos) << r.err;
  ASSERT_FALSE(r.out.empty());
  EXPECT_EQ(json::parse(r.out)["files"], 1);
}

// 5. A superblock with a value no such file system has: exit 3 naming the image.
TEST_F(CliImaOptions, CorruptSuperblockIsAnInputError) {
  Bytes img(4096, 0);
  img[1024 + 24] = 30;  // s_log_block_size: 1 KiB << 30
  img[1024 + 56] = 0x53;
  img[1024 + 57] = 0xef;
  img[1024 + 88] = 0x00;
  img[1024 + 89] = 0x01;  // s_inode_size 256
  spit(d_ / "bad.img", img);
  auto r = run(M() + " ima fit --device " + q(d_ / "bad.img"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d_ / "bad.img" +
                       ": corrupt ext4 superblock: ext4 block size must be a power of two in 1024..65536\n");
}

// 6. /proc/self/mounts fields are octal-escaped by the kernel (mangle, seq_path_root).
TEST(ImaOptions, ProcMountsEscapesAreDecoded) {
  EXPECT_EQ(digest::proc_mounts_unescape("/mnt/a\\040b\\011c\\012d\\134e"), "/mnt/a b\tc\nd\\e");
  EXPECT_EQ(digest::proc_mounts_unescape("dev\\043x"), "dev#x");
  EXPECT_EQ(digest::proc_mounts_unescape("keep\\9\\04"), "keep\\9\\04");
  const auto m = digest::parse_proc_mounts_line("/dev/loop0 /mnt/my\\040disk ext4 rw,relatime 0 0");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->device, "/dev/loop0");
  EXPECT_EQ(m->dir, "/mnt/my disk");
  EXPECT_EQ(m->type, "ext4");
  EXPECT_EQ(m->options, "rw,relatime");
  EXPECT_FALSE(digest::parse_proc_mounts_line("/dev/loop0 /mnt"));
}

TEST_F(CliImaOptions, MountPointWithASpaceIsFound) {
  if (!can_unshare()) GTEST_SKIP() << "no private mount namespace (unshare --mount) here";
  run("mkdir -p " + q(d_ / "a b"));
  // tmpfs has no device to read: found (not "not a mount point"), and named with what it is
  // mounted from (it said "none: cannot open" before session 19).
  auto r = run("unshare --mount sh -c " +
               q("mount -t tmpfs none " + q(d_ / "a b") + " && " + M() + " ima fit --mount " + q(d_ / "a b")));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d_ / "a b" +
                       ": mounted from none, not from a device with an ext4, XFS, btrfs or f2fs superblock\n");
}

// 7. Without /proc: the reason is named.
TEST_F(CliImaOptions, MountsUnreadableNamesTheErrno) {
  if (!can_unshare()) GTEST_SKIP() << "no private mount namespace (unshare --mount) here";
  if (!test::sanitize_build().empty())
    GTEST_SKIP() << "the " << test::sanitize_build()
                 << " runtime needs the /proc this test unmounts (it runs in the plain suite)";
  auto r = run("unshare --mount sh -c " + q("umount -l /proc && " + M() + " ima fit --mount /"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: /proc/self/mounts: cannot open: No such file or directory\n");
}

// 8. A write error on standard output is exit 3, in every ima command.
TEST_F(CliImaOptions, StdoutWriteErrorsAreExit3) {
  spit(d_ / "a", std::string("hello"));
  const std::string full = "modsign: stdout: No space left on device\n";
  for (const std::string& cmd : std::vector<std::string>{
           "ima verify " + q(d_ / "a"), "ima verify --json " + q(d_ / "a"), "ima template " + q(d_ / "a"),
           "ima fit --fs ext4", "ima estimate --fs ext4 -r " + q(d_.path())}) {
    auto r = run(M() + " " + cmd + " > /dev/full");
    EXPECT_EQ(r.status, 3) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find(full), std::string::npos) << cmd << ": " << r.err;
  }
  EXPECT_EQ(run(M() + " ima fit --fs ext4 > /dev/null").status, 0);
}

// 9. verify --json: an input without a verdict has its records, with the verdict's keys.
TEST_F(CliImaOptions, VerifyJsonHasARecordForEveryInput) {
  spit(d_ / "a", std::string("hello"));
  const std::string missing = d_ / "missing";
  auto r =
      run(M() + " ima verify --json --appraise-type imasig --appraise-type sigv3 " + q(missing) + " " + q(d_ / "a"));
  EXPECT_EQ(r.status, 3) << r.err;
  std::vector<json> lines;
  for (std::size_t at = 0, nl; (nl = r.out.find('\n', at)) != std::string::npos; at = nl + 1)
    lines.push_back(json::parse(r.out.substr(at, nl - at)));
  ASSERT_EQ(lines.size(), 4u) << r.out;
  json want{{"path", missing},         {"kernel", "v7.2"},
            {"func", "FILE_CHECK"},    {"appraise_type", "imasig"},
            {"status", "error"},       {"open", nullptr},
            {"cause", nullptr},        {"digsig_errno", nullptr},
            {"policy_errno", nullptr}, {"version", nullptr},
            {"hash_algo", nullptr},    {"keyid", nullptr},
            {"algorithm", nullptr},    {"key", nullptr},
            {"file_hash", nullptr},    {"blacklist_entry", nullptr},
            {"xattr_size", nullptr},   {"reason", "No such file or directory"}};  // the file, not its xattr, is missing
  EXPECT_EQ(lines[0], want);
  want["appraise_type"] = "sigv3";
  EXPECT_EQ(lines[1], want);
  for (const auto& l : lines) EXPECT_EQ(l.size(), want.size());
  EXPECT_EQ(lines[2]["path"], d_ / "a");
  EXPECT_EQ(lines[3]["status"], "fail");
}

// 10. A keyring certificate the kernel cannot load (Ed25519): skipped with a note, the rest
// of the keyring used; --strict refuses it, naming the file.
TEST_F(CliImaOptions, UnsupportedKeyTypeInAKeyringIsSkipped) {
  run("mkdir " + q(d_ / "kr"));
  auto r = run(openssl() + " req -x509 -new -newkey ed25519 -nodes -keyout " + q(d_ / "ed.key") +
               " -subj /CN=ed -days 3 -out " + q(d_ / "kr/ed.crt"));
  ASSERT_EQ(r.status, 0) << r.err;
  run("cp " + q(f("ec.crt")) + " " + q(d_ / "kr/ec.crt"));
  spit(d_ / "a", std::string("hello"));
  ASSERT_EQ(run(sign() + " -q --sigfile " + q(d_ / "a")).status, 0);
  const std::string note = d_ / "kr/ed.crt" +
                           ": PEM block 1: certificate: unsupported public key algorithm 1.3.101.112 (a key type the "
                           "kernel cannot load)";
  r = run(M() + " ima verify --keyring " + q(d_ / "kr") + " --sigfile " + q(d_ / "a"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("modsign: note: " + d_ / "kr/ed.crt" + ": skipped: PEM block 1: certificate: unsupported"),
            std::string::npos)
      << r.err;
  r = run(M() + " ima verify --keyring " + q(d_ / "kr/ed.crt") + " --keyring " + q(f("ec.crt")) + " --sigfile " +
          q(d_ / "a"));
  EXPECT_EQ(r.status, 0) << r.err;
  r = run(M() + " ima verify --strict --keyring " + q(d_ / "kr") + " --sigfile " + q(d_ / "a"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + note + "\n");
}

// 10b. In a PEM bundle only that certificate is skipped: the bundle's others stay trusted
// (x509_load_certificate_list goes on with the next certificate).
TEST_F(CliImaOptions, UnsupportedCertificateInABundleIsSkippedAlone) {
  auto r = run(openssl() + " req -x509 -new -newkey ed25519 -nodes -keyout " + q(d_ / "ed.key") +
               " -subj /CN=ed -days 3 -out " + q(d_ / "ed.crt"));
  ASSERT_EQ(r.status, 0) << r.err;
  run("cat " + q(d_ / "ed.crt") + " " + q(f("ec.crt")) + " > " + q(d_ / "bundle.pem"));
  spit(d_ / "a", std::string("hello"));
  ASSERT_EQ(run(sign() + " -q --sigfile " + q(d_ / "a")).status, 0);
  r = run(M() + " ima verify --keyring " + q(d_ / "bundle.pem") + " --sigfile " + q(d_ / "a"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "modsign: note: " + d_ / "bundle.pem" +
                       ": skipped: PEM block 1: certificate: unsupported public key algorithm 1.3.101.112 (a key "
                       "type the kernel cannot load)\n");
  r = run(M() + " ima verify --strict --keyring " + q(d_ / "bundle.pem") + " --sigfile " + q(d_ / "a"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d_ / "bundle.pem" +
                       ": PEM block 1: certificate: unsupported public key algorithm 1.3.101.112 (a key type the "
                       "kernel cannot load)\n");
}

// 11. An appraise_type typo is a usage error naming it and the accepted values.
TEST_F(CliImaOptions, AppraiseTypeTypoIsAUsageError) {
  spit(d_ / "a", std::string("hello"));
  auto r = run(M() + " ima verify --appraise-type imasg " + q(d_ / "a"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "modsign: --appraise-type: unknown appraise_type 'imasg' (imasig, sigv3, imasig|modsig)\n");
  // A known value the kernel refuses for this func stays a verdict.
  r = run(M() + " ima verify --appraise-type 'imasig|modsig' " + q(d_ / "a"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("rule refused (EINVAL)"), std::string::npos) << r.out;
}

// 11b. So is a func typo: the kernel's policy parser has no such func, so no rule exists.
TEST_F(CliImaOptions, FuncTypoIsAUsageError) {
  spit(d_ / "a", std::string("hello"));
  auto r = run(M() + " ima verify --func FILECHECK " + q(d_ / "a"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "modsign: --func: unknown func 'FILECHECK' (FILE_CHECK, PATH_CHECK, MMAP_CHECK, FILE_MMAP, "
            "MMAP_CHECK_REQPROT, BPRM_CHECK, CREDS_CHECK, FIRMWARE_CHECK, POLICY_CHECK, MODULE_CHECK, "
            "KEXEC_KERNEL_CHECK, KEXEC_INITRAMFS_CHECK, KEXEC_CMDLINE, KEY_CHECK, CRITICAL_DATA, SETXATTR_CHECK)\n");
  EXPECT_EQ(run(M() + " ima verify --func file_check " + q(d_ / "a")).status, 2);  // Opt_func compares exactly
  // Every word Opt_func takes is a verdict: the file hooks and their old names (PATH_CHECK,
  // FILE_MMAP) appraise (no security.ima here: a failure), the measure-only hooks refuse the rule.
  for (const char* func : {"BPRM_CHECK", "PATH_CHECK", "FILE_MMAP", "MMAP_CHECK_REQPROT"}) {
    r = run(M() + " ima verify --func " + func + " " + q(d_ / "a"));
    EXPECT_EQ(r.status, 1) << func << ": " << r.err;
    EXPECT_EQ(r.out.find("rule refused"), std::string::npos) << func << ": " << r.out;
  }
  for (const char* func : {"KEXEC_CMDLINE", "KEY_CHECK", "CRITICAL_DATA", "SETXATTR_CHECK"}) {
    r = run(M() + " ima verify --func " + func + " " + q(d_ / "a"));
    EXPECT_EQ(r.status, 1) << func << ": " << r.err;
    EXPECT_NE(r.out.find("rule refused (EINVAL)"), std::string::npos) << func << ": " << r.out;
  }
}

// 12. The summary counts the bytes read, and a negative verdict as a check made (no error).
TEST_F(CliImaOptions, VerifySummaryCountsBytes) {
  spit(d_ / "a", std::string("hello"));
  spit(d_ / "b", std::string("world!"));
  auto r = run(M() + " ima verify " + q(d_ / "a") + " " + q(d_ / "b"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("modsign: ima verify: 2 checked, 0 errors, 0 skipped, 11 bytes, "), std::string::npos) << r.err;
}

// 13. One decoder of the MSC-IMA block for both serial-log parsers (tools/conformance).
TEST(ImaOptions, SerialLogImaBlockIsDecodedOnce) {
  TempDir d;
  spit(d / "serial.log",
       std::string("MSC-BOOT 7.2.13\r\nMSC-IMA-BEGIN\naGVs\nbG8=\nMSC-IMA-END\nMSC-IMA-SIZE a 5\nMSC-DONE\n"));
  const std::string py =
      "import sys; sys.path.insert(0, sys.argv[1]); from conformance import qemu, files_run; "
      "lines, blob = qemu.serial_lines(sys.argv[2]); "
      "print(lines[:3], blob, qemu.parse_serial(sys.argv[2])[5]['list'], files_run.parse(sys.argv[2])['list'], "
      "files_run.parse(sys.argv[2])['sizes'], files_run.serial_lines is qemu.serial_lines)";
  auto r = run("python3 -c " + q(py) + " " + q(source_dir() + "/tools") + " " + q(d / "serial.log"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "['MSC-BOOT 7.2.13', 'MSC-IMA-SIZE a 5', 'MSC-DONE'] b'hello' b'hello' b'hello' [('a', 5)] True\n");
}

}  // namespace
}  // namespace modsign::test
