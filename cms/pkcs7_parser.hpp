// mirrors crypto/asymmetric_keys/pkcs7_parser.c pkcs7_parse_message, the pkcs7.asn1 callbacks (pkcs7_note_*,
// pkcs7_sig_note_*), pkcs7_check_authattrs, pkcs7_supply_detached_data, Linux 7.2.13 The structs are struct
// x509_certificate, struct pkcs7_signed_info and struct pkcs7_message as far as the mirror needs them; the behaviour of
// each kernel generation is chosen by a KernelModel (docs/kernel-semantics.md §1).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cms/kernel_model.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"
#include "modsign/load_verdict.hpp"

namespace modsign::cms {

/// OID contents (no tag or length) of the two eContentTypes pkcs7_parse_message accepts:
/// id-data and Microsoft's SPC_INDIRECT_DATA (Authenticode).
inline constexpr std::uint8_t kOidData[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01};
inline constexpr std::uint8_t kOidMsIndirectData[] = {0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x01, 0x04};

/// Byte-wise equality of two byte strings of any length.
inline bool same(ByteView a, ByteView b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }

/// struct x509_certificate, as far as PKCS#7 handling needs it.
struct X509Cert {
  crypto::Certificate cert;
  Bytes id;                                 ///< serial contents ‖ issuer Name contents
  std::optional<Bytes> skid;                ///< subjectKeyIdentifier contents
  std::optional<Bytes> akid_id, akid_skid;  ///< sig->auth_ids[0], [1] from the AKID
  int index = 0;
  bool blacklisted = false;
  bool self_signed = false;
  bool unsupported_sig = false;
  std::optional<std::size_t> signer;  ///< issuing certificate in the message (chain walk)
  bool seen = false;
};

/// struct pkcs7_signed_info with its public_key_signature.
struct SignedInfo {
  int index = 0;
  std::string hash_algo;  ///< kernel name ("sha256"), "none" (7.0 ML-DSA without authattrs)
  std::string pkey_algo;  ///< "rsa", "ecdsa", "ecrdsa", "mldsa44", "mldsa65", "mldsa87"
  std::string encoding;   ///< "pkcs1", "x962", "raw"
  bool algo_takes_data = false;
  Bytes signature;  ///< encryptedDigest contents
  Bytes auth_id;    ///< auth_ids[0]: serial ‖ issuer contents, or the SKID
  bool expect_skid = false;
  /// The signed attributes as the kernel keeps them: `authattrs` is the [0] element from
  /// its length octets on (the tag byte is not kept); nullopt if absent or in the
  /// [2] EXPLICIT SEQUENCE form, which the kernel does not record.
  std::optional<Bytes> authattrs;
  std::optional<Bytes> msgdigest;
  std::optional<std::int64_t> signing_time;  ///< seconds since the epoch
  unsigned aa_set = 0;
  std::optional<std::size_t> signer;  ///< index into Pkcs7Message::certs (pkcs7_find_key)
  bool blacklisted = false;
  bool unsupported_crypto = false;
  /// pkcs7_digest() result, cached as the kernel caches sig->m.  When !m_free (7.0
  /// ML-DSA without authattrs) sig->m points at the message data: `m` stays empty and
  /// `m_is_data` is set, so no copy of the module is made per signer.
  std::optional<Bytes> m;
  bool m_free = false;
  bool m_is_data = false;
};

/// struct pkcs7_message.
struct Pkcs7Message {
  int version = 0;
  std::vector<X509Cert> certs;
  std::vector<SignedInfo> signed_infos;
  Bytes data_type;            ///< OID contents of eContentType
  std::optional<Bytes> data;  ///< embedded eContent, or supplied detached data
  /// Identifier and length octets of the embedded content element (pkcs7_note_data's
  /// hdrlen: what pkcs7_get_content_data reports, and mscode_parse steps back over).
  Bytes data_header;
  bool data_embedded = false;
  bool have_authattrs = false;
  bool authattrs_rej_waivable = false;
  /// Subject CN of the trusted certificate that vouched for each signer (pkcs7_validate_trust).
  std::vector<std::string> trusted_by;
  /// The same certificates (CN, subjectKeyIdentifier, serial) for reports.
  std::vector<modsign::TrustedKey> trusted_keys;
  /// H(data) per kernel hash name, computed once for all signers (the kernel hashes per
  /// signer; the values are the same).
  std::vector<std::pair<std::string, Bytes>> data_digests;
  /// For data that is not held in memory (supplied as digests): the ML-DSA μ of the data
  /// per raw public key, used where the kernel hands ML-DSA the data itself.
  std::vector<std::pair<Bytes, Bytes>> data_mu;
  /// Detached data was supplied as digests (data_digests / data_mu) instead of bytes.
  bool data_prehashed = false;
  /// Library that checks ML-DSA signatures (not a kernel property; both give the same verdicts).
  crypto::Backend backend = crypto::Backend::automatic;
};

/// pkcs7_parse_message(): run the pkcs7.asn1 grammar and its callbacks over BER input,
/// then pkcs7_check_authattrs().  Certificates are parsed (X.509; their TBS blacklisted
/// per `blacklist`).  Errors are the callbacks' (kernel-semantics §1): EINVAL (content
/// type, versions, no/inconsistent signers), EBADMSG (decoder, version mismatch,
/// attribute rules, certificate tags), ENOPKG (digest/signature/key OIDs), EKEYREJECTED
/// (repeated or Authenticode-only attributes).
Result<Pkcs7Message> pkcs7_parse_message(ByteView der, const KernelModel& profile,
                                         const Blacklist* blacklist = nullptr);

/// pkcs7_supply_detached_data(): EINVAL "Data already supplied" if the message has data.
Status pkcs7_supply_detached_data(Pkcs7Message& msg, ByteView data);

}  // namespace modsign::cms
