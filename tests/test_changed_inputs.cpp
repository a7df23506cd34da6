// Promise 5 of issue 29 (tests/test_outputs_promises.cpp has 1-4), against an adversary
// who changes the tree or a file while modsign works on it, deterministically:
//   - a directory under -r DIR replaced by a symbolic link after the walk never leads a
//     command to a file outside DIR (TreeEntry::file, SignOptions::expect_file), and an
//     output is renamed in the directory opened for it, wherever its path leads by then;
//   - a module grown or shrunk after it was read is never replaced (in memory and
//     streamed: the commit is held in an OutputBatch while the file is changed);
//   - ima sign's xattr is the signature of what the file holds (one open file).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include <modsign/modsign.hpp>

#include "api/internal.hpp"
#include "common/file.hpp"
#include "common/module_read.hpp"
#include "test_support.hpp"

namespace modsign::test {
namespace {

namespace fs = std::filesystem;

const std::string kReplaced =
    ": not the file found there by the walk of -r DIR (a directory on its path replaced meanwhile, by a symbolic "
    "link?); not handled";

std::string xattr_of(const std::string& path, const char* name) {
  char buf[8192];
  const ssize_t n = ::getxattr(path.c_str(), name, buf, sizeof buf);
  return n < 0 ? "<none>" : std::string(buf, static_cast<std::size_t>(n));
}

/// The IoError `f` throws, or "handled" when it returns.
std::string io_error_of(const std::function<void()>& f) {
  try {
    f();
    return "handled";
  } catch (const IoError& x) { return x.what(); }
}

class ChangedInputs : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    keys_ = new TempDir();
    const std::string o = openssl();
    const auto r = run(o + " req -x509 -new -newkey rsa:2048 -nodes -keyout " + q(*keys_ / "k.pem") +
                       " -subj /CN=changed-inputs -days 30 -out " + q(*keys_ / "k.crt"));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete keys_; }
  static Signer signer() { return Signer::load(*keys_ / "k.pem", *keys_ / "k.crt"); }

  // DIR/sub/m.ko inside, outside/sub/m.ko beside it (the same bytes); the walk of DIR; then
  // DIR/sub moved away and replaced by a symbolic link to outside/sub.
  TreeEntry walk_then_swap() {
    fs::create_directories(d_ / "DIR/sub");
    fs::create_directories(d_ / "outside/sub");
    spit(d_ / "DIR/sub/m.ko", pattern(4096));
    spit(d_ / "outside/sub/m.ko", pattern(4096));
    const auto entries = walk_tree(d_ / "DIR");
    EXPECT_EQ(entries.size(), 1u);
    fs::rename(d_ / "DIR/sub", d_ / "DIR/sub.moved");
    fs::create_directory_symlink(d_ / "outside/sub", d_ / "DIR/sub");
    return entries.at(0);
  }
  // What -r DIR hands the library for `e`.
  WalkedFile walked(const TreeEntry& e) const { return {d_ / "DIR", e.file}; }
  void expect_outside_untouched() {
    EXPECT_EQ(slurp(d_ / "outside/sub/m.ko"), pattern(4096));
    EXPECT_EQ(xattr_of(d_ / "outside/sub/m.ko", "user.ima"), "<none>");
    EXPECT_EQ(std::distance(fs::directory_iterator(d_ / "outside/sub"), fs::directory_iterator()), 1);
  }
  static inline TempDir* keys_ = nullptr;
  TempDir d_;
};

TEST_F(ChangedInputs, TheWalkRecordsWhichFileEachEntryIs) {
  fs::create_directories(d_ / "t");
  spit(d_ / "t/a.ko", pattern(10));
  struct stat st {};
  ASSERT_EQ(::stat((d_ / "t/a.ko").c_str(), &st), 0);
  const auto e = walk_tree(d_ / "t");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].file, (FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)}));
}

TEST_F(ChangedInputs, SignNeverFollowsASwappedDirectoryOutOfTheTree) {
  const TreeEntry e = walk_then_swap();
  SignOptions o;
  o.expect_file = walked(e);
  EXPECT_EQ(io_error_of([&] { sign_module_file(signer(), e.path, o); }), e.path + kReplaced);
  expect_outside_untouched();
  // Without the walk's identity the same call signs the file outside: what -r used to do.
  EXPECT_EQ(sign_module_file(signer(), e.path).path, e.path);
  EXPECT_NE(slurp(d_ / "outside/sub/m.ko"), pattern(4096));
}

