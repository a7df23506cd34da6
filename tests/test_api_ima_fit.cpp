// The public ima_fit / ima_estimate calls (include/modsign/ima_fit.hpp).  The limits asserted
// here are the ones the 7.2.13 IMA conformance kernel measured with setxattr(2) of growing
// sizes on file systems made by Debian's mkfs (tools/conformance/fit_run.py, the
// "mldsa-ima-xattr" kernel): ext4 4040 (4 KiB blocks) and 968 (1 KiB), 65536 with ea_inode,
// btrfs 16216 (16 KiB nodes) and 3928 (4 KiB), f2fs 4241 and 4201 next to a 27-byte
// security.selinux, XFS 65536.  read_fs_geometry is checked on images made here by mkfs.
#include <gtest/gtest.h>

#include <modsign/ima_fit.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "test_support.hpp"

using namespace modsign;

namespace {

FsGeometry ext4(std::uint32_t bs, std::uint32_t inode = 256, bool ea = false) {
  FsGeometry g;
  g.fs = FsType::ext4;
  g.block_size = bs;
  g.inode_size = inode;
  g.ea_inode = ea;
  return g;
}
FsGeometry of(FsType t) {
  FsGeometry g;
  g.fs = t;
  if (t == FsType::xfs) g.inode_size = 512;
  return g;
}
const std::vector<Xattr> kLabel = {{"security.selinux", 27}};

}  // namespace

TEST(ApiImaFit, SignatureSizes) {
  EXPECT_EQ(ima_signature_size("ecdsa-p256"), 81u);
  EXPECT_EQ(ima_signature_size("ecdsa-p384"), 113u);
  EXPECT_EQ(ima_signature_size("rsa-3072"), 393u);
  EXPECT_EQ(ima_signature_size("ml-dsa-44"), 2429u);
  EXPECT_EQ(ima_signature_size("ml-dsa-65"), 3318u);
  EXPECT_EQ(ima_signature_size("ml-dsa-87"), 4636u);
  EXPECT_THROW(ima_signature_size("ml-dsa-66"), UsageError);
}

TEST(ApiImaFit, Ext4Limits) {
  auto f = ima_fit(ext4(4096));
  EXPECT_EQ(f.max_security_ima, 4040u);  // 4096 - 32 header - 20 entry - 4 terminator
  EXPECT_EQ(f.beyond, "ENOSPC");
  EXPECT_EQ(f.where, "xattr block");
  EXPECT_EQ(ima_fit(ext4(4096), kLabel).max_security_ima, 4040u);  // the label goes in the inode
  EXPECT_EQ(ima_fit(ext4(1024)).max_security_ima, 968u);
  EXPECT_EQ(ima_fit(ext4(1024), kLabel).max_security_ima, 968u);
  EXPECT_EQ(ima_fit(ext4(4096, 512)).max_security_ima, 4040u);
  auto ea = ima_fit(ext4(4096, 256, true));
  EXPECT_EQ(ea.max_security_ima, 65536u);
  EXPECT_EQ(ea.beyond, "E2BIG");
  EXPECT_EQ(ea.where, "EA inode");
  EXPECT_EQ(ima_fit(ext4(1024, 256, true), kLabel).max_security_ima, 65536u);
  // A 2 KiB inode on 2 KiB blocks: 2048 - 128 - 32 - 4 - 4 - 20 = 1860 in the inode, less
  // than the block's 2048 - 56 = 1992.
  EXPECT_EQ(ima_fit(ext4(2048, 2048)).max_security_ima, 1992u);
  EXPECT_THROW(ima_fit(ext4(3000)), UsageError);
  EXPECT_THROW(ima_fit(ext4(4096, 8192)), UsageError);
}

TEST(ApiImaFit, OtherFileSystems) {
  auto b = ima_fit(of(FsType::btrfs));
  EXPECT_EQ(b.max_security_ima, 16216u);  // 16384 - 101 - 25 - 30 - strlen("security.ima")
  EXPECT_EQ(b.beyond, "ENOSPC");
  FsGeometry b4 = of(FsType::btrfs);
  b4.node_size = 4096;
  EXPECT_EQ(ima_fit(b4, kLabel).max_security_ima, 3928u);
  auto f = ima_fit(of(FsType::f2fs));
  EXPECT_EQ(f.max_security_ima, 4241u);  // 200 inline + 4072 node - 24 header - 4 - 3
  EXPECT_EQ(f.beyond, "E2BIG");
  EXPECT_EQ(ima_fit(of(FsType::f2fs), kLabel).max_security_ima, 4201u);
  FsGeometry f256 = of(FsType::f2fs);
  f256.inline_xattr_words = 256;
  EXPECT_EQ(ima_fit(f256).max_security_ima, 5065u);
  EXPECT_EQ(ima_fit(of(FsType::xfs)).max_security_ima, 65536u);
  EXPECT_EQ(ima_fit(of(FsType::xfs)).beyond, "E2BIG");
}

