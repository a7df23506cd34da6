// The public ima_fit / ima_estimate calls (include/modsign/ima_fit.hpp): geometry checks,
// the signature sizes, the per-file-system rules of digest/{ext4,f2fs,btrfs}_xattr.cpp and
// digest/xfs_attr.cpp, and reading a geometry from a superblock or a mount.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

#include "digest/fs_xattr.hpp"
#include "digest/proc_namespace.hpp"
#include "modsign/ima_fit.hpp"
#include "modsign/tree.hpp"

namespace modsign {
namespace {

const std::string kIma = "security.ima";

bool pow2_in(std::uint32_t v, std::uint32_t lo, std::uint32_t hi) { return v >= lo && v <= hi && (v & (v - 1)) == 0; }

void check(const FsGeometry& g) {
  switch (g.fs) {
    case FsType::ext4:
      if (!pow2_in(g.block_size, 1024, 65536))
        throw UsageError("ext4 block size must be a power of two in 1024..65536");
      if (g.inode_size < 128 || g.inode_size > g.block_size || (g.inode_size & (g.inode_size - 1)) != 0)
        throw UsageError("ext4 inode size must be a power of two from 128 to the block size");
      if (g.inode_size > 128 && (g.extra_isize > g.inode_size - 128 || g.extra_isize % 4 != 0))
        throw UsageError("ext4 i_extra_isize must be a multiple of 4 within the inode");
      break;
    case FsType::xfs:
      if (!pow2_in(g.block_size, 512, 65536)) throw UsageError("XFS block size must be a power of two in 512..65536");
      if (!pow2_in(g.inode_size, 256, 2048)) throw UsageError("XFS inode size must be a power of two in 256..2048");
      break;
    case FsType::btrfs:
      if (!pow2_in(g.node_size, 4096, 65536)) throw UsageError("btrfs node size must be a power of two in 4096..65536");
      break;
    case FsType::f2fs:
      if (g.inline_xattr_words > 903) throw UsageError("f2fs inline_xattr_size must be at most 903 words");
      break;
  }
}

}  // namespace

const std::vector<SignatureSize>& ima_signature_sizes() {
  // 1 type byte + 8 bytes of signature_v2_hdr + the largest signature of each algorithm
  // (DER ECDSA: SEQUENCE of two INTEGERs of the curve size plus a sign byte each).
  static const std::vector<SignatureSize> sizes = {
      {"ecdsa-p256", 9 + 72}, {"ecdsa-p384", 9 + 104}, {"rsa-2048", 9 + 256},   {"rsa-3072", 9 + 384},
      {"rsa-4096", 9 + 512},  {"ml-dsa-44", 9 + 2420}, {"ml-dsa-65", 9 + 3309}, {"ml-dsa-87", 9 + 4627}};
  return sizes;
}

std::size_t ima_signature_size(const std::string& algorithm) {
  for (const auto& s : ima_signature_sizes())
    if (s.algorithm == algorithm) return s.xattr_size;
  throw UsageError("unknown algorithm '" + algorithm +
                   "' (ecdsa-p256, ecdsa-p384, rsa-2048, rsa-3072, rsa-4096, ml-dsa-44, ml-dsa-65, ml-dsa-87)");
}

XattrFit ima_fit(const FsGeometry& g, const std::vector<Xattr>& others) {
  check(g);
  switch (g.fs) {
    case FsType::ext4: return digest::ext4_xattr_fit(g, kIma, others);
    case FsType::f2fs: return digest::f2fs_xattr_fit(g, kIma, others);
    case FsType::btrfs: return digest::btrfs_xattr_fit(g, kIma, others);
    case FsType::xfs: return digest::xfs_attr_fit(g, kIma, others);
  }
  return {};
}

std::int64_t ima_xattr_cost(const FsGeometry& g, std::size_t xattr_size, std::uint64_t file_size,
                            const std::vector<Xattr>& others) {
  check(g);
  switch (g.fs) {
    case FsType::ext4: return digest::ext4_xattr_cost(g, kIma, xattr_size, others);
    case FsType::f2fs: return digest::f2fs_xattr_cost(g, kIma, xattr_size, others);
    case FsType::btrfs: return digest::btrfs_xattr_cost(g, kIma, xattr_size, others);
    case FsType::xfs: return digest::xfs_attr_cost(g, kIma, xattr_size, file_size, others);
  }
  return -1;
}

ImaEstimate ima_estimate(const FsGeometry& g, const std::string& algorithm,
                         const std::vector<std::uint64_t>& file_sizes, const std::vector<Xattr>& others) {
  ImaEstimate e;
  e.algorithm = algorithm;
  e.xattr_size = ima_signature_size(algorithm);
  e.files = file_sizes.size();
  e.naive_bytes = static_cast<std::uint64_t>(e.xattr_size) * e.files;
  e.lower_bound = g.fs == FsType::btrfs;
  XattrFit fit = ima_fit(g, others);
  if (e.xattr_size > fit.max_security_ima) {
    e.fits = false;
    e.beyond = fit.beyond;
    return e;
  }
  for (auto size : file_sizes) {
    std::int64_t c = ima_xattr_cost(g, e.xattr_size, size, others);
    if (c < 0) {
      e.fits = false;
      e.beyond = fit.beyond;
      return e;
    }
    e.extra_bytes += static_cast<std::uint64_t>(c);
    e.files_absorbed += c == 0;
  }
  return e;
}

TreeScan scan_tree_files(const std::vector<std::string>& dirs) {
  for (const auto& dir : dirs) {
    std::error_code ec;
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) throw InputError(dir + ": " + std::strerror(errno));  // ENOENT said as such
    if (!S_ISDIR(st.st_mode)) throw InputError(dir + ": not a directory");
  }
  TreeScan out;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen;
  for (const auto& dir : dirs) {
    const auto entries = walk_tree(dir);  // <modsign/tree.hpp>: any depth, linear memory
    if (entries.empty()) out.errors.push_back(dir + ": no files under it");
    for (const auto& e : entries) {
      if (e.kind == TreeEntry::Kind::error || e.kind == TreeEntry::Kind::moved)
        out.errors.push_back(e.path + ": " + tree_problem_text(e));
      else if (e.kind != TreeEntry::Kind::regular) continue;  // no security.ima is measured on them
      else if (seen.emplace(e.file.dev, e.file.ino).second) out.sizes.push_back(e.size);
      else ++out.repeats;
    }
  }
  if (out.repeats)
    out.notes.push_back(std::to_string(out.repeats) +
                        (out.repeats == 1 ? " path reaches a file" : " paths reach files") +
                        " already counted (a hard link, or a tree or file given twice): each file is counted once, by "
                        "device and inode");
  return out;
}

