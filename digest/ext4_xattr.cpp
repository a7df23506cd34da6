// mirrors fs/ext4/xattr.c ext4_xattr_set_handle ext4_xattr_set_entry ext4_xattr_ibody_set ext4_xattr_block_set,
// Linux 7.2.13 (fs/ext4/xattr.h EXT4_XATTR_LEN, EXT4_XATTR_SIZE, EXT4_XATTR_MIN_LARGE_EA_SIZE).
//
// ext4 keeps a file's extended attributes in the free tail of its inode (after the 128-byte
// base inode and i_extra_isize, behind a 4-byte ibody header) and, when they do not fit
// there, in one xattr block (32-byte header).  Both areas hold the entries (16 bytes plus
// the name without its namespace prefix, 4-aligned) from the front, the values (4-aligned)
// from the back and a 4-byte zero after the last entry.  A new value goes in the inode when
// it fits, else in the block; it never spans both, so the largest value is the larger of the
// two free spaces less its entry.  With the ea_inode feature a value above
// EXT4_XATTR_MIN_LARGE_EA_SIZE(block size) is written to an inode of its own (only the entry
// stays behind), up to XATTR_SIZE_MAX.
#include <algorithm>

#include "digest/fs_xattr.hpp"

namespace modsign::digest {
namespace {

constexpr std::size_t kGoodOldInodeSize = 128;  // EXT4_GOOD_OLD_INODE_SIZE
constexpr std::size_t kIbodyHeader = 4;         // struct ext4_xattr_ibody_header
constexpr std::size_t kBlockHeader = 32;        // struct ext4_xattr_header
constexpr std::size_t kEntry = 16;              // struct ext4_xattr_entry without e_name

std::size_t round4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }
std::size_t entry_len(std::size_t name_len) { return (name_len + 3 + kEntry) & ~std::size_t{3}; }  // EXT4_XATTR_LEN
std::size_t min_large_ea(std::size_t bs) {
  return bs - entry_len(3) - kBlockHeader - 4;
}  // EXT4_XATTR_MIN_LARGE_EA_SIZE

struct Areas {
  long inode_free = 0;  // bytes left for entries + values in the inode (terminator counted)
  long block_free = 0;  // the same for the xattr block
  bool block_used = false;
};

long inode_area(const FsGeometry& g) {
  long a = static_cast<long>(g.inode_size) - static_cast<long>(kGoodOldInodeSize + g.extra_isize + kIbodyHeader);
  return a > 4 ? a - 4 : 0;
}

/// Where the other attributes went, in order: each in the inode when it fits, else the block.
Areas place(const FsGeometry& g, const std::vector<Xattr>& others) {
  Areas a;
  a.inode_free = inode_area(g);
  a.block_free = static_cast<long>(g.block_size - kBlockHeader - 4);
  for (const auto& x : others) {
    bool big = g.ea_inode && round4(x.size) > min_large_ea(g.block_size);
    long need = static_cast<long>(entry_len(xattr_suffix(x.name).size()) + (big ? 0 : round4(x.size)));
    if (need <= a.inode_free) {
      a.inode_free -= need;
    } else if (need <= a.block_free) {
      a.block_free -= need;
      a.block_used = true;
    } else {
      throw UsageError(x.name + " of " + std::to_string(x.size) + " bytes does not fit on this ext4 file system");
    }
  }
  return a;
}

}  // namespace

XattrFit ext4_xattr_fit(const FsGeometry& g, const std::string& name, const std::vector<Xattr>& others) {
  Areas a = place(g, others);
  long entry = static_cast<long>(entry_len(xattr_suffix(name).size()));
  if (g.ea_inode && (entry <= a.inode_free || entry <= a.block_free)) return {kXattrSizeMax, "E2BIG", "EA inode"};
  long in_inode = a.inode_free - entry, in_block = a.block_free - entry;
  if (in_inode >= in_block && in_inode > 0) return {static_cast<std::size_t>(in_inode), "ENOSPC", "in-inode"};
  if (in_block > 0) return {static_cast<std::size_t>(in_block), "ENOSPC", "xattr block"};
  return {0, "ENOSPC", "none"};
}

std::int64_t ext4_xattr_cost(const FsGeometry& g, const std::string& name, std::size_t size,
                             const std::vector<Xattr>& others) {
  Areas a = place(g, others);
  long entry = static_cast<long>(entry_len(xattr_suffix(name).size()));
  long value = static_cast<long>(round4(size));
  long bs = g.block_size;
  if (g.ea_inode && round4(size) > min_large_ea(g.block_size)) {
    if (size > kXattrSizeMax) return -1;
    std::int64_t data = (static_cast<long>(size) + bs - 1) / bs * bs;  // the EA inode's data blocks
    if (entry <= a.inode_free) return data;
    if (entry <= a.block_free) return data + (a.block_used ? 0 : bs);
    return -1;
  }
  if (entry + value <= a.inode_free) return 0;
  if (entry + value <= a.block_free) return a.block_used ? 0 : bs;
  return -1;
}

std::string xattr_suffix(const std::string& name) {
  auto dot = name.find('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

}  // namespace modsign::digest
