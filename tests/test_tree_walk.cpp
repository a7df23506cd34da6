// The -r walk (include/modsign/tree.hpp) and the truthful status of the commands that use
// it (issue 29, "False success" and "Memory"): a module deeper than PATH_MAX is named as
// ENAMETOOLONG and fails the command, never "skipped: not a regular file" with exit 0; a
// deep tree is walked (one descriptor at a time); an unreadable directory is named and the
// rest is walked; an -r DIR with nothing to handle is the same input error for every
// command; and a verdict that does not cover an entry found under -r is not a success.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include <modsign/tree.hpp>

#include "test_support.hpp"

namespace modsign::test {
namespace {

namespace fs = std::filesystem;

std::string vec(const std::string& name) { return vector_path("openssl-3.5.7-generated/" + name); }

// Creates `levels` nested directories named `name` under the directory `root` (by
// descriptor: the path may exceed PATH_MAX), writes `file` with `bytes` in the deepest,
// and returns the deepest directory's path as the walk spells it.
std::string make_deep(const std::string& root, int levels, const std::string& name, const std::string& file,
                      const Bytes& bytes) {
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY);
  std::string path = root;
  for (int i = 0; i < levels; ++i) {
    EXPECT_EQ(::mkdirat(fd, name.c_str(), 0755), 0) << std::strerror(errno);
    const int next = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY);
    ::close(fd);
    fd = next;
    path += "/" + name;
  }
  if (!file.empty()) {
    const int f = ::openat(fd, file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    EXPECT_EQ(::write(f, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    ::close(f);
  }
  ::close(fd);
  return path;
}

class TreeWalk : public testing::Test {
 protected:
  void TearDown() override {
    // TempDir's removal goes by path and stops at PATH_MAX: rm(1) walks by descriptor to
    // any depth (no recursion of ours, whose frames overflowed the stack under ASan).
    ASSERT_EQ(run("rm -rf " + q(d_.path()) + " && mkdir " + q(d_.path())).status, 0);
  }
  std::string M() const { return modsign_cli(); }
  TempDir d_;
};

bool is_ko(std::string_view n) { return n.size() > 3 && n.substr(n.size() - 3) == ".ko"; }

// 600 levels of "dddddddd": the module at the bottom has a 5,400-byte path.  The walk
// reaches it and returns it as ENAMETOOLONG (with its whole path); the module 100 levels
// down (a 900-byte path) is a regular entry.  Sorted by path.
TEST_F(TreeWalk, ReachesPastPathMaxAndNamesWhatItCannotHandle) {
  const Bytes signed_module = slurp(vec("mldsa65.module-appended.bin"));
  const std::string deep = make_deep(d_.path(), 600, "dddddddd", "m.ko", signed_module);
  const std::string shallow = d_ / std::string("e");
  ASSERT_EQ(::mkdir(shallow.c_str(), 0755), 0);
  make_deep(shallow, 100, "dddddddd", "n.ko", signed_module);
  std::string shallow_path = shallow;
  for (int i = 0; i < 100; ++i) shallow_path += "/dddddddd";
  const auto entries = walk_tree(d_.path(), is_ko);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].path, deep + "/m.ko");
  EXPECT_EQ(entries[0].path.size(), d_.path().size() + 600 * 9 + 5);
  EXPECT_EQ(entries[0].kind, TreeEntry::Kind::error);
  EXPECT_EQ(entries[0].error, ENAMETOOLONG);
  EXPECT_EQ(entries[1].path, shallow_path + "/n.ko");
  EXPECT_EQ(entries[1].kind, TreeEntry::Kind::regular);
  EXPECT_EQ(entries[1].error, 0);
  // Not wanted: nothing, not even the ENAMETOOLONG of an entry nobody asked for.
  EXPECT_TRUE(walk_tree(d_.path(), [](std::string_view) { return false; }).empty());

  // verify -r: n.ko is verified, m.ko is named with its cause, and the status is 3 (on the
  // old main: "skipped: not a regular file", exit 0 "every module loads").
  const auto r = run(M() + " verify --cert " + q(vec("mldsa65.cert.der")) + " -r " + q(d_.path()) + " -j 1");
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.err.substr(0, r.err.find("modsign: verify: ")),
            "modsign: " + deep + "/m.ko: File name too long (the path is " + std::to_string(entries[0].path.size()) +
                " bytes, PATH_MAX is 4096): not handled\n");
  EXPECT_EQ(r.out.rfind(shallow_path + "/n.ko: ", 0), 0u) << r.out;  // verified: its verdict line
}

