// The promises of every output (issue 29, "Data loss and security"), each against the
// adversary that broke it on the old main:
//   1. no key or certificate, in any form modsign reads (DER, PKCS#8, encrypted, traditional,
//      seed), is overwritten by any writing command;
//   2. a multi-output change (sign --p7s, keygen --force) is all or nothing: the targets are
//      checked first (name length, immutable, sticky directory), and a rename that fails
//      later puts back what was already replaced (commit_together);
//   3. a replaced file keeps owner, group, mode, extended attributes and ACLs, or the
//      command refuses before replacing it (a user who could not write it in place, an owner
//      this user cannot keep); security.ima and security.evm are dropped, and said so;
//   4. an output that is the input under another name (symlink, hard link, spelling) is
//      refused;
//   5. a file changed while modsign works on it is never replaced, and two concurrent
//      signers never both say "signed".
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include "common/file.hpp"
#include "crypto/crypto.hpp"
#include "test_support.hpp"

namespace modsign::test {
namespace {

namespace fs = std::filesystem;

std::string xattr(const std::string& path, const char* name) {
  char buf[256];
  const ssize_t n = ::getxattr(path.c_str(), name, buf, sizeof buf);
  return n < 0 ? "<none>" : std::string(buf, static_cast<std::size_t>(n));
}

// `cmd` as root without the capabilities that let root write or take over any file
// (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER): an ordinary user towards
// files it does not own.  "" where setpriv cannot drop them.
std::string unprivileged(const std::string& cmd) {
  const std::string drop = "setpriv --bounding-set=-chown,-dac_override,-dac_read_search,-fowner ";
  if (::geteuid() != 0 || run(drop + "true").status != 0) return "";
  return drop + cmd;
}

class Promises : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    keys_ = new TempDir();
    const std::string k = q(keys_->path());
    const std::string o = openssl();
    // k.pem + k.x509 (ML-DSA-65), and the same key and certificate in every other form.
    auto r = run("cd " + k + " && " + modsign_cli() + " keygen -o k.pem --cert-out k.x509 && " + o +
                 " x509 -in k.x509 -outform DER -out cert.der && " + o +
                 " pkcs8 -topk8 -nocrypt -in k.pem -outform DER -out pkcs8.der && " + o +
                 " pkcs8 -topk8 -in k.pem -outform DER -passout pass:x -out encrypted.der && " + o +
                 " genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.pem && " + o +
                 " rsa -in rsa.pem -traditional -outform DER -out rsa-traditional.der && " + o +
                 " genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec.pem && " + o +
                 " ec -in ec.pem -outform DER -out ec-traditional.der && " + o +
                 " genpkey -algorithm ML-DSA-44 -provparam ml-dsa.output_formats=seed-only -outform DER -out seed.der");
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete keys_; }
  void SetUp() override {
    for (const char* f : {"k.pem", "k.x509", "cert.der", "pkcs8.der", "encrypted.der", "rsa-traditional.der",
                          "ec-traditional.der", "seed.der"})
      fs::copy_file(*keys_ / f, d_ / f);
    fs::copy_file(*keys_ / "k.x509", d_ / "input.x509");
    fs::copy_file(*keys_ / "k.x509", d_ / "other.x509");
    spit(d_ / "plain.ko", pattern(4096));
    ASSERT_EQ(cli("sign --key k.pem --cert k.x509 -o signed.ko plain.ko").status, 0);
  }
  test::Run cli(const std::string& args) { return run("cd " + q(d_.path()) + " && " + modsign_cli() + " " + args); }
  void refused(const std::string& args, int status, const std::string& message) {
    expect_cli_refused(d_.path(), args, status, message);
  }
  static inline TempDir* keys_ = nullptr;
  TempDir d_;
};

const std::string kRefuse = "; refusing to overwrite it";

// ---------------------------------------------------------- 1: key material in any form

