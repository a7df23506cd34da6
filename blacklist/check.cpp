// modsign's own: which blacklist key (bin:, tbs:, revoked certificate) stops a module or certificate, and where it came
// from, composed from the mirrors of certs/blacklist.c, x509_public_key.c and ima_appraise.c
#include "blacklist/check.hpp"

#include "blacklist/blacklist.hpp"
#include "digest/ima_appraise.hpp"
#include "digest/module_digest.hpp"
#include "module/kernel_read_file.hpp"
#include "module/module_signature.hpp"
#include "module/signing.hpp"

namespace modsign::blacklist {

namespace {

std::vector<Origin> origins_of(const Sources& s, const std::string& d) {
  auto it = s.description_origins.find(d);
  return it == s.description_origins.end() ? std::vector<Origin>{} : it->second;
}

bool listed(const Sources& s, const std::string& d) { return s.keyring.descriptions.count(d) != 0; }

const char* kImaCheck =
    "ima_check_blacklist() -> is_binary_blacklisted() (security/integrity/ima/ima_appraise.c:428-452, "
    "certs/blacklist.c:247-254)";
const char* kTbsInMessage =
    "x509_get_sig_params() marks the certificate blacklisted (crypto/asymmetric_keys/x509_public_key.c:38-45); "
    "pkcs7_verify() refuses a signer whose chain reaches it (crypto/asymmetric_keys/pkcs7_verify.c:230-239, 468-472)";
const char* kRevoked =
    "is_key_on_revocation_list() (certs/blacklist.c:289-299) from verify_pkcs7_message_sig() "
    "(certs/system_keyring.c:333-337)";
const char* kTbsKeyring =
    "x509_key_preparse() keeps the certificate out of the keyring (crypto/asymmetric_keys/x509_public_key.c:189-191, "
    "EKEYREJECTED); pkcs7_validate_trust() then finds no key for the signer "
    "(crypto/asymmetric_keys/pkcs7_trust.c:158-187)";

/// The outcome of a verdict: module_sig_check()'s decision (module::decide) on the errno of
/// the first stop, "not-stopped" when there is none.
Verdict decided(Verdict v, const cms::KernelModel& profile) {
  if (!v.stopped()) return v;
  const module::LoadVerdict lv = module::decide({}, v.stops[0].err, "", profile);
  v.outcome = std::string(module::outcome_name(lv.outcome));
  v.err = lv.outcome == module::LoadOutcome::refused ? lv.load_errno : lv.sig_errno;
  if (lv.outcome == module::LoadOutcome::refused && lv.load_errno != lv.sig_errno)  // a soft failure refused
    v.soft_refusal = lv.load_errno == KErr::ekeyrejected ? "signatures enforced" : "lockdown";
  return v;
}

Verdict module_stops(ByteView stored, const module::ModuleImage& m, const Sources& sources,
                     const std::vector<crypto::Certificate>& trusted, const cms::KernelModel& profile,
                     crypto::HashAlgo ima_hash);
Verdict certificate_stops(const crypto::Certificate& cert, const Sources& sources, const cms::KernelModel& profile);

}  // namespace

Verdict check_module(ByteView stored, const module::ModuleImage& m, const Sources& sources,
                     const std::vector<crypto::Certificate>& trusted, const cms::KernelModel& profile,
                     crypto::HashAlgo ima_hash) {
  return decided(module_stops(stored, m, sources, trusted, profile, ima_hash), profile);
}

Verdict check_certificate(const crypto::Certificate& cert, const Sources& sources, const cms::KernelModel& profile) {
  return decided(certificate_stops(cert, sources, profile), profile);
}

modsign::CertificateBlacklistEntry certificate_blacklist_entry(const crypto::Certificate& cert,
                                                               const cms::KernelModel& profile) {
  modsign::CertificateBlacklistEntry e;
  e.tbs = certificate_entry(cert, profile);
  e.der = cert.der();
  if (!e.tbs) {
    const auto sup = cms::x509_supported(cert, profile);
    e.explanation =
        "no tbs: entry under " + profile.name() +
        (sup ? std::string(": the certificate's signature hash is unavailable, x509_get_sig_params() skips the check")
             : ": x509_cert_parse() refuses the certificate (" + std::string(errno_name(sup.error().code)) + ": " +
                   sup.error().message + "), so no key is ever looked up for it");
  }
  return e;
}

ModuleEntry module_entry(ByteView stored, const module::ModuleImage& m, const cms::KernelModel& profile,
                         crypto::HashAlgo ima_hash) {
  ModuleEntry e;
  e.compressed = m.compression != module::Compression::none;
  std::string why;
  if (digest::ima_module_read(m, profile) != digest::ImaModuleRead::compressed_file) {
    const auto d = digest::digest_module_image(m.image, profile);
    if (d.modsig_parsed) {
      e.side_sha256 = "bin:" + to_hex(d.side_sha256);
      const std::string size = std::to_string(d.content_length);
      if (d.kernel.status != KErr::none) {  // the reason names the step: pkcs7_supply_detached_data or _get_digest
        e.explanation = "ima_collect_modsig() gets no digest (" + std::string(errno_name(d.kernel.status)) + ": " +
                        d.kernel.reason + "), so ima_check_blacklist() looks up \"bin:\", which no key can be";
      } else if (d.kernel.bytes.size() * 2 > kMaxHashHexLen) {
        e.explanation = "pkcs7_get_digest() returns the " + std::to_string(d.kernel.bytes.size()) +
                        "-byte re-tagged signedAttrs, longer than the 128 hex digits a key may hold";
      } else {
        e.source = ModuleEntry::Source::d_modsig;
        e.algo = d.kernel.algo;
        e.description = "bin:" + to_hex(d.kernel.bytes);
        e.explanation = d.kernel.over_content
                            ? "d-modsig: " + e.algo + " of the " + size + " bytes before the signature trailer" +
                                  (e.compressed ? " of the decompressed image" : "")
                            : "d-modsig: " + e.algo + " of the signedAttrs (pkcs7_get_digest with signedAttrs)";
      }
      return e;
    }
    why = d.kernel.reason;
  } else {
    why = digest::kImaReadsCompressedFile;
  }
  e.source = ModuleEntry::Source::ima_hash;
  e.algo = std::string(crypto::hash_info(ima_hash).name);
  e.description = "bin:" + to_hex(crypto::digest(ima_hash, stored));
  e.explanation = "no modsig IMA can use (" + why + "): IMA's " + e.algo + " of the whole file as stored (" +
                  std::to_string(stored.size()) + " bytes), looked up when the policy requires a signature";
  return e;
}

std::optional<std::string> certificate_entry(const crypto::Certificate& cert, const cms::KernelModel& profile) {
  auto h = cms::x509_tbs_blacklist_hash(cert, profile);
  if (!h) return std::nullopt;
  return raw_hash(*h, HashType::x509_tbs);
}

namespace {

Verdict module_stops(ByteView stored, const module::ModuleImage& m, const Sources& sources,
                     const std::vector<crypto::Certificate>& trusted, const cms::KernelModel& profile,
                     crypto::HashAlgo ima_hash) {
  Verdict v;
  v.entry = module_entry(stored, m, profile, ima_hash);
  const ModuleEntry& e = *v.entry;
  // An empty file: finit_module's kernel_read_file() refuses it (EINVAL) before IMA and
  // module_sig_check: no blacklist is ever consulted.
  if (auto empty = module::kernel_read_file_refusal(stored.size())) {
    v.notes.push_back(empty->message + ": no blacklist entry is ever looked up");
    return v;
  }
  if (!m.kernel_decompress_problem.empty())
    v.notes.push_back("the kernel's module_decompress() refuses this file (" + m.kernel_decompress_problem +
                      "): finit_module fails with EINVAL before any signature or blacklist check of the image");
  // 1. IMA, in kernel_read_file() before load_module().
  if (e.description && listed(sources, *e.description))
    v.stops.push_back(
        Stop{*e.description, origins_of(sources, *e.description), kImaCheck, KErr::eperm,
             e.source == ModuleEntry::Source::d_modsig
                 ? "an IMA appraise rule for MODULE_CHECK that allows modsig (appraise_type=imasig|modsig)"
                 : "an IMA appraise rule for MODULE_CHECK that requires a signature",
             e.source == ModuleEntry::Source::d_modsig ? from_hex(e.description->substr(4)) : Bytes{}});
  // A policy rule that requires a signature without allowing modsig (appraise_type=imasig;
  // ima_policy.c:1846-1850 sets IMA_CHECK_BLACKLIST for it) never reads the modsig
  // (ima_main.c:414-420): ima_check_blacklist() then looks up IMA's hash of the whole file
  // as stored, signature included (ima_appraise.c:443-444).
  if (e.source != ModuleEntry::Source::ima_hash) {
    const std::string whole = "bin:" + to_hex(crypto::digest(ima_hash, stored));
    if (listed(sources, whole))
      v.stops.push_back(Stop{whole, origins_of(sources, whole), kImaCheck, KErr::eperm,
                             "an IMA appraise rule for MODULE_CHECK that requires a signature without allowing modsig "
                             "(appraise_type=imasig): IMA's " +
                                 std::string(crypto::hash_info(ima_hash).name) + " of the whole file as stored",
                             Bytes{}, true});
  }
  if (e.source == ModuleEntry::Source::none) {
    std::string n = "no bin: entry can stop it under " + profile.name() + " through the modsig: " + e.explanation;
    if (e.side_sha256)
      n += "; under the proposed behaviour (side SHA-256 of the signed content) " + *e.side_sha256 + " would stop it";
    v.notes.push_back(n);
    if (e.side_sha256 && listed(sources, *e.side_sha256))
      v.notes.push_back(*e.side_sha256 + " is listed, but " + profile.name() + " does not look it up");
  }
  // 2. module_sig_check() -> verify_pkcs7_signature() on the (decompressed) image.
  auto sp = module::split(m.image);
  if (!sp) {
    if (sp.error().code != KErr::enodata)
      v.notes.push_back(std::string("module_sig_check: ") + std::string(errno_name(sp.error().code)) + " (" +
                        sp.error().message + ") before any certificate check");
    return v;
  }
  auto msg = cms::pkcs7_parse_message(sp->cms, profile, &sources.keyring);
  if (!msg) {
    v.notes.push_back("module_sig_check: the PKCS#7 does not parse (" + std::string(errno_name(msg.error().code)) +
                      ": " + msg.error().message + "), before any certificate check");
    return v;
  }
  if (auto sup = cms::pkcs7_supply_detached_data(*msg, sp->content); !sup) {
    // verify_pkcs7_message_sig (certs/system_keyring.c:323-327): the PKCS#7 carries its own
    // content; refused before pkcs7_verify() looks at any certificate.
    v.notes.push_back(
        "module_sig_check: verify_pkcs7_message_sig() fails (EBADMSG: PKCS#7 signature with "
        "non-detached data), before any certificate check");
    return v;
  }
  auto st = cms::pkcs7_verify(*msg, cms::Usage::module, profile);
  // The blacklisted certificates a signer's chain reached (pkcs7_verify_sig_chain stops
  // there, pkcs7_verify.c:230-239); others in the message refuse nothing.
  std::vector<bool> reached(msg->certs.size(), false);
  for (const auto& si : msg->signed_infos) {
    if (!si.blacklisted || !si.signer) continue;
    std::vector<bool> walked(msg->certs.size(), false);
    for (std::size_t cur = *si.signer; cur < msg->certs.size() && !walked[cur];) {
      walked[cur] = true;
      if (msg->certs[cur].blacklisted) {
        reached[cur] = true;
        break;
      }
      if (!msg->certs[cur].signer) break;
      cur = *msg->certs[cur].signer;
    }
  }
  std::vector<Stop> tbs_hits;
  std::vector<std::string> tbs_unreached;
  for (std::size_t i = 0; i < msg->certs.size(); ++i)
    if (msg->certs[i].blacklisted) {
      const std::string d = *certificate_entry(msg->certs[i].cert, profile);
      if (reached[i]) tbs_hits.push_back(Stop{d, origins_of(sources, d), kTbsInMessage, KErr::ekeyrejected, ""});
      else tbs_unreached.push_back(d);
    }
  for (const auto& d : tbs_unreached)
    v.notes.push_back("certificate with " + d + " is in the PKCS#7 but no signer's chain reaches it");
  if (!st) {
    const bool by_tbs = st.error().reason == Error::Reason::blacklisted && !tbs_hits.empty();
    if (by_tbs) {
      for (auto& s : tbs_hits) v.stops.push_back(std::move(s));
    } else {
      v.notes.push_back("pkcs7_verify() fails first (" + std::string(errno_name(st.error().code)) + ": " +
                        st.error().message + "); the revocation list is not consulted");
    }
    return v;
  }
  for (const auto& s : tbs_hits)
    v.notes.push_back("certificate with " + s.entry + " is in the PKCS#7 but another signer passes pkcs7_verify()");
  // is_key_on_revocation_list() runs pkcs7_validate_trust() once over the whole .blacklist
  // keyring: only a 0 from that call revokes (an EKEYREJECTED from one revoked key that
  // matches an id but not the signature ends it first).  Each revoked certificate that
  // alone vouches for a signer is then named.
  std::vector<crypto::Certificate> revoked_in;
  std::vector<std::size_t> revoked_at;
  for (std::size_t i = 0; i < sources.keyring.revoked.size(); ++i) {
    const auto& rc = sources.keyring.revoked[i];
    if (auto d = certificate_entry(rc, profile); d && listed(sources, *d)) {
      v.notes.push_back("revoked certificate " + rc.subject_text() + " is itself blacklisted (" + *d +
                        "): x509_key_preparse() keeps it out of the .blacklist keyring");
      continue;
    }
    revoked_in.push_back(rc);
    revoked_at.push_back(i);
  }
  if (!revoked_in.empty()) {
    const auto all = cms::pkcs7_validate_trust(*msg, revoked_in, profile);
    for (std::size_t k = 0; k < revoked_in.size(); ++k) {
      if (!cms::pkcs7_validate_trust(*msg, {revoked_in[k]}, profile)) continue;
      if (!all) {
        v.notes.push_back("revoked certificate " + revoked_in[k].subject_text() +
                          " vouches for the signer, but pkcs7_validate_trust() over the whole .blacklist keyring fails "
                          "first (" +
                          std::string(errno_name(all.error().code)) + ": " + all.error().message +
                          "), so is_key_on_revocation_list() does not refuse it; which of several keys with one "
                          "identifier the kernel's keyring search finds depends on the keyring's internal order");
        continue;
      }
      const std::size_t i = revoked_at[k];
      const Origin o = i < sources.revoked_origins.size() ? sources.revoked_origins[i] : Origin{};
      v.stops.push_back(
          Stop{"revoked certificate " + revoked_in[k].subject_text(), {o}, kRevoked, KErr::ekeyrejected, ""});
    }
  }
  if (!trusted.empty()) {
    std::vector<crypto::Certificate> admitted;
    std::vector<std::pair<const crypto::Certificate*, std::string>> refused;
    for (const auto& c : trusted) {
      auto d = certificate_entry(c, profile);
      if (d && listed(sources, *d)) refused.emplace_back(&c, *d);
      else admitted.push_back(c);
    }
    if (!refused.empty() && cms::pkcs7_validate_trust(*msg, trusted, profile)) {
      auto without = cms::pkcs7_validate_trust(*msg, admitted, profile);
      if (!without && without.error().code == KErr::enokey)
        for (const auto& [c, d] : refused)
          if (cms::pkcs7_validate_trust(*msg, {*c}, profile))
            v.stops.push_back(
                Stop{d, origins_of(sources, d), kTbsKeyring, KErr::enokey,
                     "module_sig_check(): ENOKEY loads the module tainted; refused (EKEYREJECTED) "
                     "when signatures are enforced, EPERM under lockdown (kernel/module/signing.c:105-131)"});
    }
  }
  return v;
}

Verdict certificate_stops(const crypto::Certificate& cert, const Sources& sources, const cms::KernelModel& profile) {
  Verdict v;
  v.certificate = true;
  const auto supported = cms::x509_supported(cert, profile);
  if (!supported)
    v.notes.push_back("the " + profile.name() + " kernel cannot use this certificate at all (" +
                      std::string(errno_name(supported.error().code)) + ": " + supported.error().message + ")");
  v.tbs = certificate_entry(cert, profile);
  if (!v.tbs && !supported) {
    // Not parsed at all: no tbs: lookup happens (the note above says why).
  } else if (!v.tbs) {
    v.notes.push_back("under " + profile.name() +
                      " the TBS hash is the certificate signature's own hash, which is unavailable here: "
                      "x509_get_sig_params() skips the tbs: check");
  } else if (listed(sources, *v.tbs)) {
    v.stops.push_back(
        Stop{*v.tbs, origins_of(sources, *v.tbs),
             "x509_get_sig_params() marks it blacklisted (crypto/asymmetric_keys/x509_public_key.c:38-45); "
             "x509_key_preparse() refuses it from every keyring (:189-191), pkcs7_verify() refuses "
             "signatures whose chain reaches it (crypto/asymmetric_keys/pkcs7_verify.c:230-239, 468-472)",
             KErr::ekeyrejected, ""});
  }
  for (std::size_t i = 0; i < sources.keyring.revoked.size(); ++i) {
    const auto& rc = sources.keyring.revoked[i];
    const bool same_id = rc.kernel_id() == cert.kernel_id() || (rc.skid() && cert.skid() && *rc.skid() == *cert.skid());
    if (same_id && rc.public_key() == cert.public_key()) {
      const Origin o = i < sources.revoked_origins.size() ? sources.revoked_origins[i] : Origin{};
      v.stops.push_back(Stop{"revoked certificate " + rc.subject_text(),
                             {o},
                             kRevoked,
                             KErr::ekeyrejected,
                             "for PKCS#7 signatures this certificate's key vouches for"});
    }
  }
  return v;
}

}  // namespace

}  // namespace modsign::blacklist