// The file outside is a hard link of the walked one (hostile pass 4: the same device and
// inode, so an identity check alone passed, and the module and its .p7s were written in
// the directory outside): the walked path is opened below DIR, one component at a time,
// and the link on it is refused before anything is locked or written.
TEST_F(ChangedInputs, AHardLinkOutsideReachedThroughASwappedDirectoryIsRefused) {
  fs::create_directories(d_ / "DIR/sub");
  fs::create_directories(d_ / "outside/sub");
  spit(d_ / "DIR/sub/m.ko", pattern(4096));
  fs::create_hard_link(d_ / "DIR/sub/m.ko", d_ / "outside/sub/m.ko");
  const auto entries = walk_tree(d_ / "DIR");
  ASSERT_EQ(entries.size(), 1u);
  const TreeEntry& e = entries[0];
  fs::rename(d_ / "DIR/sub", d_ / "DIR/sub.moved");
  fs::create_directory_symlink(d_ / "outside/sub", d_ / "DIR/sub");
  struct stat in {
  }, out{};
  ASSERT_EQ(::stat(e.path.c_str(), &in), 0);
  ASSERT_EQ(::stat((d_ / "DIR/sub.moved/m.ko").c_str(), &out), 0);
  ASSERT_EQ(in.st_ino, out.st_ino);  // the path now leads outside, to the very same file
  SignOptions o;
  o.expect_file = walked(e);
  o.p7s = true;
  EXPECT_EQ(io_error_of([&] { sign_module_file(signer(), e.path, o); }), e.path + kReplaced);
  ImaSignOptions io;
  io.expect_file = walked(e);
  EXPECT_EQ(io_error_of([&] { ima_sign_file(signer(), e.path, io); }), e.path + kReplaced);
  expect_outside_untouched();
  EXPECT_EQ(slurp(d_ / "DIR/sub.moved/m.ko"), pattern(4096));
  EXPECT_EQ(std::distance(fs::directory_iterator(d_ / "DIR/sub.moved"), fs::directory_iterator()), 1);
  EXPECT_EQ(std::distance(fs::directory_iterator(d_ / "DIR"), fs::directory_iterator()), 2);  // sub, sub.moved
}

// Another file at the walked path, reached through no link (another modsign renamed its
// output over it): named for what happened, not as a swapped directory (hostile pass 5,
// F5), and nothing written.  A file named on the command line is checked the same way
// against the file found when the command started (root empty): what a batch decided
// then, a later name of it skipped as "the same file", holds for the file it handles
// (hostile pass 5, F1: a swap made an argument and a walked entry one file, the walked one
// was skipped and the argument, real again, handled: exit 0, a module left unsigned).
TEST_F(ChangedInputs, AnotherFileAtTheFoundPathIsChangedByAnotherProcess) {
  fs::create_directories(d_ / "DIR/sub");
  spit(d_ / "DIR/sub/m.ko", pattern(4096));
  const auto entries = walk_tree(d_ / "DIR");
  ASSERT_EQ(entries.size(), 1u);
  const TreeEntry& e = entries[0];
  spit(d_ / "DIR/sub/m.ko.new", pattern(100));
  fs::rename(d_ / "DIR/sub/m.ko.new", e.path);
  SignOptions o;
  o.expect_file = walked(e);
  EXPECT_EQ(io_error_of([&] { sign_module_file(signer(), e.path, o); }),
            e.path + ": changed by another process since the walk of -r DIR found it; not handled");
  o.expect_file = WalkedFile{"", e.file};
  EXPECT_EQ(io_error_of([&] { sign_module_file(signer(), e.path, o); }),
            e.path +
                ": changed by another process since the command started (no longer the file it named then); "
                "not handled");
  EXPECT_EQ(slurp(e.path), pattern(100));
  EXPECT_EQ(std::distance(fs::directory_iterator(d_ / "DIR/sub"), fs::directory_iterator()), 1);
  // A named file that is still the one found (through a symbolic link too) is handled.
  fs::create_symlink(e.path, d_ / "link.ko");
  struct stat st {};
  ASSERT_EQ(::stat(e.path.c_str(), &st), 0);
  o.expect_file = WalkedFile{"", FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)}};
  EXPECT_EQ(sign_module_file(signer(), d_ / "link.ko", o).path, d_ / "link.ko");
  EXPECT_GT(slurp(e.path).size(), 100u);
}