TEST_F(Promises, NoWriterOverwritesAKeyOrCertificateInAnyForm) {
  const std::map<std::string, std::string> what = {
      {"cert.der", "a certificate (DER)"},           {"pkcs8.der", "a private key (DER)"},
      {"encrypted.der", "a private key (DER)"},      {"rsa-traditional.der", "a private key (DER)"},
      {"ec-traditional.der", "a private key (DER)"}, {"seed.der", "a private key (DER)"},
      {"other.x509", "a certificate (PEM)"}};
  for (const auto& [file, kind] : what) {
    const std::string m = file + ": holds " + kind + kRefuse;
    refused("sign --key k.pem --cert k.x509 -o " + file + " plain.ko", 3, m);
    fs::copy_file(d_ / file, d_ / "plain.ko.p7s");
    refused("sign --key k.pem --cert k.x509 --p7s-only plain.ko", 3, "plain.ko.p7s: holds " + kind + kRefuse);
    fs::remove(d_ / "plain.ko.p7s");
    refused("strip -o " + file + " signed.ko", 3, m);
    refused("extract -o " + file + " signed.ko", 3, m);
    refused("sign-file sha512 k.pem k.x509 plain.ko " + file, 1, m);
    refused("blacklist entry -o " + file + " input.x509", 3, m);
    refused("dbx add-hash --owner 11111111-2222-3333-4444-555555555555 -o " + file + " " + std::string(64, 'a'), 3, m);
  }
}

// One rule for "-" as an output (issue 29: stdout for some commands, a file named "-" for
// others): standard output where the output is text, refused as a usage error (exit 2,
// nothing written) everywhere else; ./- names a file called "-".
TEST_F(Promises, DashIsStandardOutputOrRefused) {
  for (const std::string& args :
       {std::string("sign --key k.pem --cert k.x509 -o - plain.ko"), std::string("strip -o - signed.ko"),
        std::string("extract -o - signed.ko"), std::string("keygen -o -"),
        std::string("keygen -o new.pem --cert-out -"),
        "dbx add-hash --owner 11111111-2222-3333-4444-555555555555 -o - " + std::string(64, 'a')}) {
    SCOPED_TRACE(args);
    const auto before = snapshot_dir(d_.path());
    const auto r = cli(args);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("'-' is standard output, which this output cannot be; ./- names a file called -"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(snapshot_dir(d_.path()), before);
  }
  const auto r = cli("blacklist entry -o - input.x509");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, cli("blacklist entry input.x509").out);
  EXPECT_FALSE(fs::exists(d_ / "-"));
  refused("blacklist entry --json -o - input.x509", 2,
          "--json and -o - both write to standard output: give -o FILE for the hash list");
  EXPECT_EQ(cli("strip -o ./- signed.ko").status, 0);
  EXPECT_EQ(slurp(d_ / "-"), pattern(4096));
  // sign-file is scripts/sign-file's drop-in: its DEST "-" is a file named "-", as there.
  fs::remove(d_ / "-");
  EXPECT_EQ(cli("sign-file sha512 k.pem k.x509 plain.ko -").status, 0);
  EXPECT_GT(slurp(d_ / "-").size(), 4096u + 40);
}

// ------------------------------------------------------------ 2: all or nothing

TEST_F(Promises, P7sNameTooLongChangesNothing) {
  const std::string name = std::string(250, 'm') + ".ko";  // .p7s makes it 257 characters
  fs::copy_file(d_ / "plain.ko", d_ / name);
  refused("sign --key k.pem --cert k.x509 --p7s " + name, 3,
          name + ".p7s: name longer than the file system takes: File name too long");
  refused("sign --key k.pem --cert k.x509 --p7s --stream-above 0 " + name, 3,
          name + ".p7s: name longer than the file system takes: File name too long");
}

TEST_F(Promises, ImmutableTargetsChangeNothing) {
  spit(d_ / "plain.ko.p7s", "old");
  if (run("chattr +i " + q(d_ / "plain.ko.p7s")).status != 0)
    GTEST_SKIP() << "chattr +i not supported by $TMPDIR's file system";
  refused("sign --key k.pem --cert k.x509 --p7s plain.ko", 3, "plain.ko.p7s: immutable (chattr +i); not replacing it");
  run("chattr -i " + q(d_ / "plain.ko.p7s"));
  // keygen --force: the key cannot be replaced, so the certificate is not either.
  ASSERT_EQ(run("chattr +i " + q(d_ / "k.pem")).status, 0);
  refused("keygen -o k.pem --cert-out k.x509 --force", 3, "k.pem: immutable (chattr +i); not replacing it");
  run("chattr -i " + q(d_ / "k.pem"));
}

