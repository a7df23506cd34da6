// modsign — keys, X.509 certificates, hashes, signing and verification.
//
// The only layer that talks to OpenSSL (complete backend) and Botan (ML-DSA backend,
// used for cross-checks and selectable per operation).  Everything above it sees the
// types declared here.
//
// Thread safety (batch signing/verification, `--jobs N`): PublicKey, PrivateKey and
// Certificate are immutable after construction and may be shared by any number of
// threads; their EVP_PKEYs are only read (OpenSSL documents EVP_PKEY as shareable for
// signing and verification).  Every operation below creates its own OpenSSL context
// (EVP_PKEY_CTX, EVP_MD_CTX) per call, so nothing mutable is shared; the OpenSSL error
// queue is per thread.  Botan's ML-DSA signer/verifier objects carry a running message
// hash and are kept per thread (thread_local, see botan_backend.cpp).  Hasher and MlDsaMu
// objects belong to one thread at a time.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "asn1/der.hpp"
#include "common/result.hpp"
#include "crypto/algorithms.hpp"

namespace modsign::crypto {

/// Which library performs an ML-DSA operation.  RSA/ECDSA always use OpenSSL.
///  - automatic: the library default_ml_dsa_backend() names for the operation (the
///    measured table), except where only OpenSSL can do it: signing with a key that has no
///    seed (expandedKey form, a token's key), a non-empty context string, external μ.
///  - openssl, botan: that library (`--backend`); Botan signs only with a seed key.
enum class Backend { automatic, openssl, botan };

/// The ML-DSA operations whose library modsign chooses.
enum class MlDsaOp { sign, verify };
/// The library `automatic` means for `op`: on x86_64 the one measured faster per operation
/// with OpenSSL 3.5.7 / 4.0.3 and Botan 3.7.1 / 3.13 (bench/RESULTS.md, issues 5, 26, 28;
/// Botan reuses one signer/verifier per thread and key): Botan for both.  On every other
/// architecture OpenSSL, not measured (issue 27: only emulators run them here): ML-DSA's
/// time goes mostly to SHAKE, and OpenSSL's Keccak uses the hardware there (s390x: CPACF
/// KIMD/KLMD SHA-3 functions; arm64: its ARMv8 assembly, with the SHA3 extension where the
/// CPU has it) while Botan's is portable C++.  Hashing of module contents (digests, the
/// streamed μ) always uses OpenSSL, measured faster than Botan's.
Backend default_ml_dsa_backend(MlDsaOp op);

/// ML-DSA operations per library since the process started: what tests read to see which
/// library a path used.  Counted once per signature made or checked (μ ones included).
struct MlDsaUses {
  std::uint64_t openssl_sign = 0, botan_sign = 0, openssl_verify = 0, botan_verify = 0;
};
MlDsaUses ml_dsa_uses();

// ---------------------------------------------------------------------------------------
// Secrets

/// Overwrite `n` bytes at `p` with zeros in a way the compiler cannot elide
/// (OPENSSL_cleanse).  For private key bytes, seeds, PEM/DER key encodings and passphrases
/// once they are no longer needed.
void cleanse(void* p, std::size_t n) noexcept;
inline void cleanse(Bytes& b) noexcept { cleanse(b.data(), b.size()); }
inline void cleanse(std::string& s) noexcept { cleanse(s.data(), s.size()); }
/// Zeros 64 KiB of the stack below the caller's frame.  OpenSSL's bridge from a PEM
/// passphrase callback to its UI (crypto/ui/ui_util.c ui_read, OpenSSL 3.5) copies the
/// passphrase or PIN into a stack buffer it does not wipe: called after every OpenSSL call
/// that was given one.
void wipe_stack() noexcept;

/// A secret held in a std::string or Bytes (a PIN, a passphrase, a seed, key bytes): every
/// byte of its buffer, up to the capacity, is overwritten with zeros (cleanse()) when it is
/// destroyed, assigned over or moved from, so that no path (an error, an exception) leaves a
/// copy in freed memory.  The constructor takes its value whole and wipes the argument; a
/// buffer that grows by appending would leave its old copy behind, so reserve() first.
template <class T>
class Secret {
 public:
  Secret() = default;
  explicit Secret(T&& v) : v_(v) { wipe(v); }
  Secret(const Secret& o) : v_(o.v_) {}
  Secret(Secret&& o) noexcept : v_(std::move(o.v_)) { wipe(o.v_); }
  Secret& operator=(const Secret& o) {
    if (this != &o) {
      wipe(v_);
      v_ = o.v_;
    }
    return *this;
  }
  Secret& operator=(Secret&& o) noexcept {
    if (this != &o) {
      wipe(v_);
      v_ = std::move(o.v_);
      wipe(o.v_);
    }
    return *this;
  }
  ~Secret() { wipe(v_); }

