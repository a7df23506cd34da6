// mirrors security/integrity/digsig_asymmetric.c request_asymmetric_key, asymmetric_verify_common, asymmetric_verify,
// calc_file_id_hash, asymmetric_verify_v3_hashless, asymmetric_verify_v3 (struct signature_v2_hdr, struct ima_file_id,
// enum evm_ima_xattr_type of security/integrity/integrity.h), Linux 7.2.13 The security.ima signature format (versions
// 2 and 3) and its check against the .ima keyring.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cms/kernel_model.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::digest {

/// enum evm_ima_xattr_type (security/integrity/integrity.h): the first byte of security.ima.
enum class XattrType : std::uint8_t {
  ima_xattr_digest = 0x01,
  evm_xattr_hmac = 0x02,
  evm_ima_xattr_digsig = 0x03,
  ima_xattr_digest_ng = 0x04,
  evm_xattr_portable_digsig = 0x05,
  ima_verity_digsig = 0x06,
};

/// sizeof(struct signature_v2_hdr): type, version, hash_algo, __be32 keyid, __be16 sig_size.
inline constexpr std::size_t kSignatureV2HdrSize = 9;

/// struct signature_v2_hdr, decoded (keyid and sig_size from big-endian).
struct SignatureV2Hdr {
  std::uint8_t type = 0, version = 0, hash_algo = 0;
  std::uint32_t keyid = 0;
  std::uint16_t sig_size = 0;
};
/// The header of `xattr`; nullopt when it holds fewer than kSignatureV2HdrSize bytes.
std::optional<SignatureV2Hdr> parse_signature_v2_hdr(ByteView xattr);
/// header ‖ `sig` with sig_size = sig.size() (at most 65,535 bytes; std::length_error beyond).
Bytes signature_v2_value(const SignatureV2Hdr& hdr, ByteView sig);

/// The used part of struct ima_file_id: hash_type ‖ hash_algorithm ‖ digest (2 +
/// digest.size() bytes: 34, 50, 66 for SHA-256/384/512), as calc_file_id_hash and
/// asymmetric_verify_v3_hashless build it.
Bytes ima_file_id(std::uint8_t hash_type, std::uint8_t hash_algorithm, ByteView digest);

/// The keys request_asymmetric_key() can find in the .ima keyring: those of `keyring` the
/// kernel of `profile` loads (x509_supported, not listed by a tbs: entry), in load order.
std::vector<const crypto::Certificate*> ima_keyring_keys(const cms::Keyring& keyring, const cms::KernelModel& profile);

/// The 32-bit key id request_asymmetric_key() finds `cert` by ("id:%08x", a partial match
/// of the tail of the key's SKID or serial ‖ issuer): the last 4 bytes of the
/// subjectKeyIdentifier (what evmctl --keyid-from-cert writes; for a SKID made as RFC 5280
/// §4.2.1.2 (1), also what evmctl derives from the key), or, for a certificate without a
/// SKID, the last 4 bytes of serial ‖ issuer contents.
std::uint32_t ima_keyid(const crypto::Certificate& cert);

/// request_asymmetric_key(keyring, keyid): the first key whose id ends with the 4 bytes of
/// `keyid`; ENOKEY "no key id:%08x in the .ima keyring" otherwise (the keyring search's
/// EAGAIN, hidden as ENOKEY).  CONFIG_IMA_BLACKLIST_KEYRING (.ima_blacklist) is taken as empty.
Result<const crypto::Certificate*> request_asymmetric_key(const std::vector<const crypto::Certificate*>& keys,
                                                          std::uint32_t keyid);

/// The outcome of one signature check: errno (KErr::none = verified), the reason, and the
/// key request_asymmetric_key() found (nullptr when none).
struct DigsigCheck {
  KErr err = KErr::none;
  std::string reason;
  const crypto::Certificate* key = nullptr;
};

/// asymmetric_verify(): a version 2 signature `sig` (the whole security.ima value) over
/// `digest`, the file's digest: EBADMSG for a value of at most 9 bytes or a sig_size that
/// differs from the bytes that follow; ENOKEY no key; ENOPKG hash_algo >= HASH_ALGO__LAST
/// or a key that is neither RSA nor ECDSA (ML-DSA); then public_key_verify_signature's
/// errno (EKEYREJECTED: does not verify; EBADMSG malformed ECDSA-Sig-Value; EINVAL ...).
DigsigCheck asymmetric_verify(const std::vector<const crypto::Certificate*>& keys, ByteView sig, ByteView digest,
                              const cms::KernelModel& profile);

/// Whether asymmetric_verify_v3() has the pure ML-DSA branch (asymmetric_verify_v3_hashless):
/// Linux 7.2 (profile "v7.2"); before it an ML-DSA key takes the RSA/ECDSA path and fails
/// with ENOPKG.
bool ima_mldsa_hashless(const cms::KernelModel& profile);

/// asymmetric_verify_v3(): a version 3 signature over ima_file_id(hdr.type, `algo`,
/// `digest`) with `algo` the hash IMA used for the file: ENOPKG algo >= HASH_ALGO__LAST;
/// EBADMSG a value of at most 9 bytes; ENOKEY no key; an ML-DSA key under v7.2: pure
/// ML-DSA (empty context) over the file id itself (EINVAL for an xattr type that is no
/// signature, EBADMSG sig_size mismatch, then public_key_verify_signature's EBADMSG/
/// EKEYREJECTED); RSA/ECDSA (and ML-DSA before 7.2): hash `algo` of the file id, then as
/// asymmetric_verify() (hdr.hash_algo is checked there, not `algo`).  `backend`: the
/// library of the ML-DSA check (the same verdicts).
DigsigCheck asymmetric_verify_v3(const std::vector<const crypto::Certificate*>& keys, ByteView sig, ByteView digest,
                                 std::uint8_t algo, const cms::KernelModel& profile,
                                 crypto::Backend backend = crypto::Backend::automatic);

/// What a signer signs for a signature of `version` (2 or 3) with a key of `key_algo`
/// over a file whose `hash` digest is `digest` (the inverse of the checks above):
/// version 2: the digest itself (RSA: PKCS#1 v1.5 with the hash's DigestInfo; ECDSA over
/// the digest); version 3, RSA/ECDSA: hash(ima_file_id(0x03, hash, digest)); version 3,
/// ML-DSA: the file id itself, signed as a message (pure ML-DSA, empty context).
struct ImaSignedData {
  bool message = false;  ///< true: sign `data` as a message (ML-DSA); false: `data` is a digest of `hash`
  Bytes data;
};
ImaSignedData ima_signed_data(int version, crypto::KeyAlgo key_algo, crypto::HashAlgo hash, ByteView digest);

}  // namespace modsign::digest
