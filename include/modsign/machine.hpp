// modsign — the machine a kernel is built for (KernelProfile::machine()).
#pragma once

#include <optional>
#include <string_view>

#include "modsign/byte_order.hpp"

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

/// The byte order of a kernel built for `machine` when its configuration does not say:
/// big-endian for s390x, little-endian for x86_64 and arm64.
constexpr ByteOrder default_byte_order(Machine machine) noexcept {
  return machine == Machine::s390x ? ByteOrder::big : ByteOrder::little;
}

/// Whether a kernel for `machine` can be built with `order` (CONFIG_CPU_BIG_ENDIAN): arm64
/// either way (arch/arm64/Kconfig's "Build big-endian kernel", off by default; Linux 7.2.13
/// makes it depend on BROKEN, so only older kernels are big-endian arm64); s390x only
/// big-endian (arch/s390/Kconfig: CPU_BIG_ENDIAN def_bool y); x86_64 only little-endian
/// (arch/x86 has no CPU_BIG_ENDIAN).
constexpr bool byte_order_possible(Machine machine, ByteOrder order) noexcept {
  return machine == Machine::arm64 || order == default_byte_order(machine);
}

}  // namespace modsign
