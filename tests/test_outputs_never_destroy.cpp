// No command may destroy a key: an output that names the key, the certificate or an input,
// or an existing file holding a private key, is refused before anything is written; keygen
// replaces nothing without --force; every output target is checked before any is replaced;
// .p7s files keep the mode of the file they replace; inputs that are not modules (empty, PEM)
// and unknown --hash names are refused.  Each case runs the CLI and asserts the exit status,
// the exact message, and that every file of the directory (name, kind, mode, sha256) is
// unchanged, with no .modsign.* temporary left.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "crypto/crypto.hpp"
#include "test_support.hpp"

namespace modsign::test {
namespace {

namespace fs = std::filesystem;

unsigned mode_of(const std::string& p) {
  struct stat st {};
  ::stat(p.c_str(), &st);
  return st.st_mode & 07777;
}

// The files of the review: combo.pem (key + certificate), k.pem + k.x509, plain.ko (an
// unsigned module) and signed.ko, in a fresh directory per test; commands run in it.
class NeverDestroy : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    keys_ = new TempDir();
    auto r = run("cd " + q(keys_->path()) + " && " + modsign_cli() + " keygen -o combo.pem && " + modsign_cli() +
                 " keygen -o k.pem --cert-out k.x509");
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete keys_; }
  void SetUp() override {
    for (const char* f : {"combo.pem", "k.pem", "k.x509"}) {
      fs::copy_file(*keys_ / f, d_ / f);
      fs::permissions(d_ / f, fs::status(*keys_ / f).permissions());
    }
    spit(d_ / "plain.ko", pattern(4096));
    ASSERT_EQ(cli("sign --key combo.pem -o signed.ko plain.ko").status, 0);
  }
  test::Run cli(const std::string& args) { return run("cd " + q(d_.path()) + " && " + modsign_cli() + " " + args); }
  // Runs `args`, expects `status` and exactly "modsign: <message>\n" on stderr, and no
  // change to any file of the directory.
  void refused(const std::string& args, int status, const std::string& message) {
    expect_cli_refused(d_.path(), args, status, message);
  }
  /// NAME: 100 bytes, then a module_signature with sig_len 0 and the marker.
  void spit_empty_signature_module(const std::string& name) {
    Bytes z = pattern(100);
    const std::uint8_t sig[12] = {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0};  // module_signature, sig_len 0
    z.insert(z.end(), sig, sig + 12);
    const std::string marker = "~Module signature appended~\n";
    z.insert(z.end(), marker.begin(), marker.end());
    spit(d_ / name, z);
  }
  static inline TempDir* keys_ = nullptr;
  TempDir d_;
};

const std::string kRefuse = "; refusing to overwrite it";

// ------------------------------------------------------------------ 1: outputs over inputs

TEST_F(NeverDestroy, SignOutputOverTheKeyIsRefused) {
  const std::string m = "combo.pem: is the same file as the private key combo.pem" + kRefuse;
  refused("sign --key combo.pem -o combo.pem plain.ko", 3, m);
  refused("sign --key combo.pem --stream-above 0 -o combo.pem plain.ko", 3, m);
  refused("sign --key combo.pem --recompress -o combo.pem plain.ko", 3, m);
  refused("sign --key combo.pem --replace -o combo.pem signed.ko", 3, m);
  ASSERT_EQ(::symlink("combo.pem", (d_ / "link.pem").c_str()), 0);
  refused("sign --key combo.pem -o link.pem plain.ko", 3,
          "link.pem: is the same file as the private key combo.pem" + kRefuse);
  refused("sign --key k.pem --cert k.x509 -o k.x509 plain.ko", 3,
          "k.x509: is the same file as the certificate k.x509" + kRefuse);
  // Another file holding a private key is refused too.
  refused("sign --key k.pem --cert k.x509 -o combo.pem plain.ko", 3, "combo.pem: holds a private key (PEM)" + kRefuse);
}

TEST_F(NeverDestroy, P7sOverTheKeyIsRefused) {
  ASSERT_EQ(::symlink("combo.pem", (d_ / "plain.ko.p7s").c_str()), 0);
  const std::string m = "plain.ko.p7s: is the same file as the private key combo.pem" + kRefuse;
  refused("sign --key combo.pem --p7s plain.ko", 3, m);
  refused("sign --key combo.pem --p7s-only plain.ko", 3, m);
  refused("sign --key combo.pem --p7s --stream-above 0 plain.ko", 3, m);
  refused("sign-file -p sha512 combo.pem combo.pem plain.ko", 1, m);
}

TEST_F(NeverDestroy, SignFileDestOverKeyOrCertIsRefused) {
  refused("sign-file sha512 combo.pem combo.pem plain.ko combo.pem", 1,
          "combo.pem: is the same file as the private key combo.pem" + kRefuse);
  refused("sign-file sha512 k.pem k.x509 plain.ko k.x509", 1,
          "k.x509: is the same file as the certificate k.x509" + kRefuse);
}

