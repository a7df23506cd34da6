// mirrors arch/x86/kernel/kexec-bzimage64.c bzImage64_probe, Linux 7.2.13
#include "module/kexec_bzimage64.hpp"

namespace modsign::module {

namespace {
// struct setup_header inside struct boot_params (Documentation/arch/x86/boot.rst).
constexpr std::size_t kBootFlag = 0x1fe, kHeader = 0x202, kVersion = 0x206, kLoadflags = 0x211, kXloadflags = 0x236;
constexpr unsigned kLoadedHigh = 1, kXlfKernel64 = 1, kXlfCanBeLoadedAbove4G = 2, kXlf5Level = 1U << 5;
Error noexec(const char* why) { return Error{KErr::enoexec, std::string("kexec-bzImage64: ") + why}; }
}  // namespace

Status bzimage64_probe(ByteView b, bool five_level_paging) {
  if (b.size() < 2 * 512) return noexec("File is too short to be a bzImage");
  if (!(b[kHeader] == 'H' && b[kHeader + 1] == 'd' && b[kHeader + 2] == 'r' && b[kHeader + 3] == 'S'))
    return noexec("Not a bzImage");
  if ((b[kBootFlag] | (b[kBootFlag + 1] << 8)) != 0xAA55) return noexec("No x86 boot sector present");
  if ((b[kVersion] | (b[kVersion + 1] << 8)) < 0x020C) return noexec("Must be at least protocol version 2.12");
  if (!(b[kLoadflags] & kLoadedHigh)) return noexec("zImage not a bzImage");
  const unsigned xl = b[kXloadflags] | (b[kXloadflags + 1] << 8);
  if (!(xl & kXlfKernel64)) return noexec("Not a bzImage64. XLF_KERNEL_64 is not set.");
  if (!(xl & kXlfCanBeLoadedAbove4G)) return noexec("XLF_CAN_BE_LOADED_ABOVE_4G is not set.");
  if (!(xl & kXlf5Level) && five_level_paging) return noexec("bzImage cannot handle 5-level paging mode.");
  return ok_status();
}

}  // namespace modsign::module
