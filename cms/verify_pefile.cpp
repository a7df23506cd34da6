// mirrors crypto/asymmetric_keys/verify_pefile.c pefile_parse_binary, pefile_strip_sig_wrapper, pefile_compare_shdrs,
// pefile_digest_pe_contents, pefile_digest_pe, verify_pefile_signature, Linux 7.2.13
#include "cms/verify_pefile.hpp"

#include <cstring>
#include <vector>

#include "cms/mscode_parser.hpp"
#include "cms/public_key.hpp"

namespace modsign::cms {

namespace {

// Sizes of the kernel's structs (include/linux/pe.h).
constexpr std::uint32_t kMzHdr = 64, kPeHdr = 24, kPe32Opt = 96, kPe32PlusOpt = 112;
constexpr std::uint32_t kDataDirent = 8, kSectionHeader = 40, kWinCertificate = 8;
constexpr std::uint32_t kCertsDirentInDirectory = 4 * kDataDirent;  // &ddir->certs

std::uint16_t le16(ByteView b, std::size_t o) { return static_cast<std::uint16_t>(b[o] | (b[o + 1] << 8)); }
std::uint32_t le32(ByteView b, std::size_t o) {
  return static_cast<std::uint32_t>(b[o]) | (static_cast<std::uint32_t>(b[o + 1]) << 8) |
         (static_cast<std::uint32_t>(b[o + 2]) << 16) | (static_cast<std::uint32_t>(b[o + 3]) << 24);
}

Error libbad(const std::string& why) { return Error{KErr::elibbad, "PEFILE: " + why}; }

/// chkaddr(base, x, s) of pefile_parse_binary.
bool chkaddr(std::uint64_t base, std::uint64_t x, std::uint64_t s, std::uint64_t datalen) {
  return !(x < base || s >= datalen || x > datalen - s);
}

struct SectionView {
  std::uint32_t offset;  // of the 40-byte header in the file
  std::uint32_t virtual_size, virtual_address, raw_data_size, data_addr;
};

/// strcmp() of the two NUL-terminated names starting at the headers' Name fields (the
/// kernel does not stop at 8 bytes: an unterminated name runs into the following fields).
int name_cmp(ByteView pe, std::uint32_t a, std::uint32_t b) {
  for (std::size_t i = 0;; ++i) {
    const int ca = a + i < pe.size() ? pe[a + i] : 0, cb = b + i < pe.size() ? pe[b + i] : 0;
    if (ca != cb) return ca < cb ? -1 : 1;
    if (ca == 0) return 0;
  }
}

int pefile_compare_shdrs(ByteView pe, const SectionView& a, const SectionView& b) {
  if (a.data_addr != b.data_addr) return a.data_addr > b.data_addr ? 1 : -1;
  if (a.virtual_address != b.virtual_address) return a.virtual_address > b.virtual_address ? 1 : -1;
  if (int rc = name_cmp(pe, a.offset, b.offset); rc != 0) return rc;
  if (a.virtual_size != b.virtual_size) return a.virtual_size > b.virtual_size ? 1 : -1;
  if (a.raw_data_size != b.raw_data_size) return a.raw_data_size > b.raw_data_size ? 1 : -1;
  return 0;
}

}  // namespace

Status pefile_parse_binary(ByteView pe, PefileContext& ctx) {
  const std::uint64_t datalen = pe.size();
  if (!chkaddr(0, 0, kMzHdr, datalen)) return libbad("no room for the MS-DOS header");
  if (le16(pe, 0) != 0x5a4d) return libbad("no MZ signature");
  const std::uint32_t peaddr = le32(pe, 0x3c);
  if (!chkaddr(kMzHdr, peaddr, kPeHdr, datalen)) return libbad("PE header offset out of range");
  if (le32(pe, peaddr) != 0x00004550) return libbad("no PE signature");
  const std::uint16_t sections = le16(pe, peaddr + 6);
  std::uint64_t cursor = std::uint64_t{peaddr} + kPeHdr;
  if (!chkaddr(0, cursor, 2, datalen)) return libbad("no room for the optional header magic");
  const std::uint16_t magic = le16(pe, cursor);
  if (magic == 0x10b || magic == 0x20b) {
    const std::uint32_t size = magic == 0x10b ? kPe32Opt : kPe32PlusOpt;
    if (!chkaddr(0, cursor, size, datalen)) return libbad("optional header beyond the image");
    ctx.image_checksum_offset = static_cast<std::uint32_t>(cursor + 64);
    ctx.header_size = le32(pe, cursor + 60);
    ctx.n_data_dirents = le32(pe, cursor + size - 4);
    cursor += size;
  } else {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04x", magic);
    return libbad(std::string("Unknown PEOPT magic = ") + buf);
  }
  if (cursor >= ctx.header_size || ctx.header_size >= datalen)
    return libbad("SizeOfHeaders " + std::to_string(ctx.header_size) + " out of range");
  if (ctx.n_data_dirents > (ctx.header_size - cursor) / kDataDirent)
    return libbad("NumberOfRvaAndSizes " + std::to_string(ctx.n_data_dirents) + " does not fit in SizeOfHeaders");
  const std::uint64_t ddir = cursor;
  cursor += std::uint64_t{kDataDirent} * ctx.n_data_dirents;
  ctx.cert_dirent_offset = static_cast<std::uint32_t>(ddir + kCertsDirentInDirectory);
  if (ctx.cert_dirent_offset + std::uint64_t{kDataDirent} > datalen)
    return libbad("Certificate Table entry beyond the image");
  const std::uint32_t va = le32(pe, ctx.cert_dirent_offset), size = le32(pe, ctx.cert_dirent_offset + 4);
  ctx.certs_size = size;
  if (!va || !size) return Error{KErr::enodata, "PEFILE: Unsigned PE binary"};
  if (!chkaddr(ctx.header_size, va, size, datalen)) return libbad("Certificate Table out of range");
  ctx.sig_offset = va;
  ctx.sig_len = size;
  ctx.n_sections = sections;
  if (ctx.n_sections > (ctx.header_size - cursor) / kSectionHeader)
    return libbad("NumberOfSections " + std::to_string(sections) + " does not fit in SizeOfHeaders");
  ctx.secs_offset = static_cast<std::uint32_t>(cursor);
  return ok_status();
}

Status pefile_strip_sig_wrapper(ByteView pe, PefileContext& ctx) {
  if (ctx.sig_len < kWinCertificate) return libbad("Signature wrapper too short");
  const std::uint32_t length = le32(pe, ctx.sig_offset);
  const std::uint16_t revision = le16(pe, ctx.sig_offset + 4), cert_type = le16(pe, ctx.sig_offset + 6);
  if (length > ctx.sig_len)
    return libbad("Signature wrapper bigger than sig len (" + std::to_string(length) + " > " +
                  std::to_string(ctx.sig_len) + ")");
  if (revision != 0x0200) return Error{KErr::enotsupp, "PEFILE: Signature is not revision 2.0"};
  if (cert_type != 0x0002) return Error{KErr::enotsupp, "PEFILE: Signature certificate type is not PKCS"};
  ctx.sig_len = length - kWinCertificate;
  ctx.sig_offset += kWinCertificate;
  if (ctx.sig_len < 4) return Error{KErr::ekeyrejected, "PEFILE: Signature data missing"};
  const ByteView p = pe.subspan(ctx.sig_offset);
  if (p[0] != 0x30) return libbad("Signature data not PKCS#7");
  std::uint32_t len = 0;
  if (p[1] < 0x80) len = p[1] + 2u;
  else if (p[1] == 0x80) return ok_status();  // indefinite length: the whole wrapper
  else if (p[1] == 0x81) len = p[2] + 3u;
  else if (p[1] == 0x82) len = ((static_cast<std::uint32_t>(p[2]) << 8) | p[3]) + 4u;
  else return Error{KErr::emsgsize, "PEFILE: PKCS#7 length of " + std::to_string(p[1] - 0x80) + " octets"};
  if (len > ctx.sig_len) return libbad("Signature data not PKCS#7");
  ctx.sig_len = len;  // there may be padding
  return ok_status();
}

Status pefile_digest_pe(ByteView pe, const PefileContext& ctx, Bytes* computed) {
  const auto h = hash_of(ctx.digest_algo);
  if (!h) return Error{KErr::enopkg, "PEFILE: no " + ctx.digest_algo + " digest"};
  const std::size_t digest_size = crypto::hash_info(*h).size;
  if (digest_size != ctx.digest.size())
    return Error{KErr::ebadmsg, "PEFILE: Digest size mismatch (" + std::to_string(digest_size) +
                                    " != " + std::to_string(ctx.digest.size()) + ")"};
  // The header runs: the kernel hashes them unchecked; modsign refuses what would leave the image.
  const std::uint64_t tmp1 = std::uint64_t{ctx.image_checksum_offset} + 4,
                      tmp2 = std::uint64_t{ctx.cert_dirent_offset} + kDataDirent;
  if (ctx.cert_dirent_offset < tmp1 || ctx.header_size < tmp2) return libbad("header runs out of order");
  std::vector<std::pair<std::uint64_t, std::uint64_t>> runs = {
      {0, ctx.image_checksum_offset}, {tmp1, ctx.cert_dirent_offset - tmp1}, {tmp2, ctx.header_size - tmp2}};
  std::vector<SectionView> secs(ctx.n_sections);
  for (std::uint32_t i = 0; i < ctx.n_sections; ++i) {
    const std::uint32_t o = ctx.secs_offset + i * kSectionHeader;
    secs[i] = {o, le32(pe, o + 8), le32(pe, o + 12), le32(pe, o + 16), le32(pe, o + 20)};
  }
  // The insertion sort of pefile_digest_pe_contents.
  std::vector<std::uint32_t> canon(ctx.n_sections);
  for (std::uint32_t loop = 1; loop < ctx.n_sections; ++loop) {
    std::uint32_t i = 0;
    for (; i < loop; ++i)
      if (pefile_compare_shdrs(pe, secs[canon[i]], secs[loop]) > 0) {
        std::memmove(&canon[i + 1], &canon[i], (loop - i) * sizeof(canon[0]));
        break;
      }
    canon[i] = loop;
  }
  std::uint32_t hashed_bytes = ctx.header_size;  // unsigned int, as in the kernel
  for (std::uint32_t loop = 0; loop < ctx.n_sections; ++loop) {
    const SectionView& s = secs[canon[loop]];
    if (s.raw_data_size == 0) continue;
    if (std::uint64_t{s.data_addr} + s.raw_data_size > pe.size())
      return libbad("section raw data at " + std::to_string(s.data_addr) + " beyond the image");
    runs.emplace_back(s.data_addr, s.raw_data_size);
    hashed_bytes += s.raw_data_size;
  }
  const std::uint32_t pelen = static_cast<std::uint32_t>(pe.size());
  if (pelen > hashed_bytes) {
    const std::uint32_t tmp = hashed_bytes + ctx.certs_size;
    if (tmp <= hashed_bytes || pelen < tmp) return libbad("Certificate Table does not fit after the hashed bytes");
    runs.emplace_back(hashed_bytes, pelen - tmp);
  }
  crypto::Hasher hasher(*h);
  for (const auto& [off, len] : runs) hasher.update(pe.subspan(off, len));
  const Bytes digest = hasher.final();
  if (computed) *computed = digest;
  if (digest != ctx.digest) return Error{KErr::ekeyrejected, "PEFILE: Digest mismatch"};
  return ok_status();
}

PefileReport verify_pefile_signature(ByteView pe, const Keyring& keyring, const KernelModel& profile,
                                     crypto::Backend backend) {
  PefileReport rep;
  auto fail = [&](const Error& e) {
    rep.pkcs7.err = e.code;
    rep.pkcs7.reason = e.message;
    return rep;
  };
  if (auto st = pefile_parse_binary(pe, rep.ctx); !st) return fail(st.error());
  if (auto st = pefile_strip_sig_wrapper(pe, rep.ctx); !st) return fail(st.error());
  PefileContext& ctx = rep.ctx;
  rep.pkcs7 = verify_with(
      pe.subspan(ctx.sig_offset, ctx.sig_len), keyring, Usage::kexec_pe, profile, backend,
      [](Pkcs7Message&) { return ok_status(); },  // data == NULL: the content is embedded
      [&](Pkcs7Message& m) -> Status {            // pkcs7_get_content_data, then mscode_parse
        if (!m.data) return Error{KErr::enodata, "PKCS#7 message does not contain data"};
        Bytes tlv = m.data_header;
        tlv.insert(tlv.end(), m.data->begin(), m.data->end());
        return mscode_parse(ctx, tlv, profile);
      });
  if (rep.pkcs7.err != KErr::none) return rep;
  if (auto st = pefile_digest_pe(pe, ctx, &rep.computed); !st) {
    rep.pkcs7.err = st.error().code;
    rep.pkcs7.reason = st.error().message;
  }
  return rep;
}

}  // namespace modsign::cms