std::vector<std::uint64_t> tree_file_sizes(const std::string& dir) {
  TreeScan t = scan_tree_files({dir});
  if (!t.errors.empty()) throw InputError(t.errors.front());
  return std::move(t.sizes);
}

namespace {

std::uint32_t le32(const std::string& b, std::size_t o) {
  return static_cast<std::uint8_t>(b[o]) | static_cast<std::uint8_t>(b[o + 1]) << 8 |
         static_cast<std::uint8_t>(b[o + 2]) << 16 |
         static_cast<std::uint32_t>(static_cast<std::uint8_t>(b[o + 3])) << 24;
}
std::uint32_t be32(const std::string& b, std::size_t o) {
  return static_cast<std::uint32_t>(static_cast<std::uint8_t>(b[o])) << 24 | static_cast<std::uint8_t>(b[o + 1]) << 16 |
         static_cast<std::uint8_t>(b[o + 2]) << 8 | static_cast<std::uint8_t>(b[o + 3]);
}

}  // namespace

namespace {
/// A geometry read from `device`'s superblock that check() refuses is a corrupt superblock:
/// an input error naming the device, not a usage error.
FsGeometry checked_superblock(const std::string& device, const std::string& what, FsGeometry g) {
  try {
    check(g);
  } catch (const UsageError& e) { throw InputError(device + ": corrupt " + what + " superblock: " + e.what()); }
  return g;
}
}  // namespace

