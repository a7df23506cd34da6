// mirrors certs/check-blacklist-hashes.awk and certs/blacklist_hashes.c (the CONFIG_SYSTEM_BLACKLIST_HASH_LIST build checks), Linux 7.2.13
// modsign — CONFIG_SYSTEM_BLACKLIST_HASH_LIST files: comma-separated C string literals
// that the kernel build checks with certs/check-blacklist-hashes.awk and then includes
// into `const char *const blacklist_hashes[] = { <file> , NULL };`
// (certs/Makefile:13-21, certs/blacklist_hashes.c:4-6, Linux 7.2.13).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "blacklist/sources.hpp"
#include "common/result.hpp"

namespace modsign::blacklist {

/// One accepted entry: the description between the quotes and where it starts (1-based
/// line and byte column of the opening quote; `item` = the awk record number NR).
struct ListEntry {
  std::string description;
  std::size_t line = 0, column = 0, item = 0;
};

/// Which stage of the kernel build fails on a problem.
enum class ProblemStage {
  awk,    ///< check-blacklist-hashes.awk rejects the file (exit 1 stops the build)
  build,  ///< the awk check passes but the C array does not compile (empty file, trailing ',')
};

/// A problem at a precise place (1-based line, byte column; `item` = awk record number,
/// 0 for whole-file problems).  `message` says what is wrong in modsign's words; `awk`
/// is the awk script's own message for it ("Not a string (item 2)"), empty for build problems.
struct ListProblem {
  std::size_t line = 0, column = 0, item = 0;
  ProblemStage stage = ProblemStage::awk;
  std::string message;
  std::string awk;
};

/// A parsed hash-list file.  The awk check accepts the file exactly when no problem has
/// stage awk (the script stops at the first; modsign reports every one); the kernel build
/// succeeds when `problems` is empty.  `duplicates` are entries equal to an earlier one:
/// legal, but the kernel logs "Duplicate blacklisted hash" (-EEXIST) for each at boot.
struct HashList {
  std::vector<ListEntry> entries;     ///< accepted entries, file order, duplicates included
  std::vector<ListProblem> problems;  ///< file order
  std::vector<ListProblem> duplicates;
  bool awk_accepts() const;
};

/// Parse hash-list text with the awk script's rules (RS = ","; a record is
/// [ \t\n\r]* "..." [ \t\n\r]*; then ^(tbs|bin):, [0-9a-f]+, at most 128 characters, even
/// length, checked in that order), plus the two build failures the script misses: an
/// empty file (`{ , NULL }`) and a file ending in ',' (`"...",, NULL`).  Never fails.
HashList parse_hash_list(std::string_view text);

/// Read and parse a file.  Throws IoError (message names the file) if it cannot be read.
HashList read_hash_list(const std::string& path);

/// "file:line:column: message (awk: ...)" for one problem.
std::string format_problem(const std::string& file, const ListProblem& p);

/// The text modsign writes for `descriptions`: one `"<description>"` per line, a ','
/// after every entry but the last, '\n' after each line — accepted by the awk check and
/// compilable.  Errors: EINVAL for an empty list (the build cannot compile one) or a
/// description blacklist_vet_description() refuses (message names it).
Result<std::string> write_hash_list(const std::vector<std::string>& descriptions);

/// Merge of several lists: descriptions in first-seen order, each once.
struct MergeResult {
  std::vector<std::string> descriptions;
  std::size_t duplicates = 0;  ///< entries dropped because an earlier one was equal
};
/// Merge the accepted entries of `lists` in order (within and across lists).
MergeResult merge_hash_lists(const std::vector<HashList>& lists);

/// Load a parsed list into `sources` as blacklist_init() does (mark_raw_hash_blacklisted
/// for each string, duplicates kept once), with origins {file, "line N"}.  Errors: EINVAL
/// when the list has problems (the kernel would not have been built with it); the
/// message is the first problem formatted with `file`.
Status load_hash_list(Sources& sources, const std::string& file, const HashList& list);

}  // namespace modsign::blacklist