TEST(ApiImaFit, Costs) {
  // ext4, 256-byte inodes: 68 bytes in the inode, so every signature takes a block.
  EXPECT_EQ(ima_xattr_cost(ext4(4096), 113, 100), 4096);
  EXPECT_EQ(ima_xattr_cost(ext4(4096), 3318, 100), 4096);
  EXPECT_EQ(ima_xattr_cost(ext4(4096), 4636, 100), -1);
  EXPECT_EQ(ima_xattr_cost(ext4(4096, 256, true), 4636, 100), 8192);  // EA inode: 2 data blocks
  EXPECT_EQ(ima_xattr_cost(ext4(1024, 256, true), 2429, 100), 3072);
  EXPECT_EQ(ima_xattr_cost(ext4(4096), 68, 100), 0);
  EXPECT_EQ(ima_xattr_cost(ext4(4096), 69, 100), 4096);
  EXPECT_EQ(ima_xattr_cost(ext4(4096, 512), 113, 100), 0);
  // f2fs: inline (200 bytes) holds ECDSA, ML-DSA needs the xattr node block.
  EXPECT_EQ(ima_xattr_cost(of(FsType::f2fs), 113, 100), 0);
  EXPECT_EQ(ima_xattr_cost(of(FsType::f2fs), 2429, 100), 4096);
  EXPECT_EQ(ima_xattr_cost(of(FsType::f2fs), 4636, 100), -1);
  // XFS: shortform in the inode, a leaf block (value local below 3/4 block), remote blocks.
  EXPECT_EQ(ima_xattr_cost(of(FsType::xfs), 113, 100), 0);
  EXPECT_EQ(ima_xattr_cost(of(FsType::xfs), 2429, 100), 4096);
  EXPECT_EQ(ima_xattr_cost(of(FsType::xfs), 3318, 100), 8192);
  EXPECT_EQ(ima_xattr_cost(of(FsType::xfs), 4636, 100), 12288);
}

TEST(ApiImaFit, Estimate) {
  std::vector<std::uint64_t> sizes(10, 1000);
  auto e = ima_estimate(ext4(4096), "ml-dsa-65", sizes);
  EXPECT_TRUE(e.fits);
  EXPECT_EQ(e.extra_bytes, 40960u);
  EXPECT_EQ(e.naive_bytes, 33180u);
  EXPECT_EQ(e.files_absorbed, 0u);
  auto n = ima_estimate(ext4(4096), "ml-dsa-87", sizes);
  EXPECT_FALSE(n.fits);
  EXPECT_EQ(n.beyond, "ENOSPC");
  auto f = ima_estimate(of(FsType::f2fs), "ecdsa-p384", sizes);
  EXPECT_EQ(f.extra_bytes, 0u);
  EXPECT_EQ(f.files_absorbed, 10u);
  EXPECT_FALSE(f.lower_bound);
  auto b = ima_estimate(of(FsType::btrfs), "ml-dsa-65", sizes);
  EXPECT_TRUE(b.lower_bound);
  EXPECT_EQ(b.extra_bytes, 10u * 2 * (25 + 30 + 12 + 3318));  // item, dir_item, name, value; DUP
}

TEST(ApiImaFit, TreeFileSizes) {
  test::TempDir d;
  std::filesystem::create_directories(d.path() + "/a/b");
  std::ofstream(d.path() + "/a/one") << "12345";
  std::ofstream(d.path() + "/a/b/two") << "1234567";
  std::filesystem::create_symlink("one", d.path() + "/a/link");
  auto s = tree_file_sizes(d.path());
  std::sort(s.begin(), s.end());
  EXPECT_EQ(s, (std::vector<std::uint64_t>{5, 7}));
  EXPECT_THROW(tree_file_sizes(d.path() + "/missing"), InputError);
}

