// modsign — open_module_file() and describe_signature() (include/modsign/module.hpp).
#include "modsign/module.hpp"

#include <algorithm>
#include <utility>

#include "api/internal.hpp"
#include "asn1/der.hpp"
#include "cms/signed_data.hpp"
#include "common/file.hpp"
#include "common/module_read.hpp"
#include "module/decompress.hpp"
#include "module/module_signature.hpp"

namespace modsign {

namespace {

/// Name of the SignerInfo's digest algorithm (or its OID), as modinfo's sig_hashalgo.
std::string hash_text(const cms::SignerInfo& si) {
  return si.digest_algorithm ? std::string(crypto::hash_info(*si.digest_algorithm).name)
                             : asn1::oid_to_string(si.digest_algorithm_oid);
}

/// The signature algorithm's name (or its OID).
std::string sig_algo_text(const cms::SignerInfo& si) {
  if (!si.signature_key_algo) return asn1::oid_to_string(si.signature_algorithm_oid);
  if (si.signature_key_algo == crypto::KeyAlgo::ecdsa_p256) return "ECDSA";
  return std::string(crypto::key_algo_name(*si.signature_key_algo));
}

}  // namespace

/// The profiles whose parser and module usage checks accept the signature.
std::vector<std::string> api::accepted_by(ByteView cms_der, ByteView content) {
  std::vector<std::string> out;
  auto profiles = std::vector<std::pair<std::string, cms::KernelModel>>{
      {"v6.1", cms::KernelModel::v6_1()}, {"v6", cms::KernelModel::v6()}, {"v7.0", cms::KernelModel::v7_0()}};
  auto waived = cms::KernelModel::v7_0();
  waived.waive_mldsa_authattrs = true;
  profiles.emplace_back("v7.0+waiver", waived);
  for (const auto& [name, prof] : profiles) {
    auto msg = cms::pkcs7_parse_message(cms_der, prof);
    if (!msg || !cms::pkcs7_supply_detached_data(*msg, content)) continue;
    if (cms::pkcs7_verify(*msg, cms::Usage::module, prof)) out.push_back(name);
  }
  return out;
}

ModuleFile open_module_file(const std::string& path, const KernelProfile& /*profile*/, const OpenOptions& o) {
  ModuleFile f;
  f.path = path;
  f.stored = read_module_bytes(path, o.max_size);
  auto img = module::open_module(f.stored, o.max_size, {o.keep_bad_stream, o.ignore_after_stream});
  if (!img) throw InputError(path + ": " + img.error().message);
  f.m = std::move(img.value());
  return f;
}

namespace {
/// describe_signature() of `file` (the image, or a content inside it) of `mf`.
SignatureInfo describe(const ModuleFile& mf, ByteView file) {
  SignatureInfo r;
  r.image_size = mf.m.image.size();
  r.content_length = file.size();
  if (!module::has_marker(file)) return r;
  auto split = module::split(file);
  if (!split)
    throw InputError(mf.path + ": " + std::string(errno_name(split.error().code)) + ": " + split.error().message);
  if (auto st = module::check_signature_present(*split); !st)
    throw InputError(mf.path + ": " + std::string(errno_name(st.error().code)) + ": " + st.error().message);
  auto sd = cms::parse(split->cms, asn1::Rules::ber);  // what the kernel reads, indefinite lengths included
  if (!sd) throw InputError(mf.path + ": " + std::string(errno_name(sd.error().code)) + ": " + sd.error().message);
  if (sd->signers.empty()) throw InputError(mf.path + ": PKCS#7 has no SignerInfo");
  const auto& si = sd->signers.front();
  const bool by_issuer = si.sid_type == cms::SignerIdType::issuer_and_serial;
  r.is_signed = true;
  r.sig_id = "PKCS#7";
  r.signer = by_issuer ? crypto::name_common_name(si.issuer, asn1::Rules::ber) : "";
  r.sig_key = to_colon_hex(by_issuer ? si.serial : si.skid);
  r.sig_hashalgo = hash_text(si);
  r.signature = to_colon_hex(si.signature);
  r.signer_id_type = by_issuer ? "issuerAndSerialNumber" : "subjectKeyIdentifier";
  r.signature_algorithm = sig_algo_text(si);
  r.signed_attrs = si.signed_attrs.has_value();
  r.signer_infos = sd->signers.size();
  r.certificates = sd->certificates.size();
  r.cms_length = split->cms.size();
  r.signature_length = si.signature.size();
  r.content_length = split->content.size();
  r.accepted_by = api::accepted_by(split->cms, split->content);
  return r;
}
}  // namespace

SignatureInfo describe_signature(const ModuleFile& mf) { return describe(mf, mf.m.image); }

std::vector<SignatureInfo> describe_signatures(const ModuleFile& mf) {
  std::vector<SignatureInfo> out{describe(mf, mf.m.image)};
  const auto stack = module::split_stack(mf.m.image);
  for (std::size_t i = 1; i < stack.size(); ++i) out.push_back(describe(mf, stack[i - 1].content));
  return out;
}

}  // namespace modsign
