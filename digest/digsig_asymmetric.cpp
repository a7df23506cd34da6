// mirrors security/integrity/digsig_asymmetric.c request_asymmetric_key, asymmetric_verify_common, asymmetric_verify,
// calc_file_id_hash, asymmetric_verify_v3_hashless, asymmetric_verify_v3 (struct signature_v2_hdr, struct ima_file_id,
// enum evm_ima_xattr_type of security/integrity/integrity.h), Linux 7.2.13
#include "digest/digsig_asymmetric.hpp"

#include <cstdio>
#include <stdexcept>

#include "cms/asymmetric_type.hpp"
#include "cms/public_key.hpp"
#include "cms/x509_cert_parser.hpp"
#include "cms/x509_public_key.hpp"
#include "digest/hash_info.hpp"

namespace modsign::digest {

std::optional<SignatureV2Hdr> parse_signature_v2_hdr(ByteView x) {
  if (x.size() < kSignatureV2HdrSize) return std::nullopt;
  SignatureV2Hdr h;
  h.type = x[0];
  h.version = x[1];
  h.hash_algo = x[2];
  h.keyid = (std::uint32_t{x[3]} << 24) | (std::uint32_t{x[4]} << 16) | (std::uint32_t{x[5]} << 8) | x[6];
  h.sig_size = static_cast<std::uint16_t>((x[7] << 8) | x[8]);
  return h;
}

Bytes signature_v2_value(const SignatureV2Hdr& h, ByteView sig) {
  if (sig.size() > 0xffff) throw std::length_error("a signature_v2_hdr sig_size holds at most 65535 bytes");
  Bytes v{h.type,
          h.version,
          h.hash_algo,
          static_cast<std::uint8_t>(h.keyid >> 24),
          static_cast<std::uint8_t>(h.keyid >> 16),
          static_cast<std::uint8_t>(h.keyid >> 8),
          static_cast<std::uint8_t>(h.keyid),
          static_cast<std::uint8_t>(sig.size() >> 8),
          static_cast<std::uint8_t>(sig.size())};
  v.insert(v.end(), sig.begin(), sig.end());
  return v;
}

Bytes ima_file_id(std::uint8_t hash_type, std::uint8_t hash_algorithm, ByteView digest) {
  Bytes id{hash_type, hash_algorithm};
  id.insert(id.end(), digest.begin(), digest.end());
  return id;
}

std::vector<const crypto::Certificate*> ima_keyring_keys(const cms::Keyring& keyring, const cms::KernelModel& profile) {
  std::vector<const crypto::Certificate*> keys;
  for (const auto& c : keyring.certificates)
    if (cms::x509_supported(c, profile) && !cms::tbs_blacklisted(c, profile, &keyring.blacklist)) keys.push_back(&c);
  return keys;
}

namespace {
Bytes tail4(ByteView id) {
  const std::size_t n = id.size() < 4 ? id.size() : 4;
  return Bytes(id.end() - static_cast<std::ptrdiff_t>(n), id.end());
}
std::string keyid_text(std::uint32_t keyid) {
  char name[12];
  std::snprintf(name, sizeof name, "%08x", keyid);
  return name;
}
}  // namespace

std::uint32_t ima_keyid(const crypto::Certificate& cert) {
  const Bytes t = cert.skid() && !cert.skid()->empty() ? tail4(*cert.skid()) : tail4(cert.kernel_id());
  std::uint32_t id = 0;
  for (auto b : t) id = (id << 8) | b;
  return id;
}

Result<const crypto::Certificate*> request_asymmetric_key(const std::vector<const crypto::Certificate*>& keys,
                                                          std::uint32_t keyid) {
  const Bytes want{static_cast<std::uint8_t>(keyid >> 24), static_cast<std::uint8_t>(keyid >> 16),
                   static_cast<std::uint8_t>(keyid >> 8), static_cast<std::uint8_t>(keyid)};
  if (const auto* k = cms::find_key_by_partial_id(keys, want)) return k;
  return make_error(KErr::enokey, "no key id:" + keyid_text(keyid) + " in the .ima keyring");
}

namespace {

/// verify_signature() of the key for `pks` (public_key_verify_signature).
DigsigCheck verify(const crypto::Certificate* key, const std::string& hash_algo, const std::string& encoding,
                   ByteView s, ByteView m, crypto::Backend backend = crypto::Backend::automatic) {
  cms::SignedInfo si;
  si.hash_algo = hash_algo;
  si.pkey_algo = std::string(crypto::kernel_pkey_name(key->public_key().algo()));
  si.encoding = encoding;
  si.signature.assign(s.begin(), s.end());
  const auto st = cms::public_key_verify_signature(key->public_key(), si, m, backend);
  if (!st) return {st.error().code, "verify_signature: " + st.error().message, key};
  return {KErr::none, "", key};
}

/// asymmetric_verify_common(): sig_size, hash_algo, the key's encoding, verify_signature().
DigsigCheck asymmetric_verify_common(const crypto::Certificate* key, ByteView sig, ByteView data, std::uint8_t last) {
  const auto h = *parse_signature_v2_hdr(sig);
  if (sig.size() - kSignatureV2HdrSize != h.sig_size)
    return {KErr::ebadmsg,
            "sig_size " + std::to_string(h.sig_size) + " but " + std::to_string(sig.size() - kSignatureV2HdrSize) +
                " signature bytes follow the header",
            key};
  if (h.hash_algo >= last)
    return {KErr::enopkg,
            "hash_algo " + std::to_string(h.hash_algo) + " is no enum hash_algo value" +
                (last == kHashAlgoLastLegacy ? " of Linux 6.1-6.6 (SHA-3 came with 6.7)" : ""),
            key};
  const crypto::KeyAlgo ka = key->public_key().algo();
  std::string encoding;
  if (ka == crypto::KeyAlgo::rsa) encoding = "pkcs1";
  else if (crypto::is_ecdsa(ka)) encoding = "x962";
  else
    return {KErr::enopkg, "a " + std::string(crypto::kernel_pkey_name(ka)) + " key signs no hash-based IMA signature",
            key};
  return verify(key, std::string(hash_algo_name(h.hash_algo)), encoding, sig.subspan(kSignatureV2HdrSize), data);
}

}  // namespace

DigsigCheck asymmetric_verify(const std::vector<const crypto::Certificate*>& keys, ByteView sig, ByteView digest,
                              const cms::KernelModel& profile) {
  if (sig.size() <= kSignatureV2HdrSize)
    return {KErr::ebadmsg, std::to_string(sig.size()) + " bytes: no signature after the 9-byte header"};
  const auto h = *parse_signature_v2_hdr(sig);
  auto key = request_asymmetric_key(keys, h.keyid);
  if (!key) return {key.error().code, "request_asymmetric_key: " + key.error().message};
  return asymmetric_verify_common(*key, sig, digest, hash_algo_last(profile));
}

bool ima_mldsa_hashless(const cms::KernelModel& profile) {
  return profile.generation == cms::Generation::v7_0 && profile.release >= 2;
}

DigsigCheck asymmetric_verify_v3(const std::vector<const crypto::Certificate*>& keys, ByteView sig, ByteView digest,
                                 std::uint8_t algo, const cms::KernelModel& profile, crypto::Backend backend) {
  if (algo >= hash_algo_last(profile))
    return {KErr::enopkg, "hash algorithm " + std::to_string(algo) + " is no enum hash_algo value"};
  if (sig.size() <= kSignatureV2HdrSize)
    return {KErr::ebadmsg, std::to_string(sig.size()) + " bytes: no signature after the 9-byte header"};
  const auto h = *parse_signature_v2_hdr(sig);
  auto found = request_asymmetric_key(keys, h.keyid);
  if (!found) return {found.error().code, "request_asymmetric_key: " + found.error().message};
  const crypto::Certificate* key = *found;
  const bool signature_type = h.type == static_cast<std::uint8_t>(XattrType::ima_verity_digsig) ||
                              h.type == static_cast<std::uint8_t>(XattrType::evm_ima_xattr_digsig) ||
                              h.type == static_cast<std::uint8_t>(XattrType::evm_xattr_portable_digsig);
  const Bytes file_id = ima_file_id(h.type, algo, digest);
  if (crypto::is_ml_dsa(key->public_key().algo()) && ima_mldsa_hashless(profile)) {
    // asymmetric_verify_v3_hashless: the file id is the message, hash "none", raw encoding.
    if (!signature_type) return {KErr::einval, "xattr type " + std::to_string(h.type) + " is no signature", key};
    if (sig.size() - kSignatureV2HdrSize != h.sig_size)
      return {KErr::ebadmsg,
              "sig_size " + std::to_string(h.sig_size) + " but " + std::to_string(sig.size() - kSignatureV2HdrSize) +
                  " signature bytes follow the header",
              key};
    return verify(key, "none", "raw", sig.subspan(kSignatureV2HdrSize), file_id, backend);
  }
  // calc_file_id_hash: any failure there is EINVAL.
  const auto h_algo = computable_hash(algo);
  if (!signature_type || !h_algo)
    return {KErr::einval, "calc_file_id_hash: cannot hash the file id with " + std::string(hash_algo_name(algo)), key};
  return asymmetric_verify_common(key, sig, crypto::digest(*h_algo, file_id), hash_algo_last(profile));
}

ImaSignedData ima_signed_data(int version, crypto::KeyAlgo key_algo, crypto::HashAlgo hash, ByteView digest) {
  if (version == 2) return {false, Bytes(digest.begin(), digest.end())};
  const Bytes id = ima_file_id(static_cast<std::uint8_t>(XattrType::evm_ima_xattr_digsig), hash_algo_of(hash), digest);
  if (crypto::is_ml_dsa(key_algo)) return {true, id};
  return {false, crypto::digest(hash, id)};
}

}  // namespace modsign::digest