  T& value() noexcept { return v_; }
  const T& value() const noexcept { return v_; }

  /// Zeros over `v`'s whole buffer (size() up to capacity(), no reallocation), then empty.
  static void wipe(T& v) noexcept {
    v.resize(v.capacity());
    cleanse(v.data(), v.size());
    v.clear();
  }

 private:
  T v_;
};
using SecretString = Secret<std::string>;
using SecretBytes = Secret<Bytes>;

// ---------------------------------------------------------------------------------------
// Hashes

/// H(data) with the given algorithm (OpenSSL EVP).  Output size = hash_info(a).size.
Bytes digest(HashAlgo a, ByteView data);

/// Incremental hash (OpenSSL EVP_MD_CTX); update() any number of times, then final() once.
class Hasher {
 public:
  explicit Hasher(HashAlgo a);
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  void update(ByteView data);
  Bytes final();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------------------------------
// Keys

/// A public key (shared, immutable).  `raw()` is the FIPS 204 public key for ML-DSA
/// (1312/1952/2592 bytes) and the SubjectPublicKeyInfo DER for RSA/ECDSA.
class PublicKey {
 public:
  KeyAlgo algo() const { return algo_; }
  const Bytes& raw() const { return raw_; }
  const Bytes& spki() const { return spki_; }
  /// RSA modulus / EC group size in bits; 0 for ML-DSA.
  int bits() const { return bits_; }
  /// Parse a DER SubjectPublicKeyInfo.  Errors: EBADMSG (malformed),
  /// ENOPKG (algorithm other than RSA, ECDSA P-256/P-384, ML-DSA-44/65/87).
  static Result<PublicKey> from_spki(ByteView spki);
  /// An ML-DSA public key from its raw FIPS 204 encoding.  Errors: EBADMSG if the length
  /// is not 1312/1952/2592 for the level or OpenSSL rejects it; EINVAL if `level` is not ML-DSA.
  static Result<PublicKey> from_ml_dsa_raw(KeyAlgo level, ByteView raw);
  /// The public key of a certificate whose SubjectPublicKeyInfo the kernel's x509 parser
  /// keeps but OpenSSL refuses (BER lengths, parameters on an ML-DSA key, a damaged RSA
  /// key or EC point): algo() from the algorithm OID (and curve), spki() the TLV as found,
  /// no OpenSSL key (usable() false, bits() 0).  The kernel parses a key only when it uses
  /// it (crypto_sig_set_pubkey in cms/public_key), so such a certificate still loads.
  static PublicKey unparsed(KeyAlgo algo, ByteView spki);
  /// False for an unparsed() key: no operation can use it.
  bool usable() const { return pkey_ != nullptr; }
  /// An RSA public key from the unsigned big-endian modulus and exponent.  Errors:
  /// EBADMSG when OpenSSL refuses it.
  static Result<PublicKey> from_rsa(ByteView n, ByteView e);
  /// An ECDSA public key on `curve` from the uncompressed point 04 || X || Y (each
  /// coordinate the curve's field size).  Errors: EBADMSG when OpenSSL refuses it (not
  /// on the curve, coordinates out of range); EINVAL if `curve` is not an ECDSA curve.
  static Result<PublicKey> from_ec_point(KeyAlgo curve, ByteView point);
  /// The OpenSSL EVP_PKEY* as void* (crypto/ internals only); null when !usable().
  void* native() const { return pkey_.get(); }
  /// Same algorithm and key material (OpenSSL EVP_PKEY_eq).
  bool operator==(const PublicKey& other) const;

