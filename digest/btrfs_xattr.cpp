// mirrors fs/btrfs/xattr.c btrfs_setxattr, Linux 7.2.13 (fs/btrfs/ctree.h
// BTRFS_MAX_XATTR_SIZE, BTRFS_LEAF_DATA_SIZE; struct btrfs_header, btrfs_item, btrfs_dir_item
// of include/uapi/linux/btrfs_tree.h).
//
// btrfs stores each extended attribute as one XATTR_ITEM in the file system tree: a
// btrfs_dir_item (30 bytes), the full name ("security.ima") and the value, in a leaf of
// nodesize bytes (101-byte header, 25 bytes of btrfs_item per item).  btrfs_setxattr refuses
// (ENOSPC) a name and value longer than BTRFS_MAX_XATTR_SIZE = leaf data less one btrfs_item
// and one btrfs_dir_item; other attributes are items of their own and do not count.
#include "digest/fs_xattr.hpp"

namespace modsign::digest {
namespace {

constexpr long kHeader = 101;  // struct btrfs_header
constexpr long kItem = 25;     // struct btrfs_item
constexpr long kDirItem = 30;  // struct btrfs_dir_item

}  // namespace

XattrFit btrfs_xattr_fit(const FsGeometry& g, const std::string& name, const std::vector<Xattr>&) {
  long max = static_cast<long>(g.node_size) - kHeader - kItem - kDirItem - static_cast<long>(name.size());
  if (max > static_cast<long>(kXattrSizeMax)) return {kXattrSizeMax, "E2BIG", "leaf item"};
  return {static_cast<std::size_t>(max), "ENOSPC", "leaf item"};
}

std::int64_t btrfs_xattr_cost(const FsGeometry& g, const std::string& name, std::size_t size,
                              const std::vector<Xattr>& others) {
  if (size > btrfs_xattr_fit(g, name, others).max_security_ima) return -1;
  // The item in the leaves, twice: metadata is DUP on a single device (mkfs.btrfs default).
  return 2 * (kItem + kDirItem + static_cast<long>(name.size()) + static_cast<long>(size));
}

}  // namespace modsign::digest