TEST_F(NeverDestroy, StripExtractOutputsAreChecked) {
  refused("strip -o combo.pem signed.ko", 3, "combo.pem: holds a private key (PEM)" + kRefuse);
  refused("extract -o combo.pem signed.ko", 3, "combo.pem: holds a private key (PEM)" + kRefuse);
  refused("extract -o signed.ko signed.ko", 3, "signed.ko: is the same file as the input signed.ko" + kRefuse);
}

TEST_F(NeverDestroy, BlacklistAndDbxWritersAreChecked) {
  ASSERT_EQ(cli("blacklist entry -o good.list k.x509").status, 0);
  ASSERT_EQ(cli("dbx add-cert --owner 11111111-2222-3333-4444-555555555555 -o h.esl k.x509").status, 0);
  refused("blacklist entry --side-sha256 -o signed.ko signed.ko", 3,
          "signed.ko: no bin: entry exists under v7.0: ima_collect_modsig() gets no digest (EINVAL: pkcs7_get_digest: "
          "No digest available), so "
          "ima_check_blacklist() looks up \"bin:\", which no key can be; writing the side SHA-256 entry (proposed "
          "behaviour)\nmodsign: signed.ko: is the same file as the input signed.ko" +
              kRefuse);
  refused("blacklist entry -o k.x509 k.x509", 3, "k.x509: is the same file as the input k.x509" + kRefuse);
  refused("blacklist entry --format esl --owner 11111111-2222-3333-4444-555555555555 -o k.x509 k.x509", 3,
          "k.x509: is the same file as the input k.x509" + kRefuse);
  refused("blacklist merge -o combo.pem good.list", 3, "combo.pem: holds a private key (PEM)" + kRefuse);
  refused("dbx merge -o combo.pem h.esl", 3, "combo.pem: holds a private key (PEM)" + kRefuse);
  refused("dbx add-cert --owner 11111111-2222-3333-4444-555555555555 -o k.x509 k.x509", 3,
          "k.x509: is the same file as the input k.x509" + kRefuse);
}

// ------------------------------------------------------------------------ 2: keygen

TEST_F(NeverDestroy, KeygenReplacesNothingWithoutForce) {
  const std::string force = "; refusing to overwrite it (--force replaces it)";
  refused("keygen -o k.pem", 3, "k.pem: exists" + force);
  refused("keygen -o new.pem --cert-out k.pem", 3, "k.pem: exists" + force);
  ASSERT_EQ(::symlink("combo.pem", (d_ / "link.pem").c_str()), 0);
  refused("keygen -o link.pem", 3, "link.pem: exists" + force);
  refused("keygen -o plain.ko", 3, "plain.ko: exists" + force);
  refused("keygen -o new.pem --cert-out k.x509", 3, "k.x509: exists" + force);
  const std::string same =
      "--out and --cert-out name the same file; omit --cert-out to write key and certificate together";
  refused("keygen -o n.pem --cert-out ./n.pem", 2, same);
  refused("keygen -o k.pem --cert-out ./k.pem --force", 2, same);
  refused("keygen -o link.pem --cert-out combo.pem --force", 2, same);
}

TEST_F(NeverDestroy, KeygenForceReplacesAtomically) {
  const Bytes old_key = slurp(d_ / "k.pem"), old_cert = slurp(d_ / "k.x509");
  const test::Run r = cli("keygen -o k.pem --cert-out k.x509 --force");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(slurp(d_ / "k.pem"), old_key);
  EXPECT_NE(slurp(d_ / "k.x509"), old_cert);
  EXPECT_EQ(mode_of(d_ / "k.pem"), 0600u);
  EXPECT_EQ(cli("sign --key k.pem --cert k.x509 plain.ko").status, 0);
  for (const auto& e : fs::directory_iterator(d_.path()))
    EXPECT_EQ(e.path().filename().string().rfind(".modsign.", 0), std::string::npos) << e.path();
}

// ------------------------------------------------------- 3: every target checked first

TEST_F(NeverDestroy, P7sTargetThatIsNotAFileChangesNothing) {
  fs::create_directory(d_ / "plain.ko.p7s");
  refused("sign --key combo.pem --p7s plain.ko", 3, "plain.ko.p7s: is a directory; not replacing it");
  refused("sign --key combo.pem --p7s --stream-above 0 plain.ko", 3, "plain.ko.p7s: is a directory; not replacing it");
  refused("sign-file -p sha512 combo.pem combo.pem plain.ko", 1, "plain.ko.p7s: is a directory; not replacing it");
  fs::remove(d_ / "plain.ko.p7s");
  ASSERT_EQ(::mkfifo((d_ / "plain.ko.p7s").c_str(), 0644), 0);
  refused("sign --key combo.pem --p7s plain.ko", 3, "plain.ko.p7s: is a FIFO, not a regular file; not replacing it");
}

// ------------------------------------------------------------------- 4: .p7s modes