 private:
  std::shared_ptr<void> pkey_;
  KeyAlgo algo_ = KeyAlgo::rsa;
  Bytes raw_, spki_;
  int bits_ = 0;
  friend class PrivateKey;
};

/// A private signing key.  Key bytes live in OpenSSL's secure structures; seeds copied out
/// are cleansed by the functions that use them.
class PrivateKey {
 public:
  KeyAlgo algo() const { return pub_.algo(); }
  const PublicKey& public_key() const { return pub_; }
  /// The 32-byte ML-DSA seed ξ when the key was made or loaded with one (RFC 9881
  /// seed or both form), wiped when the copy is destroyed; nullopt otherwise.
  std::optional<SecretBytes> ml_dsa_seed() const;
  /// True for an ML-DSA key that has its seed (ml_dsa_seed() would return one); the
  /// copy it reads is wiped.  False for RSA/ECDSA.
  bool has_ml_dsa_seed() const;

  /// Load a private key: PEM (PKCS#8, encrypted PKCS#8, traditional RSA/EC; the first
  /// key block in a file that may also hold certificates) or DER PKCS#8.  ML-DSA accepts
  /// all three RFC 9881 §6 forms (seed, expandedKey, both).  An encrypted key takes its
  /// passphrase from `passphrase` (sign-file: KBUILD_SIGN_PIN).
  /// Errors (all EBADMSG): "no usable private key in PEM input: <OpenSSL reason>",
  /// "not a DER PKCS#8 private key: ...", "invalid private key (inconsistent key
  /// material): ..." (e.g. RFC 9881 C.4 keys whose seed and expandedKey disagree),
  /// "private key is encrypted and no passphrase was given", "cannot decrypt private key";
  /// ENOPKG for a key OpenSSL decodes but modsign does not support.  Throws IoError if unreadable.
  /// The file's bytes are wiped once decoded, on every path.
  static Result<PrivateKey> load(const std::string& path, const std::optional<SecretString>& passphrase);
  static Result<PrivateKey> from_bytes(ByteView pem_or_der, const std::optional<SecretString>& passphrase);

  /// Generate a key: RSA (`rsa_bits` 2048..4096, e = 65537), ECDSA P-256/P-384, ML-DSA
  /// (FIPS 204 KeyGen from a fresh 32-byte seed).
  static PrivateKey generate(KeyAlgo algo, int rsa_bits = 4096);

  /// PKCS#8 PrivateKeyInfo DER.  ML-DSA is written in RFC 9881 seed form
  /// (`privateKey` = [0] IMPLICIT OCTET STRING of 32 bytes; 54 bytes of DER in all);
  /// Error ENOKEY if an ML-DSA key has no seed (loaded from expandedKey form).
  /// A secret, wiped when destroyed (OpenSSL's buffers are a secure heap's).
  Result<SecretBytes> pkcs8_der() const;
  /// The same as PEM ("-----BEGIN PRIVATE KEY-----").
  Result<SecretString> pkcs8_pem() const;

  void* native() const { return pkey_.get(); }
  /// A key held by another provider (a PKCS#11 token, crypto/pkcs11_store.cpp): takes
  /// ownership of the EVP_PKEY `evp_pkey` and keeps `context` (its library context)
  /// alive as long as the key.  Errors: ENOPKG for an algorithm modsign does not support,
  /// EBADMSG when its public key cannot be read.
  static Result<PrivateKey> from_native(void* evp_pkey, std::shared_ptr<void> context);

