// mirrors certs/check-blacklist-hashes.awk and certs/blacklist_hashes.c (the CONFIG_SYSTEM_BLACKLIST_HASH_LIST build
// checks), Linux 7.2.13
#include "blacklist/hash_list.hpp"

#include <algorithm>
#include <set>

#include "blacklist/blacklist.hpp"
#include "common/file.hpp"

namespace modsign {

// The public calls of include/modsign/blacklist.hpp are defined here, in the file that
// mirrors the build checks; the internal names (blacklist::ListProblem, ...) are aliases.
using blacklist::kMaxHashHexLen;
using blacklist::ListEntry;
using blacklist::ListProblem;
using blacklist::ProblemStage;
using blacklist::vet_description;

namespace {

bool awk_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

std::string show(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  static const char* digits = "0123456789abcdef";
  return std::string("byte 0x") + digits[u >> 4] + digits[u & 15];
}

/// Byte offset -> 1-based line and column.
struct Lines {
  std::vector<std::size_t> starts{0};
  explicit Lines(std::string_view t) {
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t[i] == '\n') starts.push_back(i + 1);
  }
  std::pair<std::size_t, std::size_t> at(std::size_t off) const {
    auto it = std::upper_bound(starts.begin(), starts.end(), off);
    const std::size_t line = static_cast<std::size_t>(it - starts.begin());
    return {line, off - starts[line - 1] + 1};
  }
};

}  // namespace

bool HashList::awk_accepts() const {
  for (const auto& p : problems)
    if (p.stage == ProblemStage::awk) return false;
  return true;
}

HashList parse_hash_list(std::string_view text) {
  HashList out;
  const Lines lines(text);
  auto problem = [&](std::size_t off, std::size_t item, ProblemStage stage, std::string msg, std::string awk) {
    auto [l, c] = lines.at(off);
    out.problems.push_back(ListProblem{l, c, item, stage, std::move(msg), std::move(awk)});
  };
  if (text.empty()) {
    problem(0, 0, ProblemStage::build,
            "empty file: the build would compile `{ , NULL }` (certs/Makefile appends \", NULL\")", "");
    return out;
  }
  std::set<std::string> seen;
  std::size_t item = 0;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    ++item;
    const std::string n = std::to_string(item);
    std::size_t p = start;
    while (p < end && awk_space(text[p])) ++p;
    if (p == end) {
      // Nothing but blanks: an empty item (",," or a ',' before the end of the file).
      const char* what = end == text.size()
                             ? (start == 0 ? "no string: the file holds only blanks"
                                           : "',' after the last entry (only blanks follow it)")
                             : (start == 0 ? "',' with no string before it" : "empty item between two ','");
      problem(p < text.size() ? p : (start > 0 ? start - 1 : 0), item, ProblemStage::awk, what,
              "Not a string (item " + n + ")");
    } else if (text[p] != '"') {
      problem(p, item, ProblemStage::awk, show(text[p]) + " where a '\"' should open a string",
              "Not a string (item " + n + ")");
    } else {
      const std::size_t q = text.find('"', p + 1);
      if (q == std::string_view::npos || q >= end) {
        problem(p, item, ProblemStage::awk,
                end < text.size() ? "string not closed before the next ',' (an entry cannot contain ',')"
                                  : "string not closed before the end of the file",
                "Not a string (item " + n + ")");
      } else {
        std::size_t r = q + 1;
        while (r < end && awk_space(text[r])) ++r;
        if (r < end) {
          problem(r, item, ProblemStage::awk, show(text[r]) + " after the closing '\"' (one string per item)",
                  "Not a string (item " + n + ")");
        } else {
          const std::string_view s = text.substr(p + 1, q - p - 1);
          const std::size_t s_off = p + 1;
          if (!(s.starts_with("tbs:") || s.starts_with("bin:"))) {
            problem(s_off, item, ProblemStage::awk, "entry does not start with \"tbs:\" or \"bin:\"",
                    "Unknown prefix (item " + n + ")");
          } else {
            const std::string_view hex = s.substr(4);
            std::size_t bad = 0;
            while (bad < hex.size() && lower_hex(hex[bad])) ++bad;
            if (hex.empty()) {
              problem(s_off + 4, item, ProblemStage::awk, "no hex digits after the prefix",
                      "Not a lowercase hexadecimal string (item " + n + ")");
            } else if (bad < hex.size()) {
              const char c = hex[bad];
              problem(s_off + 4 + bad, item, ProblemStage::awk,
                      (c >= 'A' && c <= 'F' ? "upper-case hex digit " : "not a hex digit: ") + show(c),
                      "Not a lowercase hexadecimal string (item " + n + ")");
            } else if (hex.size() > kMaxHashHexLen) {
              problem(s_off + 4, item, ProblemStage::awk,
                      "hash of " + std::to_string(hex.size()) +
                          " hex digits, more than 128 (the kernel refuses it: ENOPKG)",
                      "Hash string too long (item " + n + ")");
            } else if (hex.size() % 2) {
              problem(s_off + 4, item, ProblemStage::awk,
                      "odd number of hex digits (" + std::to_string(hex.size()) + ")",
                      "Not an even number of hexadecimal characters (item " + n + ")");
            } else {
              auto [l, c] = lines.at(p);
              ListEntry e{std::string(s), l, c, item};
              if (!seen.insert(e.description).second)
                out.duplicates.push_back(ListProblem{l, c, item, ProblemStage::awk,
                                                     "duplicate of an earlier entry (the kernel logs \"Duplicate "
                                                     "blacklisted hash\" and keeps one)",
                                                     ""});
              out.entries.push_back(std::move(e));
            }
          }
        }
      }
    }
    start = end + 1;
  }
  if (text.back() == ',')
    problem(text.size() - 1, 0, ProblemStage::build,
            "file ends with ',': the build appends \", NULL\" and the C array does not compile (\",, NULL\")", "");
  return out;
}

