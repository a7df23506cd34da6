// modsign's own: json::parse() (common/json.hpp), recursive descent with a depth limit.
#include "common/json.hpp"

#include <unordered_set>

namespace modsign::json {

const Value* Value::find(std::string_view key) const {
  if (kind != Kind::object) return nullptr;
  for (const auto& m : members)
    if (m.key == key) return &m.value;
  return nullptr;
}

std::string Value::str(std::string_view key) const {
  const Value* v = find(key);
  return v && v->kind == Kind::string ? v->text : std::string();
}

namespace {

constexpr int kMaxDepth = 64;
constexpr std::size_t kMaxInput = 16u << 20;

struct Parser {
  std::string_view s;
  std::size_t i = 0;
  std::string error;

  bool fail(const std::string& what) {
    if (error.empty()) error = "JSON byte offset " + std::to_string(i) + ": " + what;
    return false;
  }
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  }
  bool literal(std::string_view word) {
    if (s.substr(i, word.size()) != word) return fail("unexpected character");
    i += word.size();
    return true;
  }
  static void put_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | cp >> 6);
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | cp >> 12);
      out += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | cp >> 18);
      out += static_cast<char>(0x80 | (cp >> 12 & 0x3f));
      out += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  bool hex4(std::uint32_t& v) {
    if (s.size() - i < 4) return fail("truncated \\u escape");
    v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s[i++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<std::uint32_t>(c - 'A' + 10);
      else return fail("bad \\u escape");
    }
    return true;
  }
  bool string(std::string& out) {
    ++i;  // the opening quote
    while (true) {
      if (i >= s.size()) return fail("unterminated string");
      const char c = s[i];
      if (c == '"') {
        ++i;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return fail("control character in a string");
      if (c != '\\') {
        out += c;
        ++i;
        continue;
      }
      if (++i >= s.size()) return fail("unterminated escape");
      const char e = s[i++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          std::uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xd800 && cp < 0xdc00) {  // a high surrogate needs its low half
            std::uint32_t lo = 0;
            if (s.substr(i, 2) != "\\u") return fail("unpaired surrogate");
            i += 2;
            if (!hex4(lo)) return false;
            if (lo < 0xdc00 || lo >= 0xe000) return fail("unpaired surrogate");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          } else if (cp >= 0xdc00 && cp < 0xe000) {
            return fail("unpaired surrogate");
          }
          if (cp == 0) return fail("\\u0000 (a NUL) in a string");
          put_utf8(out, cp);
          break;
        }
        default: --i; return fail("bad escape");
      }
    }
  }
  bool number(Value& v) {
    const std::size_t start = i;
    if (i < s.size() && s[i] == '-') ++i;
    auto digits = [&] {
      const std::size_t d = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      return i > d;
    };
    if (!digits()) return fail("bad number");
    if (i < s.size() && s[i] == '.' && (++i, !digits())) return fail("bad number");
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
      if (!digits()) return fail("bad number");
    }
    v.kind = Value::Kind::number;
    v.text = std::string(s.substr(start, i - start));
    return true;
  }
  bool value(Value& v, int depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than 64");
    ws();
    if (i >= s.size()) return fail("unexpected end of input");
    const char c = s[i];
    if (c == '{') {
      v.kind = Value::Kind::object;
      ++i;
      ws();
      if (i < s.size() && s[i] == '}') return ++i, true;
      std::unordered_set<std::string> keys;
      while (true) {
        ws();
        if (i >= s.size() || s[i] != '"') return fail("expected a member name");
        const std::size_t key_at = i;
        std::string key;
        if (!string(key)) return false;
        if (!keys.insert(key).second) return i = key_at, fail("member \"" + key + "\" given twice");
        ws();
        if (i >= s.size() || s[i] != ':') return fail("expected ':'");
        ++i;
        Value m;
        if (!value(m, depth + 1)) return false;
        v.members.push_back(Member{std::move(key), std::move(m)});
        ws();
        if (i < s.size() && s[i] == ',') {
          ++i;
          continue;
        }
        if (i < s.size() && s[i] == '}') return ++i, true;
        return fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v.kind = Value::Kind::array;
      ++i;
      ws();
      if (i < s.size() && s[i] == ']') return ++i, true;
      while (true) {
        Value m;
        if (!value(m, depth + 1)) return false;
        v.items.push_back(std::move(m));
        ws();
        if (i < s.size() && s[i] == ',') {
          ++i;
          continue;
        }
        if (i < s.size() && s[i] == ']') return ++i, true;
        return fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v.kind = Value::Kind::string;
      return string(v.text);
    }
    if (c == 't') return v.kind = Value::Kind::boolean, v.boolean = true, literal("true");
    if (c == 'f') return v.kind = Value::Kind::boolean, literal("false");
    if (c == 'n') return literal("null");
    if (c == '-' || (c >= '0' && c <= '9')) return number(v);
    return fail("unexpected character");
  }
};

}  // namespace

Result<Value> parse(std::string_view text) {
  if (text.size() > kMaxInput) return make_error(KErr::ebadmsg, "JSON: more than 16 MiB");
  Parser p{text};
  if (text.substr(0, 3) == "\xef\xbb\xbf") p.i = 3;
  Value v;
  if (!p.value(v, 0)) return make_error(KErr::ebadmsg, p.error);
  p.ws();
  if (p.i != text.size()) {
    p.fail("data after the JSON value");
    return make_error(KErr::ebadmsg, p.error);
  }
  return v;
}

}  // namespace modsign::json