 private:
  std::shared_ptr<void> pkey_;
  PublicKey pub_;
};

// ---------------------------------------------------------------------------------------
// Certificates

/// The digest a certificate signatureAlgorithm OID names (sha*WithRSAEncryption,
/// ecdsa-with-*, RSA/ECDSA with SHA-3); nullopt for others (ML-DSA, unknown OIDs).
std::optional<HashAlgo> signature_hash_of(ByteView sig_oid);

/// An X.509 certificate with the raw DER pieces the kernel uses to identify a signer
/// (crypto/asymmetric_keys/x509_cert_parser.c): the issuer and subject Name TLVs, the
/// serialNumber INTEGER contents and the subjectKeyIdentifier.
/// What `data` (a whole file) holds that no output may overwrite, in any form modsign
/// reads keys and certificates: "a private key" or "a certificate", with the encoding
/// ("PEM", "DER"); nullopt for anything else.  PEM: a "-----BEGIN ...PRIVATE KEY-----" or
/// "-----BEGIN [TRUSTED |X509 ]CERTIFICATE-----" line.  DER (the whole file one element):
/// an X.509 Certificate, a PKCS#8 PrivateKeyInfo/OneAsymmetricKey (the RFC 9881 seed and
/// expandedKey forms included), an EncryptedPrivateKeyInfo, or a traditional RSA/EC key.
std::optional<std::string> key_material_kind(ByteView data);

class Certificate {
 public:
  const Bytes& der() const { return der_; }
  ByteView tbs() const;                                       ///< TBSCertificate TLV
  ByteView issuer() const;                                    ///< issuer Name TLV, as encoded in the certificate
  ByteView subject() const;                                   ///< subject Name TLV
  ByteView serial() const;                                    ///< serialNumber INTEGER contents octets
  const std::optional<Bytes>& skid() const { return skid_; }  ///< subjectKeyIdentifier contents
  /// authorityKeyIdentifier (RFC 5280 §4.2.1.1) as the kernel keeps it
  /// (x509_akid_note_kid/name/serial): keyIdentifier, and authorityCertSerialNumber ‖
  /// directoryName contents when both are present.
  const std::optional<Bytes>& akid_keyid() const { return akid_keyid_; }
  const std::optional<Bytes>& akid_id() const { return akid_id_; }
  const PublicKey& public_key() const { return pub_; }
  /// The certificate's signatureAlgorithm OID contents (outer AlgorithmIdentifier).
  ByteView signature_algorithm() const;
  /// The hash named by signature_algorithm() (sha*WithRSAEncryption, RSA and ECDSA with
  /// SHA-1, SHA-2 or SHA-3);
  /// nullopt for ML-DSA (no hash) or an OID modsign does not map.
  std::optional<HashAlgo> signature_hash() const;
  /// signatureValue BIT STRING contents without the unused-bits octet (empty as well when
  /// that octet is not 0 or missing: see signature_has_unused_bits()).
  ByteView signature_value() const;
  /// The signatureValue BIT STRING is empty or its unused-bits octet is not 0.
  bool signature_has_unused_bits() const { return sigval_len_ == static_cast<std::size_t>(-1); }
  /// Check this certificate's signature with `issuer_key` (pure ML-DSA over the TBS, or
  /// RSA/ECDSA over H(TBS) with signature_hash()).  Errors: EBADMSG (BIT STRING with
  /// unused bits, wrong-size ML-DSA signature), ENOPKG (unknown signature hash),
  /// EKEYREJECTED (does not verify or key type differs).
  Status verify_signed_by(const PublicKey& issuer_key) const;
  /// notBefore / notAfter as seconds since the epoch.
  std::int64_t valid_from() const { return valid_from_; }
  std::int64_t valid_to() const { return valid_to_; }
  /// First commonName of the subject / issuer ("" if none), UTF-8.
  std::string subject_cn() const;
  std::string issuer_cn() const;
  /// The kernel's x509->id: serial contents ‖ issuer Name contents (asymmetric_key_generate_id).
  Bytes kernel_id() const;
  /// Subject as a one-line "CN=..., O=..." string (OpenSSL RFC 2253 order reversed as
  /// openssl x509 -subject prints it).
  std::string subject_text() const;