// 9,000 nested empty directories (the trial's 4.2 GB walk): walked to the bottom, nothing
// found, and every command says so the same way (exit 3).
TEST_F(TreeWalk, NineThousandLevelsAreWalkedAndFoundEmpty) {
  make_deep(d_.path(), 9000, "d", "", {});
  EXPECT_TRUE(walk_tree(d_.path()).empty());
  const auto r = run(M() + " verify --cert " + q(vec("mldsa65.cert.der")) + " -r " + q(d_.path()));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "modsign: " + d_.path() + ": no modules under it (*.ko, *.ko.xz, *.ko.zst, *.ko.gz)\n");
}

// One rule for an -r DIR with nothing to handle: exit 3, "DIR: no modules under it" (or
// "no files under it" for ima), no output written (on the old main: 0, 2 or 3 by command,
// and `sign --prepare` wrote an empty manifest).
TEST_F(TreeWalk, EmptyDirIsTheSameInputErrorForEveryCommand) {
  const std::string e = d_ / "empty";
  ASSERT_EQ(::mkdir(e.c_str(), 0755), 0);
  test::spit(d_ / "empty/readme.txt", "not a module\n");
  const std::string key = " --key " + q(vec("mldsa65.key.pem")) + " --cert " + q(vec("mldsa65.cert.der"));
  const std::string mods = "modsign: " + e + ": no modules under it (*.ko, *.ko.xz, *.ko.zst, *.ko.gz)";
  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{
           {"sign" + key + " -r " + q(e), mods},
           {"sign --cert " + q(vec("mldsa65.cert.der")) + " --prepare " + q(d_ / "manifest") + " -r " + q(e), mods},
           {"strip -r " + q(e), mods},
           {"verify --cert " + q(vec("mldsa65.cert.der")) + " -r " + q(e), mods},
           {"verify --json --cert " + q(vec("mldsa65.cert.der")) + " -r " + q(e), mods},
           {"ima verify --keyring " + q(vec("mldsa65.cert.der")) + " -r " + q(e + "/none"),
            "modsign: " + e + "/none: No such file or directory"},
       }) {
    SCOPED_TRACE(c.args);
    const auto before = snapshot_dir(d_.path());
    const auto r = run(M() + " " + c.args);
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, c.message + "\n");
    EXPECT_EQ(snapshot_dir(d_.path()), before);
  }
  const std::string f = d_ / "nofiles";
  ASSERT_EQ(::mkdir(f.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((f + "/sub").c_str(), 0755), 0);
  for (const std::string& args : {"ima sign" + key + " --sigfile -r " + q(f),
                                  "ima verify --keyring " + q(vec("mldsa65.cert.der")) + " -r " + q(f),
                                  "ima sign" + key + " --manifest " + q(d_ / "ima.manifest") + " -r " + q(f),
                                  "ima estimate --fs ext4 -r " + q(f)}) {
    SCOPED_TRACE(args);
    const auto r = run(M() + " " + args);
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "modsign: " + f + ": no files under it\n");
  }
}

// With --sigfile, a DIR holding only FILE.sig files has nothing to sign or check: the same
// input error (on the old main: "0 done, 0 failed, 1 skipped", exit 0).
TEST_F(TreeWalk, OnlySignatureFilesUnderDirIsAnInputError) {
  const std::string f = d_ / "sigs";
  ASSERT_EQ(::mkdir(f.c_str(), 0755), 0);
  test::spit(f + "/x.ko.sig", "not a file to sign\n");
  const std::string key = " --key " + q(vec("mldsa65.key.pem")) + " --cert " + q(vec("mldsa65.cert.der"));
  for (const std::string& args : {"ima sign" + key + " --sigfile -r " + q(f),
                                  "ima verify --sigfile --keyring " + q(vec("mldsa65.cert.der")) + " -r " + q(f)}) {
    SCOPED_TRACE(args);
    const auto before = snapshot_dir(d_.path());
    const auto r = run(M() + " " + args);
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("modsign: " + f + ": no files under it but signature files (FILE.sig)\n", 0), 0u) << r.err;
    EXPECT_NE(
        r.err.find("modsign: " + f + "/x.ko.sig: skipped: signature file (--sigfile), not a file to sign or check\n"),
        std::string::npos)
        << r.err;
    EXPECT_EQ(snapshot_dir(d_.path()), before);
  }
}

