// Promise 5 of issue 29 (tests/test_outputs_promises.cpp has 1-4), against an adversary
// who changes the tree or a file while modsign works on it, deterministically:
//   - a directory under -r DIR replaced by a symbolic link after the walk never leads a
//     command to a file outside DIR (TreeEntry::file, SignOptions::expect_file), and an
//     output is renamed in the directory opened for it, wherever its path leads by then;
//   - a module grown or shrunk after it was read is never replaced (in memory and
//     streamed: the commit is held in an OutputBatch while the file is changed);
//   - ima sign's xattr is the signature of what the file holds (one open file).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <modsign/modsign.hpp>

#include "common/file.hpp"
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
  o.expect_file = e.file;
  try {
    sign_module_file(signer(), e.path, o);
    ADD_FAILURE() << "signed " << e.path;
  } catch (const IoError& x) {
    EXPECT_EQ(std::string(x.what()), e.path + kReplaced);
  }
  expect_outside_untouched();
  // Without the walk's identity the same call signs the file outside: what -r used to do.
  EXPECT_EQ(sign_module_file(signer(), e.path).path, e.path);
  EXPECT_NE(slurp(d_ / "outside/sub/m.ko"), pattern(4096));
}

TEST_F(ChangedInputs, StripAndImaSignNeverFollowASwappedDirectory) {
  const TreeEntry e = walk_then_swap();
  StripOptions so;
  so.expect_file = e.file;
  EXPECT_THROW(
      {
        try {
          strip_module_file(e.path, so);
        } catch (const IoError& x) {
          EXPECT_EQ(std::string(x.what()), e.path + kReplaced);
          throw;
        }
      },
      IoError);
  ImaSignOptions io;
  io.expect_file = e.file;
  for (const bool set : {true, false}) {
    try {
      if (set) ima_sign_file_xattr(signer(), e.path, "user.ima", io);
      else ima_sign_file(signer(), e.path, io);
      ADD_FAILURE() << "signed " << e.path;
    } catch (const IoError& x) {
      EXPECT_EQ(std::string(x.what()), e.path + kReplaced);
    }
  }
  expect_outside_untouched();
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
    const SignReport r = sign_module_file(signer(), m, o, &batch);
    EXPECT_EQ(r.streamed, c.stream_above == 0);
    ASSERT_EQ(::truncate(m.c_str(), static_cast<off_t>(c.new_size)), 0);
    const auto failures = batch.finish();
    ASSERT_EQ(failures.size(), 1u);
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
}

}  // namespace
}  // namespace modsign::test
