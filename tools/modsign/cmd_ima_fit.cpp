// `modsign ima fit`: the largest security.ima a file system takes next to a file's other
// attributes, and which signature algorithms fit (modsign::ima_fit).
#include "cmd_ima_fit.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli_common.hpp"

namespace modsign::cli {

FsGeometry fs_geometry(const FsOptions& o) {
  if (!o.device.empty() && !o.mount.empty()) throw UsageError("--device and --mount exclude each other");
  if (const auto colon = o.fs.find(':'); colon != std::string::npos && (!o.device.empty() || !o.mount.empty()))
    throw UsageError("--fs " + o.fs + ": the size is read from " +
                     (o.device.empty() ? "--mount " + o.mount : "--device " + o.device) + "; give --fs " +
                     o.fs.substr(0, colon) + " or no --fs");
  FsGeometry g;
  if (!o.device.empty()) g = read_fs_geometry(o.device);
  else if (!o.mount.empty()) g = mounted_fs_geometry(o.mount);
  std::uint32_t size = 0;
  if (!o.fs.empty()) {
    auto colon = o.fs.find(':');
    FsType t = parse_fs_type(o.fs.substr(0, colon));
    if ((!o.device.empty() || !o.mount.empty()) && t != g.fs)
      throw UsageError("--fs " + o.fs + ": the file system read is " + fs_type_name(g.fs));
    if (o.device.empty() && o.mount.empty()) {
      g = FsGeometry{};
      g.fs = t;
      if (t == FsType::xfs) g.inode_size = 512;
    }
    if (colon != std::string::npos) {
      const std::string n = o.fs.substr(colon + 1);
      if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 9)
        throw UsageError("--fs " + o.fs + ": SIZE must be a number of bytes");
      size = static_cast<std::uint32_t>(std::stoul(n));
      if (size == 0) throw UsageError("--fs " + o.fs + ": SIZE must be a positive number of bytes");
    }
  } else if (o.device.empty() && o.mount.empty()) {
    throw UsageError("give --fs, --device or --mount");
  }
  // With --device/--mount the geometry options are refused (add_fs_options), but
  // --inline-xattr-size, an f2fs mount option no superblock holds, applies with --device.
  if (size) (g.fs == FsType::btrfs ? g.node_size : g.block_size) = size;
  if (o.block_size) g.block_size = o.block_size;
  if (o.inode_size) g.inode_size = o.inode_size;
  if (o.node_size) g.node_size = o.node_size;
  if (o.device.empty() && o.mount.empty()) g.extra_isize = o.extra_isize;
  if (o.inline_words) g.inline_xattr_words = *o.inline_words;
  if (o.ea_inode) g.ea_inode = true;
  return g;
}

std::vector<Xattr> other_xattrs(const FsOptions& o) {
  std::vector<Xattr> out;
  if (!o.xattrs_of.empty()) out = file_xattrs(o.xattrs_of);
  for (const auto& x : o.xattrs) {
    auto eq = x.find('=');
    const std::string n = eq == std::string::npos ? "" : x.substr(eq + 1);
    if (eq == 0 || n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 5 ||
        std::stoul(n) > 65536)
      throw UsageError("--xattr " + x + ": expected NAME=SIZE (SIZE in bytes, at most 65536)");
    out.push_back({x.substr(0, eq), std::stoul(n)});
  }
  return out;
}

std::string describe(const FsGeometry& g) {
  switch (g.fs) {
    case FsType::ext4:
      return "ext4 (block " + std::to_string(g.block_size) + ", inode " + std::to_string(g.inode_size) +
             ", i_extra_isize " + std::to_string(g.extra_isize) + ", ea_inode " + (g.ea_inode ? "on" : "off") + ")";
    case FsType::xfs:
      return "xfs (block " + std::to_string(g.block_size) + ", inode " + std::to_string(g.inode_size) + ")";
    case FsType::btrfs: return "btrfs (node " + std::to_string(g.node_size) + ")";
    case FsType::f2fs: return "f2fs (inline xattr " + std::to_string(g.inline_xattr_words) + " words)";
  }
  return "?";
}

namespace {

struct FitArgs {
  FsOptions fs;
  bool json = false;
};

int cmd_ima_fit(const FitArgs& a) {
  const FsGeometry g = fs_geometry(a.fs);
  const std::vector<Xattr> others = other_xattrs(a.fs);
  const XattrFit fit = ima_fit(g, others);
  nlohmann::json fits = nlohmann::json::object();
  for (const auto& s : ima_signature_sizes()) fits[s.algorithm] = s.xattr_size <= fit.max_security_ima;
  if (a.json) {
    nlohmann::json oj = nlohmann::json::array();
    for (const auto& x : others) oj.push_back({{"name", x.name}, {"size", x.size}});
    std::cout << dump({{"fs", fs_type_name(g.fs)},
                       {"geometry", describe(g)},
                       {"others", oj},
                       {"max_security_ima", fit.max_security_ima},
                       {"errno", fit.beyond},
                       {"where", fit.where},
                       {"fits", fits}})
              << "\n";
    return kExitOk;
  }
  std::cout << describe(g) << ": largest security.ima " << fit.max_security_ima << " bytes (" << fit.where << "; "
            << fit.beyond << " beyond)\n";
  for (const auto& s : ima_signature_sizes())
    std::cout << "  " << s.algorithm << " " << s.xattr_size
              << " bytes: " << (s.xattr_size <= fit.max_security_ima ? "fits" : "does not fit") << "\n";
  return kExitOk;
}

}  // namespace

void add_ima_fit_commands(CLI::App& ima, Commands& subs) {
  auto a = std::make_shared<FitArgs>();
  auto* f = ima.add_subcommand("fit", "the largest security.ima a file system takes, and which algorithms fit");
  add_fs_options(f, a->fs);
  add_json_flag(f, a->json, "");
  subs.emplace_back(f, [a] { return cmd_ima_fit(*a); });
  add_ima_estimate_command(ima, subs);
}

}  // namespace modsign::cli
