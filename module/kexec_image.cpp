// mirrors arch/arm64/kernel/kexec_image.c image_probe, Linux 7.2.13
#include "module/kexec_image.hpp"

namespace modsign::module {

namespace {
// struct arm64_image_header (arch/arm64/include/asm/image.h): code0, code1, text_offset,
// image_size, flags, res2-res4, then magic (__le32 at 56) and res5 / pe_header (at 60).
constexpr std::size_t kHeaderSize = 64, kMagic = 56;
}  // namespace

Status arm64_image_probe(ByteView b) {
  if (b.size() < kHeaderSize)
    return Error{KErr::einval, "kexec_file(Image): shorter than struct arm64_image_header (64 bytes)"};
  if (!(b[kMagic] == 'A' && b[kMagic + 1] == 'R' && b[kMagic + 2] == 'M' && b[kMagic + 3] == 0x64))
    return Error{KErr::einval, "kexec_file(Image): no arm64 Image magic \"ARM\\x64\" at byte 56"};
  return ok_status();
}

}  // namespace modsign::module
