// mirrors crypto/asymmetric_keys/x509_public_key.c x509_get_sig_params (the tbs: blacklist hash),
// x509_check_for_self_signed, and the certificate signature check, Linux 7.2.13
#include "cms/x509_public_key.hpp"

#include "asn1/der.hpp"

#include "cms/public_key.hpp"
#include "cms/x509_cert_parser.hpp"

namespace modsign::cms {

std::optional<Bytes> x509_tbs_blacklist_hash(const crypto::Certificate& c, const KernelModel& p) {
  if (p.generation == Generation::v7_0) return crypto::digest(crypto::HashAlgo::sha256, c.tbs());
  // Before 7.0 the TBS digest is the certificate signature's own hash, and no check
  // happens when that hash is not available (x509_get_sig_params).
  auto h = c.signature_hash();
  if (!h) return std::nullopt;
  // 6.1-6.6 cannot parse a SHA-3-signed certificate at all (x509_supported): no lookup.
  if (p.legacy_digests &&
      (*h == crypto::HashAlgo::sha3_256 || *h == crypto::HashAlgo::sha3_384 || *h == crypto::HashAlgo::sha3_512))
    return std::nullopt;
  return crypto::digest(*h, c.tbs());
}

bool tbs_blacklisted(const crypto::Certificate& c, const KernelModel& p, const Blacklist* bl) {
  if (!bl || bl->descriptions.empty()) return false;
  auto h = x509_tbs_blacklist_hash(c, p);
  return h && bl->is_tbs_blacklisted(*h);
}

namespace {

/// The certificate's own signature as a SignedInfo-like view, for chain checks.
SignedInfo cert_sig(const crypto::Certificate& c) {
  SignedInfo si;
  if (auto gost = gost2012_signature_hash(c.signature_algorithm())) {
    si.pkey_algo = "ecrdsa";
    si.hash_algo = *gost;
    si.signature = Bytes(c.signature_value().begin(), c.signature_value().end());
    return si;
  }
  bool ecdsa = false;
  auto ka = crypto::key_algo_by_signature_oid(c.signature_algorithm(), &ecdsa);
  si.pkey_algo = ecdsa ? "ecdsa" : ka ? std::string(crypto::kernel_pkey_name(*ka)) : "rsa";
  if (auto h = c.signature_hash()) si.hash_algo = crypto::hash_info(*h).name;
  else si.hash_algo = "none";
  si.signature = Bytes(c.signature_value().begin(), c.signature_value().end());
  return si;
}

}  // namespace

Status verify_cert_signature(const crypto::Certificate& child, const crypto::PublicKey& issuer_key,
                             crypto::Backend backend, const KernelModel* profile) {
  // x509_note_signature drops the unused-bits octet, which must be 0; a signature of no
  // octets then goes on to the algorithm (kmemdup of 0 bytes is not a failure).  Found by
  // the ECDSA-Sig-Value family (ecdsa-cert-sig-empty on 6.1: ENOENT, no ECDSA there).
  if (child.signature_has_unused_bits())
    return make_error(KErr::ebadmsg, "certificate signature BIT STRING has unused bits");
  SignedInfo si = cert_sig(child);
  if (si.hash_algo == "none")
    return public_key_verify_signature(issuer_key, si, child.tbs(), backend, nullptr, profile);
  // x509_get_sig_params: a hash the kernel cannot allocate marks the signature unsupported
  // (ENOPKG here); Streebog, where the kernel has it, is computed with Botan.
  std::optional<Bytes> digest;
  if (auto h = hash_of(si.hash_algo)) digest = crypto::digest(*h, child.tbs());
  else if (!profile || profile->has_hash(si.hash_algo))
    digest = crypto::botan::kernel_only_digest(si.hash_algo, child.tbs());
  if (!digest) return make_error(KErr::enopkg, "unsupported certificate hash " + si.hash_algo);
  return public_key_verify_signature(issuer_key, si, *digest, backend, nullptr, profile);
}

Status check_self_signed(X509Cert& x, const KernelModel& profile) {
  (void)profile;
  // raw_subject / raw_issuer are the Names' contents octets (x509_note_subject/issuer): two
  // Names that differ only in their length octets count as the same.  Found by the mutation
  // campaign (certificate.tbs.subject.length.long-form).
  auto contents = [](ByteView tlv) { return asn1::Reader(tlv, asn1::Rules::ber).next().content; };
  if (!same(contents(x.cert.subject()), contents(x.cert.issuer()))) return ok_status();
  if (x.akid_id || x.akid_skid) {
    const bool a = x.skid && x.akid_skid && *x.skid == *x.akid_skid;
    const bool b = x.akid_id && x.id == *x.akid_id;
    if (!a && !b) return ok_status();  // AKID names another certificate: not self-signed
    if ((a != b) && x.akid_id && x.akid_skid) return make_error(KErr::ekeyrejected, "AKID parts disagree");
  }
  auto st = verify_cert_signature(x.cert, x.cert.public_key(), crypto::Backend::automatic, &profile);
  if (!st) {
    if (st.error().code == KErr::enopkg) {
      x.unsupported_sig = true;
      return ok_status();
    }
    return make_error(st.error().code, "self-signature: " + st.error().message);
  }
  x.self_signed = true;
  return ok_status();
}

}  // namespace modsign::cms
