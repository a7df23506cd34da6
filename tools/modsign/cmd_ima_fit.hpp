// `modsign ima fit` and `modsign ima estimate` (cmd_ima_fit.cpp, cmd_ima_estimate.cpp),
// subcommands of `modsign ima` added by setup_ima().
#pragma once

#include <modsign/ima_fit.hpp>

#include <vector>

#include "options.hpp"
#include "registry.hpp"

namespace modsign::cli {

/// Adds `ima fit` and `ima estimate` to `ima` and their runners to `subs`.
void add_ima_fit_commands(CLI::App& ima, Commands& subs);
/// Adds `ima estimate` (cmd_ima_estimate.cpp); called by add_ima_fit_commands.
void add_ima_estimate_command(CLI::App& ima, Commands& subs);

/// The geometry and the other attributes the options describe (UsageError/InputError/IoError
/// as the library throws them).
FsGeometry fs_geometry(const FsOptions& o);
std::vector<Xattr> other_xattrs(const FsOptions& o);
/// "ext4 (block 4096, inode 256, i_extra_isize 32, ea_inode off)".
std::string describe(const FsGeometry& g);

}  // namespace modsign::cli