TEST_F(ChangedInputs, StripAndImaSignNeverFollowASwappedDirectory) {
  const TreeEntry e = walk_then_swap();
  StripOptions so;
  so.expect_file = walked(e);
  EXPECT_EQ(io_error_of([&] { strip_module_file(e.path, so); }), e.path + kReplaced);
  ImaSignOptions io;
  io.expect_file = walked(e);
  EXPECT_EQ(io_error_of([&] { ima_sign_file_xattr(signer(), e.path, "user.ima", io); }), e.path + kReplaced);
  EXPECT_EQ(io_error_of([&] { ima_sign_file(signer(), e.path, io); }), e.path + kReplaced);
  expect_outside_untouched();
}

// The reading commands too (the hostile pass's F4: verify printed "loads (OK)" for a file
// outside DIR, prepare wrote its SHA-256 under the walked path, ima verify hashed it).
TEST_F(ChangedInputs, VerifyPrepareAndImaVerifyReadOnlyTheWalkedFile) {
  const TreeEntry e = walk_then_swap();
  const KernelProfile v7 = *KernelProfile::parse("v7.0");
  const TrustStore trust = TrustStore::from_certificates({*keys_ / "k.crt"}, v7);
  const auto& refused = io_error_of;
  PredictOptions po;
  po.expect_file = walked(e);
  EXPECT_EQ(refused([&] { (void)predict_module_file(e.path, trust, v7, po); }), e.path + kReplaced);
  SignOptions so;
  so.expect_file = walked(e);
  EXPECT_EQ(refused([&] { (void)prepare_module_file(SignerCertificate::load(*keys_ / "k.crt"), e.path, so); }),
            e.path + kReplaced);
  ImaAppraiseOptions ao;
  ao.expect_file = walked(e);
  EXPECT_EQ(refused([&] { (void)ima_appraise_file(e.path, std::nullopt, trust, *KernelProfile::parse("v7.2"), ao); }),
            e.path + kReplaced);
  // The same calls without the walk's identity read the file outside: what -r used to do.
  EXPECT_EQ(refused([&] { (void)predict_module_file(e.path, trust, v7, PredictOptions{}); }), "handled");
}

// An output is renamed in the directory opened when it was made: a directory at its path
// swapped for a symbolic link before the commit changes nothing outside.
TEST_F(ChangedInputs, AnOutputIsRenamedInTheDirectoryOpenedForIt) {
  fs::create_directories(d_ / "DIR/sub");
  fs::create_directories(d_ / "outside/sub");
  spit(d_ / "DIR/sub/x", "old");
  spit(d_ / "outside/sub/x", "outside");
  {
    AtomicFile f(d_ / "DIR/sub/x");
    f.write(ByteView(reinterpret_cast<const std::uint8_t*>("new"), 3));
    fs::rename(d_ / "DIR/sub", d_ / "DIR/sub.moved");
    fs::create_directory_symlink(d_ / "outside/sub", d_ / "DIR/sub");
    f.commit();
  }
  EXPECT_EQ(slurp(d_ / "outside/sub/x"), Bytes({'o', 'u', 't', 's', 'i', 'd', 'e'}));
  EXPECT_EQ(slurp(d_ / "DIR/sub.moved/x"), Bytes({'n', 'e', 'w'}));
  EXPECT_EQ(std::distance(fs::directory_iterator(d_ / "outside/sub"), fs::directory_iterator()), 1);
  EXPECT_EQ(std::distance(fs::directory_iterator(d_ / "DIR/sub.moved"), fs::directory_iterator()), 1);
}

// What a command locked is what it reads and where it writes: a directory on the input's
// path swapped for a symbolic link after the lock (the hostile pass's F2/F3: the module was
// read again by path, and an in-place output or its .p7s made through the new link) changes
// nothing outside, and the output lands beside the locked input.
TEST_F(ChangedInputs, ALockedInputIsReadAndReplacedWhereItWasLocked) {
  fs::create_directories(d_ / "DIR/sub");
  fs::create_directories(d_ / "outside/sub");
  const std::string m = d_ / "DIR/sub/m.ko";
  spit(m, pattern(4096));
  spit(d_ / "outside/sub/m.ko", pattern(100));
  spit(d_ / "outside/sub/m.ko.p7s", "PRECIOUS");
  const InputLock lock(m);
  fs::rename(d_ / "DIR/sub", d_ / "DIR/sub.moved");
  fs::create_directory_symlink(d_ / "outside/sub", d_ / "DIR/sub");
  EXPECT_EQ(read_module_bytes(lock, 1u << 20), pattern(4096));
  {
    AtomicFile out(m, lock.dir()), p7s(m + ".p7s", lock.dir());
    out.write(ByteView(reinterpret_cast<const std::uint8_t*>("new"), 3));
    p7s.write(ByteView(reinterpret_cast<const std::uint8_t*>("cms"), 3));
    out.require_unchanged(lock);
    p7s.require_unchanged(lock);  // the input looked at in its locked directory, not through the link
    commit_together({&out, &p7s});
  }
  EXPECT_EQ(slurp(d_ / "outside/sub/m.ko"), pattern(100));
  EXPECT_EQ(slurp(d_ / "outside/sub/m.ko.p7s"), Bytes({'P', 'R', 'E', 'C', 'I', 'O', 'U', 'S'}));
  EXPECT_EQ(slurp(d_ / "DIR/sub.moved/m.ko"), Bytes({'n', 'e', 'w'}));
  EXPECT_EQ(slurp(d_ / "DIR/sub.moved/m.ko.p7s"), Bytes({'c', 'm', 's'}));
  EXPECT_EQ(std::distance(fs::directory_iterator(d_ / "outside/sub"), fs::directory_iterator()), 2);
  EXPECT_EQ(std::distance(fs::directory_iterator(d_ / "DIR/sub.moved"), fs::directory_iterator()), 2);
}

