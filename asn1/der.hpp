// modsign — DER writer and bounds-checked DER reader (the model is BoringSSL's CBS/CBB).
//
// Tags are single identifier octets (tag numbers 0..30); that covers every element of
// X.509, PKCS#8 and CMS SignedData.  In DER mode the reader accepts definite, minimal
// lengths only (X.690 §10.1; long form at most 4 length octets).  In BER mode, used by the
// kernel-mirroring PKCS#7 parser, it follows lib/asn1_decoder.c: non-minimal lengths,
// at most 2 length octets, and indefinite lengths on constructed elements (X.690 §8.1.3.6),
// nested at most kMaxBerDepth deep.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace modsign::asn1 {

// Identifier octets used by modsign (X.690 §8.1.2).
inline constexpr std::uint8_t kInteger = 0x02;
inline constexpr std::uint8_t kBitString = 0x03;
inline constexpr std::uint8_t kOctetString = 0x04;
inline constexpr std::uint8_t kNull = 0x05;
inline constexpr std::uint8_t kOid = 0x06;
inline constexpr std::uint8_t kUtf8String = 0x0c;
inline constexpr std::uint8_t kPrintableString = 0x13;
inline constexpr std::uint8_t kUtcTime = 0x17;
inline constexpr std::uint8_t kGeneralizedTime = 0x18;
inline constexpr std::uint8_t kSequence = 0x30;
inline constexpr std::uint8_t kSet = 0x31;
/// Context-specific tag number n, constructed ([n] EXPLICIT or constructed IMPLICIT).
constexpr std::uint8_t context_cons(unsigned n) { return static_cast<std::uint8_t>(0xa0 | n); }
/// Context-specific tag number n, primitive ([n] IMPLICIT of a primitive type).
constexpr std::uint8_t context_prim(unsigned n) { return static_cast<std::uint8_t>(0x80 | n); }

/// Thrown by Reader on malformed or unexpected input; callers at layer boundaries turn it
/// into Error{EBADMSG, what()}.
class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One TLV as found in the input: `tlv` spans identifier, length and contents,
/// `content` only the contents octets.  Both point into the reader's input.
struct Element {
  std::uint8_t tag = 0;
  ByteView tlv;
  ByteView content;
  std::size_t header_len() const { return tlv.size() - content.size(); }
};

/// Which encoding rules a Reader enforces.
enum class Rules { der, ber };
/// Deepest nesting of indefinite-length elements a BER Reader follows.
inline constexpr int kMaxBerDepth = 32;

/// Bounds-checked cursor over DER (or BER) input.  Never reads outside the span it was
/// given; every failure throws DecodeError with the offset-free reason (callers add context).
/// For an indefinite-length element, Element::content excludes and Element::tlv includes
/// the end-of-contents octets.
class Reader {
 public:
  explicit Reader(ByteView in, Rules rules = Rules::der, int depth = 0) : in_(in), rules_(rules), depth_(depth) {}
  Rules rules() const { return rules_; }
  bool empty() const {
    check_pending();
    return in_.empty();
  }
  std::size_t remaining() const {
    check_pending();
    return in_.size();
  }
  ByteView rest() const {
    check_pending();
    return in_;
  }
  /// Identifier octet of the next element, or -1 at the end.
  int peek_tag() const {
    check_pending();
    return in_.empty() ? -1 : in_[0];
  }
  /// In BER mode a primitive identifier is accepted where a constructed one is expected
  /// (lib/asn1_decoder.c compares tags without the constructed bit for constructed
  /// grammar elements), never the reverse.
  bool peek(std::uint8_t tag) const {
    check_pending();
    return !in_.empty() && matches(in_[0], tag);
  }

  /// Next element, whatever its tag.
  Element next();
  /// Next element, which must carry `tag`; `what` names it in the error message.
  Element expect(std::uint8_t tag, const char* what);
  /// Next element if it carries `tag`, else nothing consumed.
  bool maybe(std::uint8_t tag, Element& out);
  /// A Reader (same rules) over the contents of the next element with `tag`.  In BER
  /// mode, an indefinite-length element is walked into as lib/asn1_decoder.c walks into a
  /// constructed element it matches, without looking for its end first: when the walk to
  /// its end-of-contents octets fails, the Reader returned reads the elements before the
  /// failure and throws the failure's DecodeError only when it gets there (so that a
  /// grammar action on an earlier element, e.g. pkcs7_note_signeddata_version, decides
  /// first), and this Reader throws it at its next use.  Found by the mutation campaign
  /// (signeddata.length.indefinite + signeddata.version.length.plus-one).
  Reader enter(std::uint8_t tag, const char* what);
  /// A Reader (same rules) over the contents of `e`.
  Reader inside(const Element& e) const { return Reader(e.content, rules_, depth_ + 1); }
  /// Throws unless every byte was consumed.
  void finish(const char* what) const;

