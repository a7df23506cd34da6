// modsign — `cms verify`: any SignedData as RFC 5652 §5.4/§5.6 and RFC 9882 §3 define its
// verification, and with a kernel profile also that kernel's verdict (verify_with() of the
// kernel mirror, cms/system_keyring; no kernel rule is repeated here).
#include <algorithm>
#include <string>

#include "api/cms_internal.hpp"
#include "api/internal.hpp"
#include "cms/system_keyring.hpp"
#include "crypto/crypto.hpp"
#include "modsign/cms.hpp"
#include "modsign/output.hpp"
#include "modsign/trust.hpp"

namespace modsign {

namespace {

using asn1::Element;
using asn1::Reader;

ByteView slice(ByteView der, const CmsTlv& at) { return der.subspan(at.offset, at.length); }

/// The element at `at` (its TLV is the slice): DER, or BER for what the dump read with BER
/// rules (indefinite lengths).
Element element_at(ByteView der, const CmsTlv& at) {
  try {
    return Reader(slice(der, at)).next();
  } catch (const asn1::DecodeError&) { return Reader(slice(der, at), asn1::Rules::ber).next(); }
}

using cms::same;

/// Whether `cert` is the one `sid` names (RFC 5652 §5.3: issuer Name and serialNumber, or
/// the subjectKeyIdentifier extension).
bool names(const crypto::Certificate& cert, const CmsSignerInfo& si, ByteView der) {
  if (si.sid_is_skid) return cert.skid() && same(*cert.skid(), si.sid_skid);
  Reader ias = Reader(element_at(der, si.sid_at).content, asn1::Rules::ber);  // already read once
  const Element issuer = ias.next();
  return same(cert.issuer(), issuer.tlv) && same(cert.serial(), si.sid_serial);
}

enum class SigKind { rsa, ecdsa, ml_dsa, unsupported, unknown };

SigKind kind_of(const std::string& name, const std::string& oid) {
  if (name == "rsaEncryption" || name.find("WithRSAEncryption") != std::string::npos) return SigKind::rsa;
  if (name.find("ecdsa-with-") != std::string::npos) return SigKind::ecdsa;
  if (name.rfind("id-ml-dsa-", 0) == 0) return SigKind::ml_dsa;
  if (name.rfind("HashML-DSA", 0) == 0 || name == "composite ML-DSA" || name == "RSASSA-PSS")
    return SigKind::unsupported;
  (void)oid;
  return SigKind::unknown;
}

/// H(data) for a digestAlgorithm: SHA-2/SHA-3 by name, SHAKE256 with 512 bits of output
/// (RFC 9882 §3.3, RFC 8702 §3.2); nullopt for other algorithms.
std::optional<Bytes> content_digest(const CmsAlgorithm& alg, ByteView data) {
  if (alg.name == "shake256") return crypto::botan::shake256(data, 64);
  const auto h = crypto::hash_by_name(alg.name);
  if (!h || *h == crypto::HashAlgo::md5) return std::nullopt;
  return crypto::digest(*h, data);
}

/// "sha512 (2.16.840.1.101.3.4.2.3)", or the OID alone for an algorithm without a name.
std::string algorithm_text(const CmsAlgorithm& alg) {
  return alg.name.empty() ? alg.oid : alg.name + " (" + alg.oid + ")";
}

/// One SignerInfo: "" when it verifies, else the reason it does not.
std::string check_signer(const CmsSignerInfo& si, const CmsDump& d, ByteView der, ByteView content,
                         const crypto::Certificate& cert) {
  const crypto::PublicKey& key = cert.public_key();
  const SigKind kind = kind_of(si.signature_algorithm.name, si.signature_algorithm.oid);
  const std::string alg = (si.signature_algorithm.name.empty() ? "" : si.signature_algorithm.name + " ") + "(" +
                          si.signature_algorithm.oid + ")";
  if (kind == SigKind::unsupported) return "unsupported signature algorithm " + alg;
  if (kind == SigKind::unknown) return "unknown signature algorithm " + alg;
  const bool key_fits =
      (kind == SigKind::rsa && key.algo() == crypto::KeyAlgo::rsa) ||
      (kind == SigKind::ecdsa && crypto::is_ecdsa(key.algo())) ||
      (kind == SigKind::ml_dsa && crypto::is_ml_dsa(key.algo()) &&
       si.signature_algorithm.name == "id-ml-dsa-" + std::string(crypto::key_algo_name(key.algo())).substr(7));
  if (!key_fits)
    return "signature algorithm " + alg + " does not match the certificate's " +
           std::string(crypto::key_algo_name(key.algo())) + " key";
  const auto hash = crypto::hash_by_name(si.digest_algorithm.name);
  if (kind != SigKind::ml_dsa && (!hash || *hash == crypto::HashAlgo::md5))
    return "unsupported digestAlgorithm " + algorithm_text(si.digest_algorithm) + " for " +
           std::string(crypto::key_algo_name(key.algo()));
  Bytes signed_bytes;
  if (si.signed_attrs_at) {
    if (!si.content_type) return "signedAttrs without a contentType attribute";
    const Element et = element_at(der, d.econtent_type.at);
    if (!same(*si.content_type, et.content)) return "contentType attribute differs from eContentType";
    if (!si.message_digest) return "signedAttrs without a messageDigest attribute";
    const auto md = content_digest(si.digest_algorithm, content);
    if (!md) return "unsupported digestAlgorithm " + algorithm_text(si.digest_algorithm);
    if (*md != *si.message_digest) return "messageDigest differs from the content's " + si.digest_algorithm.name;
    const ByteView attrs = slice(der, *si.signed_attrs_at);
    signed_bytes.assign(attrs.begin(), attrs.end());
    signed_bytes[0] = asn1::kSet;  // the DER SET OF the attributes is signed (RFC 5652 §5.4)
  } else {
    signed_bytes.assign(content.begin(), content.end());
  }
  const Element sig = element_at(der, si.signature_at);
  const auto st = crypto::verify_message(key, hash.value_or(crypto::HashAlgo::sha512), signed_bytes, sig.content);
  if (!st) return "signature does not verify (" + std::string(errno_name(st.error().code)) + ")";
  return "";
}

}  // namespace

CmsVerification cms_verify_file(const std::string& path, const CmsVerifyOptions& o) {
  cms_detail::CmsInput in = cms_detail::read_cms_input(read_file(path, kMaxModuleSize), path);
  const Bytes& der = in.der;
  const CmsDump d = cms_detail::dump(der, path);
  CmsVerification v;
  v.detached = !d.econtent;
  v.module_signature = in.module_content.has_value();
  if (v.detached && !o.content && !in.module_content)
    throw UsageError(path + ": detached SignedData: give the signed content with --content");
  if (!v.detached && o.content) throw UsageError(path + ": the content is attached: --content cannot be used");
  Bytes content;
  if (o.content) content = read_file(*o.content, kMaxModuleSize);
  else if (in.module_content) content = std::move(*in.module_content);  // what the module's signature covers
  else content = cms_detail::octets(element_at(der, *d.econtent_at), asn1::Rules::ber);  // segments: BER only

  const KernelProfile profile = o.kernel.value_or(KernelProfile{});
  std::vector<crypto::Certificate> candidates;
  std::optional<TrustStore> trust;
  if (!o.certificates.empty()) {
    TrustSources src;
    src.keyrings = o.certificates;
    trust = TrustStore::load(src, profile);
    for (const auto& n : trust->notes()) v.notes.push_back(n);
    candidates = impl_of(*trust).keyring.certificates;
  } else {
    for (std::size_t i = 0; i < d.certificates.size(); ++i) {
      auto c = crypto::Certificate::from_der(slice(der, d.certificates[i].at));
      if (c) candidates.push_back(std::move(*c));
      else v.notes.push_back(path + ": certificate " + std::to_string(i + 1) + " is not usable: " + c.error().message);
    }
    v.notes.push_back(
        "no --cert or --keyring given: the signer was checked against the message's own certificates, "
        "which proves integrity, not who signed");
  }

  for (const auto& si : d.signers) {
    CmsSignerVerdict sv;
    sv.signed_attrs = si.signed_attrs_at.has_value();
    const auto it = std::find_if(candidates.begin(), candidates.end(),
                                 [&](const crypto::Certificate& c) { return names(c, si, der); });
    if (it == candidates.end()) {
      sv.reason = o.certificates.empty() ? "no certificate in the message matches the signer's sid"
                                         : "no trusted certificate matches the signer's sid";
    } else {
      sv.signer = cms_detail::name_text(it->subject());
      sv.algorithm = std::string(crypto::key_algo_name(it->public_key().algo()));
      sv.reason = check_signer(si, d, der, content, *it);
      sv.verified = sv.reason.empty();
    }
    v.signers.push_back(std::move(sv));
  }
  v.verified = !v.signers.empty() &&
               std::all_of(v.signers.begin(), v.signers.end(), [](const CmsSignerVerdict& s) { return s.verified; });

  if (o.kernel) {
    const cms::Keyring keyring = trust ? impl_of(*trust).keyring : cms::Keyring{};
    const auto report = cms::verify_with(
        der, keyring, cms::Usage::module, api::to_model(*o.kernel), crypto::Backend::automatic,
        [&](cms::Pkcs7Message& m) { return v.detached ? cms::pkcs7_supply_detached_data(m, content) : ok_status(); });
    v.kernel_errno = report.err;
    v.kernel_reason = report.reason;
  }
  return v;
}

}  // namespace modsign