// The checks made before an output replaces anything look where the output is made: after
// a directory on the path of a locked input is swapped for a symbolic link, the in-place
// module, its .p7s and FILE.sig are checked in the locked input's directory, and no file
// outside is opened or refused for (hostile pass 2: ima sign F1, strip, sign --p7s).
TEST_F(ChangedInputs, OutputChecksLookBesideTheLockedInput) {
  fs::create_directories(d_ / "DIR/sub");
  fs::create_directories(d_ / "outside/sub");
  const std::string m = d_ / "DIR/sub/m.ko";
  spit(m, pattern(4096));
  const Bytes key = slurp(*keys_ / "k.pem");
  for (const char* name : {"m.ko", "m.ko.p7s", "m.ko.sig"}) spit(d_ / ("outside/sub/" + std::string(name)), key);
  const InputLock lock(m);
  fs::rename(d_ / "DIR/sub", d_ / "DIR/sub.moved");
  fs::create_directory_symlink(d_ / "outside/sub", d_ / "DIR/sub");
  const auto refused = [](const FileAt& at) { return io_error_of([&] { api::refuse_output_over(at, {}); }); };
  for (const std::string& out : {m, m + ".p7s", m + ".sig"}) {
    const FileAt at = lock.beside(out);
    EXPECT_NE(at.dir, AT_FDCWD) << out;
    EXPECT_EQ(at.shown, out);
    EXPECT_EQ(refused(at), "handled") << out;  // the key outside is not what would be replaced
    EXPECT_EQ(refused(FileAt::path(out)), out + ": holds a private key (PEM); refusing to overwrite it");
  }
  EXPECT_TRUE(api::is_input(lock.beside(m), lock));
  EXPECT_FALSE(api::is_input(FileAt::path(m), lock));             // by path: the file outside
  EXPECT_EQ(lock.beside(d_ / "DIR/sub/other.ko").dir, AT_FDCWD);  // not beside the input: a path
  // What is in the locked input's directory is checked: a key there is refused by its name.
  spit(d_ / "DIR/sub.moved/m.ko.p7s", key);
  EXPECT_EQ(refused(lock.beside(m + ".p7s")), m + ".p7s: holds a private key (PEM); refusing to overwrite it");
  for (const char* name : {"m.ko", "m.ko.p7s", "m.ko.sig"})
    EXPECT_EQ(slurp(d_ / ("outside/sub/" + std::string(name))), key);
}

// ima sign --sigfile writes FILE.sig beside the file it read, not through the path (F1).
TEST_F(ChangedInputs, ImaSigfileIsWrittenBesideTheFileRead) {
  const TreeEntry e = walk_then_swap();
  spit(d_ / "outside/sub/m.ko.sig", "PRECIOUS");
  ImaSignOptions io;
  io.expect_file = walked(e);
  EXPECT_EQ(io_error_of([&] { ima_sign_file_sigfile(signer(), e.path, io); }), e.path + kReplaced);
  EXPECT_EQ(slurp(d_ / "outside/sub/m.ko.sig"), Bytes({'P', 'R', 'E', 'C', 'I', 'O', 'U', 'S'}));
  // Unswapped: the value in FILE.sig, the file untouched.
  const ImaSignature s = ima_sign_file_sigfile(signer(), d_ / "DIR/sub.moved/m.ko");
  EXPECT_EQ(slurp(d_ / "DIR/sub.moved/m.ko.sig"), s.value);
  EXPECT_EQ(slurp(d_ / "DIR/sub.moved/m.ko"), pattern(4096));
  // FILE.sig holding a key, or being the signer's certificate, is refused before anything
  // is hashed or written.
  const Bytes key = slurp(*keys_ / "k.pem");
  spit(d_ / "DIR/sub.moved/m.ko.sig", key);
  const auto refusal = [&](const std::string& path) {
    return io_error_of([&] { ima_sign_file_sigfile(signer(), path); });
  };
  EXPECT_EQ(refusal(d_ / "DIR/sub.moved/m.ko"),
            (d_ / "DIR/sub.moved/m.ko.sig") + ": holds a private key (PEM); refusing to overwrite it");
  EXPECT_EQ(slurp(d_ / "DIR/sub.moved/m.ko.sig"), key);
  fs::copy_file(d_ / "DIR/sub.moved/m.ko", *keys_ / "k.crt.x", fs::copy_options::overwrite_existing);
  fs::create_symlink(*keys_ / "k.crt", *keys_ / "k.crt.x.sig");
  EXPECT_EQ(refusal(*keys_ / "k.crt.x"), (*keys_ / "k.crt.x.sig") + ": is the same file as the certificate " +
                                             (*keys_ / "k.crt") + "; refusing to overwrite it");
  fs::remove(*keys_ / "k.crt.x.sig");
  fs::remove(*keys_ / "k.crt.x");
}