// A directory this user cannot read (root without CAP_DAC_OVERRIDE/READ_SEARCH): named
// with its reason, exit 3, and the rest of the tree is still walked and verified.
TEST_F(TreeWalk, UnreadableDirectoryIsNamedAndTheRestIsWalked) {
  const std::string drop = "setpriv --bounding-set=-dac_override,-dac_read_search ";
  if (::geteuid() == 0 && run(drop + "true").status != 0) GTEST_SKIP() << "setpriv cannot drop capabilities here";
  const Bytes m = slurp(vec("mldsa65.module-appended.bin"));
  fs::create_directories(d_ / "t/locked");
  fs::create_directories(d_ / "t/open");
  fs::create_directories(d_ / "t/a-listable");
  spit(d_ / "t/locked/a.ko", m);
  spit(d_ / "t/open/b.ko", m);
  spit(d_ / "t/a-listable/x.ko", m);
  ASSERT_EQ(::chmod((d_ / "t/locked").c_str(), 0), 0);
  // Readable but not searchable (0644): its names can be listed, nothing in it looked up.
  // It stopped the whole walk with a false "moved or replaced" (hostile pass).
  ASSERT_EQ(::chmod((d_ / "t/a-listable").c_str(), 0644), 0);
  // This process: as root with every capability both modules; else the error and b.ko.
  const auto entries = walk_tree(d_ / "t", is_ko);
  const auto r =
      run((::geteuid() == 0 ? drop : "") + M() + " verify --cert " + q(vec("mldsa65.cert.der")) + " -r " + q(d_ / "t"));
  ::chmod((d_ / "t/locked").c_str(), 0755);
  ::chmod((d_ / "t/a-listable").c_str(), 0755);
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(
      r.err.substr(0, r.err.find("modsign: verify: ")),
      "modsign: " + d_ / "t/a-listable" + ": Permission denied\nmodsign: " + d_ / "t/locked" + ": Permission denied\n");
  EXPECT_EQ(r.out.rfind(d_ / "t/open/b.ko" + ": ", 0), 0u) << r.out;  // verified: its verdict line
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].path, d_ / (::geteuid() == 0 ? "t/a-listable/x.ko" : "t/a-listable"));
  EXPECT_EQ(entries[1].path, d_ / (::geteuid() == 0 ? "t/locked/a.ko" : "t/locked"));
  EXPECT_EQ(entries[1].kind, ::geteuid() == 0 ? TreeEntry::Kind::regular : TreeEntry::Kind::error);
  EXPECT_EQ(entries[2].path, d_ / "t/open/b.ko");
}

// walk_tree() of what is not a directory: one error entry naming it.
TEST_F(TreeWalk, WhatIsNotADirectoryIsOneErrorEntry) {
  spit(d_ / "file", "x");
  for (const auto& [path, err] :
       std::vector<std::pair<std::string, int>>{{d_ / "file", ENOTDIR}, {d_ / "gone", ENOENT}}) {
    const auto e = walk_tree(path);
    ASSERT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].path, path);
    EXPECT_EQ(e[0].kind, TreeEntry::Kind::error);
    EXPECT_EQ(e[0].error, err);
  }
  // A symbolic link as DIR is followed (the user named it); one below it is not.
  fs::create_directories(d_ / "real/sub");
  spit(d_ / "real/sub/x.ko", "x");
  ASSERT_EQ(::symlink("real", (d_ / "link").c_str()), 0);
  ASSERT_EQ(::symlink("sub", (d_ / "real/alias").c_str()), 0);
  const auto e = walk_tree(d_ / "link");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].path, d_ / "link/alias");
  EXPECT_EQ(e[0].kind, TreeEntry::Kind::symlink);
  EXPECT_EQ(tree_kind_text(e[0].kind), "symbolic link, not followed");
  EXPECT_EQ(e[1].path, d_ / "link/sub/x.ko");
  EXPECT_EQ(e[1].kind, TreeEntry::Kind::regular);
}

}  // namespace
}  // namespace modsign::test
