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

/// The EFI binaries under each -r DIR (find_pe_files()), sorted per DIR.  What the walk
/// could not handle is reported ("modsign: PATH: <reason>", tree_problem_text()) and sets
/// `*dir_error` (exit 3), and so does a DIR with no EFI binary under it ("modsign: DIR: no
/// EFI binary (MZ) under it"): the -r rules of every command (modsign(1)).
std::vector<std::string> pe_files_under(const std::vector<std::string>& dirs, bool* dir_error);

/// `modsign dbx hash`.
void add_dbx_hash_command(CLI::App& dbx, Commands& subs);
/// `modsign dbx check`, `import-json` and `diff`.
void add_dbx_check_commands(CLI::App& dbx, Commands& subs);

}  // namespace modsign::cli