  /// Parse one DER certificate; with Rules::ber the lengths the kernel's BER decoder takes
  /// (non-minimal, indefinite) are accepted too, as for certificates embedded in a PKCS#7
  /// message (x509_cert_parse uses asn1_ber_decoder).  Errors: EBADMSG (malformed), ENOPKG
  /// (key algorithm not supported).
  static Result<Certificate> from_der(ByteView der, asn1::Rules rules = asn1::Rules::der);
  /// Load every certificate from a file: DER (one certificate; detected by a leading
  /// 0x30 0x82 as sign-file does) or PEM (every CERTIFICATE block, other blocks skipped).
  /// Errors: EBADMSG when the file holds no certificate or a malformed one (message names
  /// the block).  Throws IoError if unreadable.  With `unsupported` given, a PEM block
  /// whose key algorithm is not supported (ENOPKG) is no error: its error ("PEM block N:
  /// ...") goes there and the next block is read, as x509_load_certificate_list() goes on
  /// after a certificate it cannot load; without it, the first such block is the error.
  /// `rules` as from_der(): Rules::ber reads each certificate as x509_cert_parse() does
  /// (BER lengths; a key OpenSSL refuses kept unparsed, for the kernel decodes keys only
  /// when it uses them).
  static Result<std::vector<Certificate>> load_all(const std::string& path, std::vector<Error>* unsupported = nullptr);
  static Result<std::vector<Certificate>> from_bytes(ByteView pem_or_der, std::vector<Error>* unsupported = nullptr,
                                                     asn1::Rules rules = asn1::Rules::der);

  /// A self-signed certificate like the kernel's autogenerated signing key
  /// (certs/default_x509.genkey): version 3, random positive 20-byte serial, subject =
  /// issuer = `subject` ("CN=x,O=y" or "/CN=x/O=y"), validity now .. now + days,
  /// basicConstraints critical CA:FALSE, keyUsage digitalSignature, subjectKeyIdentifier
  /// (SHA-1 of the public key bits), authorityKeyIdentifier keyid.  Signed with SHA-256
  /// (RSA, P-256), SHA-384 (P-384) or pure ML-DSA.  Errors: EINVAL for a bad subject.
  static Result<Certificate> self_signed(const PrivateKey& key, const std::string& subject, int days);

  /// PEM text of the certificate.
  std::string pem() const;