TEST(ApiImaFit, ReadGeometryFromMkfsImages) {
  test::TempDir d;
  auto mkfs = [&](const std::string& tool, const std::string& args, const std::string& img, int mb) -> bool {
    std::string path;
    for (const char* dir : {"/usr/sbin/", "/sbin/"})
      if (std::filesystem::exists(std::string(dir) + tool)) path = std::string(dir) + tool;
    if (path.empty()) return false;
    { std::ofstream create(img); }
    std::filesystem::resize_file(img, static_cast<std::uintmax_t>(mb) << 20);
    return std::system((path + " " + args + " " + img + " >/dev/null 2>&1").c_str()) == 0;
  };
  const std::string e1 = d.path() + "/e1.img", x = d.path() + "/x.img", b = d.path() + "/b.img",
                    f = d.path() + "/f.img";
  if (!mkfs("mkfs.ext4", "-q -F -b 1024 -I 256 -O ea_inode", e1, 16))
    GTEST_SKIP() << "mkfs.ext4 (e2fsprogs) not installed";
  auto g = read_fs_geometry(e1);
  EXPECT_EQ(g.fs, FsType::ext4);
  EXPECT_EQ(g.block_size, 1024u);
  EXPECT_EQ(g.inode_size, 256u);
  EXPECT_EQ(g.extra_isize, 32u);
  EXPECT_TRUE(g.ea_inode);
  EXPECT_EQ(ima_fit(g).max_security_ima, 65536u);
  if (mkfs("mkfs.xfs", "-q -f", x, 320)) {
    auto gx = read_fs_geometry(x);
    EXPECT_EQ(gx.fs, FsType::xfs);
    EXPECT_EQ(gx.block_size, 4096u);
    EXPECT_EQ(gx.inode_size, 512u);
  }
  if (mkfs("mkfs.btrfs", "-q -f -n 4096", b, 128)) {
    auto gb = read_fs_geometry(b);
    EXPECT_EQ(gb.fs, FsType::btrfs);
    EXPECT_EQ(gb.node_size, 4096u);
    EXPECT_EQ(ima_fit(gb).max_security_ima, 3928u);
  }
  if (mkfs("mkfs.f2fs", "-q -f", f, 64)) { EXPECT_EQ(read_fs_geometry(f).fs, FsType::f2fs); }
  std::ofstream(d.path() + "/zero").write(std::string(70000, '\0').data(), 70000);
  EXPECT_THROW(read_fs_geometry(d.path() + "/zero"), InputError);
  EXPECT_THROW(read_fs_geometry(d.path() + "/none"), IoError);
}

TEST(CliImaFit, JsonExitStatusesAndDevice) {
  const std::string m = test::modsign_cli();
  auto r = test::run(m + " ima fit --json --fs ext4:1024 --xattr security.selinux=27");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"max_security_ima\":968"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"errno\":\"ENOSPC\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"ml-dsa-44\":false"), std::string::npos) << r.out;
  r = test::run(m + " ima fit --fs btrfs --node-size 4096");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("btrfs (node 4096): largest security.ima 3928 bytes (leaf item; ENOSPC beyond)"),
            std::string::npos)
      << r.out;
  r = test::run(m + " ima fit --fs zfs");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown file system 'zfs'"), std::string::npos) << r.err;
  r = test::run(m + " ima fit --fs ext4 --xattr security.selinux");
  EXPECT_EQ(r.status, 2);
  r = test::run(m + " ima fit --device /nonexistent/disk.img");
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("/nonexistent/disk.img: cannot open"), std::string::npos) << r.err;
  test::TempDir d;
  { std::ofstream(d.path() + "/f1") << std::string(3000, 'x'); }
  { std::ofstream(d.path() + "/f2") << "y"; }
  r = test::run(m + " ima estimate --json -r " + test::q(d.path()) +
                " --alg ml-dsa-87 --alg ecdsa-p384 --fs ext4 --ea-inode");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"algorithm\":\"ml-dsa-87\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"extra_bytes\":16384"), std::string::npos) << r.out;  // 2 files x 2 EA inode blocks
  EXPECT_NE(r.out.find("\"extra_bytes\":8192"), std::string::npos) << r.out;   // 2 files x 1 xattr block
  // A missing directory says so (it said "not a directory"); a file is not a directory.
  r = test::run(m + " ima estimate -r " + test::q(d.path() + "/missing") + " --fs ext4");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d.path() + "/missing: No such file or directory\n");
  r = test::run(m + " ima estimate -r " + test::q(d.path() + "/f1") + " --fs ext4");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d.path() + "/f1: not a directory\n");
  // A mount point without a block device names it and what it is mounted from.
  r = test::run(m + " ima fit --mount /proc");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err,
            "modsign: /proc: mounted from proc, not from a device with an ext4, XFS, btrfs or f2fs superblock\n");
  EXPECT_EQ(r.out, "");
}
