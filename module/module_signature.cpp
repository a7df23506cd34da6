// mirrors kernel/module_signature.c mod_check_sig and include/linux/module_signature.h struct module_signature,
// Linux 7.2.13
#include "module/module_signature.hpp"

#include <algorithm>
#include <cstring>

namespace modsign::module {

Bytes encode_module_signature(std::uint32_t sig_len) {
  Bytes b(kModuleSignatureSize, 0);
  b[2] = kIdTypePkcs7;
  b[8] = static_cast<std::uint8_t>(sig_len >> 24);
  b[9] = static_cast<std::uint8_t>(sig_len >> 16);
  b[10] = static_cast<std::uint8_t>(sig_len >> 8);
  b[11] = static_cast<std::uint8_t>(sig_len);
  return b;
}

Status check_signature_present(const SplitModule& s) {
  if (s.cms.empty()) return make_error(KErr::ebadmsg, "the appended signature is empty (sig_len 0)");
  return ok_status();
}

bool has_marker(ByteView file) {
  return file.size() > kMarker.size() &&
         std::memcmp(file.data() + file.size() - kMarker.size(), kMarker.data(), kMarker.size()) == 0;
}

Result<TrailerInfo> parse_tail(ByteView tail, std::uint64_t file_size) {
  const std::size_t marker = kMarker.size();
  if (file_size <= marker || tail.size() < marker ||
      std::memcmp(tail.data() + tail.size() - marker, kMarker.data(), marker) != 0)
    return make_error(KErr::enodata, "unsigned module (no signature marker)");
  const std::uint64_t modlen = file_size - marker;
  if (modlen <= kModuleSignatureSize || tail.size() < marker + kModuleSignatureSize)
    return make_error(KErr::ebadmsg, "module too short for struct module_signature");
  const std::uint8_t* ms = tail.data() + tail.size() - marker - kModuleSignatureSize;
  const std::uint32_t sig_len = static_cast<std::uint32_t>(ms[8]) << 24 | static_cast<std::uint32_t>(ms[9]) << 16 |
                                static_cast<std::uint32_t>(ms[10]) << 8 | ms[11];
  // mod_check_sig(): length first, then type, then the legacy fields.
  if (sig_len >= modlen - kModuleSignatureSize)
    return make_error(KErr::ebadmsg, "signature length " + std::to_string(sig_len) + " does not fit in the " +
                                         std::to_string(modlen - kModuleSignatureSize) + " bytes before the trailer");
  if (ms[2] != kIdTypePkcs7)
    return make_error(KErr::enopkg, "not signed with expected PKCS#7 message (id_type " + std::to_string(ms[2]) + ")");
  if (ms[0] || ms[1] || ms[3] || ms[4] || ms[5] || ms[6] || ms[7])
    return make_error(KErr::ebadmsg, "PKCS#7 signature info has unexpected non-zero params");
  return TrailerInfo{modlen - kModuleSignatureSize - sig_len, sig_len};
}

namespace {
/// The pieces of `file` whose trailer says `t` (parse_tail() checked the lengths).
SplitModule pieces(ByteView file, const TrailerInfo& t) {
  const std::size_t content_len = static_cast<std::size_t>(t.content_len);
  const std::uint8_t* ms = file.data() + content_len + t.sig_len;
  ModuleSignature tr;
  tr.algo = ms[0];
  tr.hash = ms[1];
  tr.id_type = ms[2];
  tr.signer_len = ms[3];
  tr.key_id_len = ms[4];
  std::copy(ms + 5, ms + 8, tr.pad);
  tr.sig_len = t.sig_len;
  return SplitModule{file.subspan(0, content_len), file.subspan(content_len, t.sig_len), tr};
}
}  // namespace

Result<SplitModule> split(ByteView file) {
  auto t =
      parse_tail(file.last(std::min<std::size_t>(file.size(), kMarker.size() + kModuleSignatureSize)), file.size());
  if (!t) return t.error();
  return pieces(file, *t);
}

bool is_legacy(const ModuleSignature& t) {
  return t.id_type != kIdTypePkcs7 || t.algo || t.hash || t.signer_len || t.key_id_len || t.pad[0] || t.pad[1] ||
         t.pad[2];
}

Result<SplitModule> split_any_trailer(ByteView file) {
  auto t =
      parse_tail(file.last(std::min<std::size_t>(file.size(), kMarker.size() + kModuleSignatureSize)), file.size());
  if (t) return pieces(file, *t);
  if (t.error().code == KErr::enodata || !has_marker(file) || file.size() <= kMarker.size() + kModuleSignatureSize)
    return t.error();
  // Only the type and legacy-field checks failed, or the length: check the length alone.
  const std::size_t modlen = file.size() - kMarker.size();
  const std::uint8_t* ms = file.data() + modlen - kModuleSignatureSize;
  const std::uint32_t sig_len = static_cast<std::uint32_t>(ms[8]) << 24 | static_cast<std::uint32_t>(ms[9]) << 16 |
                                static_cast<std::uint32_t>(ms[10]) << 8 | ms[11];
  if (sig_len >= modlen - kModuleSignatureSize) return t.error();
  return pieces(file, TrailerInfo{modlen - kModuleSignatureSize - sig_len, sig_len});
}

std::vector<SplitModule> split_stack(ByteView file, bool legacy) {
  std::vector<SplitModule> out;
  ByteView rest = file;
  while (has_marker(rest)) {
    auto s = legacy ? split_any_trailer(rest) : split(rest);
    if (!s) break;
    out.push_back(*s);
    rest = s->content;
  }
  return out;
}

Bytes append_signature(ByteView content, ByteView cms) {
  Bytes out;
  out.reserve(content.size() + cms.size() + kModuleSignatureSize + kMarker.size());
  out.insert(out.end(), content.begin(), content.end());
  out.insert(out.end(), cms.begin(), cms.end());
  Bytes ms = encode_module_signature(static_cast<std::uint32_t>(cms.size()));
  out.insert(out.end(), ms.begin(), ms.end());
  out.insert(out.end(), kMarker.begin(), kMarker.end());
  return out;
}

}  // namespace modsign::module
