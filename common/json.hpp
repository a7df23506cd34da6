// modsign's own: a small, bounds-checked JSON (RFC 8259) reader for the data files modsign
// imports (Microsoft's dbx_info_msft_*.json).  The library has no JSON dependency; this
// reader builds a plain tree, refuses nesting deeper than 64 and inputs over 16 MiB, and
// keeps strings as UTF-8 (\uXXXX escapes, surrogate pairs included, are decoded).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace modsign::json {

struct Member;

struct Value {
  enum class Kind { null, boolean, number, string, array, object } kind = Kind::null;
  bool boolean = false;
  std::string text;             ///< string contents, or a number's literal text
  std::vector<Value> items;     ///< array elements
  std::vector<Member> members;  ///< object members in order

  bool is(Kind k) const { return kind == k; }
  /// The first member named `key` of an object, nullptr when absent or not an object.
  const Value* find(std::string_view key) const;
  /// find(key)'s string, or "" when it is absent or not a string.
  std::string str(std::string_view key) const;
};

/// One member of an object.
struct Member {
  std::string key;
  Value value;
};

/// Parse one JSON text (whitespace around it allowed; a UTF-8 BOM is skipped).  Errors
/// (EBADMSG): "JSON byte offset N: <what>" for a syntax error, nesting deeper than 64,
/// a control character in a string, a bad escape, a \u0000 (NUL) in a string or member
/// name ("\u0000 (a NUL) in a string"), an object naming a member twice ("member \"K\"
/// given twice": RFC 8259 §4 leaves the choice to the reader, and jq and Python take the
/// last where a first-wins reader would import another list), or trailing data; "JSON:
/// more than 16 MiB" for a larger input.  The CLI's JSON-lines reader (manifests,
/// signatures) refuses the same things with the same words.
Result<Value> parse(std::string_view text);

}  // namespace modsign::json