  /// Non-negative INTEGER that fits 64 bits (e.g. a version).
  std::uint64_t read_small_uint(const char* what);

 private:
  bool matches(std::uint8_t got, std::uint8_t want) const {
    return got == want || (rules_ == Rules::ber && (want & 0x20) && (got | 0x20) == want);
  }
  // The walk over an indefinite-length element's contents (after its header) to its
  // end-of-contents octets: the contents' length, or nullopt with the offset and reason
  // of the failure.
  std::optional<std::size_t> indefinite_extent(ByteView after_header, std::size_t& fail_at, std::string& why) const;
  void check_pending() const {
    if (pending_ && in_.size() <= pending_at_) throw DecodeError(*pending_);
  }
  ByteView in_;
  Rules rules_ = Rules::der;
  int depth_ = 0;
  // A failure met past this point (enter() of an indefinite-length element): thrown once
  // no more than pending_at_ bytes are left.
  std::shared_ptr<const std::string> pending_;
  std::size_t pending_at_ = 0;
};

/// Appends DER to a growing buffer.  Nested elements are written through `add(tag, fn)`,
/// where `fn` fills a child Writer whose bytes become the element's contents.
class Writer {
 public:
  /// Append a complete TLV with the given contents.
  Writer& tlv(std::uint8_t tag, ByteView content);
  /// Append a constructed (or any) element whose contents `body` writes.
  Writer& add(std::uint8_t tag, const std::function<void(Writer&)>& body);
  /// Append bytes that are already DER.
  Writer& raw(ByteView der);
  /// INTEGER from an unsigned value (minimal two's complement encoding).
  Writer& integer(std::uint64_t v);
  /// OBJECT IDENTIFIER from its DER contents octets.
  Writer& oid(ByteView oid_content) { return tlv(kOid, oid_content); }
  Writer& null() { return tlv(kNull, {}); }
  Writer& octet_string(ByteView b) { return tlv(kOctetString, b); }
  /// SET OF the given complete DER elements, sorted as X.690 §11.6 requires.
  Writer& set_of(std::vector<Bytes> elements);

  const Bytes& bytes() const& { return buf_; }
  Bytes take() { return std::move(buf_); }

 private:
  Bytes buf_;
};

/// Identifier+length octets for an element of `len` contents octets (DER, definite).
Bytes header(std::uint8_t tag, std::size_t len);

/// Seconds since the epoch for a UTCTime (YYMMDDHHMMSSZ; YY < 50 means 20YY) or
/// GeneralizedTime (YYYYMMDDHHMMSSZ) value, checked exactly as the kernel's
/// x509_decode_time() (crypto/asymmetric_keys/x509_cert_parser.c, 7.2): exact length,
/// digits, 'Z'; GeneralizedTime years 1950-2049 and years before 1970 refused; hour 24
/// and second 60 allowed.  nullopt if invalid.
std::optional<std::int64_t> decode_time(std::uint8_t tag, ByteView content);

/// Check the structure of an X.501 Name from its contents octets, as the kernel's
/// pkcs7.asn1 and x509.asn1 grammars decode it although only the raw bytes are kept:
/// SEQUENCE OF RelativeDistinguishedName, each a non-empty SET OF AttributeValueAssertion
/// { attributeType OBJECT IDENTIFIER, attributeValue ANY (any single element) }.  The
/// attribute values are not interpreted (no string-type or UTF-8 checks: the kernel
/// copies them).  An empty Name passes (callers decide).  Throws DecodeError naming the
/// element ("RelativeDistinguishedName: expected tag 0x31, found 0x38").
void check_name(ByteView name_content, Rules rules);

/// Dotted-decimal text of an OID's contents octets ("2.16.840.1.101.3.4.3.18");
/// "(invalid OID)" if the encoding is malformed.
std::string oid_to_string(ByteView oid_content);

}  // namespace modsign::asn1
