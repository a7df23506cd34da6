// mirrors fs/proc_namespace.c show_vfsmnt (the /proc/self/mounts line: mangle() of the device, seq_path_root() of the
// mount point), Linux 7.2.13
#include "digest/proc_namespace.hpp"

#include <vector>

namespace modsign::digest {

std::string proc_mounts_unescape(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() && field[i + 1] <= '3' && octal(field[i + 1]) && octal(field[i + 2]) &&
        octal(field[i + 3])) {
      out.push_back(static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0')));
      i += 3;
      continue;
    }
    out.push_back(field[i]);
  }
  return out;
}

std::optional<ProcMount> parse_proc_mounts_line(std::string_view line) {
  std::vector<std::string_view> f;
  std::size_t i = 0;
  while (f.size() < 4) {
    while (i < line.size() && line[i] == ' ') ++i;
    if (i >= line.size()) return std::nullopt;
    const std::size_t j = line.find(' ', i);
    f.push_back(line.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));
    if (j == std::string_view::npos) i = line.size();
    else i = j;
  }
  return ProcMount{proc_mounts_unescape(f[0]), proc_mounts_unescape(f[1]), proc_mounts_unescape(f[2]),
                   proc_mounts_unescape(f[3])};
}

}  // namespace modsign::digest
