// mirrors fs/proc_namespace.c show_vfsmnt (the /proc/self/mounts line: mangle() of the device, seq_path_root() of the
// mount point), Linux 7.2.13 Each field is written with seq_escape(): the device with ' ', '\t', '\n', '\\' and '#',
// the mount point with ' ', '\t', '\n' and '\\' as a backslash and three octal digits ("\040").
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace modsign::digest {

/// One line of /proc/self/mounts: "DEVICE DIR TYPE OPTIONS 0 0", fields decoded.
struct ProcMount {
  std::string device, dir, type, options;
};

/// A field with every "\ooo" (a backslash and three octal digits, value below 256) turned
/// back into its byte: "/mnt/a\040b" -> "/mnt/a b", "\134" -> "\\".  Any other backslash is
/// kept as it is.
std::string proc_mounts_unescape(std::string_view field);

/// The first four space-separated fields of `line`, decoded; nullopt when it has fewer.
std::optional<ProcMount> parse_proc_mounts_line(std::string_view line);

}  // namespace modsign::digest
