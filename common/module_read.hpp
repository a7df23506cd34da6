// modsign — reading a module file whole, with the bound `--max-size` raises.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.hpp"

namespace modsign {

/// read_file() for a module: the bound is max(max_size, kMaxModuleSize), and a larger file
/// is refused naming the option that raises it: IoError "<path>: file is N bytes, more than
/// the M bytes modsign reads into memory (raise --max-size)".  Other errors as read_file().
Bytes read_module_bytes(const std::string& path, std::uint64_t max_size);
/// The same, of the file `lock` holds open: what was locked (and checked) is what is read.
Bytes read_module_bytes(const class InputLock& lock, std::uint64_t max_size);

}  // namespace modsign
