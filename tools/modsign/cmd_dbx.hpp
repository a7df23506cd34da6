// modsign dbx: the subcommand groups of `modsign dbx` (cmd_dbx.cpp: list, merge, add-hash,
// add-cert; cmd_dbx_hash.cpp: hash; cmd_dbx_check.cpp: check, import-json, diff) and the
// few printing helpers they share.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <modsign/dbx.hpp>

#include "registry.hpp"

namespace modsign::cli {

/// "<guid> (EFI_BOOTMGR_DBXSVN_GUID), version 9.0" ("<guid>, version 3.0" for an unnamed one).
std::string svn_text(const EfiSvnRecord& r);
/// {"application", "application_name", "major", "minor", "version"}.
nlohmann::json svn_json(const EfiSvnRecord& r);

/// Write `data` to `out` (atomically), refusing an output over a key or one of `inputs`;
/// reports the failure and returns kExitInput, else kExitOk.
int write_dbx_output(const std::string& out, const Bytes& data, const std::vector<std::string>& inputs = {});

/// `modsign dbx hash`.
void add_dbx_hash_command(CLI::App& dbx, Commands& subs);
/// `modsign dbx check`, `import-json` and `diff`.
void add_dbx_check_commands(CLI::App& dbx, Commands& subs);

}  // namespace modsign::cli
