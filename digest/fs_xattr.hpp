// The extended-attribute space rules of the file systems IMA signatures are stored on: one
// model per kernel file (digest/ext4_xattr.cpp, f2fs_xattr.cpp, btrfs_xattr.cpp,
// xfs_attr.cpp), behind ima_fit() and ima_xattr_cost() of include/modsign/ima_fit.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "modsign/ima_fit.hpp"

namespace modsign::digest {

/// The largest value of attribute `name` ("security.ima") a file with `others` accepts.
XattrFit ext4_xattr_fit(const FsGeometry& g, const std::string& name, const std::vector<Xattr>& others);
XattrFit f2fs_xattr_fit(const FsGeometry& g, const std::string& name, const std::vector<Xattr>& others);
XattrFit btrfs_xattr_fit(const FsGeometry& g, const std::string& name, const std::vector<Xattr>& others);
XattrFit xfs_attr_fit(const FsGeometry& g, const std::string& name, const std::vector<Xattr>& others);

/// Bytes newly allocated when `name` of `size` bytes is added to a file of `file_size` bytes
/// carrying `others`; -1 when it does not fit.
std::int64_t ext4_xattr_cost(const FsGeometry& g, const std::string& name, std::size_t size,
                             const std::vector<Xattr>& others);
std::int64_t f2fs_xattr_cost(const FsGeometry& g, const std::string& name, std::size_t size,
                             const std::vector<Xattr>& others);
std::int64_t btrfs_xattr_cost(const FsGeometry& g, const std::string& name, std::size_t size,
                              const std::vector<Xattr>& others);
std::int64_t xfs_attr_cost(const FsGeometry& g, const std::string& name, std::size_t size, std::uint64_t file_size,
                           const std::vector<Xattr>& others);

/// XATTR_SIZE_MAX (include/uapi/linux/limits.h): setxattr(2) refuses larger values (E2BIG).
inline constexpr std::size_t kXattrSizeMax = 65536;

/// The name as ext4 and f2fs store it: without its namespace prefix ("security.ima" -> "ima").
std::string xattr_suffix(const std::string& name);

}  // namespace modsign::digest
