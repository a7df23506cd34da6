// modsign — libFuzzer target: the hash-list file reader (src/blacklist/hash_list.hpp,
// CONFIG_SYSTEM_BLACKLIST_HASH_LIST files as scripts/check-blacklist-hashes.awk checks them).
// parse_hash_list() never throws; every entry and problem points inside the text; a list
// without problems is written back by write_hash_list() into text that parses to the same
// descriptions without problems (and the write is refused only for an empty list).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "blacklist/hash_list.hpp"

using namespace modsign;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto list = blacklist::parse_hash_list(text);
  std::size_t lines = 1;
  for (char c : text) lines += c == '\n';
  for (const auto& e : list.entries)
    if (e.line == 0 || e.line > lines || e.column == 0 || e.description.size() > size) std::abort();
  for (const auto& p : list.problems)
    if (p.line > lines || p.message.empty()) std::abort();
  (void)list.awk_accepts();
  (void)blacklist::format_problem("fuzz.hash", list.problems.empty() ? blacklist::ListProblem{} : list.problems[0]);
  if (!list.problems.empty()) return 0;
  std::vector<std::string> descriptions;
  for (const auto& e : list.entries) descriptions.push_back(e.description);
  auto written = blacklist::write_hash_list(descriptions);
  if (!written.ok()) {
    if (!descriptions.empty()) std::abort();
    return 0;
  }
  const auto again = blacklist::parse_hash_list(*written);
  if (!again.problems.empty() || again.entries.size() != descriptions.size()) std::abort();
  for (std::size_t i = 0; i < descriptions.size(); ++i)
    if (again.entries[i].description != descriptions[i]) std::abort();
  (void)blacklist::merge_hash_lists({list, again});
  return 0;
}
