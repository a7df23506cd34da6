// mirrors fs/kernel_read_file.c kernel_read_file, Linux 7.2.13: the read of a module file that
// finit_module() makes (init_module_from_file) before module_decompress(), IMA's
// security_kernel_read_file() appraisal and load_module()'s module_sig_check().
#pragma once

#include <cstdint>
#include <optional>

#include "common/result.hpp"

namespace modsign::module {

/// What kernel_read_file() refuses of a regular file of `file_size` bytes (the file as
/// stored, before any decompression): an empty file (i_size <= 0) is EINVAL, "the module
/// file is empty (kernel_read_file: EINVAL before IMA's appraisal and the signature
/// check)".  nullopt for any other size modsign reads (its 1 GiB bound is far below the
/// kernel's EFBIG at INT_MAX bytes).
std::optional<Error> kernel_read_file_refusal(std::uint64_t file_size);

}  // namespace modsign::module
