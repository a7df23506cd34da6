// modsign's own: RFC 4648 base64 (§4 alphabet, §3.5 canonical encoding).
#include "common/base64.hpp"

#include <array>
#include <cstdint>

namespace modsign {

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string to_base64(ByteView b) {
  std::string s;
  s.reserve((b.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < b.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, b.size() - i);
    std::uint32_t v = static_cast<std::uint32_t>(b[i]) << 16;
    if (n > 1) v |= static_cast<std::uint32_t>(b[i + 1]) << 8;
    if (n > 2) v |= b[i + 2];
    for (std::size_t k = 0; k < 4; ++k) s += k <= n ? kAlphabet[(v >> (18 - 6 * k)) & 63] : '=';
  }
  return s;
}

Bytes from_base64(std::string_view t) {
  std::array<int, 256> val{};
  val.fill(-1);
  for (int i = 0; i < 64; ++i) val[static_cast<unsigned char>(kAlphabet[i])] = i;
  std::size_t len = t.size();
  while (len > 0 && t[len - 1] == '=' && t.size() - len < 2) --len;
  if (t.size() != len && t.size() % 4 != 0) throw InputError("not base64");
  if (len % 4 == 1) throw InputError("not base64");
  Bytes out;
  out.reserve(len / 4 * 3 + 2);
  std::uint32_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < len; ++i) {
    const int v = val[static_cast<unsigned char>(t[i])];
    if (v < 0) throw InputError("not base64");
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::uint8_t>((acc >> bits) & 0xff));
    }
  }
  // The unused low bits of the last character must be zero (RFC 4648 §3.5, canonical).
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) throw InputError("not base64");
  return out;
}

}  // namespace modsign
