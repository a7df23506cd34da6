// `modsign ima estimate`: the space signing a tree costs on a file system, per algorithm,
// beside files x signature size (modsign::ima_estimate).
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "cmd_ima_fit.hpp"

namespace modsign::cli {
namespace {

struct EstimateArgs {
  FsOptions fs;
  std::vector<std::string> dirs, algs;
  bool json = false;
};

int cmd_ima_estimate(const EstimateArgs& a) {
  const FsGeometry g = fs_geometry(a.fs);
  const std::vector<Xattr> others = other_xattrs(a.fs);
  const TreeScan tree = scan_tree_files(a.dirs);
  std::vector<std::string> algs = a.algs;
  if (algs.empty()) algs = {"ecdsa-p384", "ml-dsa-44", "ml-dsa-65", "ml-dsa-87"};
  std::vector<ImaEstimate> out;
  for (const auto& alg : algs) out.push_back(ima_estimate(g, alg, tree.sizes, others));
  // As sign -r: a directory that cannot be read is named, the rest is counted, exit 3.
  for (const auto& e : tree.errors) complain("", e);
  for (const auto& n : tree.notes) complain("", "note: " + n);
  if (tree.sizes.empty() && !tree.errors.empty()) return kExitInput;  // nothing counted: no table of 0 files
  const std::vector<std::uint64_t>& sizes = tree.sizes;
  if (!a.json)
    std::cout << describe(g) << ", " << sizes.size() << " files\n"
              << "  algorithm   xattr    extra bytes  per file  absorbed  naive (files x size)\n";
  for (const auto& e : out) {
    if (a.json) {
      std::cout << dump({{"algorithm", e.algorithm},
                         {"xattr_size", e.xattr_size},
                         {"files", e.files},
                         {"fits", e.fits},
                         {"errno", e.fits ? nlohmann::json(nullptr) : nlohmann::json(e.beyond)},
                         {"extra_bytes", e.extra_bytes},
                         {"naive_bytes", e.naive_bytes},
                         {"files_absorbed", e.files_absorbed},
                         {"lower_bound", e.lower_bound},
                         {"fs", fs_type_name(g.fs)},
                         {"geometry", describe(g)}})
                << "\n";
      continue;
    }
    std::cout << "  " << std::left << std::setw(11) << e.algorithm << std::right << std::setw(6) << e.xattr_size
              << "  ";
    if (!e.fits) {
      std::cout << "does not fit (setxattr " << e.beyond << ")\n";
      continue;
    }
    std::cout << std::setw(13) << ((e.lower_bound ? ">=" : "") + std::to_string(e.extra_bytes)) << std::setw(10)
              << (e.files ? e.extra_bytes / e.files : 0) << std::setw(10) << e.files_absorbed << std::setw(22)
              << e.naive_bytes << "\n";
  }
  return tree.errors.empty() ? kExitOk : kExitInput;
}

}  // namespace

void add_ima_estimate_command(CLI::App& ima, Commands& subs) {
  auto a = std::make_shared<EstimateArgs>();
  auto* e = ima.add_subcommand("estimate", "the space signing a tree costs on a file system, per algorithm");
  e->add_option("-r,--recursive", a->dirs, "the tree (repeatable)")->required();
  e->add_option("--algo,--alg", a->algs,
                "algorithm, as keygen --algo names it (repeatable; default ecdsa-p384, ml-dsa-44, ml-dsa-65, "
                "ml-dsa-87); --alg is the older spelling");
  add_fs_options(e, a->fs);
  add_json_flag(e, a->json, "algorithm");
  subs.emplace_back(e, [a] { return cmd_ima_estimate(*a); });
}

}  // namespace modsign::cli
