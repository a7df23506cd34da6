// modsign — a kernel's byte order (KernelProfile::byte_order(), MeasurementRecord::byte_order).
#pragma once

#include <string_view>

namespace modsign {

/// A kernel's byte order (CONFIG_CPU_BIG_ENDIAN: s390x is big-endian; x86_64 and Debian's
/// arm64 kernels are little-endian).
enum class ByteOrder : unsigned char { little, big };

/// "little-endian" or "big-endian".
constexpr std::string_view byte_order_name(ByteOrder order) noexcept {
  return order == ByteOrder::big ? "big-endian" : "little-endian";
}

}  // namespace modsign
