// mirrors arch/arm64/kernel/kexec_image.c image_probe, Linux 7.2.13
#pragma once

#include "common/result.hpp"

namespace modsign::module {

/// image_probe(): the arm64 loader's check (kexec_image_ops, the only entry of arm64's
/// kexec_file_loaders[]), made before any signature check.  EINVAL when the image is
/// shorter than struct arm64_image_header (64 bytes) or lacks its magic "ARM\x64" at byte 56
/// (arch/arm64/include/asm/image.h); kexec_image_probe_default() (kernel/kexec_file.c) then
/// returns that EINVAL, not ENOEXEC.  image_load()'s refusals (image_size 0, an image of
/// the other byte order, an unsupported page size) come after the signature check and are
/// not modelled.
Status arm64_image_probe(ByteView image);

}  // namespace modsign::module
