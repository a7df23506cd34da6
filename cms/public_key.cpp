// mirrors crypto/asymmetric_keys/public_key.c public_key_verify_signature (with crypto/rsassa-pkcs1.c
// rsassa_pkcs1_verify, the set_pub_key of crypto/rsa.c and crypto/mldsa.c; ECDSA in cms/ecdsa and cms/ecdsa_x962),
// Linux 7.2.13
#include "cms/public_key.hpp"

#include <algorithm>

#include "asn1/der.hpp"
#include "cms/ecdsa.hpp"
#include "cms/ecdsa_x962.hpp"
#include "cms/mldsa.hpp"

namespace modsign::cms {

using asn1::Element;
using asn1::Reader;
using asn1::Rules;
using asn1::Writer;

std::optional<crypto::HashAlgo> hash_of(const std::string& name) {
  if (name == "none" || name == "sm3" || name.rfind("streebog", 0) == 0) return std::nullopt;
  return crypto::hash_by_name(name);
}

namespace {

/// rsassa_pkcs1_verify (crypto/rsassa-pkcs1.c, 7.2): s^e mod n, then the EMSA-PKCS1-v1_5
/// block checked field by field with the kernel's errno for each.
Status rsassa_pkcs1_verify(const crypto::PublicKey& key, crypto::HashAlgo h, ByteView digest, ByteView sig) {
  const std::size_t k = static_cast<std::size_t>((key.bits() + 7) / 8);
  if (sig.size() != k)
    return make_error(KErr::einval,
                      "RSA signature is " + std::to_string(sig.size()) + " bytes, the key needs " + std::to_string(k));
  // s <= 1 is refused before the public operation.
  if (std::all_of(sig.begin(), sig.end() - 1, [](std::uint8_t c) { return c == 0; }) && sig.back() <= 1)
    return make_error(KErr::einval, "RSA signature representative out of range");
  auto em = crypto::rsa_public_raw(key, sig);
  if (!em) return make_error(KErr::einval, "RSA signature representative out of range");
  const Bytes& b = *em;
  if (b[0] != 0x00) return make_error(KErr::einval, "RSA block does not start with 00");
  if (b[1] != 0x01) return make_error(KErr::ebadmsg, "RSA block type is not 01");
  std::size_t i = 2;
  while (i < b.size() && b[i] == 0xff) ++i;
  if (i - 2 < 8 || i >= b.size() || b[i] != 0x00) return make_error(KErr::ebadmsg, "bad PKCS#1 v1.5 padding");
  ++i;
  // DigestInfo prefix: SEQUENCE { SEQUENCE { OID, NULL }, OCTET STRING (hash size) }.
  const auto& hi = crypto::hash_info(h);
  Writer alg;
  alg.add(asn1::kSequence, [&](Writer& a) {
    a.oid(hi.oid);
    a.null();
  });
  Bytes prefix;
  {
    const Bytes& inner = alg.bytes();
    Bytes octet_hdr = asn1::header(asn1::kOctetString, hi.size);
    prefix = asn1::header(asn1::kSequence, inner.size() + octet_hdr.size() + hi.size);
    prefix.insert(prefix.end(), inner.begin(), inner.end());
    prefix.insert(prefix.end(), octet_hdr.begin(), octet_hdr.end());
  }
  if (b.size() - i != prefix.size() + hi.size ||
      !std::equal(prefix.begin(), prefix.end(), b.begin() + static_cast<std::ptrdiff_t>(i)))
    return make_error(KErr::ebadmsg, "DigestInfo does not match " + std::string(hi.name));
  if (!std::equal(digest.begin(), digest.end(), b.begin() + static_cast<std::ptrdiff_t>(i + prefix.size())))
    return make_error(KErr::ekeyrejected, "signature does not verify");
  return ok_status();
}

/// The kernel's pkey_algo of an ECDSA key (x509_extract_key_data): "ecdsa-nist-p256" ...
std::string ecdsa_key_name(crypto::KeyAlgo a) {
  switch (a) {
    case crypto::KeyAlgo::ecdsa_p192: return "ecdsa-nist-p192";
    case crypto::KeyAlgo::ecdsa_p256: return "ecdsa-nist-p256";
    case crypto::KeyAlgo::ecdsa_p384: return "ecdsa-nist-p384";
    default: return "ecdsa-nist-p521";
  }
}

/// crypto_alloc_sig(alg_name) (public_key_verify_signature, 7.2): the name
/// software_key_determine_akcipher() built, ENOENT when the kernel's configuration has no
/// such algorithm (crypto_alg_mod_lookup finds none; Debian's 7.2.13 cloud kernel is built
/// without CONFIG_CRYPTO_MLDSA and still parses ML-DSA signatures: docs/conformance.md).
Status crypto_alloc_sig(const std::string& alg_name, const std::string& pkey_algo, const KernelModel* profile) {
  if (!profile || profile->has_sig_algo(pkey_algo)) return ok_status();
  const std::string symbol = pkey_algo.rfind("mldsa", 0) == 0   ? "CONFIG_CRYPTO_MLDSA"
                             : pkey_algo.rfind("ecdsa", 0) == 0 ? "CONFIG_CRYPTO_ECDSA"
                                                                : "CONFIG_CRYPTO_RSA";
  return make_error(KErr::enoent,
                    "crypto_alloc_sig(" + alg_name + "): no such algorithm (" + symbol + " is not built in)");
}

// The subjectPublicKey bytes x509_extract_key_data keeps (BIT STRING contents after the
// unused-bits octet), read from the SubjectPublicKeyInfo as the x509 grammar did.
Bytes key_bits(const crypto::PublicKey& key) {
  Reader top(key.spki(), Rules::ber);
  Reader spki = top.enter(asn1::kSequence, "SubjectPublicKeyInfo");
  spki.expect(asn1::kSequence, "algorithm");
  Element bits = spki.expect(asn1::kBitString, "subjectPublicKey");
  if (bits.content.empty()) return {};
  return Bytes(bits.content.begin() + 1, bits.content.end());
}

// rsa_set_pub_key: rsa_parse_pub_key (rsapubkey.asn1 under asn1_ber_decoder, whose
// rsa_get_n / rsa_get_e refuse an empty n, an empty e and an e longer than n), then
// rsa_check_key_length on the modulus size in whole 64-bit limbs (mpi_get_size).
Result<crypto::PublicKey> rsa_set_pub_key(const crypto::PublicKey& key, ByteView k) {
  Element n, e;
  try {
    Reader top(k, Rules::ber);
    Reader seq = top.enter(asn1::kSequence, "RsaPubKey");
    n = seq.expect(asn1::kInteger, "n");
    if (n.content.empty()) return make_error(KErr::einval, "RSA key: empty modulus");
    e = seq.expect(asn1::kInteger, "e");
    if (e.content.empty() || e.content.size() > n.content.size())
      return make_error(KErr::einval, "RSA key: exponent empty or longer than the modulus");
    seq.finish("RsaPubKey");
  } catch (const asn1::DecodeError& ex) { return make_error(KErr::ebadmsg, std::string("RSA key: ") + ex.what()); }
  std::size_t i = 0;
  while (i < n.content.size() && n.content[i] == 0) ++i;
  const std::size_t bits = (n.content.size() - i + 7) / 8 * 64;
  if (bits != 512 && bits != 1024 && bits != 1536 && bits != 2048 && bits != 3072 && bits != 4096)
    return make_error(KErr::einval, "RSA key: modulus of " + std::to_string(bits) + " bits (64-bit limbs)");
  if (key.usable()) return key;
  auto rebuilt = crypto::PublicKey::from_rsa(n.content, e.content);
  if (!rebuilt) return make_error(KErr::einval, "RSA key: " + rebuilt.error().message);
  return rebuilt;
}

}  // namespace

Result<crypto::PublicKey> crypto_sig_set_pubkey(const crypto::PublicKey& key) {
  Bytes k;
  try {
    k = key_bits(key);
  } catch (const asn1::DecodeError& ex) {
    return make_error(KErr::ebadmsg, std::string("SubjectPublicKeyInfo: ") + ex.what());
  }
  if (crypto::is_ml_dsa(key.algo())) {
    // crypto_mldsa_set_pub_key: the length alone.
    const std::size_t want = crypto::ml_dsa_public_key_size(key.algo());
    if (k.size() != want)
      return make_error(KErr::einval, "ML-DSA public key of " + std::to_string(k.size()) + " bytes, " +
                                          std::to_string(want) + " needed");
    if (key.usable()) return key;
    auto rebuilt = crypto::PublicKey::from_ml_dsa_raw(key.algo(), k);
    if (!rebuilt) return make_error(KErr::einval, rebuilt.error().message);
    return rebuilt;
  }
  if (crypto::is_ecdsa(key.algo())) return ecdsa_set_pub_key(key, k);
  return rsa_set_pub_key(key, k);
}

Status public_key_verify_signature(const crypto::PublicKey& key, const SignedInfo& si, ByteView m,
                                   crypto::Backend backend, const Pkcs7Message* msg, const KernelModel* profile) {
  const crypto::KeyAlgo ka = key.algo();
  const bool key_ecdsa = crypto::is_ecdsa(ka);
  // The signature's pkey_algo must be the key's ("ecdsa" stands for every curve).
  if (si.pkey_algo != crypto::kernel_pkey_name(ka))
    return make_error(KErr::ekeyrejected, "signature algorithm " + si.pkey_algo + " differs from the key's " +
                                              std::string(crypto::kernel_pkey_name(ka)));
  if (ka == crypto::KeyAlgo::ecrdsa_256 || ka == crypto::KeyAlgo::ecrdsa_512) {
    // software_key_determine_akcipher: raw encoding and a Streebog hash, else EINVAL; the
    // GOST verification itself is one modsign does not make.
    if (si.encoding != "raw" || (si.hash_algo != "streebog256" && si.hash_algo != "streebog512"))
      return make_error(KErr::einval,
                        "ecrdsa takes raw signatures over streebog256/512, not " + si.encoding + " " + si.hash_algo);
    if (auto st = crypto_alloc_sig("ecrdsa", "ecrdsa", profile); !st) return st;
    return make_error(KErr::enopkg, "a GOST R 34.10-2012 signature, which modsign does not verify: not predicted",
                      Error::Reason::unpredictable);
  }
  if (crypto::is_ml_dsa(ka)) {
    // software_key_determine_akcipher: raw encoding, hash "none" or "sha512" only.
    if (si.hash_algo != "none" && si.hash_algo != "sha512")
      return make_error(KErr::einval, "ML-DSA accepts hash none or sha512, not " + si.hash_algo);
    if (auto st = crypto_alloc_sig(si.pkey_algo, si.pkey_algo, profile); !st) return st;
    auto usable = crypto_sig_set_pubkey(key);
    if (!usable) return usable.error();
    const crypto::PublicKey& pk = usable.value();
    // mldsa_verify: a signature that does not decode is malformed (EBADMSG), found by the
    // mutation campaign (pkcs7.zeroes in an ML-DSA signature or certificate signature).
    if (auto st = mldsa_signature_decodes(ka, si.signature); !st) return st;
    if (msg && si.m_is_data && msg->data_prehashed) {  // the data itself, as external μ
      for (const auto& [raw, mu] : msg->data_mu)
        if (raw == pk.raw()) return crypto::ml_dsa_verify_mu(pk, mu, si.signature);
      return make_error(KErr::einval, "no μ of the data for this ML-DSA key");
    }
    return crypto::verify_message(pk, crypto::HashAlgo::sha512, m, si.signature, backend);
  }
  auto h = hash_of(si.hash_algo);
  // software_key_determine_akcipher: ECDSA takes SHA-1, SHA-2 or SHA-3 only, else EINVAL.
  // md4/md5 reach here only under v6.1, whose list is SHA-1/SHA-2 (confirmed on Debian 12's
  // 6.1: a genuine ECDSA signature under digestAlgorithm md5 is refused with EINVAL).
  if (key_ecdsa && (si.hash_algo == "md4" || si.hash_algo == "md5")) h.reset();
  // RSA with a digest that has no DigestInfo prefix (md4, sm3, streebog): 7.x's
  // rsassa_pkcs1_create refuses it (EINVAL, returned by crypto_alloc_sig); 6.1's
  // pkcs1pad_create fails the same way, but its crypto_alloc_akcipher reports ENOENT
  // (Debian 12's 6.1, a Streebog digestAlgorithm and the certificate embedded).
  if (!h && !key_ecdsa && profile && profile->generation == Generation::v6 && profile->legacy_digests)
    return make_error(KErr::enoent, "crypto_alloc_akcipher(pkcs1pad(rsa," + si.hash_algo + ")): no such algorithm");
  if (!h) return make_error(KErr::einval, "no " + si.pkey_algo + " signature scheme with " + si.hash_algo);
  if (auto st = crypto_alloc_sig(key_ecdsa ? "x962(" + ecdsa_key_name(ka) + ")" : "pkcs1(rsa," + si.hash_algo + ")",
                                 key_ecdsa ? "ecdsa" : "rsa", profile);
      !st)
    return st;
  auto usable = crypto_sig_set_pubkey(key);
  if (!usable) return usable.error();
  if (key_ecdsa) {
    // ecdsa_x962_verify: the ECDSA-Sig-Value decoded, then ecdsa_verify.
    auto rs = ecdsa_x962_decode(si.signature, ecdsa_bufsize(ka));
    if (!rs) return rs.error();
    return ecdsa_verify(usable.value(), *h, m, rs.value());
  }
  return rsassa_pkcs1_verify(usable.value(), *h, m, si.signature);
}

}  // namespace modsign::cms