FsGeometry read_fs_geometry(const std::string& device) {
  // A superblock is read from a block device or an image file; anything else (a FIFO would
  // block the open, a directory reads nothing) is refused before it is opened for reading.
  struct stat st {};
  if (::stat(device.c_str(), &st) != 0) throw IoError(device + ": cannot open: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
    throw IoError(device + ": " +
                  (S_ISDIR(st.st_mode)    ? "a directory"
                   : S_ISFIFO(st.st_mode) ? "a FIFO"
                                          : "not a regular file") +
                  ", not a block device or file system image");
  const int fd = ::open(device.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw IoError(device + ": cannot open: " + std::strerror(errno));
  std::string b(65536 + 4096, '\0');
  std::size_t got = 0;
  while (got < b.size()) {
    const ssize_t n = ::read(fd, b.data() + got, b.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw IoError(device + ": cannot read: " + std::strerror(e));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  b.resize(got);
  FsGeometry g;
  // ext4: struct ext4_super_block at 1024, s_magic 0xEF53 at +56.
  if (b.size() >= 2048 && le32(b, 1024 + 56) % 65536 == 0xEF53) {
    g.fs = FsType::ext4;
    const std::uint32_t log_block = le32(b, 1024 + 24);  // s_log_block_size: 0..6 (1 KiB..64 KiB)
    g.block_size = log_block <= 6 ? 1024u << log_block : 0;
    g.inode_size = le32(b, 1024 + 88) & 0xffff;
    g.extra_isize = le32(b, 1024 + 0x15C) >> 16;  // s_want_extra_isize (after s_min_extra_isize)
    if (g.extra_isize == 0 && g.inode_size > 128) g.extra_isize = 32;
    g.ea_inode = (le32(b, 1024 + 96) & 0x400) != 0;  // EXT4_FEATURE_INCOMPAT_EA_INODE
    return checked_superblock(device, "ext4", g);
  }
  // XFS: struct xfs_dsb at 0, "XFSB", sb_blocksize at 4, sb_inodesize at 104 (big-endian).
  if (b.size() >= 512 && b.compare(0, 4, "XFSB") == 0) {
    g.fs = FsType::xfs;
    g.block_size = be32(b, 4);
    g.inode_size = be32(b, 104) >> 16;
    return checked_superblock(device, "XFS", g);
  }
  // btrfs: struct btrfs_super_block at 64 KiB, magic "_BHRfS_M" at +0x40, nodesize at +0x94.
  if (b.size() >= 65536 + 0x100 && b.compare(65536 + 0x40, 8, "_BHRfS_M") == 0) {
    g.fs = FsType::btrfs;
    g.node_size = le32(b, 65536 + 0x94);
    return checked_superblock(device, "btrfs", g);
  }
  // f2fs: struct f2fs_super_block at 1024, magic 0xF2F52010.
  if (b.size() >= 2048 && le32(b, 1024) == 0xF2F52010) {
    g.fs = FsType::f2fs;
    g.block_size = 4096;
    return g;
  }
  throw InputError(device + ": no ext4, XFS, btrfs or f2fs superblock");
}

FsGeometry mounted_fs_geometry(const std::string& mount_point) {
  std::error_code ec;
  auto want = std::filesystem::canonical(mount_point, ec);
  if (ec) throw InputError(mount_point + ": " + ec.message());
  errno = 0;
  std::ifstream m("/proc/self/mounts");
  if (!m) throw IoError(std::string("/proc/self/mounts: cannot open: ") + std::strerror(errno != 0 ? errno : EIO));
  std::string line, found_dev, found_opts;
  while (std::getline(m, line)) {
    // The fields are octal-escaped (fs/proc_namespace.c): "/mnt/a\040b" is "/mnt/a b".
    const auto e = digest::parse_proc_mounts_line(line);
    if (e && e->dir == want.string()) {
      found_dev = e->device;
      found_opts = e->options;
    }
  }
  if (found_dev.empty()) throw InputError(mount_point + ": not a mount point (/proc/self/mounts)");
  if (!found_dev.starts_with("/"))  // proc, tmpfs, overlay, a network file system: no device to read
    throw InputError(mount_point + ": mounted from " + found_dev +
                     ", not from a device with an ext4, XFS, btrfs or f2fs superblock");
  FsGeometry g = read_fs_geometry(found_dev);
  if (g.fs == FsType::f2fs) {
    std::istringstream os(found_opts);
    std::string o;
    while (std::getline(os, o, ',')) {
      if (o == "noinline_xattr") g.inline_xattr_words = 0;
      if (o.rfind("inline_xattr_size=", 0) == 0)
        g.inline_xattr_words = static_cast<std::uint32_t>(std::stoul(o.substr(18)));
    }
  }
  return g;
}

std::vector<Xattr> file_xattrs(const std::string& path) {
  auto fail = [&] { return IoError(path + ": " + std::strerror(errno)); };
  ssize_t n = ::llistxattr(path.c_str(), nullptr, 0);
  if (n < 0) throw fail();
  std::string names(static_cast<std::size_t>(n), '\0');
  n = ::llistxattr(path.c_str(), names.data(), names.size());
  if (n < 0) throw fail();
  std::vector<Xattr> out;
  for (std::size_t i = 0; i < static_cast<std::size_t>(n);) {
    std::string name(names.c_str() + i);
    i += name.size() + 1;
    if (name == kIma || name.empty()) continue;
    ssize_t v = ::lgetxattr(path.c_str(), name.c_str(), nullptr, 0);
    if (v < 0) throw fail();
    out.push_back({name, static_cast<std::size_t>(v)});
  }
  return out;
}

std::string fs_type_name(FsType t) {
  switch (t) {
    case FsType::ext4: return "ext4";
    case FsType::xfs: return "xfs";
    case FsType::btrfs: return "btrfs";
    case FsType::f2fs: return "f2fs";
  }
  return "?";
}

FsType parse_fs_type(const std::string& name) {
  for (FsType t : {FsType::ext4, FsType::xfs, FsType::btrfs, FsType::f2fs})
    if (fs_type_name(t) == name) return t;
  throw UsageError("unknown file system '" + name + "' (ext4, xfs, btrfs, f2fs)");
}

}  // namespace modsign
