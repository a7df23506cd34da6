// mirrors crypto/asymmetric_keys/pkcs7_trust.c pkcs7_validate_trust, pkcs7_validate_trust_one, Linux 7.2.13
#include "cms/pkcs7_trust.hpp"

#include "cms/asymmetric_type.hpp"
#include "cms/pkcs7_verify.hpp"
#include "cms/public_key.hpp"
#include "cms/x509_public_key.hpp"

namespace modsign::cms {

Status pkcs7_validate_trust(Pkcs7Message& msg, const std::vector<crypto::Certificate>& trusted,
                            const KernelModel& profile) {
  bool any_ok = false, any_unsupported = false;
  for (auto& si : msg.signed_infos) {
    if (si.unsupported_crypto) {
      any_unsupported = true;
      continue;
    }
    // pkcs7_validate_trust_one: walk the chain that pkcs7_verify built.  At a match the
    // trusted key checks the signature made by the matched certificate: the SignerInfo's
    // for the signer certificate itself, else the child certificate's.
    const crypto::Certificate* key = nullptr;
    const SignedInfo* sinfo_sig = &si;  // "sig": starts as the SignerInfo's signature
    const X509Cert* child = nullptr;    // when set, "sig" is child's certificate signature
    bool ended = false;
    const X509Cert* last = nullptr;
    if (si.signer) {
      std::size_t cur = *si.signer;
      for (std::size_t guard = 0; guard <= msg.certs.size(); ++guard) {
        const X509Cert& p = msg.certs[cur];
        auto k = find_asymmetric_key(trusted, p.id, p.skid);
        if (k) {
          key = *k;
          break;
        }
        if (p.signer && *p.signer == cur) {  // an unknown self-signed certificate ends it
          ended = true;
          break;
        }
        last = &p;
        child = &p;
        sinfo_sig = nullptr;
        if (p.unsupported_sig || !p.signer) break;
        cur = *p.signer;
      }
    }
    if (ended) continue;  // ENOKEY for this signer
    if (!key && last && (last->akid_id || last->akid_skid)) {
      auto k = find_asymmetric_key(trusted, last->akid_id, last->akid_skid);
      if (k) {
        key = *k;
        child = last;
        sinfo_sig = nullptr;
      } else if (k.error().code != KErr::enokey) {
        return make_error(k.error().code, "Sig " + std::to_string(si.index) + ": " + k.error().message);
      }
    }
    if (!key) {
      // Last resort, the "direct signer": every sign-file signature.
      auto k = find_asymmetric_key(trusted, si.auth_id, std::nullopt);
      if (!k) {
        if (k.error().code == KErr::enokey) continue;
        return make_error(k.error().code, "Sig " + std::to_string(si.index) + ": " + k.error().message);
      }
      key = *k;
      child = nullptr;
      sinfo_sig = &si;
    }
    if (sinfo_sig && !si.m && !si.m_is_data)
      return make_error(KErr::einval,
                        "Sig " + std::to_string(si.index) + ": pkcs7_verify() must run before trust validation");
    Status st = sinfo_sig ? public_key_verify_signature(key->public_key(), *sinfo_sig, signed_bytes(msg, si),
                                                        msg.backend, &msg, &profile)
                          : verify_cert_signature(child->cert, key->public_key(), msg.backend, &profile);
    if (!st) {
      if (st.error().code == KErr::enomem) return st;
      return make_error(KErr::ekeyrejected, "Sig " + std::to_string(si.index) + ": " + st.error().message);
    }
    msg.trusted_by.push_back(key->subject_cn());
    msg.trusted_keys.push_back({key->subject_cn(), key->skid() ? to_hex(*key->skid()) : "", to_hex(key->serial())});
    any_ok = true;
  }
  if (any_ok) return ok_status();
  if (any_unsupported) return make_error(KErr::enopkg, "all signers use unsupported crypto");
  return make_error(KErr::enokey, "no trusted key matches the signer");
}

}  // namespace modsign::cms
