// mirrors security/integrity/ima/ima_fs.c ima_measurements_show (the binary measurement list) and, for the "ima" template hash, ima_crypto.c ima_calc_field_array_hash, Linux 7.2.13
#include "digest/ima_fs.hpp"

#include <algorithm>

namespace modsign::digest {

namespace {
std::uint32_t get_u32le(ByteView b, std::size_t off) {
  return static_cast<std::uint32_t>(b[off]) | static_cast<std::uint32_t>(b[off + 1]) << 8 |
         static_cast<std::uint32_t>(b[off + 2]) << 16 | static_cast<std::uint32_t>(b[off + 3]) << 24;
}

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
    q = 4 + get_u32le(r.data, 0);  // d-ng / d-ngv2
    if (r.data.size() - q < 4) return "";
    f = ByteView(r.data).subspan(q + 4, get_u32le(r.data, q));
  }
  std::string name(f.begin(), f.end());
  if (!name.empty() && name.back() == '\0') name.pop_back();
  return name;
}
}  // namespace

Result<std::vector<MeasurementRecord>> parse_measurement_list(ByteView list, crypto::HashAlgo bank) {
  const std::size_t dsize = crypto::hash_info(bank).size;
  std::vector<MeasurementRecord> out;
  std::size_t off = 0;
  auto bad = [&](const std::string& what) {
    return make_error(KErr::ebadmsg, "record " + std::to_string(out.size() + 1) + " at offset " + std::to_string(off) +
                                         ": " + what);
  };
  while (off < list.size()) {
    MeasurementRecord r;
    r.offset = off;
    std::size_t p = off;
    auto need = [&](std::size_t n) { return list.size() - p >= n; };
    if (!need(4 + dsize + 4)) return bad("truncated record header");
    r.pcr = get_u32le(list, p);
    p += 4;
    r.digest.assign(list.begin() + static_cast<std::ptrdiff_t>(p), list.begin() + static_cast<std::ptrdiff_t>(p + dsize));
    p += dsize;
    const std::uint32_t name_len = get_u32le(list, p);
    p += 4;
    if (name_len == 0 || name_len > 255) return bad("template name length " + std::to_string(name_len));
    if (!need(name_len)) return bad("template name beyond the end of the list");
    r.template_name.assign(list.begin() + static_cast<std::ptrdiff_t>(p), list.begin() + static_cast<std::ptrdiff_t>(p + name_len));
    p += name_len;
    if (r.template_name == "ima") {
      // Legacy: 20-byte digest, u32 name length, name; no total length.
      if (!need(20 + 4)) return bad("truncated ima template data");
      const std::uint32_t n = get_u32le(list, p + 20);
      if (n > 255 || !need(24 + static_cast<std::size_t>(n))) return bad("ima template name beyond the end of the list");
      r.data.assign(list.begin() + static_cast<std::ptrdiff_t>(p), list.begin() + static_cast<std::ptrdiff_t>(p + 24 + n));
      p += 24 + n;
    } else {
      if (!need(4)) return bad("truncated template data length");
      const std::uint32_t len = get_u32le(list, p);
      p += 4;
      if (!need(len)) return bad("template data length " + std::to_string(len) + " beyond the end of the list");
      r.data.assign(list.begin() + static_cast<std::ptrdiff_t>(p), list.begin() + static_cast<std::ptrdiff_t>(p + len));
      p += len;
      // Every field's length must fit inside the template data.
      for (std::size_t q = 0; q < r.data.size();) {
        if (r.data.size() - q < 4) return bad("truncated field length in template data");
        const std::uint32_t fl = get_u32le(r.data, q);
        if (r.data.size() - q - 4 < fl) return bad("field length " + std::to_string(fl) + " beyond the template data");
        q += 4 + fl;
      }
    }
    r.file_name = event_name(r);
    r.violation = std::all_of(r.digest.begin(), r.digest.end(), [](std::uint8_t c) { return c == 0; });
    if (!r.violation) {
      if (r.template_name == "ima") {
        // SHA-1 over the digest and the name padded to 256 bytes (ima_calc_field_array_hash).
        Bytes buf(r.data.begin(), r.data.begin() + 20);
        Bytes name(r.data.begin() + 24, r.data.end());
        name.resize(256, 0);
        buf.insert(buf.end(), name.begin(), name.end());
        r.recomputed = crypto::digest(bank, buf);
      } else {
        r.recomputed = crypto::digest(bank, r.data);
      }
    }
    out.push_back(std::move(r));
    off = p;
  }
  return out;
}

}  // namespace modsign::digest
