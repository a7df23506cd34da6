// modsign — the machine a kernel is built for (KernelProfile::machine()).
#pragma once

#include <optional>
#include <string_view>

namespace modsign {

/// The architecture a kernel is built for: CONFIG_X86_64, CONFIG_ARM64 or CONFIG_S390
/// (s390x).  It matters only where the kernel's C code has undefined behaviour whose outcome
/// modsign takes from measured builds (KernelProfile::machine()).
enum class Machine : unsigned char { x86_64, arm64, s390x };

/// "x86_64", "arm64" or "s390x" (the names `--kernel-arch` takes).
constexpr std::string_view machine_name(Machine machine) noexcept {
  switch (machine) {
    case Machine::arm64: return "arm64";
    case Machine::s390x: return "s390x";
    case Machine::x86_64: break;
  }
  return "x86_64";
}

/// The Machine machine_name() names; nullopt for any other name.
constexpr std::optional<Machine> parse_machine(std::string_view name) noexcept {
  for (Machine m : {Machine::x86_64, Machine::arm64, Machine::s390x})
    if (machine_name(m) == name) return m;
  return std::nullopt;
}

}  // namespace modsign
