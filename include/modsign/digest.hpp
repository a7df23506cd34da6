// modsign — the digests of a module as the kernel and IMA take them: pkcs7_get_digest()
// as ima_read_modsig() + ima_collect_modsig() call it (security/integrity/ima/ima_modsig.c,
// crypto/asymmetric_keys/pkcs7_verify.c, Linux 7.2.13), the d-modsig template field
// (ima_template_lib.c ima_eventdigest_modsig_init), the "bin:" key ima_check_blacklist()
// looks up (ima_appraise.c), and the side SHA-256 of the signed content (the proposal for
// ML-DSA modules under IMA).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "modsign/digest_types.hpp"
#include "modsign/export.hpp"
#include "modsign/module_image.hpp"  // kMaxModuleSize
#include "modsign/profile.hpp"
#include "modsign/result.hpp"

namespace modsign {

/// The digests of the module file at `path` under `profile`, read once in 1 MiB chunks
/// (only the trailer and the PKCS#7 are held in memory); a compressed module (detected by
/// its magic) is decompressed in memory, at most `max_size` bytes.
/// Mirrors ima_read_modsig(), ima_collect_modsig() (security/integrity/ima/ima_modsig.c) and
/// ima_check_blacklist()'s choice of key (ima_appraise.c), Linux 7.2.13.
/// Throws IoError when the file cannot be read; InputError "<path>: <reason>" for a
/// compressed stream that does not decompress within `max_size`.
MODSIGN_API DigestView digest_module_file(const std::string& path, const KernelProfile& profile,
                                          std::uint64_t max_size = kMaxModuleSize);

}  // namespace modsign
