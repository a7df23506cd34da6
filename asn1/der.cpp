#include "asn1/der.hpp"

#include <algorithm>

namespace modsign::asn1 {

std::optional<std::size_t> Reader::indefinite_extent(ByteView after_header, std::size_t& fail_at,
                                                     std::string& why) const {
  // Walk the nested elements up to the end-of-contents octets 00 00.
  Reader inner(after_header, rules_, depth_ + 1);
  std::size_t used = 0;
  try {
    for (;;) {
      if (inner.in_.size() < 2) throw DecodeError("missing end-of-contents octets");
      if (inner.in_[0] == 0) {
        if (inner.in_[1] != 0) throw DecodeError("invalid end-of-contents octets");
        return used;
      }
      used += inner.next().tlv.size();
    }
  } catch (const DecodeError& e) {
    fail_at = used;
    why = e.what();
    return std::nullopt;
  }
}

namespace {

// lib/asn1_decoder.c asn1_find_indefinite_length (Linux 7.2.13): the extent of an
// indefinite-length element the decoder takes whole (an ANY, a leaf), measured by a walk
// that is looser than the decoder itself: tags of any length (the high-tag-number form's
// octets are skipped), lengths of up to 7 octets, no nesting limit.  Returns the contents'
// length (the final end-of-contents octets excluded), or nullopt with the kernel's reason.
// (Generated cases pkcs7:...parameters.any-indefinite-long-tag-inside: the kernel loads.)
std::optional<std::size_t> find_indefinite_length(ByteView d, std::string& why) {
  std::size_t dp = 0, level = 1;
  const std::size_t datalen = d.size();
  for (;;) {
    if (datalen - dp < 2) {
      why = datalen == dp ? "missing end-of-contents octets" : "data overrun";
      return std::nullopt;
    }
    const std::uint8_t tag = d[dp++];
    if (tag == 0) {
      if (d[dp++] != 0) {
        why = "invalid end-of-contents octets";
        return std::nullopt;
      }
      if (--level == 0) return dp - 2;
      continue;
    }
    if ((tag & 0x1f) == 0x1f) {
      std::uint8_t more = 0;
      do {
        if (datalen - dp < 2) {
          why = "data overrun";
          return std::nullopt;
        }
        more = d[dp++];
      } while (more & 0x80);
    }
    std::size_t len = d[dp++];
    if (len == 0x80) {
      if (!(tag & 0x20)) {
        why = "indefinite length on a primitive element";
        return std::nullopt;
      }
      ++level;
      continue;
    }
    if (len > 0x7f) {
      const std::size_t n = len - 0x80;
      if (n > sizeof(std::size_t) - 1 || n > datalen - dp) {
        why = n > sizeof(std::size_t) - 1 ? "length field longer than 7 octets" : "data overrun";
        return std::nullopt;
      }
      len = 0;
      for (std::size_t i = 0; i < n; ++i) len = (len << 8) | d[dp++];
    }
    if (len > datalen - dp) {
      why = "data overrun";
      return std::nullopt;
    }
    dp += len;
  }
}

}  // namespace

Reader Reader::enter(std::uint8_t tag, const char* what) {
  check_pending();
  const bool walk_in = rules_ == Rules::ber && in_.size() >= 2 && matches(in_[0], tag) && (in_[0] & 0x20) &&
                       in_[1] == 0x80 && depth_ < kMaxBerDepth;
  if (walk_in) {
    std::size_t fail_at = 0;
    std::string why;
    if (auto used = indefinite_extent(in_.subspan(2), fail_at, why)) {
      Reader r(in_.subspan(2, *used), rules_, depth_ + 1);
      in_ = in_.subspan(2 + *used + 2);
      return r;
    } else {
      Reader r(in_.subspan(2), rules_, depth_ + 1);
      r.pending_ = std::make_shared<const std::string>(std::string(what) + ": " + why);
      r.pending_at_ = r.in_.size() - fail_at;
      // This Reader has no end to continue from: its next use fails the same way.
      pending_ = r.pending_;
      pending_at_ = in_.size();
      return r;
    }
  }
  return Reader(expect(tag, what).content, rules_, depth_ + 1);
}

Element Reader::next() {
  check_pending();
  if (in_.size() < 2) throw DecodeError("truncated element header");
  const std::uint8_t tag = in_[0];
  if ((tag & 0x1f) == 0x1f) throw DecodeError("high tag numbers are not supported");
  std::size_t pos = 2;
  std::size_t len = in_[1];
  if (len == 0x80) {
    if (rules_ == Rules::der) throw DecodeError("indefinite length is not DER");
    if (!(tag & 0x20)) throw DecodeError("indefinite length on a primitive element");
    std::string why;
    auto extent = find_indefinite_length(in_.subspan(2), why);
    if (!extent) throw DecodeError(why);
    const std::size_t used = *extent;
    Element e;
    e.tag = tag;
    e.tlv = in_.subspan(0, 2 + used + 2);
    e.content = in_.subspan(2, used);
    in_ = in_.subspan(2 + used + 2);
    return e;
  }
  if (len & 0x80) {
    const std::size_t n = len & 0x7f;
    if (n > 4) throw DecodeError("length field longer than 4 octets");
    // lib/asn1_decoder.c takes at most 2 length octets (its input is < 64 KiB anyway).
    if (rules_ == Rules::ber && n > 2) throw DecodeError("length field longer than 2 octets");
    if (in_.size() < 2 + n) throw DecodeError("truncated length field");
    len = 0;
    for (std::size_t i = 0; i < n; ++i) len = (len << 8) | in_[2 + i];
    if (rules_ == Rules::der && (in_[2] == 0 || len < 0x80)) throw DecodeError("non-minimal length encoding");
    pos += n;
  }
  if (len > in_.size() - pos) throw DecodeError("element length exceeds the input");
  Element e;
  e.tag = tag;
  e.tlv = in_.subspan(0, pos + len);
  e.content = in_.subspan(pos, len);
  in_ = in_.subspan(pos + len);
  return e;
}

Element Reader::expect(std::uint8_t tag, const char* what) {
  check_pending();
  if (in_.empty()) throw DecodeError(std::string("missing ") + what);
  if (!matches(in_[0], tag)) {
    static constexpr char d[] = "0123456789abcdef";
    std::string got{d[in_[0] >> 4], d[in_[0] & 15]};
    std::string want{d[tag >> 4], d[tag & 15]};
    throw DecodeError(std::string(what) + ": expected tag 0x" + want + ", found 0x" + got);
  }
  try {
    return next();
  } catch (const DecodeError& e) { throw DecodeError(std::string(what) + ": " + e.what()); }
}

bool Reader::maybe(std::uint8_t tag, Element& out) {
  if (!peek(tag)) return false;
  out = next();
  return true;
}

void Reader::finish(const char* what) const {
  check_pending();
  if (!in_.empty()) throw DecodeError(std::string("trailing data after ") + what);
}

void check_name(ByteView name_content, Rules rules) {
  for (Reader rdns(name_content, rules); !rdns.empty();) {
    Reader rdn = rdns.enter(kSet, "RelativeDistinguishedName");
    if (rdn.empty()) throw DecodeError("empty RelativeDistinguishedName");
    while (!rdn.empty()) {
      Reader ava = rdn.enter(kSequence, "AttributeValueAssertion");
      ava.expect(kOid, "attributeType");
      if (ava.empty()) throw DecodeError("missing attributeValue");
      ava.next();
      ava.finish("AttributeValueAssertion");
    }
  }
}

std::uint64_t Reader::read_small_uint(const char* what) {
  Element e = expect(kInteger, what);
  if (e.content.empty()) throw DecodeError(std::string(what) + ": empty INTEGER");
  if (e.content[0] & 0x80) throw DecodeError(std::string(what) + ": negative INTEGER");
  if (e.content.size() > 9 || (e.content.size() == 9 && e.content[0] != 0))
    throw DecodeError(std::string(what) + ": INTEGER too large");
  std::uint64_t v = 0;
  for (auto c : e.content) v = (v << 8) | c;
  return v;
}

Bytes header(std::uint8_t tag, std::size_t len) {
  Bytes h{tag};
  if (len < 0x80) {
    h.push_back(static_cast<std::uint8_t>(len));
  } else {
    std::uint8_t tmp[8];
    int n = 0;
    for (std::size_t l = len; l; l >>= 8) tmp[n++] = static_cast<std::uint8_t>(l & 0xff);
    h.push_back(static_cast<std::uint8_t>(0x80 | n));
    while (n) h.push_back(tmp[--n]);
  }
  return h;
}

Writer& Writer::tlv(std::uint8_t tag, ByteView content) {
  Bytes h = header(tag, content.size());
  buf_.insert(buf_.end(), h.begin(), h.end());
  buf_.insert(buf_.end(), content.begin(), content.end());
  return *this;
}

Writer& Writer::add(std::uint8_t tag, const std::function<void(Writer&)>& body) {
  Writer child;
  body(child);
  return tlv(tag, child.buf_);
}

Writer& Writer::raw(ByteView der) {
  buf_.insert(buf_.end(), der.begin(), der.end());
  return *this;
}

Writer& Writer::integer(std::uint64_t v) {
  Bytes c;
  do {
    c.insert(c.begin(), static_cast<std::uint8_t>(v & 0xff));
    v >>= 8;
  } while (v);
  if (c[0] & 0x80) c.insert(c.begin(), 0);
  return tlv(kInteger, c);
}

Writer& Writer::set_of(std::vector<Bytes> elements) {
  // X.690 §11.6: order by the encodings compared as octet strings, the shorter one
  // padded with trailing zero octets.
  std::sort(elements.begin(), elements.end(), [](const Bytes& a, const Bytes& b) {
    const std::size_t n = std::max(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint8_t x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
      if (x != y) return x < y;
    }
    return false;
  });
  Bytes content;
  for (const auto& e : elements) content.insert(content.end(), e.begin(), e.end());
  return tlv(kSet, content);
}

std::optional<std::int64_t> decode_time(std::uint8_t tag, ByteView v) {
  std::size_t pos = 0;
  auto dd = [&]() -> int {
    if (pos + 2 > v.size() || v[pos] < '0' || v[pos] > '9' || v[pos + 1] < '0' || v[pos + 1] > '9') return -1;
    const int x = (v[pos] - '0') * 10 + (v[pos + 1] - '0');
    pos += 2;
    return x;
  };
  int year;
  if (tag == kUtcTime) {
    if (v.size() != 13) return std::nullopt;
    year = dd();
    if (year < 0) return std::nullopt;
    year += year >= 50 ? 1900 : 2000;
  } else if (tag == kGeneralizedTime) {
    if (v.size() != 15) return std::nullopt;
    const int hi = dd(), lo = dd();
    if (hi < 0 || lo < 0) return std::nullopt;
    year = hi * 100 + lo;
    if (year >= 1950 && year <= 2049) return std::nullopt;  // must have been UTCTime
  } else {
    return std::nullopt;
  }
  const int mon = dd(), day = dd(), hour = dd(), min = dd(), sec = dd();
  if (mon < 0 || day < 0 || hour < 0 || min < 0 || sec < 0) return std::nullopt;
  if (pos >= v.size() || v[pos] != 'Z') return std::nullopt;
  if (year < 1970 || mon < 1 || mon > 12) return std::nullopt;
  static constexpr int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  // 24:00:00 (ISO 8601 midnight) and leap second 60 are allowed, as the kernel allows them.
  if (day < 1 || day > mdays[mon - 1] + (mon == 2 && leap ? 1 : 0) || hour > 24 || min > 59 || sec > 60)
    return std::nullopt;
  // Days from civil (H. Hinnant's algorithm), then mktime64-style seconds.
  const int y = year - (mon <= 2);
  const int era = (y >= 0 ? y : y - 399) / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (mon + (mon > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const std::int64_t days = static_cast<std::int64_t>(era) * 146097 + doe - 719468;
  return days * 86400 + hour * 3600 + min * 60 + sec;
}

std::string oid_to_string(ByteView oid) {
  if (oid.empty() || (oid.back() & 0x80)) return "(invalid OID)";
  std::string s;
  std::uint64_t v = 0;
  bool first = true;
  for (auto c : oid) {
    if (v > (UINT64_MAX >> 7)) return "(invalid OID)";
    v = (v << 7) | (c & 0x7f);
    if (c & 0x80) continue;
    if (first) {
      const std::uint64_t a = v < 40 ? 0 : v < 80 ? 1 : 2;
      s = std::to_string(a) + "." + std::to_string(v - 40 * a);
      first = false;
    } else {
      s += "." + std::to_string(v);
    }
    v = 0;
  }
  return s;
}

}  // namespace modsign::asn1
