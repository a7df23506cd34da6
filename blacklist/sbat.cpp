// mirrors rhboot/shim sbat.c parse_sbat_section(), parse_sbat_var_data(), verify_sbat_helper() and sbat_var.S
// (.sbatlevel), shim 16.1
#include "blacklist/sbat.hpp"

#include <climits>
#include <cstring>

namespace modsign::blacklist::sbat {

namespace {

constexpr std::size_t kSectionColumns = 6;  // SBAT_SECTION_COLUMNS

/// atoi() as shim applies it to a generation: optional blanks and sign, then digits;
/// 0 for no digits; clamped to the int range (negative values read as 0).
std::uint32_t atoi_like(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  long long v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    v = v * 10 + (s[i++] - '0');
    if (v > INT_MAX) v = INT_MAX;
  }
  return neg ? 0 : static_cast<std::uint32_t>(v);
}

/// Lines of `text` (split at '\n', a trailing '\r' removed), blank lines dropped, each with
/// its 1-based line number.
std::vector<std::pair<std::size_t, std::string_view>> lines_of(std::string_view text) {
  std::vector<std::pair<std::size_t, std::string_view>> out;
  std::size_t n = 0;
  while (!text.empty()) {
    ++n;
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) out.emplace_back(n, line);
  }
  return out;
}

/// Up to `max` comma-separated fields; the last keeps the rest of the line.
std::vector<std::string_view> fields_of(std::string_view line, std::size_t max) {
  std::vector<std::string_view> f;
  while (f.size() + 1 < max) {
    const auto c = line.find(',');
    if (c == std::string_view::npos) break;
    f.push_back(line.substr(0, c));
    line = line.substr(c + 1);
  }
  f.push_back(line);
  return f;
}

std::string_view up_to_nul(ByteView data) {
  const auto* p = reinterpret_cast<const char*>(data.data());
  return std::string_view(p, strnlen(p, data.size()));
}

}  // namespace

Result<std::vector<SbatEntry>> parse_section(ByteView data) {
  std::vector<SbatEntry> out;
  for (const auto& [n, line] : lines_of(up_to_nul(data))) {
    const auto f = fields_of(line, kSectionColumns);
    if (f.size() < kSectionColumns)
      return make_error(KErr::einval, "line " + std::to_string(n) + ": " + std::to_string(f.size()) + " field" +
                                          (f.size() == 1 ? "" : "s") + ", 6 needed");
    for (std::size_t k = 0; k < f.size(); ++k)
      if (f[k].empty())
        return make_error(KErr::einval, "line " + std::to_string(n) + ": field " + std::to_string(k + 1) + " is empty");
    out.push_back({std::string(f[0]), atoi_like(f[1]), std::string(f[1]), std::string(f[2]), std::string(f[3]),
                   std::string(f[4]), std::string(f[5])});
  }
  if (out.empty()) return make_error(KErr::einval, "no SBAT rows");
  return out;
}

Result<SbatLevel> parse_level(std::string_view text) {
  SbatLevel lv;
  lv.text = std::string(text);
  // An efivarfs copy (SbatLevelRT-605dab50-...): 4 attribute bytes before the text.
  if (text.size() >= 9 && text[1] == 0 && text[2] == 0 && text[3] == 0 && text.substr(4, 5) == "sbat,")
    text.remove_prefix(4);
  if (text.substr(0, 3) == "\xef\xbb\xbf") text.remove_prefix(3);  // shim skips a UTF-8 BOM
  for (const auto& [n, line] :
       lines_of(up_to_nul(ByteView(reinterpret_cast<const std::uint8_t*>(text.data()), text.size())))) {
    const auto f = fields_of(line, 3);
    if (f.size() < 2 || f[0].empty() || f[1].empty())
      return make_error(KErr::einval, "line " + std::to_string(n) + ": not component,generation");
    if (lv.components.empty()) {
      if (f[0] != "sbat") return make_error(KErr::einval, "no sbat,1 row first");
      if (f.size() > 2) lv.datestamp = std::string(f[2]);
    }
    lv.components.emplace_back(std::string(f[0]), atoi_like(f[1]));
  }
  if (lv.components.empty()) return make_error(KErr::einval, "no sbat,1 row first");
  return lv;
}

Result<SbatLevel> level_from_section(ByteView s, SbatPolicy policy) {
  auto u32 = [&s](std::size_t at) {
    return std::uint32_t{s[at]} | std::uint32_t{s[at + 1]} << 8 | std::uint32_t{s[at + 2]} << 16 |
           std::uint32_t{s[at + 3]} << 24;
  };
  if (s.size() < 12) return make_error(KErr::einval, ".sbatlevel: " + std::to_string(s.size()) + " bytes, 12 needed");
  if (const auto version = u32(0); version != 0)
    return make_error(KErr::einval, ".sbatlevel: format version " + std::to_string(version) + ", not 0");
  const std::uint64_t off = 4 + std::uint64_t{u32(policy == SbatPolicy::previous ? 4 : 8)};
  const char* which = policy == SbatPolicy::previous ? "previous" : "latest";
  if (off >= s.size())
    return make_error(KErr::einval, std::string(".sbatlevel: ") + which + " offset " + std::to_string(off - 4) +
                                        " beyond the section (" + std::to_string(s.size()) + " bytes)");
  const ByteView rest = s.subspan(off);
  if (std::memchr(rest.data(), 0, rest.size()) == nullptr)
    return make_error(KErr::einval, std::string(".sbatlevel: the ") + which + " level has no terminating NUL");
  auto lv = parse_level(up_to_nul(rest));
  if (!lv) return make_error(lv.error().code, std::string(".sbatlevel ") + which + ": " + lv.error().message);
  return lv;
}

std::vector<SbatRefusal> refusals(const std::vector<SbatEntry>& binary, const SbatLevel& level) {
  std::vector<SbatRefusal> out;
  for (const auto& e : binary)
    for (const auto& [name, gen] : level.components)
      if (e.component == name && e.generation < gen) out.push_back({e.component, e.generation, gen});
  return out;
}

}  // namespace modsign::blacklist::sbat