TEST_F(NeverDestroy, P7sKeepsTheModeItReplacesAndNewOnesFollowTheUmask) {
  spit(d_ / "plain.ko.p7s", "old");
  ::chmod((d_ / "plain.ko.p7s").c_str(), 0600);
  ASSERT_EQ(cli("sign --key combo.pem --p7s-only plain.ko").status, 0);
  EXPECT_EQ(mode_of(d_ / "plain.ko.p7s"), 0600u);
  EXPECT_NE(slurp(d_ / "plain.ko.p7s"), Bytes({'o', 'l', 'd'}));
  spit(d_ / "signed.ko.p7s", "old");
  ::chmod((d_ / "signed.ko.p7s").c_str(), 0640);
  ASSERT_EQ(cli("extract signed.ko").status, 0);
  EXPECT_EQ(mode_of(d_ / "signed.ko.p7s"), 0640u);
  const test::Run r =
      run("cd " + q(d_.path()) + " && umask 077 && " + modsign_cli() + " extract -o new.p7s signed.ko && " +
          modsign_cli() + " sign --key combo.pem --p7s -o y.ko plain.ko");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(mode_of(d_ / "y.ko.p7s"), 0600u);
  EXPECT_EQ(mode_of(d_ / "new.p7s"), 0600u);
}

// ------------------------------------------------------------ 5..8: bad inputs, names

TEST_F(NeverDestroy, ExtractOfAnEmptySignatureIsRefused) {
  spit_empty_signature_module("z.ko");
  refused("extract z.ko", 3, "z.ko: EBADMSG: the appended signature is empty (sig_len 0)");
  refused("extract -o z.p7s z.ko", 3, "z.ko: EBADMSG: the appended signature is empty (sig_len 0)");
}

// sig_len 0 passes mod_check_sig(), but the empty PKCS#7 it points at is refused by
// pkcs7_parse_message() (EBADMSG): info, extract and strip all refuse it with the one rule
// of module/module_signature.cpp; strip --legacy removes the trailer with a note.
TEST_F(NeverDestroy, InfoAndStripRefuseAnEmptySignatureAlike) {
  spit_empty_signature_module("z.ko");
  refused("info z.ko", 3, "z.ko: EBADMSG: the appended signature is empty (sig_len 0)");
  refused("strip z.ko", 3,
          "z.ko: cannot strip the signature: EBADMSG the appended signature is empty (sig_len 0) (strip --legacy "
          "removes such a trailer)");
  refused("strip --all z.ko", 3,
          "z.ko: cannot strip the signature: EBADMSG the appended signature is empty (sig_len 0) (strip --legacy "
          "removes such a trailer)");
  const test::Run r = cli("strip --legacy z.ko");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err,
            "modsign: z.ko: note: removed a trailer with an empty signature (sig_len 0): the kernel refuses it "
            "(pkcs7_parse_message: EBADMSG)\n");
  EXPECT_EQ(slurp(d_ / "z.ko"), pattern(100));
}

TEST_F(NeverDestroy, OnlyTheDocumentedHashNames) {
  const std::string list = " (sha1|sha224|sha256|sha384|sha512|sha3-256|sha3-384|sha3-512)";
  refused("sign --key combo.pem --hash md5 plain.ko", 2, "unknown --hash 'md5'" + list);
  refused("sign --key combo.pem --hash SHA256 plain.ko", 2, "unknown --hash 'SHA256'" + list);
  refused("sign-file md5 combo.pem combo.pem plain.ko", 1, "md5: unknown hash algorithm");
}

TEST_F(NeverDestroy, StripWithoutModulesIsAUsageError) {
  refused("strip", 2, "no modules given (MODULE... or -r DIR)");
}

TEST_F(NeverDestroy, SignRefusesEmptyAndPemFiles) {
  spit(d_ / "empty.ko", "");
  refused("sign --key combo.pem empty.ko", 3, "empty.ko: empty file, not a module");
  refused("sign --key combo.pem --stream-above 0 empty.ko", 3, "empty.ko: empty file, not a module");
  refused("sign --key combo.pem k.x509", 3, "k.x509: a PEM file (-----BEGIN ...), not a module");
  refused("sign --key combo.pem --stream-above 0 k.pem", 3, "k.pem: a PEM file (-----BEGIN ...), not a module");
  refused("sign-file sha256 combo.pem combo.pem empty.ko", 1, "empty.ko: empty file, not a module");
  refused("sign-file sha256 combo.pem combo.pem combo.pem", 1, "combo.pem: a PEM file (-----BEGIN ...), not a module");
  // A stream that decompresses to nothing holds no module either: signed, the kernel would
  // refuse it (mod_check_sig: EBADMSG); --recompress and --p7s-only signed it (session 20's
  // hostile review).
  ASSERT_EQ(test::run("xz --check=crc32 -k " + q(d_ / "empty.ko")).status, 0);
  refused("sign --key combo.pem --recompress empty.ko.xz", 3, "empty.ko.xz: xz-compressed empty file, not a module");
  refused("sign --key combo.pem --p7s-only empty.ko.xz", 3, "empty.ko.xz: xz-compressed empty file, not a module");
}

}  // namespace
}  // namespace modsign::test