// A rename that fails after the first target was replaced (the second temporary file
// removed behind modsign's back, past every check) puts the first back.
TEST(CommitTogether, AFailedSecondRenamePutsTheFirstBack) {
  TempDir a, b;
  spit(a / "one", "old one");
  ::chmod((a / "one").c_str(), 0640);
  spit(b / "two", "old two");
  {
    AtomicFile one(a / "one"), two(b / "two");
    one.write(ByteView(reinterpret_cast<const std::uint8_t*>("new one"), 7));
    two.write(ByteView(reinterpret_cast<const std::uint8_t*>("new two"), 7));
    for (const auto& e : fs::directory_iterator(b.path()))
      if (e.path().filename().string().rfind(".modsign.", 0) == 0) fs::remove(e.path());
    try {
      commit_together({&one, &two});
      ADD_FAILURE() << "commit_together succeeded";
    } catch (const IoError& e) { EXPECT_EQ(std::string(e.what()), b / "two" + ": rename: No such file or directory"); }
  }
  EXPECT_EQ(slurp(a / "one"), Bytes({'o', 'l', 'd', ' ', 'o', 'n', 'e'}));
  EXPECT_EQ(slurp(b / "two"), Bytes({'o', 'l', 'd', ' ', 't', 'w', 'o'}));
  struct stat st {};
  ASSERT_EQ(::stat((a / "one").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(std::distance(fs::directory_iterator(a.path()), fs::directory_iterator()), 1);
  EXPECT_EQ(std::distance(fs::directory_iterator(b.path()), fs::directory_iterator()), 1);
}

// --------------------------------------------------------------- 3: metadata

TEST_F(Promises, InPlaceSignKeepsXattrsAclOwnerAndModeAndSaysWhatItDrops) {
  const std::string m = d_ / "plain.ko";
  ASSERT_EQ(::setxattr(m.c_str(), "user.origin", "distro", 6, 0), 0) << std::strerror(errno);
  ASSERT_EQ(::setxattr(m.c_str(), "security.ima", "\x03\x02", 2, 0), 0) << std::strerror(errno);
  ASSERT_EQ(run("setfacl -m u:65534:r " + q(m)).status, 0);
  ::chmod(m.c_str(), 0640);
  ASSERT_EQ(::chown(m.c_str(), 65534, 65534), 0);
  const std::string acl_before = run("getfacl -c " + q(m)).out;
  const test::Run r = cli("sign --key k.pem --cert k.x509 plain.ko");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err,
            "modsign: plain.ko: note: security.ima not kept: it was the old content's (modsign ima sign "
            "--setxattr makes one for the new)\n");
  EXPECT_EQ(xattr(m, "user.origin"), "distro");
  EXPECT_EQ(xattr(m, "security.ima"), "<none>");
  EXPECT_EQ(run("getfacl -c " + q(m)).out, acl_before);
  struct stat st {};
  ASSERT_EQ(::stat(m.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(cli("verify --keyring k.x509 plain.ko").status, 0);
}

// user.ima and user.evm (ima sign --xattr-user, evmctl --xattr-user) are the old content's
// too: dropped with a note, like security.ima (on the old main kept silently, and then
// "invalid-signature" for the signed module).
TEST_F(Promises, InPlaceSignDropsUserImaWithANote) {
  const std::string m = d_ / "plain.ko";
  ASSERT_EQ(::setxattr(m.c_str(), "user.ima", "\x03\x02", 2, 0), 0) << std::strerror(errno);
  ASSERT_EQ(::setxattr(m.c_str(), "user.evm", "\x05", 1, 0), 0) << std::strerror(errno);
  ASSERT_EQ(::setxattr(m.c_str(), "user.origin", "distro", 6, 0), 0) << std::strerror(errno);
  const test::Run r = cli("sign --key k.pem --cert k.x509 plain.ko");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* name : {"user.ima", "user.evm"}) {
    EXPECT_NE(r.err.find(std::string("modsign: plain.ko: note: ") + name +
                         " not kept: it was the old content's (modsign ima sign --xattr-user makes one for the new)\n"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(xattr(m, name), "<none>");
  }
  EXPECT_EQ(xattr(m, "user.origin"), "distro");
}

// A user who could not write the module in place (sign-file's open would fail) or could
// not keep its owner gets a refusal and an unchanged module, never a file of its own.
TEST_F(Promises, AnotherUsersModuleIsRefusedNotTakenOver) {
  const std::string sign = modsign_cli() + " sign --key k.pem --cert k.x509 plain.ko";
  if (unprivileged(sign).empty()) GTEST_SKIP() << "needs root and setpriv";
  const std::string m = d_ / "plain.ko";
  ASSERT_EQ(::chown(m.c_str(), 65534, 65534), 0);
  ::chmod(m.c_str(), 0444);  // another user's, read-only
  const auto before = snapshot_dir(d_.path());
  test::Run r = run("cd " + q(d_.path()) + " && " + unprivileged(sign));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.err, "modsign: plain.ko: not writable by this user; not replacing it: Permission denied\n");
  EXPECT_EQ(snapshot_dir(d_.path()), before);
  ::chmod(m.c_str(), 0666);  // writable, but another user's: its owner cannot be kept
  const auto before2 = snapshot_dir(d_.path());
  r = run("cd " + q(d_.path()) + " && " + unprivileged(sign));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.err,
            "modsign: plain.ko: cannot keep owner 65534 and group 65534 on the new file; not replacing it: "
            "Operation not permitted\n");
  EXPECT_EQ(snapshot_dir(d_.path()), before2);
}

// ------------------------------------------------------------ 4: outputs over inputs

TEST_F(Promises, AnOutputThatIsTheInputUnderAnotherNameIsRefused) {
  ASSERT_EQ(::symlink("plain.ko", (d_ / "sym.ko").c_str()), 0);
  ASSERT_EQ(::link((d_ / "plain.ko").c_str(), (d_ / "hard.ko").c_str()), 0);
  fs::create_directory(d_ / "d");
  const std::string tail = "; refusing to overwrite it (to sign in place, give no output)";
  for (const std::string out : {"sym.ko", "hard.ko", "d/../plain.ko", "./plain.ko"}) {
    refused("sign --key k.pem --cert k.x509 -o " + out + " plain.ko", 3,
            out + ": is the same file as the input plain.ko" + tail);
    refused("sign-file sha512 k.pem k.x509 plain.ko " + out, 1,
            out + ": is the same file as the input plain.ko" + tail);
  }
  ASSERT_EQ(::symlink("signed.ko", (d_ / "sym-signed.ko").c_str()), 0);
  refused("strip -o sym-signed.ko signed.ko", 3,
          "sym-signed.ko: is the same file as the input signed.ko; refusing to overwrite it (to strip in place, give "
          "no output)");
}

// ------------------------------------------------------ 5: changes and concurrency

TEST(InputLockTest, AChangeAfterReadingIsNeverOverwritten) {
  TempDir d;
  const std::string m = d / "m.ko";
  spit(m, pattern(100));
  const InputLock input(m);
  AtomicFile out(m);
  out.write(pattern(10));
  out.require_unchanged(input);
  spit(m, pattern(101));  // grown by another writer
  try {
    out.commit();
    ADD_FAILURE() << "commit succeeded";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), m + ": changed by another process while modsign worked on it; not replacing " + m);
  }
  EXPECT_EQ(slurp(m), pattern(101));
}

