// mirrors crypto/asymmetric_keys/pkcs7_verify.c pkcs7_digest, pkcs7_get_digest, pkcs7_find_key, pkcs7_verify_sig_chain,
// pkcs7_verify_one, pkcs7_verify, Linux 7.2.13
#include "cms/pkcs7_verify.hpp"

#include <algorithm>

#include "asn1/der.hpp"
#include "cms/public_key.hpp"
#include "cms/x509_public_key.hpp"

namespace modsign::cms {

namespace {

int hash_algo_index(const std::string& name) {
  static const char* const names[] = {"md4",         "md5",         "sha1",     "rmd160",   "sha256",  "sha384",
                                      "sha512",      "sha224",      "rmd128",   "rmd256",   "rmd320",  "wp256",
                                      "wp384",       "wp512",       "tgr128",   "tgr160",   "tgr192",  "sm3",
                                      "streebog256", "streebog512", "sha3-256", "sha3-384", "sha3-512"};
  for (int i = 0; i < static_cast<int>(std::size(names)); ++i)
    if (name == names[i]) return i;
  return -1;
}

}  // namespace

// -------------------------------------------------------------------------------- digest

Status pkcs7_digest(Pkcs7Message& msg, std::size_t index, const KernelModel& profile) {
  SignedInfo& si = msg.signed_infos.at(index);
  const ByteView data = msg.data ? ByteView(*msg.data) : ByteView();
  if (profile.generation == Generation::v7_0 && !si.authattrs && si.algo_takes_data) {
    si.m.reset();
    si.m_is_data = true;
    si.m_free = false;
    return ok_status();
  }
  if (si.m) return ok_status();
  // crypto_alloc_shash(sig->hash_algo): ENOENT, which pkcs7_digest returns as ENOPKG.  SM3
  // and Streebog are there when the profile says so (a module loaded on demand); modsign
  // computes them with Botan.
  const auto h = hash_of(si.hash_algo);
  if (!h && (si.hash_algo == "none" || !profile.has_hash(si.hash_algo)))
    return make_error(KErr::enopkg,
                      "hash " + si.hash_algo + " not available" + (si.hash_algo == "none" ? "" : " in this kernel"));
  auto hash = [&](ByteView bytes) -> std::optional<Bytes> {
    if (h) return crypto::digest(*h, bytes);
    return crypto::botan::kernel_only_digest(si.hash_algo, bytes);
  };
  auto cached = std::find_if(msg.data_digests.begin(), msg.data_digests.end(),
                             [&](const auto& e) { return e.first == si.hash_algo; });
  if (cached == msg.data_digests.end()) {
    // The streaming paths hand over precomputed digests of the content, not the content:
    // SM3 and Streebog are not among them (hostile review: an empty content was hashed).
    if (!h && !msg.data)
      return make_error(KErr::enopkg,
                        "the kernel computes " + si.hash_algo +
                            " of the content, which modsign reads as a stream "
                            "and hashes with its own set of digests only: not predicted",
                        Error::Reason::unpredictable);
    auto d = hash(data);
    if (!d)
      return make_error(
          KErr::enopkg,
          "the kernel computes " + si.hash_algo + " and modsign cannot (its Botan lacks it): not predicted",
          Error::Reason::unpredictable);
    msg.data_digests.emplace_back(si.hash_algo, std::move(*d));
    cached = msg.data_digests.end() - 1;
  }
  Bytes d = cached->second;
  // The content hash is cached before the messageDigest checks, so a second call after a
  // failed check returns 0 with it (as 7.2's pkcs7_digest does).
  si.m = d;
  si.m_free = true;
  if (si.authattrs) {
    if (!si.msgdigest) return make_error(KErr::ekeyrejected, "Authattrs lack messageDigest");
    if (si.msgdigest->size() != d.size())
      return make_error(KErr::ebadmsg, "Sig " + std::to_string(si.index) + ": Invalid digest size (" +
                                           std::to_string(si.msgdigest->size()) + ")");
    if (*si.msgdigest != d)
      return make_error(KErr::ekeyrejected, "Sig " + std::to_string(si.index) + ": Message digest doesn't match");
    Bytes set{asn1::kSet};
    set.insert(set.end(), si.authattrs->begin(), si.authattrs->end());
    if (profile.generation == Generation::v7_0 && si.algo_takes_data) d = std::move(set);
    else d = *hash(set);
  }
  si.m = std::move(d);
  si.m_free = true;
  return ok_status();
}

Result<KernelDigest> pkcs7_get_digest(Pkcs7Message& msg, const KernelModel& profile) {
  if (msg.signed_infos.size() != 1)
    return make_error(KErr::ebadmsg, "pkcs7_get_digest needs exactly one SignerInfo, the message has " +
                                         std::to_string(msg.signed_infos.size()));
  auto st = pkcs7_digest(msg, 0, profile);
  if (!st) return st.error();
  const SignedInfo& si = msg.signed_infos[0];
  if (profile.generation == Generation::v7_0 && !si.m_free)
    return make_error(KErr::einval, "pkcs7_get_digest: No digest available");
  KernelDigest out{si.m.value_or(Bytes{}), si.hash_algo, std::nullopt};
  const int idx = hash_algo_index(si.hash_algo);
  if (idx >= 0) out.hash_algo_index = idx;
  return out;
}

// -------------------------------------------------------------------------------- verify

ByteView signed_bytes(const Pkcs7Message& msg, const SignedInfo& si) {
  if (si.m_is_data) return msg.data ? ByteView(*msg.data) : ByteView();
  return si.m ? ByteView(*si.m) : ByteView();
}

// pkcs7_find_key: the first embedded certificate whose x509->id equals auth_ids[0].
namespace {

void pkcs7_find_key(Pkcs7Message& msg, SignedInfo& si) {
  for (std::size_t i = 0; i < msg.certs.size(); ++i)
    if (msg.certs[i].id == si.auth_id) {
      si.signer = i;
      return;
    }
}

// pkcs7_verify_sig_chain (pkcs7_verify.c, 7.2): from the signer certificate up, find
// each issuer among the embedded certificates by the AKID (issuer+serial first, then
// keyid), check the child's signature with it (errors returned as they are), stop at a
// self-signed, blacklisted or unknown issuer, or a loop.
Status pkcs7_verify_sig_chain(Pkcs7Message& msg, SignedInfo& si, const KernelModel& profile) {
  for (auto& c : msg.certs) c.seen = false;
  if (!si.signer) return ok_status();
  std::size_t cur = *si.signer;
  for (;;) {
    X509Cert& x = msg.certs[cur];
    x.seen = true;
    if (x.blacklisted) {
      si.blacklisted = true;
      return ok_status();
    }
    if (x.self_signed || x.unsupported_sig) {
      if (x.self_signed) x.signer = cur;
      return ok_status();
    }
    std::optional<std::size_t> issuer;
    if (x.akid_id) {
      for (std::size_t i = 0; i < msg.certs.size() && !issuer; ++i)
        if (msg.certs[i].id == *x.akid_id) issuer = i;
      if (issuer && x.akid_skid && (!msg.certs[*issuer].skid || *msg.certs[*issuer].skid != *x.akid_skid))
        return make_error(KErr::ekeyrejected,
                          "Sig " + std::to_string(si.index) + ": X.509 chain contains auth-skid nonmatch");
    } else if (x.akid_skid) {
      for (std::size_t i = 0; i < msg.certs.size() && !issuer; ++i)
        if (msg.certs[i].skid && *msg.certs[i].skid == *x.akid_skid) issuer = i;
    }
    if (!issuer) return ok_status();                  // the root of this chain is not in the message
    if (msg.certs[*issuer].seen) return ok_status();  // loop
    auto st = verify_cert_signature(x.cert, msg.certs[*issuer].cert.public_key(), msg.backend, &profile);
    if (!st) return st;
    x.signer = *issuer;
    cur = *issuer;
  }
}

Status pkcs7_verify_one(Pkcs7Message& msg, std::size_t index, const KernelModel& profile) {
  auto st = pkcs7_digest(msg, index, profile);
  if (!st) return st;
  SignedInfo& si = msg.signed_infos[index];
  pkcs7_find_key(msg, si);
  if (!si.signer) return ok_status();  // checked later against the trusted keys
  const X509Cert& x = msg.certs[*si.signer];
  if (si.signing_time && (*si.signing_time < x.cert.valid_from() || *si.signing_time > x.cert.valid_to()))
    return make_error(KErr::ekeyrejected, "Message signed outside of X.509 validity window");
  st = public_key_verify_signature(x.cert.public_key(), si, signed_bytes(msg, si), msg.backend, &msg, &profile);
  if (!st) return st;
  return pkcs7_verify_sig_chain(msg, si, profile);
}

}  // namespace

Status pkcs7_verify(Pkcs7Message& msg, Usage usage, const KernelModel& profile, std::vector<std::string>* warnings) {
  const bool data = same(msg.data_type, kOidData);
  switch (usage) {
    case Usage::module:
      if (!data) return make_error(KErr::ekeyrejected, "Invalid module sig (not pkcs7-data)");
      if (msg.have_authattrs) {
        if (profile.generation == Generation::v7_0 && msg.authattrs_rej_waivable) {
          if (warnings) warnings->push_back("Waived invalid module sig (has authattrs)");
        } else {
          return make_error(KErr::ekeyrejected, "Invalid module sig (has authattrs)");
        }
      }
      break;
    case Usage::firmware:
      if (!data) return make_error(KErr::ekeyrejected, "Invalid firmware sig (not pkcs7-data)");
      if (!msg.have_authattrs) return make_error(KErr::ekeyrejected, "Invalid firmware sig (missing authattrs)");
      break;
    case Usage::kexec_pe:
      if (!same(msg.data_type, kOidMsIndirectData))
        return make_error(KErr::ekeyrejected, "Invalid kexec sig (not Authenticode)");
      break;
    case Usage::unspecified:
    case Usage::bpf:
      if (!data) return make_error(KErr::ekeyrejected, "Invalid unspecified sig (not pkcs7-data)");
      break;
    case Usage::key_signature: return make_error(KErr::einval, "Invalid usage for pkcs7_verify");
  }
  KErr actual = KErr::enopkg;
  std::string reason = "all signers use unsupported crypto";
  auto why = Error::Reason::none;
  for (std::size_t i = 0; i < msg.signed_infos.size(); ++i) {
    auto st = pkcs7_verify_one(msg, i, profile);
    SignedInfo& si = msg.signed_infos[i];
    if (si.blacklisted) {
      if (actual == KErr::enopkg) {
        actual = KErr::ekeyrejected;
        reason = "Sig " + std::to_string(si.index) + ": signer certificate is blacklisted";
        why = Error::Reason::blacklisted;
      }
      continue;
    }
    if (!st) {
      if (st.error().code == KErr::enopkg) {
        si.unsupported_crypto = true;
        continue;
      }
      return st;
    }
    actual = KErr::none;
  }
  if (actual == KErr::none) return ok_status();
  return make_error(actual, reason, why);
}

}  // namespace modsign::cms
