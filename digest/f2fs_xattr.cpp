// mirrors fs/f2fs/xattr.c __f2fs_setxattr, Linux 7.2.13 (fs/f2fs/xattr.h MIN_OFFSET,
// MAX_VALUE_LEN, VALID_XATTR_BLOCK_SIZE; include/linux/f2fs_fs.h DEFAULT_INLINE_XATTR_ADDRS).
//
// f2fs sees a file's extended attributes as one buffer: the inline xattr area of the inode
// (inline_xattr_size words, 50 by default) followed by one xattr node block of
// VALID_XATTR_BLOCK_SIZE (4096 less the 24-byte node footer).  The buffer starts with a
// 24-byte header; each entry is 4 bytes, the name without its prefix and the value, 4-aligned.
// A new entry must fit in MIN_OFFSET less what is in use, and the value may not exceed
// MAX_VALUE_LEN; either failure is E2BIG.  The node block is allocated only once the
// attributes no longer fit inline.
#include "digest/fs_xattr.hpp"

namespace modsign::digest {
namespace {

constexpr long kHeader = 24;             // struct f2fs_xattr_header
constexpr long kEntry = 4;               // struct f2fs_xattr_entry without e_name
constexpr long kNodeBlock = 4096;        // PAGE_SIZE / F2FS_BLKSIZE
constexpr long kValidBlock = 4096 - 24;  // VALID_XATTR_BLOCK_SIZE: less struct node_footer
constexpr long kPadding = 4;             // XATTR_PADDING_SIZE: the zero word after the last entry

long align4(long n) { return (n + 3) & ~3L; }
long inline_bytes(const FsGeometry& g) { return static_cast<long>(g.inline_xattr_words) * 4; }
long min_offset(const FsGeometry& g) { return align4(inline_bytes(g) + kValidBlock); }  // MIN_OFFSET
long entry_size(const std::string& name, std::size_t size) {
  return align4(kEntry + static_cast<long>(xattr_suffix(name).size()) + static_cast<long>(size));
}
long used(const std::vector<Xattr>& others) {
  long u = kHeader;
  for (const auto& x : others) u += entry_size(x.name, x.size);
  return u;
}

}  // namespace

XattrFit f2fs_xattr_fit(const FsGeometry& g, const std::string& name, const std::vector<Xattr>& others) {
  long free = min_offset(g) - used(others);
  if (free < entry_size(name, 0)) throw UsageError("the other attributes do not fit on this f2fs file system");
  long max = free - kEntry - static_cast<long>(xattr_suffix(name).size());
  long max_value_len = min_offset(g) - kHeader - kEntry;  // MAX_VALUE_LEN
  if (max > max_value_len) max = max_value_len;
  return {static_cast<std::size_t>(max), "E2BIG", "inline xattr + xattr node"};
}

std::int64_t f2fs_xattr_cost(const FsGeometry& g, const std::string& name, std::size_t size,
                             const std::vector<Xattr>& others) {
  if (size > f2fs_xattr_fit(g, name, others).max_security_ima) return -1;
  long before = used(others), after = before + entry_size(name, size);
  auto needs_node = [&](long u) { return u + kPadding > inline_bytes(g); };
  bool had = others.empty() ? false : needs_node(before);
  return needs_node(after) && !had ? kNodeBlock : 0;
}

}  // namespace modsign::digest
