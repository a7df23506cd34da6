// mirrors arch/x86/kernel/kexec-bzimage64.c bzImage64_probe, Linux 7.2.13
#pragma once

#include "common/result.hpp"

namespace modsign::module {

/// bzImage64_probe(): the x86-64 loader's check, made before any signature check.
/// ENOEXEC when the image is shorter than two 512-byte sectors, has no "HdrS" at 0x202,
/// no boot flag 0xAA55 at 0x1fe, a boot protocol version below 2.12, no LOADED_HIGH in
/// loadflags, or lacks XLF_KERNEL_64 or XLF_CAN_BE_LOADED_ABOVE_4G in xloadflags; with
/// `five_level_paging` (pgtable_l5_enabled(): the running kernel uses 5-level page tables)
/// also when it lacks XLF_5LEVEL.  The other machine-dependent refusal (32-bit EFI runtime
/// services) is not modelled: a 64-bit machine is assumed.
Status bzimage64_probe(ByteView image, bool five_level_paging);

}  // namespace modsign::module
