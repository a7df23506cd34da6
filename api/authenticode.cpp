// modsign — authenticode_image() and authenticode_file() (include/modsign/authenticode.hpp)
// over pe/ (headers, digest) and cms/spc_indirect_data.hpp (the signatures).
#include "modsign/authenticode.hpp"

#include <cstdio>

#include "asn1/der.hpp"
#include "cms/spc_indirect_data.hpp"
#include "common/file.hpp"
#include "crypto/crypto.hpp"
#include "pe/authenticode.hpp"
#include "pe/pe_image.hpp"

namespace modsign {

namespace {

std::string hex16(std::uint16_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", v);
  return buf;
}

void read_signature(AuthenticodeSignature& out, ByteView content, const std::vector<Bytes>& image_digests) {
  if (out.revision != pe::kWinCertRevision2) {
    out.error = "wRevision " + hex16(out.revision) + " is not 0x0200";
    return;
  }
  if (out.type != pe::kWinCertTypePkcsSignedData) {
    out.error = "wCertificateType " + hex16(out.type) + " is not WIN_CERT_TYPE_PKCS_SIGNED_DATA (0x0002)";
    return;
  }
  auto sig = cms::parse_authenticode(content);
  if (!sig) {
    out.error = sig.error().message;
    return;
  }
  const cms::SignedData& sd = sig->signed_data;
  if (sd.signers.empty()) {
    out.error = "no SignerInfo";
    return;
  }
  for (std::size_t i = 0; i < sd.certificates.size(); ++i) {
    AuthenticodeCertificate ac;
    if (auto c = crypto::Certificate::from_der(sd.certificates[i]); c.ok()) {
      ac.subject = cms::name_text(c->subject());
      ac.issuer = cms::name_text(c->issuer());
      ac.serial.assign(c->serial().begin(), c->serial().end());
    } else {
      ac.subject = "(certificate " + std::to_string(i + 1) + " not readable: " + c.error().message + ")";
    }
    out.certificates.push_back(std::move(ac));
  }
  const cms::SignerInfo& si = sd.signers.front();
  out.signer_by_skid = si.sid_type == cms::SignerIdType::subject_key_id;
  if (out.signer_by_skid) {
    out.signer_skid = si.skid;
  } else {
    out.signer_issuer = cms::name_text(si.issuer);
    out.signer_serial = si.serial;
  }
  out.digest = sig->digest;
  out.digest_algorithm = sig->digest_algorithm ? std::string(crypto::hash_info(*sig->digest_algorithm).name)
                                               : asn1::oid_to_string(sig->digest_algorithm_oid);
  for (std::size_t i = 0; i < pe::kAuthenticodeHashes.size(); ++i)
    if (sig->digest_algorithm == pe::kAuthenticodeHashes[i]) out.matches = out.digest == image_digests[i];
}

}  // namespace

Result<AuthenticodeInfo> authenticode_image(ByteView image) {
  auto parsed = pe::parse(image);
  if (!parsed) return parsed.error();
  const pe::PeImage& img = *parsed;
  auto digests = pe::authenticode_digests(
      img, image, std::vector<crypto::HashAlgo>(pe::kAuthenticodeHashes.begin(), pe::kAuthenticodeHashes.end()));
  if (!digests) return digests.error();

  AuthenticodeInfo info;
  info.file_size = img.file_size;
  info.machine = img.machine;
  info.machine_name = pe::machine_name(img.machine);
  info.pe32_plus = img.pe32_plus();
  info.subsystem = img.subsystem;
  info.checksum = img.checksum;
  for (const auto& s : img.sections)
    info.sections.push_back(
        {s.name, s.virtual_size, s.virtual_address, s.size_of_raw_data, s.pointer_to_raw_data, s.long_name});
  info.certificate_table_offset = img.certificate_table.virtual_address;
  info.certificate_table_size = img.certificate_table.size;
  if (img.certificate_table.size != 0)
    info.bytes_after_certificate_table =
        img.file_size - (std::uint64_t{img.certificate_table.virtual_address} + img.certificate_table.size);
  info.sha256 = (*digests)[0];
  info.sha1 = (*digests)[1];
  info.sha384 = (*digests)[2];
  info.sha512 = (*digests)[3];
  for (const auto& wc : img.certificates) {
    AuthenticodeSignature s;
    s.offset = wc.offset;
    s.length = wc.length;
    s.revision = wc.revision;
    s.type = wc.type;
    read_signature(s, image.subspan(wc.content_offset(), wc.content_size()), *digests);
    info.signatures.push_back(std::move(s));
  }
  return info;
}

Result<AuthenticodeInfo> authenticode_file(const std::string& path) {
  const Bytes data = read_file(path);
  auto r = authenticode_image(data);
  if (!r) return make_error(r.error().code, path + ": " + r.error().message);
  return r;
}

}  // namespace modsign
