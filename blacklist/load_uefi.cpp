// mirrors security/integrity/platform_certs/load_uefi.c load_uefi_certs (which variables are read: db, dbx, MokListRT,
// MokListXRT), Linux 7.2.13
#include "blacklist/load_uefi.hpp"

#include "blacklist/keyring_handler.hpp"
#include "common/file.hpp"

namespace modsign::blacklist::efi {

std::string_view variable_name(Variable v) {
  switch (v) {
    case Variable::db: return "db";
    case Variable::dbx: return "dbx";
    case Variable::MokListRT: return "MokListRT";
    case Variable::MokListXRT: return "MokListXRT";
  }
  return "?";
}

std::optional<Variable> parse_variable(std::string_view n) {
  for (Variable v : {Variable::db, Variable::dbx, Variable::MokListRT, Variable::MokListXRT})
    if (variable_name(v) == n) return v;
  return std::nullopt;
}

Status load_dbx_file(const std::string& path, Sources& out, Variable v, Container form,
                     const cms::KernelModel& profile) {
  const Bytes b = read_file(path, kMaxSmallFileSize);
  auto vf = parse_variable_file(b, form);
  if (!vf) return vf.error();
  return add_to_sources(vf->lists, v, path, out, profile);
}

}  // namespace modsign::blacklist::efi
