// mirrors fs/xfs/libxfs/xfs_attr_leaf.c xfs_attr_shortform_bytesfit xfs_attr_leaf_newentsize, Linux 7.2.13
// (with xfs_attr_set in xfs_attr.c, xfs_attr3_rmt_blocks in xfs_attr_remote.c, and
// XFS_ATTR_SF_ENTSIZE_MAX, xfs_attr_leaf_entsize_local_max in xfs_da_format.h).
//
// XFS takes values up to XFS_XATTR_SIZE_MAX (= XATTR_SIZE_MAX, 64 KiB).  Small attributes
// live in the inode's attribute fork ("shortform": a 4-byte header, then 3 bytes + name +
// value per attribute, name and value each below 255 bytes, within the literal area the data
// fork leaves: a v5 inode's size less its 176-byte core, less at least 40 bytes for the data
// fork).  Larger ones go to a leaf block, the value in the leaf when its local entry is below
// 3/4 of a block, else in remote blocks of block size less a 56-byte header each (v5).
#include "digest/fs_xattr.hpp"

namespace modsign::digest {
namespace {

constexpr long kDinodeCore = 176;     // struct xfs_dinode, v3
constexpr long kMinDataFork = 40;     // roundup(XFS_BMDR_SPACE_CALC(MINDBTPTRS), 8)
constexpr long kSfHeader = 4;         // struct xfs_attr_sf_hdr
constexpr long kSfEntry = 3;          // struct xfs_attr_sf_entry without nameval
constexpr long kSfEntsizeMax = 0xff;  // XFS_ATTR_SF_ENTSIZE_MAX
constexpr long kRmtHeader = 56;       // struct xfs_attr3_rmt_hdr

long sf_size(const std::vector<Xattr>& xs) {
  long n = kSfHeader;
  for (const auto& x : xs) n += kSfEntry + static_cast<long>(xattr_suffix(x.name).size()) + static_cast<long>(x.size);
  return n;
}
bool shortform(const FsGeometry& g, const std::vector<Xattr>& xs) {
  for (const auto& x : xs)
    if (static_cast<long>(x.size) >= kSfEntsizeMax || static_cast<long>(xattr_suffix(x.name).size()) >= kSfEntsizeMax)
      return false;
  return sf_size(xs) <= static_cast<long>(g.inode_size) - kDinodeCore - kMinDataFork;
}
/// Blocks of the attribute fork when it is not shortform: one leaf, plus the remote blocks of
/// values whose local entry reaches 3/4 of a block.
long fork_blocks(const FsGeometry& g, const std::vector<Xattr>& xs) {
  long bs = g.block_size, blocks = 1;
  for (const auto& x : xs) {
    long local = (3 + static_cast<long>(xattr_suffix(x.name).size()) + static_cast<long>(x.size) + 3) & ~3L;
    if (local >= (bs >> 1) + (bs >> 2)) blocks += (static_cast<long>(x.size) + bs - kRmtHeader - 1) / (bs - kRmtHeader);
  }
  return blocks;
}

}  // namespace

XattrFit xfs_attr_fit(const FsGeometry&, const std::string&, const std::vector<Xattr>&) {
  return {kXattrSizeMax, "E2BIG", "remote blocks"};
}

std::int64_t xfs_attr_cost(const FsGeometry& g, const std::string& name, std::size_t size, std::uint64_t,
                           const std::vector<Xattr>& others) {
  if (size > kXattrSizeMax) return -1;
  std::vector<Xattr> all = others;
  all.push_back({name, size});
  long before = others.empty() || shortform(g, others) ? 0 : fork_blocks(g, others);
  long after = shortform(g, all) ? 0 : fork_blocks(g, all);
  return (after - before) * static_cast<long>(g.block_size);
}

}  // namespace modsign::digest
