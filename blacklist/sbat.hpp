// mirrors rhboot/shim sbat.c parse_sbat_section(), parse_sbat_var_data(), verify_sbat_helper() and sbat_var.S
// (.sbatlevel), shim 16.1 shim's SBAT (Secure Boot Advanced Targeting) check: a binary's .sbat rows against the
// SbatLevel revocations (SBAT.md).  Public shapes in include/modsign/efi_image.hpp.
#pragma once

#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "modsign/efi_image.hpp"

namespace modsign::blacklist::sbat {

Result<std::vector<SbatEntry>> parse_section(ByteView data);
Result<SbatLevel> parse_level(std::string_view text);
/// The level stored in a .sbatlevel section's bytes.
Result<SbatLevel> level_from_section(ByteView section, SbatPolicy policy);
/// Every row of `binary` whose component the level names with a higher generation.
std::vector<SbatRefusal> refusals(const std::vector<SbatEntry>& binary, const SbatLevel& level);

}  // namespace modsign::blacklist::sbat
