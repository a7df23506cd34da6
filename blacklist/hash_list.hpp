// mirrors certs/check-blacklist-hashes.awk and certs/blacklist_hashes.c (the CONFIG_SYSTEM_BLACKLIST_HASH_LIST build
// checks), Linux 7.2.13 modsign — CONFIG_SYSTEM_BLACKLIST_HASH_LIST files: comma-separated C string literals that the
// kernel build checks with certs/check-blacklist-hashes.awk and then includes into `const char *const
// blacklist_hashes[] = { <file> , NULL };` (certs/Makefile:13-21, certs/blacklist_hashes.c:4-6, Linux 7.2.13).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "blacklist/sources.hpp"
#include "common/result.hpp"
#include "modsign/blacklist.hpp"

namespace modsign::blacklist {

/// The plain data of a parsed list: the public types of include/modsign/blacklist.hpp.
using ListEntry = modsign::HashListEntry;
using ProblemStage = modsign::HashListStage;
using ListProblem = modsign::HashListProblem;
using HashList = modsign::HashList;
using MergeResult = modsign::HashListMerge;

/// Parse hash-list text with the awk script's rules (RS = ","; a record is
/// [ \t\n\r]* "..." [ \t\n\r]*; then ^(tbs|bin):, [0-9a-f]+, at most 128 characters, even
/// length, checked in that order), plus the two build failures the script misses: an
/// empty file (`{ , NULL }`) and a file ending in ',' (`"...",, NULL`).  Never fails.
using modsign::parse_hash_list;  // public (include/modsign/blacklist.hpp)

/// Read and parse a file.  Throws IoError (message names the file) if it cannot be read.
using modsign::read_hash_list;  // public (include/modsign/blacklist.hpp)

/// "file:line:column: message (awk: ...)" for one problem.
inline std::string format_problem(const std::string& file, const ListProblem& p) {
  return format_hash_list_problem(file, p);
}

/// The text modsign writes for `descriptions`: one `"<description>"` per line, a ','
/// after every entry but the last, '\n' after each line — accepted by the awk check and
/// compilable.  Errors: EINVAL for an empty list (the build cannot compile one) or a
/// description blacklist_vet_description() refuses (message names it).
using modsign::write_hash_list;  // public (include/modsign/blacklist.hpp)

/// Merge the accepted entries of `lists` in order (within and across lists).
using modsign::merge_hash_lists;  // public

/// Load a parsed list into `sources` as blacklist_init() does (mark_raw_hash_blacklisted
/// for each string, duplicates kept once), with origins {file, "line N"}.  Errors: EINVAL
/// when the list has problems (the kernel would not have been built with it); the
/// message is the first problem formatted with `file`.
Status load_hash_list(Sources& sources, const std::string& file, const HashList& list);

}  // namespace modsign::blacklist
