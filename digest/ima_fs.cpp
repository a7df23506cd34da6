// mirrors security/integrity/ima/ima_fs.c ima_measurements_show (the binary measurement list, in the kernel's byte
// order unless ima_canonical_fmt) and, for the "ima" template hash, ima_crypto.c ima_calc_field_array_hash,
// Linux 7.2.13
#include "digest/ima_fs.hpp"

#include <algorithm>
#include <memory>
#include <optional>

#include "common/file.hpp"
#include "digest/ima_policy.hpp"

namespace modsign::digest {

bool ima_list_big_endian(const cms::KernelModel& profile) {
  // default_canonical_fmt_setup: ima_canonical_fmt is set only #ifdef __BIG_ENDIAN, and
  // ima_measurements_show, ima_show_template_data_binary and ima_calc_field_array_hash_tfm
  // write "!ima_canonical_fmt ? len : cpu_to_le32(len)".
  return profile.big_endian && !profile.ima_canonical_fmt;
}

void put_ima_u32(Bytes& out, std::uint32_t v, bool big_endian) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * (big_endian ? 3 - i : i))));
}

std::uint32_t get_ima_u32(ByteView b, std::size_t off, bool big_endian) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(b[off + i]) << (8 * (big_endian ? 3 - i : i));
  return v;
}

namespace {
// The n / n-ng field (ima_template_lib.c ima_eventname_init / ima_eventname_ng_init): a
// NUL-terminated name; shown without the NUL.
std::string event_name(const MeasurementRecord& r) {
  ByteView f;
  if (r.template_name == "ima") {
    f = ByteView(r.data).subspan(24);
  } else if (r.template_name == "ima-ng" || r.template_name == "ima-sig" || r.template_name == "ima-modsig" ||
             r.template_name == "ima-buf" || r.template_name == "ima-ngv2" || r.template_name == "ima-sigv2") {
    std::size_t q = 0;
    if (r.data.size() < 4) return "";
    const bool be = r.byte_order == ByteOrder::big;
    q = 4 + get_ima_u32(r.data, 0, be);  // d-ng / d-ngv2
    if (r.data.size() - q < 4) return "";
    f = ByteView(r.data).subspan(q + 4, get_ima_u32(r.data, q, be));
  }
  std::string name(f.begin(), f.end());
  if (!name.empty() && name.back() == '\0') name.pop_back();
  return name;
}
}  // namespace

namespace {

/// Where the records come from: a list in memory, or a file read in pieces.
class Source {
 public:
  virtual ~Source() = default;
  virtual std::uint64_t size() const = 0;
  /// The `n` bytes at `off` (the caller checked that they are inside the list); valid
  /// until the next call.
  virtual ByteView at(std::uint64_t off, std::size_t n) = 0;
};

class MemorySource final : public Source {
 public:
  explicit MemorySource(ByteView list) : list_(list) {}
  std::uint64_t size() const override { return list_.size(); }
  ByteView at(std::uint64_t off, std::size_t n) override { return list_.subspan(static_cast<std::size_t>(off), n); }

 private:
  ByteView list_;
};

/// A file read in pieces of 1 MiB (or one record, when it is larger).
class FileSource final : public Source {
 public:
  // securityfs shows binary_runtime_measurements with size 0 (a seq_file): such a file is
  // read to its end at once; a regular file in 1 MiB pieces as the parser goes.
  explicit FileSource(const std::string& path) : f_(path) {
    if (f_.size() == 0) {
      buf_ = f_.read_to_end(kMaxModuleSize);
      whole_ = true;
    }
  }
  std::uint64_t size() const override { return whole_ ? buf_.size() : f_.size(); }
  ByteView at(std::uint64_t off, std::size_t n) override {
    if (whole_) return ByteView(buf_).subspan(static_cast<std::size_t>(off), n);
    if (off < buf_off_ || off + n > buf_off_ + buf_.size()) {
      constexpr std::size_t kPiece = std::size_t{1} << 20;
      const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(std::max(n, kPiece), f_.size() - off));
      f_.read_at(off, len, buf_);
      buf_off_ = off;
    }
    return ByteView(buf_).subspan(static_cast<std::size_t>(off - buf_off_), n);
  }

 private:
  FileReader f_;
  Bytes buf_;
  std::uint64_t buf_off_ = 0;
  bool whole_ = false;
};