// The signature is made and its commit held (an OutputBatch with no committers) while the
// module grows or shrinks: the commit refuses, and the changed file stays as it was made.
TEST_F(ChangedInputs, AModuleChangedAfterItWasReadIsNeverReplaced) {
  struct Case {
    const char* name;
    std::uint64_t stream_above;  // 0: streamed; else read whole
    std::size_t new_size;        // grown or shrunk to this
  };
  for (const Case c : {Case{"in memory, grown", 1u << 30, 5000}, Case{"in memory, shrunk", 1u << 30, 100},
                       Case{"streamed, grown", 0, 5000}, Case{"streamed, shrunk", 0, 100}}) {
    SCOPED_TRACE(c.name);
    const std::string m = d_ / "m.ko";
    spit(m, pattern(4096));
    SignOptions o;
    o.stream_above = c.stream_above;
    OutputBatch batch(SyncPolicy::batch, 0);
    const SignReport r = sign_module_file(signer(), m, o, {&batch, 3});
    EXPECT_EQ(r.streamed, c.stream_above == 0);
    ASSERT_EQ(::truncate(m.c_str(), static_cast<off_t>(c.new_size)), 0);
    const auto failures = batch.finish();
    ASSERT_EQ(failures.size(), 1u);
    EXPECT_EQ(failures[0].item, 3u);
    EXPECT_EQ(failures[0].message, m + ": changed by another process while modsign worked on it; not replacing " + m);
    Bytes expected = pattern(4096);
    expected.resize(c.new_size, 0);
    EXPECT_EQ(slurp(m), expected);
    EXPECT_EQ(std::distance(fs::directory_iterator(d_.path()), fs::directory_iterator()), 1);
  }
}

// ima sign's xattr and the bytes it signs come from one open file: the signature set
// verifies against what the file holds, and a file that is not what the walk found gets none.
TEST_F(ChangedInputs, ImaSignSetsTheSignatureOfWhatTheFileHolds) {
  const std::string f = d_ / "f";
  spit(f, pattern(3000));
  const ImaSignature s = ima_sign_file_xattr(signer(), f, "user.ima");
  EXPECT_EQ(xattr_of(f, "user.ima"), std::string(s.value.begin(), s.value.end()));
  EXPECT_EQ(s.file_size, 3000u);
  const auto verdict = run(modsign_cli() + " ima verify --xattr-user --keyring " + q(*keys_ / "k.crt") + " " + q(f));
  EXPECT_EQ(verdict.status, 0) << verdict.out << verdict.err;
  // Confirmed by evmctl (ima-evm-utils), which reads user.ima under --xattr-user; one byte
  // more and it fails.
  const std::string der = d_ / "k.der";
  ASSERT_EQ(run(openssl() + " x509 -in " + q(*keys_ / "k.crt") + " -outform DER -out " + q(der)).status, 0);
  const auto evmctl = run("evmctl ima_verify --xattr-user --key " + q(der) + " " + q(f));
  EXPECT_EQ(evmctl.status, 0) << evmctl.out << evmctl.err;
  spit(f, pattern(3001));
  ASSERT_EQ(xattr_of(f, "user.ima"), std::string(s.value.begin(), s.value.end()));  // the same file, its value kept
  EXPECT_EQ(run("evmctl ima_verify --xattr-user --key " + q(der) + " " + q(f)).status, 1);
}

}  // namespace
}  // namespace modsign::test
