#include "common/result.hpp"

namespace modsign {

std::string_view errno_name(KErr e) noexcept {
  switch (e) {
    case KErr::none: return "OK";
    case KErr::eperm: return "EPERM";
    case KErr::enoent: return "ENOENT";
    case KErr::eacces: return "EACCES";
    case KErr::enomem: return "ENOMEM";
    case KErr::einval: return "EINVAL";
    case KErr::enodata: return "ENODATA";
    case KErr::enopkg: return "ENOPKG";
    case KErr::ebadmsg: return "EBADMSG";
    case KErr::enokey: return "ENOKEY";
    case KErr::ekeyrejected: return "EKEYREJECTED";
    case KErr::emsgsize: return "EMSGSIZE";
    case KErr::enoexec: return "ENOEXEC";
    case KErr::elibbad: return "ELIBBAD";
    case KErr::enosys: return "ENOSYS";
    case KErr::enotsupp: return "ENOTSUPP";
    case KErr::eopnotsupp: return "EOPNOTSUPP";
  }
  return "E?";
}

std::string to_hex(ByteView b) {
  static constexpr char d[] = "0123456789abcdef";
  std::string s;
  s.reserve(b.size() * 2);
  for (auto c : b) {
    s.push_back(d[c >> 4]);
    s.push_back(d[c & 15]);
  }
  return s;
}

std::string to_colon_hex(ByteView b) {
  static constexpr char d[] = "0123456789ABCDEF";
  std::string s;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (i) s.push_back(':');
    s.push_back(d[b[i] >> 4]);
    s.push_back(d[b[i] & 15]);
  }
  return s;
}

Bytes from_hex(std::string_view hex) {
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw std::invalid_argument("not a hex digit");
  };
  if (hex.size() % 2) throw std::invalid_argument("odd number of hex digits");
  Bytes out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::uint8_t>(nib(hex[2 * i]) << 4 | nib(hex[2 * i + 1]));
  return out;
}

}  // namespace modsign
