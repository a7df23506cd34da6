// modsign — will a security.ima signature fit, and what does signing a tree cost on disk?
// The largest security.ima value a file system's setxattr accepts next to the file's other
// extended attributes, and the space the values take, per the on-disk rules of Linux 7.2.13:
// mirrors ext4_xattr_set_handle() and its in-inode / xattr-block / EA-inode placement
// (fs/ext4/xattr.c), __f2fs_setxattr() (fs/f2fs/xattr.c: inline area + one xattr node block),
// btrfs_setxattr() (fs/btrfs/xattr.c, BTRFS_MAX_XATTR_SIZE in fs/btrfs/ctree.h) and
// xfs_attr_set() with xfs_attr_leaf_newentsize() / xfs_attr3_rmt_blocks() (fs/xfs/libxfs),
// and the VFS limit XATTR_SIZE_MAX (64 KiB, include/uapi/linux/limits.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/result.hpp"

namespace modsign {

enum class FsType { ext4, xfs, btrfs, f2fs };

/// The settings of a file system that decide where extended attributes go.  Plain data.
struct FsGeometry {
  FsType fs = FsType::ext4;
  /// ext4, XFS: the block size in bytes (mkfs -b; 1024..65536).  f2fs: 4096 (fixed).
  std::uint32_t block_size = 4096;
  /// ext4 s_inode_size (mkfs.ext4 -I; 128 leaves no in-inode xattr space); XFS inode size
  /// (mkfs.xfs -i size=, 512 by default).
  std::uint32_t inode_size = 256;
  /// ext4 i_extra_isize of new inodes (s_want_extra_isize, 32 on current mkfs).
  std::uint32_t extra_isize = 32;
  /// ext4 feature ea_inode: values above a block's space go to their own inode.
  bool ea_inode = false;
  /// btrfs nodesize (mkfs.btrfs -n; 16384 by default).
  std::uint32_t node_size = 16384;
  /// f2fs inline xattr area in 4-byte words (mount option inline_xattr_size=, 50 by default
  /// = DEFAULT_INLINE_XATTR_ADDRS); 0 with mount option noinline_xattr.
  std::uint32_t inline_xattr_words = 50;
};

/// Another extended attribute the file carries (security.selinux, security.evm,
/// security.capability ...): full name and value size in bytes.
struct Xattr {
  std::string name;
  std::size_t size = 0;
};

/// The outcome of ima_fit().  Plain data.
struct XattrFit {
  /// The largest security.ima value (bytes) setxattr accepts on the file.
  std::size_t max_security_ima = 0;
  /// The errno setxattr returns for one byte more, by name: "ENOSPC" (ext4, btrfs), "E2BIG"
  /// (f2fs, and the VFS above XATTR_SIZE_MAX).
  std::string beyond;
  /// Where a value of max_security_ima bytes goes: "in-inode", "xattr block", "EA inode",
  /// "inline xattr + xattr node", "leaf item", "shortform", "leaf block", "remote blocks".
  std::string where;
};

/// The security.ima sizes of the signature algorithms (type byte, signature_v2_hdr and the
/// largest signature): ecdsa-p256 81, ecdsa-p384 113, rsa-2048 265, rsa-3072 393, rsa-4096
/// 521, ml-dsa-44 2429, ml-dsa-65 3318, ml-dsa-87 4636 bytes.
struct SignatureSize {
  std::string algorithm;
  std::size_t xattr_size = 0;
};
MODSIGN_API const std::vector<SignatureSize>& ima_signature_sizes();
/// The size for one algorithm name of ima_signature_sizes(); throws UsageError when unknown.
MODSIGN_API std::size_t ima_signature_size(const std::string& algorithm);

/// The largest security.ima a file with `others` accepts on `g`.  Throws UsageError when the
/// geometry is impossible (block size not a power of two in 1024..65536, inode size below 128
/// or above the block size, others that do not fit themselves).
MODSIGN_API XattrFit ima_fit(const FsGeometry& g, const std::vector<Xattr>& others = {});

/// The bytes a security.ima of `xattr_size` bytes adds to the allocation of a file of
/// `file_size` bytes carrying `others` (ext4: 0 in the inode, one block for an xattr block,
/// the EA inode's data blocks; f2fs: 0 inline, one 4 KiB node block otherwise; XFS: 0 in the
/// inode's attribute fork, else the leaf block and remote value blocks; btrfs: the item bytes
/// in the tree leaves, metadata duplicated (DUP) on one device, a lower bound).  -1 when it
/// does not fit.
MODSIGN_API std::int64_t ima_xattr_cost(const FsGeometry& g, std::size_t xattr_size, std::uint64_t file_size,
                                        const std::vector<Xattr>& others = {});

/// The cost of signing a tree.  Plain data.
struct ImaEstimate {
  std::string algorithm;
  std::size_t xattr_size = 0;
  std::size_t files = 0;
  /// False when security.ima of this size does not fit (then `beyond` names the errno).
  bool fits = true;
  std::string beyond;
  /// Bytes newly allocated, summed over the files.
  std::uint64_t extra_bytes = 0;
  /// files x xattr_size, the figure that ignores allocation.
  std::uint64_t naive_bytes = 0;
  /// Files for which the value fits in space already allocated (cost 0).
  std::size_t files_absorbed = 0;
  /// True when extra_bytes is a lower bound rather than the allocation itself: btrfs, whose
  /// leaves split half-full as items arrive (the 7.2.13 kernel measured 1.2 to 1.9 times the
  /// item bytes, tools/conformance/fit_run.py).
  bool lower_bound = false;
};

/// ima_xattr_cost() summed over `file_sizes`.
MODSIGN_API ImaEstimate ima_estimate(const FsGeometry& g, const std::string& algorithm,
                                     const std::vector<std::uint64_t>& file_sizes,
                                     const std::vector<Xattr>& others = {});
/// The regular files under some directories, each counted once.  Plain data.
struct TreeScan {
  /// The size in bytes of each file, once per file (device and inode), in walk order.
  std::vector<std::uint64_t> sizes;
  /// Paths that reached a file already counted: hard links, a directory or file given twice.
  std::size_t repeats = 0;
  /// "PATH: <tree_problem_text()>" for what the walk (walk_tree(), <modsign/tree.hpp>)
  /// could not look at: a directory that could not be read ("DIR/sub: Permission denied";
  /// its subtree is left out, the walk goes on), an entry stat fails on, a path of PATH_MAX
  /// bytes or more; "DIR: no files under it" for a directory with no entry at all (the rule
  /// of every -r command).
  std::vector<std::string> errors;
  /// "N paths reach files already counted (a hard link, or a tree or file given twice):
  /// each file is counted once, by device and inode" when `repeats` is not 0.
  std::vector<std::string> notes;
};
/// Every regular file under each of `dirs` (recursive, sorted by name, symbolic links not
/// followed).  Throws InputError "DIR: not a directory" for a `dirs` entry that is none, and
/// "DIR: <strerror>" ("No such file or directory") for one stat() cannot reach.
MODSIGN_API TreeScan scan_tree_files(const std::vector<std::string>& dirs);
/// scan_tree_files({dir}).sizes; throws InputError (its first error, e.g. "DIR/sub:
/// Permission denied") when part of the tree cannot be read.
MODSIGN_API std::vector<std::uint64_t> tree_file_sizes(const std::string& dir);

/// The geometry of the file system in a device or image file, read from its superblock
/// (ext4 at 1024: s_log_block_size, s_inode_size, s_want_extra_isize, INCOMPAT_EA_INODE;
/// XFS "XFSB": sb_blocksize, sb_inodesize; btrfs at 64 KiB "_BHRfS_M": nodesize; f2fs at
/// 1024, magic 0xF2F52010: inline_xattr_words stays the mount default).  Throws InputError
/// ("FILE: no ext4, XFS, btrfs or f2fs superblock"; "FILE: corrupt ext4 superblock: ext4
/// block size must be a power of two in 1024..65536" and the like for values no such file
/// system has) or IoError ("FILE: cannot open: <strerror>", "FILE: cannot read: ...").
MODSIGN_API FsGeometry read_fs_geometry(const std::string& device);
/// The geometry of a mounted file system: its device from /proc/self/mounts (whose fields
/// the kernel writes with octal escapes, "\040" for a space: decoded, as
/// fs/proc_namespace.c show_vfsmnt writes them, Linux 7.2.13), read as read_fs_geometry
/// does, with f2fs's inline_xattr_size= / noinline_xattr mount options.  Throws InputError
/// "DIR: <strerror>" (no such directory), "DIR: not a mount point (/proc/self/mounts)";
/// IoError "/proc/self/mounts: cannot open: <strerror>"; otherwise as read_fs_geometry.
MODSIGN_API FsGeometry mounted_fs_geometry(const std::string& mount_point);

/// The extended attributes `path` carries (llistxattr/lgetxattr), security.ima left out: the
/// others a new security.ima has to share the space with.  Throws IoError ("PATH: ...").
MODSIGN_API std::vector<Xattr> file_xattrs(const std::string& path);

/// "ext4", "xfs", "btrfs", "f2fs"; parse_fs_type throws UsageError on any other name.
MODSIGN_API std::string fs_type_name(FsType t);
MODSIGN_API FsType parse_fs_type(const std::string& name);

}  // namespace modsign
