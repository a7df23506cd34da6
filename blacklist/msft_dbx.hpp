// modsign's own: Microsoft's published dbx list (dbx_info_msft_*.json of
// github.com/microsoft/secureboot_objects, PreSignedObjects/DBX) read into dbx entries, and
// the SVN records it and Microsoft's dbx updates carry.  Public shapes in
// include/modsign/efi_image.hpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "modsign/efi_image.hpp"

namespace modsign::blacklist::msft_dbx {

std::optional<std::string> arch(std::string_view name);
/// See parse_msft_dbx_json() in include/modsign/efi_image.hpp.
EfiDatabase parse(std::string_view text, const std::string& arch, const std::string& name, const std::string& der_dir);
std::optional<EfiSvnRecord> svn_record(const EfiGuid& owner, ByteView data);

}  // namespace modsign::blacklist::msft_dbx