// Readers (verify, --prepare, ima verify) share the lock; a writer's lock excludes them.
TEST(InputLockTest, ReadersShareWritersExclude) {
  TempDir d;
  const std::string m = d / "m.ko";
  spit(m, pattern(100));
  const auto try_lock = [&m](int how) {
    const int fd = ::open(m.c_str(), O_RDONLY | O_CLOEXEC);
    const int r = ::flock(fd, how | LOCK_NB);
    ::close(fd);
    return r == 0;
  };
  {
    const InputLock reader(m, std::nullopt, LockMode::shared);
    const InputLock another(m, std::nullopt, LockMode::shared);  // at once, not after 60 s
    EXPECT_TRUE(try_lock(LOCK_SH));
    EXPECT_FALSE(try_lock(LOCK_EX));  // a writer waits for the readers
  }
  {
    const InputLock writer(m);
    EXPECT_FALSE(try_lock(LOCK_SH));  // a reader waits for the writer
  }
  EXPECT_TRUE(try_lock(LOCK_EX));
}

TEST_F(Promises, TwoSignersNeverBothSaySigned) {
  fs::create_directory(d_ / "tree");
  for (int i = 0; i < 200; ++i) fs::copy_file(d_ / "plain.ko", d_ / ("tree/m" + std::to_string(i) + ".ko"));
  const std::string one = modsign_cli() + " sign --key k.pem --cert k.x509 -r tree";
  const test::Run r = run("cd " + q(d_.path()) + " && (" + one + " >a.out 2>a.err & " + one +
                          " >b.out 2>b.err; wait); cat a.out b.out");
  std::size_t signed_lines = 0;
  for (std::size_t at = r.out.find(": signed ("); at != std::string::npos; at = r.out.find(": signed (", at + 1))
    ++signed_lines;
  EXPECT_EQ(signed_lines, 200u) << r.out;
  EXPECT_EQ(cli("verify --keyring k.x509 -r tree").status, 0);
  fs::remove(d_ / "a.out");
  fs::remove(d_ / "b.out");
  fs::remove(d_ / "a.err");
  fs::remove(d_ / "b.err");
}

}  // namespace
}  // namespace modsign::test