/// The record at `off` (the `index`th, from 1), `off` moved past it; nullopt at the end.
/// `order` unset: worked out from this record's template name length and kept for the next.
Result<std::optional<MeasurementRecord>> parse_one(Source& s, std::uint64_t& off, std::uint64_t index,
                                                   crypto::HashAlgo bank, std::optional<ByteOrder>& order) {
  const std::size_t dsize = crypto::hash_info(bank).size;
  const std::uint64_t total = s.size();
  if (off >= total) return std::optional<MeasurementRecord>();
  MeasurementRecord r;
  r.offset = off;
  std::uint64_t p = off;
  auto bad = [&](const std::string& what) {
    return make_error(KErr::ebadmsg,
                      "record " + std::to_string(index) + " at offset " + std::to_string(off) + ": " + what);
  };
  auto need = [&](std::uint64_t n) { return total - p >= n; };
  // A length or PCR as read, and the byte order it was read in (r.byte_order, once known).
  auto read_as = [&](std::uint64_t v) {
    return std::to_string(v) + " (read " + std::string(byte_order_name(r.byte_order)) + ")";
  };
  if (!order && need(4 + dsize + 4)) {
    // A name of 1-255 bytes read in the other order is 2^24 or more: at most one order fits.
    const std::uint32_t le = get_ima_u32(s.at(p + 4 + dsize, 4), 0, false);
    const std::uint32_t be = get_ima_u32(s.at(p + 4 + dsize, 4), 0, true);
    if ((le == 0 || le > 255) && (be == 0 || be > 255))
      return bad("template name length 0x" + to_hex(s.at(p + 4 + dsize, 4)) +
                 " (as stored) is 1-255 in neither byte order (not a binary measurement list with " +
                 std::to_string(dsize) + "-byte " + std::string(crypto::hash_info(bank).name) + " template hashes)");
    order = le >= 1 && le <= 255 ? ByteOrder::little : ByteOrder::big;
  }
  const bool be = order == ByteOrder::big;
  r.byte_order = be ? ByteOrder::big : ByteOrder::little;
  auto u32 = [&](std::uint64_t at) { return get_ima_u32(s.at(at, 4), 0, be); };
  auto bytes = [&](std::uint64_t at, std::size_t n) {
    const ByteView v = s.at(at, n);
    return Bytes(v.begin(), v.end());
  };
  if (!need(4 + dsize + 4)) return bad("truncated record header");
  r.pcr = u32(p);
  p += 4;
  r.digest = bytes(p, dsize);
  p += dsize;
  const std::uint32_t name_len = u32(p);
  p += 4;
  if (name_len == 0 || name_len > 255) return bad("template name length " + read_as(name_len));
  // After the name length, which tells a list read in the wrong order first.
  if (r.pcr >= kImaPcrLimit)
    return bad("PCR " + read_as(r.pcr) +
               ": no kernel measures into it (a policy's pcr= is 0-63, ima_policy.c INVALID_PCR)");
  if (!need(name_len)) return bad("template name beyond the end of the list");
  const Bytes name = bytes(p, name_len);
  r.template_name.assign(name.begin(), name.end());
  p += name_len;
  if (r.template_name == "ima") {
    // Legacy: 20-byte digest, u32 name length, name; no total length.
    if (!need(20 + 4)) return bad("truncated ima template data");
    const std::uint32_t n = u32(p + 20);
    if (n > 255 || !need(24 + static_cast<std::uint64_t>(n)))
      return bad("ima template name beyond the end of the list");
    r.data = bytes(p, 24 + n);
    p += 24 + n;
  } else {
    if (!need(4)) return bad("truncated template data length");
    const std::uint32_t len = u32(p);
    p += 4;
    if (!need(len)) return bad("template data length " + read_as(len) + " beyond the end of the list");
    r.data = bytes(p, len);
    p += len;
    // Every field's length must fit inside the template data.
    for (std::size_t q = 0; q < r.data.size();) {
      if (r.data.size() - q < 4) return bad("truncated field length in template data");
      const std::uint32_t fl = get_ima_u32(r.data, q, be);
      if (r.data.size() - q - 4 < fl) return bad("field length " + read_as(fl) + " beyond the template data");
      q += 4 + fl;
    }
  }
  r.file_name = event_name(r);
  r.violation = std::all_of(r.digest.begin(), r.digest.end(), [](std::uint8_t c) { return c == 0; });
  if (!r.violation) {
    if (r.template_name == "ima") {
      // SHA-1 over the digest and the name padded to 256 bytes (ima_calc_field_array_hash).
      Bytes buf(r.data.begin(), r.data.begin() + 20);
      Bytes padded(r.data.begin() + 24, r.data.end());
      padded.resize(256, 0);
      buf.insert(buf.end(), padded.begin(), padded.end());
      r.recomputed = crypto::digest(bank, buf);
    } else {
      r.recomputed = crypto::digest(bank, r.data);
    }
  }
  off = p;
  return std::optional<MeasurementRecord>(std::move(r));
}

}  // namespace

Result<std::vector<MeasurementRecord>> parse_measurement_list(ByteView list, crypto::HashAlgo bank,
                                                              std::optional<ByteOrder> order) {
  MemorySource src(list);
  std::vector<MeasurementRecord> out;
  for (std::uint64_t off = 0;;) {
    auto r = parse_one(src, off, out.size() + 1, bank, order);
    if (!r) return r.error();
    if (!*r) return out;
    out.push_back(std::move(**r));
  }
}

struct MeasurementListReader::Impl {
  Impl(const std::string& path, crypto::HashAlgo b, std::optional<ByteOrder> o) : src(path), bank(b), order(o) {}
  FileSource src;
  crypto::HashAlgo bank;
  std::optional<ByteOrder> order;
  std::uint64_t off = 0, index = 0;
};

MeasurementListReader::MeasurementListReader(const std::string& path, crypto::HashAlgo bank,
                                             std::optional<ByteOrder> order)
    : impl_(std::make_unique<Impl>(path, bank, order)) {}
MeasurementListReader::~MeasurementListReader() = default;

Result<std::optional<MeasurementRecord>> MeasurementListReader::next() {
  return parse_one(impl_->src, impl_->off, ++impl_->index, impl_->bank, impl_->order);
}

std::optional<ByteOrder> MeasurementListReader::byte_order() const { return impl_->order; }

}  // namespace modsign::digest