HashList read_hash_list(const std::string& path) {
  const Bytes b = read_file(path);
  return parse_hash_list(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
}

std::string format_hash_list_problem(const std::string& file, const HashListProblem& p) {
  std::string s = file + ":" + std::to_string(p.line) + ":" + std::to_string(p.column) + ": " + p.message;
  if (!p.awk.empty()) s += " (awk: " + p.awk + ")";
  return s;
}

Result<std::string> write_hash_list(const std::vector<std::string>& descriptions) {
  if (descriptions.empty())
    return make_error(KErr::einval, "no entries: the kernel build cannot compile an empty hash list");
  std::string out;
  for (std::size_t i = 0; i < descriptions.size(); ++i) {
    if (auto st = vet_description(descriptions[i]); !st)
      return make_error(st.error().code, "entry \"" + descriptions[i] + "\": " + st.error().message);
    out += "\"" + descriptions[i] + "\"" + (i + 1 < descriptions.size() ? ",\n" : "\n");
  }
  return out;
}

HashListMerge merge_hash_lists(const std::vector<HashList>& lists) {
  HashListMerge r;
  std::set<std::string> seen;
  for (const auto& l : lists)
    for (const auto& e : l.entries) {
      if (seen.insert(e.description).second) r.descriptions.push_back(e.description);
      else ++r.duplicates;
    }
  return r;
}

HashListMerge merge_hash_list_files(const std::vector<std::string>& files) {
  std::vector<HashList> lists;
  for (const auto& f : files) {
    lists.push_back(read_hash_list(f));
    if (!lists.back().problems.empty()) throw InputError(format_hash_list_problem(f, lists.back().problems.front()));
  }
  return merge_hash_lists(lists);
}

}  // namespace modsign

namespace modsign::blacklist {

Status load_hash_list(Sources& sources, const std::string& file, const HashList& list) {
  if (!list.problems.empty()) return make_error(KErr::einval, format_problem(file, list.problems.front()));
  for (const auto& e : list.entries) {
    auto r = mark_raw_hash_blacklisted(sources, e.description, Origin{file, "line " + std::to_string(e.line)});
    if (!r) return make_error(r.error().code, file + ":" + std::to_string(e.line) + ": " + r.error().message);
  }
  return ok_status();
}

}  // namespace modsign::blacklist
