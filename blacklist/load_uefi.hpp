// mirrors security/integrity/platform_certs/load_uefi.c load_uefi_certs (which variables are read: db, dbx, MokListRT,
// MokListXRT), Linux 7.2.13
//   load_uefi_certs()                security/integrity/platform_certs/load_uefi.c:160-237
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "blacklist/efi_variable.hpp"
#include "blacklist/sources.hpp"
#include "cms/kernel_model.hpp"
#include "common/result.hpp"

namespace modsign::blacklist::efi {

/// The variables load_uefi_certs() reads (public modsign::EfiVariable).
using Variable = modsign::EfiVariable;
std::string_view variable_name(Variable v);
/// "db", "dbx", "MokListRT", "MokListXRT" (exact spelling); nullopt otherwise.
std::optional<Variable> parse_variable(std::string_view name);

/// Read `path` (at most kMaxSmallFileSize, 16 MiB), parse it per `form` and add_to_sources().
/// Errors: EBADMSG for a container error or a payload error (message "byte offset N: ..."
/// or "EFI_SIGNATURE_LIST at byte offset N: ..." without the path, for complain(path, msg);
/// entries before a payload error are still added).  Throws IoError if unreadable.
Status load_dbx_file(const std::string& path, Sources& out, Variable v = Variable::dbx,
                     Container form = Container::detect, const cms::KernelModel& profile = cms::KernelModel::v7_0());

}  // namespace modsign::blacklist::efi
