// modsign ima: the subcommands of `modsign ima` kept in files of their own
// (cmd_ima_sign.cpp: sign; cmd_ima_verify.cpp: verify), added by cmd_ima.cpp's setup.
#pragma once

#include "registry.hpp"

namespace modsign::cli {

/// `modsign ima sign`.
void add_ima_sign_command(CLI::App& ima, Commands& subs);
/// `modsign ima verify`.
void add_ima_verify_command(CLI::App& ima, Commands& subs);

}  // namespace modsign::cli