 private:
  Bytes der_;
  std::size_t tbs_off_ = 0, tbs_len_ = 0, issuer_off_ = 0, issuer_len_ = 0, subject_off_ = 0, subject_len_ = 0,
              serial_off_ = 0, serial_len_ = 0, sigalg_off_ = 0, sigalg_len_ = 0, sigval_off_ = 0, sigval_len_ = 0;
  std::int64_t valid_from_ = 0, valid_to_ = 0;
  std::optional<Bytes> skid_, akid_keyid_, akid_id_;
  PublicKey pub_;
  asn1::Rules rules_ = asn1::Rules::der;
};

// ---------------------------------------------------------------------------------------
// Signatures

/// Sign `message` as CMS SignerInfo.signature needs it:
///  - ML-DSA: pure ML-DSA.Sign(sk, message, ctx = "") (FIPS 204 Alg. 2; RFC 9882 §3),
///    hedged, or with `deterministic` the FIPS 204 deterministic variant (rnd = 32 zero
///    bytes, Alg. 2 line 5); `hash` is not used.  OpenSSL EVP_PKEY_sign_message_init
///    ("deterministic" parameter), or Botan ("Deterministic").
///  - RSA: PKCS#1 v1.5 over hash(message) (RFC 8017 §8.2; deterministic by construction);
///    ECDSA: DER Ecdsa-Sig-Value over hash(message) (RFC 5753 §7.2 / the kernel's "x962"
///    encoding), with `deterministic` its nonce per RFC 6979 (OpenSSL "nonce-type" 1).
/// Errors: EINVAL if the backend refuses (message names the OpenSSL/Botan reason).
Result<Bytes> sign_message(const PrivateKey& key, HashAlgo hash, ByteView message, Backend backend = Backend::automatic,
                           bool deterministic = false);

/// RSA PKCS#1 v1.5 / ECDSA signature over an already computed digest (hash_info(hash).size
/// bytes); `deterministic` as sign_message().  Errors: EINVAL for ML-DSA keys, a digest of
/// the wrong size, or backend failure.
Result<Bytes> sign_digest(const PrivateKey& key, HashAlgo hash, ByteView digest, bool deterministic = false);

/// Verify a signature made by sign_message() (same conventions).  Errors, as the kernel's
/// public_key_verify_signature reports them (kernel-semantics §2.7):
///  - EBADMSG: ML-DSA signature or public key of the wrong length for the parameter set;
///  - EKEYREJECTED: the signature does not verify.
Status verify_message(const PublicKey& key, HashAlgo hash, ByteView message, ByteView signature,
                      Backend backend = Backend::automatic);

/// Verify an RSA PKCS#1 v1.5 or ECDSA signature over an already computed `digest`
/// (hash(message), hash_info(hash).size bytes), as the kernel's public-key layer does
/// after pkcs7_digest().  Errors: EINVAL for an ML-DSA key or a digest of the wrong size;
/// EKEYREJECTED when the signature does not verify.
Status verify_digest(const PublicKey& key, HashAlgo hash, ByteView digest, ByteView signature);

/// The raw RSA public operation s^e mod n as a big-endian block of the modulus size (for
/// callers that check the EMSA-PKCS1-v1_5 encoding themselves, as the kernel does).
/// Errors: EINVAL when s is not smaller than n or the key is not RSA.
Result<Bytes> rsa_public_raw(const PublicKey& key, ByteView signature);

/// Pure ML-DSA verification with an explicit context string (FIPS 204 Alg. 3, ctx of at
/// most 255 bytes), straight through the backend.  CMS always uses the empty context;
/// this exists for known-answer tests.  Errors: EBADMSG wrong signature size,
/// EINVAL context longer than 255 bytes or not an ML-DSA key (or Botan asked for a
/// non-empty context: its API has none), EKEYREJECTED invalid signature.
Status ml_dsa_verify_with_context(const PublicKey& key, ByteView message, ByteView signature, ByteView context,
                                  Backend backend = Backend::automatic);

/// Incremental ML-DSA message representative μ = SHAKE256(tr ‖ 0x00 ‖ 0x00 ‖ M, 64) with
/// tr = SHAKE256(pk, 64) (FIPS 204 Alg. 2 lines 6-7, pure mode, empty context): feed M in
/// pieces, then sign or verify the 64-byte μ ("external μ", RFC 9881 App. D).  The result
/// is an ordinary pure ML-DSA signature over M.
class MlDsaMu {
 public:
  /// `public_key` is the raw FIPS 204 public key (1312/1952/2592 bytes).
  explicit MlDsaMu(ByteView public_key);
  ~MlDsaMu();
  MlDsaMu(const MlDsaMu&) = delete;
  MlDsaMu& operator=(const MlDsaMu&) = delete;
  void update(ByteView m);
  /// The 64-byte μ; call once.
  Bytes final();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// ML-DSA.Sign given μ (OpenSSL's "mu" signature parameter), hedged or, with
/// `deterministic`, rnd = 32 zero bytes.  Errors: EINVAL (not an ML-DSA key, μ not 64
/// bytes, backend failure).
Result<Bytes> ml_dsa_sign_mu(const PrivateKey& key, ByteView mu, bool deterministic = false);
/// ML-DSA.Verify given μ.  Errors as verify_message().
Status ml_dsa_verify_mu(const PublicKey& key, ByteView mu, ByteView signature);

/// Botan ML-DSA primitives (pure, empty context), for cross-checking OpenSSL.
namespace botan {
/// Public key (1312/1952/2592 bytes) from a 32-byte seed (FIPS 204 ML-DSA.KeyGen_internal).
Bytes ml_dsa_public_from_seed(KeyAlgo level, ByteView seed);
/// Sign with a key given by its 32-byte seed; deterministic (rnd = 0^32) or hedged.
Bytes ml_dsa_sign(KeyAlgo level, ByteView seed, ByteView message, bool deterministic);
/// ML-DSA.Sign (hedged, or deterministic: rnd = 0^32) with this thread's cached Botan
/// signer for the key whose raw public key is `public_key` (one signer per key and
/// variant); `seed` is called (once per thread, key and variant) to build it.  Throws std::invalid_argument when `seed`
/// gives nullopt or a seed that does not yield `public_key`.  Safe to call from many threads at once.
Bytes ml_dsa_sign_cached(KeyAlgo level, ByteView public_key, const std::function<std::optional<SecretBytes>()>& seed,
                         ByteView message, bool deterministic = false);
/// True if `signature` is valid for `message` under `public_key`.  Uses this thread's
/// cached Botan verifier for the key (at most 8 keys per thread), so repeated
/// verifications skip the expansion of the matrix A.  Safe to call from many threads.
bool ml_dsa_verify(KeyAlgo level, ByteView public_key, ByteView message, ByteView signature);
/// Drops this thread's cached Botan signers and verifiers (their key material is wiped by
/// Botan's secure_vector).  Threads that exit drop theirs automatically.
void clear_thread_cache();
/// H(data) with Botan (SHA-256, SHA-384, SHA-512, SHA3-256, SHA3-512; std::invalid_argument
/// otherwise); for benchmarks that compare hashing speed with OpenSSL's.
Bytes digest(HashAlgo a, ByteView data);
/// SHAKE256(data) of `out_len` bytes with Botan, for benchmarks.
Bytes shake256(ByteView data, std::size_t out_len);
/// kernel_only_digest() fed piece by piece (a module read as a stream).
class KernelOnlyHasher {
 public:
  /// nullptr for a name kernel_only_digest() does not know or this Botan lacks.
  static std::unique_ptr<KernelOnlyHasher> create(std::string_view kernel_name);
  ~KernelOnlyHasher();
  KernelOnlyHasher(const KernelOnlyHasher&) = delete;
  KernelOnlyHasher& operator=(const KernelOnlyHasher&) = delete;
  void update(ByteView data);
  /// The digest; call once.
  Bytes final();

 private:
  struct Impl;
  explicit KernelOnlyHasher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};
/// H(data) for the digests the kernel's PKCS#7 parser names that HashAlgo leaves out, by
/// the kernel's hash_algo name: "sm3" (GB/T 32905, 32 bytes), "streebog256" and
/// "streebog512" (GOST R 34.11-2012, RFC 6986; 32 and 64 bytes).  nullopt for other names
/// or when this Botan was built without the hash.
std::optional<Bytes> kernel_only_digest(std::string_view kernel_name, ByteView data);
}  // namespace botan

/// The first commonName in a DER Name (TLV; BER lengths too with Rules::ber), as UTF-8
/// bytes; "" if none or malformed.
std::string name_common_name(ByteView name_tlv, asn1::Rules rules = asn1::Rules::der);

/// Last OpenSSL error queue text (cleared), for messages.  With `codes`, the packed error
/// codes are appended to it too, for a caller that decides by them (never by the text).
std::string openssl_error(std::vector<unsigned long>* codes = nullptr);

}  // namespace modsign::crypto
