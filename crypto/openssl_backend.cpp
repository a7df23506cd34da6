// OpenSSL backend: hashes, key loading and generation, certificates, sign/verify.
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "asn1/der.hpp"
#include "common/file.hpp"
#include "crypto/crypto.hpp"

namespace modsign::crypto {

namespace {

template <class T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using X509NamePtr = std::unique_ptr<X509_NAME, Deleter<X509_NAME, X509_NAME_free>>;
using X509ExtPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION, X509_EXTENSION_free>>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX, EVP_MD_CTX_free>>;
using SigPtr = std::unique_ptr<EVP_SIGNATURE, Deleter<EVP_SIGNATURE, EVP_SIGNATURE_free>>;

std::shared_ptr<void> share(EVP_PKEY* p) {
  return std::shared_ptr<void>(p, [](void* q) { EVP_PKEY_free(static_cast<EVP_PKEY*>(q)); });
}
EVP_PKEY* pk(const std::shared_ptr<void>& p) { return static_cast<EVP_PKEY*>(p.get()); }

const EVP_MD* md_of(HashAlgo a) {
  const EVP_MD* md = EVP_get_digestbyname(std::string(hash_info(a).openssl_name).c_str());
  if (!md) throw std::runtime_error("OpenSSL lacks digest " + std::string(hash_info(a).name));
  return md;
}

const char* ml_dsa_name(KeyAlgo a) {
  switch (a) {
    case KeyAlgo::ml_dsa_44: return "ML-DSA-44";
    case KeyAlgo::ml_dsa_65: return "ML-DSA-65";
    case KeyAlgo::ml_dsa_87: return "ML-DSA-87";
    default: return nullptr;
  }
}

std::optional<KeyAlgo> algo_of(EVP_PKEY* p) {
  if (EVP_PKEY_is_a(p, "RSA")) return KeyAlgo::rsa;
  if (EVP_PKEY_is_a(p, "ML-DSA-44")) return KeyAlgo::ml_dsa_44;
  if (EVP_PKEY_is_a(p, "ML-DSA-65")) return KeyAlgo::ml_dsa_65;
  if (EVP_PKEY_is_a(p, "ML-DSA-87")) return KeyAlgo::ml_dsa_87;
  if (EVP_PKEY_is_a(p, "EC")) {
    char group[64] = {0};
    size_t len = 0;
    if (EVP_PKEY_get_utf8_string_param(p, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &len)) {
      if (std::strcmp(group, "prime256v1") == 0 || std::strcmp(group, "P-256") == 0) return KeyAlgo::ecdsa_p256;
      if (std::strcmp(group, "secp384r1") == 0 || std::strcmp(group, "P-384") == 0) return KeyAlgo::ecdsa_p384;
      if (std::strcmp(group, "secp521r1") == 0 || std::strcmp(group, "P-521") == 0) return KeyAlgo::ecdsa_p521;
      if (std::strcmp(group, "prime192v1") == 0 || std::strcmp(group, "P-192") == 0) return KeyAlgo::ecdsa_p192;
    }
  }
  return std::nullopt;
}

// Fill a PublicKey from an EVP_PKEY (takes a reference of its own).
Result<PublicKey> public_from(EVP_PKEY* p, std::shared_ptr<void> owner);

int no_passphrase_cb(char*, int, int, void*) { return -1; }

int passphrase_cb(char* buf, int size, int, void* u) {
  const auto* s = static_cast<const std::string*>(u);
  if (static_cast<int>(s->size()) > size) return -1;
  std::memcpy(buf, s->data(), s->size());
  return static_cast<int>(s->size());
}

}  // namespace

std::string openssl_error() {
  std::string out;
  unsigned long e;
  char buf[256];
  while ((e = ERR_get_error()) != 0) {
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

// ------------------------------------------------------------------------------- hashes

void cleanse(void* p, std::size_t n) noexcept {
  if (p && n) OPENSSL_cleanse(p, n);
}

Bytes digest(HashAlgo a, ByteView data) {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned n = 0;
  if (!EVP_Digest(data.data(), data.size(), out.data(), &n, md_of(a), nullptr))
    throw std::runtime_error("EVP_Digest: " + openssl_error());
  out.resize(n);
  return out;
}

struct Hasher::Impl {
  MdCtxPtr ctx{EVP_MD_CTX_new()};
};

Hasher::Hasher(HashAlgo a) : impl_(std::make_unique<Impl>()) {
  if (!impl_->ctx || !EVP_DigestInit_ex(impl_->ctx.get(), md_of(a), nullptr))
    throw std::runtime_error("EVP_DigestInit_ex: " + openssl_error());
}
Hasher::~Hasher() = default;
void Hasher::update(ByteView d) {
  if (!EVP_DigestUpdate(impl_->ctx.get(), d.data(), d.size()))
    throw std::runtime_error("EVP_DigestUpdate: " + openssl_error());
}
Bytes Hasher::final() {
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned n = 0;
  if (!EVP_DigestFinal_ex(impl_->ctx.get(), out.data(), &n))
    throw std::runtime_error("EVP_DigestFinal_ex: " + openssl_error());
  out.resize(n);
  return out;
}

// ------------------------------------------------------------------------------- keys

namespace {
Result<PublicKey> public_from(EVP_PKEY* p, std::shared_ptr<void> owner) {
  (void)owner;
  auto algo = algo_of(p);
  if (!algo) return make_error(KErr::enopkg, "unsupported public key algorithm");
  // Re-create a public-only EVP_PKEY from the SPKI so no private material is shared.
  unsigned char* der = nullptr;
  int n = i2d_PUBKEY(p, &der);
  if (n <= 0) return make_error(KErr::ebadmsg, "cannot encode public key: " + openssl_error());
  Bytes spki(der, der + n);
  OPENSSL_free(der);
  return PublicKey::from_spki(spki);
}
}  // namespace

Result<PublicKey> PublicKey::from_spki(ByteView spki) {
  const unsigned char* p = spki.data();
  EVP_PKEY* key = d2i_PUBKEY(nullptr, &p, static_cast<long>(spki.size()));
  if (!key) {
    ERR_clear_error();
    // An unknown algorithm (ENOPKG, as the kernel's x509 parser) or a malformed SPKI (EBADMSG)?
    try {
      asn1::Reader top(spki);
      asn1::Reader seq = top.enter(asn1::kSequence, "SubjectPublicKeyInfo");
      asn1::Reader alg = seq.enter(asn1::kSequence, "algorithm");
      auto o = alg.expect(asn1::kOid, "algorithm OID");
      seq.expect(asn1::kBitString, "subjectPublicKey");
      const bool known = std::ranges::equal(o.content, oid::rsa_encryption) ||
                         std::ranges::equal(o.content, oid::ec_public_key) ||
                         std::ranges::equal(o.content, oid::ml_dsa_44) || std::ranges::equal(o.content, oid::ml_dsa_65) ||
                         std::ranges::equal(o.content, oid::ml_dsa_87);
      if (!known)
        return make_error(KErr::enopkg, "unsupported public key algorithm " + asn1::oid_to_string(o.content));
    } catch (const asn1::DecodeError& e) {
      return make_error(KErr::ebadmsg, std::string("malformed SubjectPublicKeyInfo: ") + e.what());
    }
    return make_error(KErr::ebadmsg, "SubjectPublicKeyInfo rejected by OpenSSL (invalid key or unsupported curve)");
  }
  PublicKey out;
  out.pkey_ = share(key);
  auto algo = algo_of(key);
  if (!algo) {
    std::string what = EVP_PKEY_get0_type_name(key) ? EVP_PKEY_get0_type_name(key) : "?";
    try {
      asn1::Reader top(spki);
      asn1::Reader seq = top.enter(asn1::kSequence, "SubjectPublicKeyInfo");
      asn1::Reader alg = seq.enter(asn1::kSequence, "algorithm");
      what = asn1::oid_to_string(alg.expect(asn1::kOid, "algorithm OID").content);
    } catch (const asn1::DecodeError&) {
    }
    return make_error(KErr::enopkg, "unsupported public key algorithm " + what);
  }
  out.algo_ = *algo;
  out.spki_.assign(spki.begin(), spki.end());
  if (is_ml_dsa(*algo)) {
    out.raw_.resize(ml_dsa_public_key_size(*algo));
    size_t len = 0;
    if (!EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, out.raw_.data(), out.raw_.size(), &len) ||
        len != out.raw_.size())
      return make_error(KErr::ebadmsg, "cannot read ML-DSA public key: " + openssl_error());
  } else {
    out.raw_ = out.spki_;
    out.bits_ = EVP_PKEY_get_bits(key);
  }
  return out;
}

bool PublicKey::operator==(const PublicKey& other) const {
  if (!pkey_ || !other.pkey_) return pkey_ == other.pkey_;
  return EVP_PKEY_eq(pk(pkey_), pk(other.pkey_)) == 1;
}

Result<PublicKey> PublicKey::from_ml_dsa_raw(KeyAlgo level, ByteView raw) {
  if (!is_ml_dsa(level)) return make_error(KErr::einval, "not an ML-DSA parameter set");
  if (raw.size() != ml_dsa_public_key_size(level))
    return make_error(KErr::ebadmsg, "ML-DSA public key is " + std::to_string(raw.size()) + " bytes, " +
                                         std::string(key_algo_name(level)) + " needs " +
                                         std::to_string(ml_dsa_public_key_size(level)));
  EVP_PKEY* key = EVP_PKEY_new_raw_public_key_ex(nullptr, ml_dsa_name(level), nullptr, raw.data(), raw.size());
  if (!key) return make_error(KErr::ebadmsg, "ML-DSA public key rejected: " + openssl_error());
  unsigned char* der = nullptr;
  int n = i2d_PUBKEY(key, &der);
  EVP_PKEY_free(key);
  if (n <= 0) return make_error(KErr::ebadmsg, "cannot encode public key: " + openssl_error());
  Bytes spki(der, der + n);
  OPENSSL_free(der);
  return from_spki(spki);
}

bool PrivateKey::has_ml_dsa_seed() const {
  if (!is_ml_dsa(algo())) return false;
  auto seed = ml_dsa_seed();
  if (!seed) return false;
  OPENSSL_cleanse(seed->data(), seed->size());
  return true;
}

std::optional<Bytes> PrivateKey::ml_dsa_seed() const {
  if (!is_ml_dsa(algo())) return std::nullopt;
  Bytes seed(32);
  size_t len = 0;
  if (!EVP_PKEY_get_octet_string_param(pk(pkey_), OSSL_PKEY_PARAM_ML_DSA_SEED, seed.data(), seed.size(), &len) ||
      len != 32) {
    ERR_clear_error();
    OPENSSL_cleanse(seed.data(), seed.size());
    return std::nullopt;
  }
  return seed;
}

Result<PrivateKey> PrivateKey::load(const std::string& path, const std::optional<std::string>& pass) {
  Bytes b = read_file(path, kMaxSmallFileSize);
  auto r = from_bytes(b, pass);
  OPENSSL_cleanse(b.data(), b.size());
  return r;
}

Result<PrivateKey> PrivateKey::from_bytes(ByteView in, const std::optional<std::string>& pass) {
  if (in.size() > kMaxSmallFileSize) return make_error(KErr::ebadmsg, "key input larger than 16 MiB");
  EVP_PKEY* key = nullptr;
  const bool pem = in.size() >= 11 && std::memcmp(in.data(), "-----BEGIN", 10) == 0;
  const bool pem_anywhere =
      pem || std::string_view(reinterpret_cast<const char*>(in.data()), in.size()).find("-----BEGIN") !=
                 std::string_view::npos;
  if (pem_anywhere) {
    BioPtr bio(BIO_new_mem_buf(in.data(), static_cast<int>(in.size())));
    std::string p = pass.value_or("");
    key = PEM_read_bio_PrivateKey(bio.get(), nullptr, pass ? passphrase_cb : no_passphrase_cb, &p);
    OPENSSL_cleanse(p.data(), p.size());
    if (!key) {
      std::string why = openssl_error();
      const bool encrypted =
          std::string_view(reinterpret_cast<const char*>(in.data()), in.size()).find("ENCRYPTED") !=
          std::string_view::npos;
      if (encrypted && !pass)
        return make_error(KErr::ebadmsg, "private key is encrypted and no passphrase was given (set KBUILD_SIGN_PIN)");
      if (encrypted) return make_error(KErr::ebadmsg, "cannot decrypt private key (wrong passphrase?)");
      if (why.find("invalid key") != std::string::npos)
        return make_error(KErr::ebadmsg, "invalid private key (inconsistent key material): " + why);
      return make_error(KErr::ebadmsg, "no usable private key in PEM input: " + why);
    }
  } else {
    const unsigned char* p = in.data();
    key = d2i_AutoPrivateKey(nullptr, &p, static_cast<long>(in.size()));
    if (!key && pass) {  // encrypted PKCS#8 (EncryptedPrivateKeyInfo) in DER
      ERR_clear_error();
      BioPtr bio(BIO_new_mem_buf(in.data(), static_cast<int>(in.size())));
      std::string pw = *pass;
      key = d2i_PKCS8PrivateKey_bio(bio.get(), nullptr, passphrase_cb, &pw);
      OPENSSL_cleanse(pw.data(), pw.size());
    }
    if (!key) {
      std::string why = openssl_error();
      if (why.find("invalid key") != std::string::npos)
        return make_error(KErr::ebadmsg, "invalid private key (inconsistent key material): " + why);
      return make_error(KErr::ebadmsg, "not a DER PKCS#8 private key: " + why);
    }
  }
  PrivateKey out;
  out.pkey_ = share(key);
  auto pub = public_from(key, out.pkey_);
  if (!pub) return pub.error();
  out.pub_ = std::move(pub.value());
  return out;
}

PrivateKey PrivateKey::generate(KeyAlgo algo, int rsa_bits) {
  EVP_PKEY* key = nullptr;
  switch (algo) {
    case KeyAlgo::rsa:
      key = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(rsa_bits));
      break;
    case KeyAlgo::ecdsa_p256: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"); break;
    case KeyAlgo::ecdsa_p384: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-384"); break;
    case KeyAlgo::ecdsa_p521: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-521"); break;
    case KeyAlgo::ecdsa_p192: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-192"); break;
    default: key = EVP_PKEY_Q_keygen(nullptr, nullptr, ml_dsa_name(algo)); break;
  }
  if (!key) throw std::runtime_error("key generation failed: " + openssl_error());
  PrivateKey out;
  out.pkey_ = share(key);
  out.pub_ = public_from(key, out.pkey_).value();
  return out;
}

Result<Bytes> PrivateKey::pkcs8_der() const {
  if (is_ml_dsa(algo())) {
    auto seed = ml_dsa_seed();
    if (!seed)
      return make_error(KErr::enokey, "ML-DSA key has no seed (loaded from expandedKey form); cannot write seed form");
    // OneAsymmetricKey (RFC 5958) v1: version 0, algorithm id-ml-dsa-* (no parameters),
    // privateKey OCTET STRING containing the RFC 9881 CHOICE seed [0] IMPLICIT OCTET STRING.
    // Written into one buffer of its final size, so no intermediate copy of the seed is
    // left behind in freed memory.
    const ByteView oid = signature_oid(algo(), HashAlgo::sha512);
    const Bytes alg = asn1::Writer().add(asn1::kSequence, [&](asn1::Writer& a) { a.oid(oid); }).take();
    const std::size_t body = 3 + alg.size() + 2 + 2 + seed->size();
    Bytes out;
    out.reserve(2 + body);
    out.insert(out.end(), {asn1::kSequence, static_cast<std::uint8_t>(body), asn1::kInteger, 1, 0});
    out.insert(out.end(), alg.begin(), alg.end());
    out.insert(out.end(), {asn1::kOctetString, static_cast<std::uint8_t>(2 + seed->size()), asn1::context_prim(0),
                           static_cast<std::uint8_t>(seed->size())});
    out.insert(out.end(), seed->begin(), seed->end());
    OPENSSL_cleanse(seed->data(), seed->size());
    return out;
  }
  // A secure-heap memory BIO: its buffer is cleansed when freed.
  BioPtr bio(BIO_new(BIO_s_secmem()));
  if (!i2d_PKCS8PrivateKey_bio(bio.get(), pk(pkey_), nullptr, nullptr, 0, nullptr, nullptr))
    return make_error(KErr::einval, "cannot encode private key: " + openssl_error());
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return Bytes(data, data + n);
}

Result<std::string> PrivateKey::pkcs8_pem() const {
  auto der = pkcs8_der();
  if (!der) return der.error();
  BioPtr bio(BIO_new(BIO_s_secmem()));
  PEM_write_bio(bio.get(), "PRIVATE KEY", "", der->data(), static_cast<long>(der->size()));
  OPENSSL_cleanse(der->data(), der->size());
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  std::string s(data, data + n);
  return s;
}

// ------------------------------------------------------------------------- certificates

ByteView Certificate::tbs() const { return ByteView(der_).subspan(tbs_off_, tbs_len_); }
ByteView Certificate::issuer() const { return ByteView(der_).subspan(issuer_off_, issuer_len_); }
ByteView Certificate::subject() const { return ByteView(der_).subspan(subject_off_, subject_len_); }
ByteView Certificate::serial() const { return ByteView(der_).subspan(serial_off_, serial_len_); }

std::string name_common_name(ByteView name_tlv) {
  try {
    asn1::Reader name(name_tlv);
    asn1::Reader rdns = name.enter(asn1::kSequence, "Name");
    while (!rdns.empty()) {
      asn1::Reader set = rdns.enter(asn1::kSet, "RDN");
      while (!set.empty()) {
        asn1::Reader atv = set.enter(asn1::kSequence, "AttributeTypeAndValue");
        auto type = atv.expect(asn1::kOid, "attribute type");
        auto value = atv.next();
        if (std::equal(type.content.begin(), type.content.end(), oid::common_name.begin(), oid::common_name.end()))
          return std::string(value.content.begin(), value.content.end());
      }
    }
  } catch (const asn1::DecodeError&) {
  }
  return "";
}

namespace {
std::string name_text(ByteView name_tlv) {
  const unsigned char* p = name_tlv.data();
  X509NamePtr n(d2i_X509_NAME(nullptr, &p, static_cast<long>(name_tlv.size())));
  if (!n) return "";
  BioPtr bio(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(bio.get(), n.get(), 0, XN_FLAG_ONELINE & ~ASN1_STRFLGS_ESC_MSB);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, data + len);
}
}  // namespace

ByteView Certificate::signature_value() const {
  if (sigval_len_ == static_cast<std::size_t>(-1)) return {};
  return ByteView(der_).subspan(sigval_off_, sigval_len_);
}

Status Certificate::verify_signed_by(const PublicKey& issuer_key) const {
  if (sigval_len_ == static_cast<std::size_t>(-1))
    return make_error(KErr::ebadmsg, "certificate signature BIT STRING has unused bits");
  bool ecdsa = false;
  auto sig_key = key_algo_by_signature_oid(signature_algorithm(), &ecdsa);
  const KeyAlgo ka = issuer_key.algo();
  const bool key_ecdsa = is_ecdsa(ka);
  if (is_ml_dsa(ka)) {
    if (!sig_key || *sig_key != ka) return make_error(KErr::ekeyrejected, "certificate signature algorithm differs from the key's");
    return verify_message(issuer_key, HashAlgo::sha512, tbs(), signature_value());
  }
  auto h = signature_hash();
  if (!h) return make_error(KErr::enopkg, "unsupported certificate signature algorithm " + asn1::oid_to_string(signature_algorithm()));
  const bool rsa_sig = !ecdsa && !sig_key;  // sha*WithRSAEncryption
  if ((key_ecdsa && !ecdsa) || (ka == KeyAlgo::rsa && !rsa_sig))
    return make_error(KErr::ekeyrejected, "certificate signature algorithm differs from the key's");
  return verify_message(issuer_key, *h, tbs(), signature_value());
}

ByteView Certificate::signature_algorithm() const { return ByteView(der_).subspan(sigalg_off_, sigalg_len_); }

std::optional<HashAlgo> Certificate::signature_hash() const {
  const ByteView o = signature_algorithm();
  static constexpr std::uint8_t rsa_prefix[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01};
  static constexpr std::uint8_t ecdsa_prefix[] = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03};
  if (o.size() == 9 && std::equal(rsa_prefix, rsa_prefix + 8, o.begin())) {
    switch (o[8]) {
      case 0x05: return HashAlgo::sha1;
      case 0x0b: return HashAlgo::sha256;
      case 0x0c: return HashAlgo::sha384;
      case 0x0d: return HashAlgo::sha512;
      case 0x0e: return HashAlgo::sha224;
      default: return std::nullopt;
    }
  }
  static constexpr std::uint8_t ecdsa_sha1[] = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x01};
  static constexpr std::uint8_t nist_sig[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03};
  if (std::ranges::equal(o, ecdsa_sha1)) return HashAlgo::sha1;
  if (o.size() == 9 && std::equal(nist_sig, nist_sig + 8, o.begin())) {
    switch (o[8]) {
      case 0x0a: case 0x0e: return HashAlgo::sha3_256;  // id-ecdsa-with-sha3-256, id-rsassa-pkcs1-v1_5-with-sha3-256
      case 0x0b: case 0x0f: return HashAlgo::sha3_384;
      case 0x0c: case 0x10: return HashAlgo::sha3_512;
      default: return std::nullopt;
    }
  }
  if (o.size() == 8 && std::equal(ecdsa_prefix, ecdsa_prefix + 7, o.begin())) {
    switch (o[7]) {
      case 0x01: return HashAlgo::sha224;
      case 0x02: return HashAlgo::sha256;
      case 0x03: return HashAlgo::sha384;
      case 0x04: return HashAlgo::sha512;
      default: return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string Certificate::subject_cn() const { return name_common_name(subject()); }
std::string Certificate::issuer_cn() const { return name_common_name(issuer()); }
std::string Certificate::subject_text() const { return name_text(subject()); }

Bytes Certificate::kernel_id() const {
  Bytes id(serial().begin(), serial().end());
  asn1::Reader r(issuer());
  auto name = r.next();
  id.insert(id.end(), name.content.begin(), name.content.end());
  return id;
}

Result<Certificate> Certificate::from_der(ByteView der) {
  Certificate c;
  c.der_.assign(der.begin(), der.end());
  const ByteView d(c.der_);
  auto off = [&](ByteView sub) { return static_cast<std::size_t>(sub.data() - d.data()); };
  try {
    asn1::Reader top(d);
    asn1::Reader cert = top.enter(asn1::kSequence, "Certificate");
    top.finish("Certificate");
    auto tbs_el = cert.expect(asn1::kSequence, "TBSCertificate");
    c.tbs_off_ = off(tbs_el.tlv);
    c.tbs_len_ = tbs_el.tlv.size();
    asn1::Reader tbs(tbs_el.content);
    asn1::Element e;
    tbs.maybe(asn1::context_cons(0), e);  // version
    auto serial = tbs.expect(asn1::kInteger, "serialNumber");
    c.serial_off_ = off(serial.content);
    c.serial_len_ = serial.content.size();
    tbs.expect(asn1::kSequence, "signature AlgorithmIdentifier");
    auto issuer = tbs.expect(asn1::kSequence, "issuer");
    asn1::check_name(issuer.content, asn1::Rules::der);
    c.issuer_off_ = off(issuer.tlv);
    c.issuer_len_ = issuer.tlv.size();
    {
      asn1::Reader validity = tbs.enter(asn1::kSequence, "validity");
      auto nb = validity.next(), na = validity.next();
      auto from = asn1::decode_time(nb.tag, nb.content), to = asn1::decode_time(na.tag, na.content);
      if (!from || !to) throw asn1::DecodeError("invalid validity time");
      c.valid_from_ = *from;
      c.valid_to_ = *to;
    }
    auto subject = tbs.expect(asn1::kSequence, "subject");
    asn1::check_name(subject.content, asn1::Rules::der);
    c.subject_off_ = off(subject.tlv);
    c.subject_len_ = subject.tlv.size();
    auto spki = tbs.expect(asn1::kSequence, "subjectPublicKeyInfo");
    tbs.maybe(asn1::context_prim(1), e);  // issuerUniqueID
    tbs.maybe(asn1::context_prim(2), e);  // subjectUniqueID
    if (tbs.maybe(asn1::context_cons(3), e)) {
      asn1::Reader exts_outer(e.content);
      asn1::Reader exts = exts_outer.enter(asn1::kSequence, "extensions");
      while (!exts.empty()) {
        asn1::Reader ext = exts.enter(asn1::kSequence, "Extension");
        auto id = ext.expect(asn1::kOid, "extnID");
        asn1::Element crit;
        ext.maybe(0x01, crit);
        auto val = ext.expect(asn1::kOctetString, "extnValue");
        static constexpr std::uint8_t akid_oid[] = {0x55, 0x1d, 0x23};
        if (std::ranges::equal(id.content, oid::subject_key_identifier)) {
          asn1::Reader v(val.content);
          auto k = v.expect(asn1::kOctetString, "subjectKeyIdentifier");
          c.skid_ = Bytes(k.content.begin(), k.content.end());
        } else if (std::ranges::equal(id.content, akid_oid)) {
          asn1::Reader v(val.content);
          asn1::Reader akid = v.enter(asn1::kSequence, "authorityKeyIdentifier");
          asn1::Element e2;
          std::optional<Bytes> name, serial;
          if (akid.maybe(asn1::context_prim(0), e2)) c.akid_keyid_ = Bytes(e2.content.begin(), e2.content.end());
          if (akid.maybe(asn1::context_cons(1), e2)) {
            asn1::Reader gns(e2.content);
            while (!gns.empty()) {
              auto gn = gns.next();
              if (gn.tag == asn1::context_cons(4)) {  // directoryName [4] EXPLICIT Name
                asn1::Reader dn(gn.content);
                auto n = dn.expect(asn1::kSequence, "directoryName");
                name = Bytes(n.content.begin(), n.content.end());
              }
            }
          }
          if (akid.maybe(asn1::context_prim(2), e2)) serial = Bytes(e2.content.begin(), e2.content.end());
          if (name && serial) {
            Bytes idb = *serial;
            idb.insert(idb.end(), name->begin(), name->end());
            c.akid_id_ = std::move(idb);
          }
        }
      }
    }
    {
      asn1::Reader sa = cert.enter(asn1::kSequence, "signatureAlgorithm");
      auto o = sa.expect(asn1::kOid, "signatureAlgorithm OID");
      c.sigalg_off_ = off(o.content);
      c.sigalg_len_ = o.content.size();
    }
    {
      auto sv = cert.expect(asn1::kBitString, "signatureValue");
      if (sv.content.empty()) throw asn1::DecodeError("empty signatureValue");
      c.sigval_off_ = off(sv.content) + 1;
      c.sigval_len_ = sv.content.size() - 1;
      if (sv.content[0] != 0) c.sigval_len_ = static_cast<std::size_t>(-1);  // unused bits: malformed for us
    }
    cert.finish("Certificate");
    auto pub = PublicKey::from_spki(spki.tlv);
    if (!pub) return make_error(pub.error().code, "certificate: " + pub.error().message);
    c.pub_ = std::move(pub.value());
  } catch (const asn1::DecodeError& ex) {
    return make_error(KErr::ebadmsg, std::string("malformed certificate: ") + ex.what());
  }
  return c;
}

Result<std::vector<Certificate>> Certificate::load_all(const std::string& path) {
  return from_bytes(read_file(path, kMaxSmallFileSize));
}

Result<std::vector<Certificate>> Certificate::from_bytes(ByteView in) {
  std::vector<Certificate> out;
  if (in.size() > kMaxSmallFileSize) return make_error(KErr::ebadmsg, "certificate input larger than 16 MiB");
  if (in.size() >= 2 && in[0] == 0x30 && in[1] == 0x82) {
    auto c = from_der(in);
    if (!c) return c.error();
    out.push_back(std::move(c.value()));
    return out;
  }
  BioPtr bio(BIO_new_mem_buf(in.data(), static_cast<int>(in.size())));
  int index = 0;
  for (;;) {
    char* name = nullptr;
    char* header = nullptr;
    unsigned char* data = nullptr;
    long len = 0;
    if (!PEM_read_bio(bio.get(), &name, &header, &data, &len)) {
      // Only "no further PEM block" ends the bundle; a damaged block is an error.
      const unsigned long e = ERR_peek_last_error();
      const bool end = ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE;
      ERR_clear_error();
      if (!end) return make_error(KErr::ebadmsg, "PEM block " + std::to_string(index + 1) + " is damaged (bad base64 or armour)");
      break;
    }
    ++index;
    const bool is_cert = std::strcmp(name, "CERTIFICATE") == 0 || std::strcmp(name, "X509 CERTIFICATE") == 0;
    Result<Certificate> c = make_error(KErr::ebadmsg, "");
    if (is_cert) c = from_der(ByteView(data, static_cast<std::size_t>(len)));
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_free(data);
    if (!is_cert) continue;
    if (!c) return make_error(c.error().code, "PEM block " + std::to_string(index) + ": " + c.error().message);
    out.push_back(std::move(c.value()));
  }
  if (out.empty()) {
    if (!in.empty() && in[0] == 0x30) {
      auto c = from_der(in);
      if (!c) return c.error();
      out.push_back(std::move(c.value()));
      return out;
    }
    return make_error(KErr::ebadmsg, "no X.509 certificate found (neither DER nor PEM CERTIFICATE)");
  }
  return out;
}

std::string Certificate::pem() const {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio(bio.get(), "CERTIFICATE", "", der_.data(), static_cast<long>(der_.size()));
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, data + n);
}

Result<Certificate> Certificate::self_signed(const PrivateKey& key, const std::string& subject, int days) {
  X509Ptr x(X509_new());
  X509_set_version(x.get(), X509_VERSION_3);
  // Serial: 20 random bytes, top bit cleared so the INTEGER is positive and 20 bytes long.
  unsigned char serial[20];
  if (RAND_bytes(serial, sizeof serial) != 1) return make_error(KErr::einval, "RAND_bytes failed");
  serial[0] = static_cast<unsigned char>((serial[0] & 0x7f) | 0x40);
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x.get()));
  BN_free(bn);

  X509NamePtr name(X509_NAME_new());
  // Accept "/CN=a/O=b" (OpenSSL -subj) and "CN=a,O=b" (RFC 4514-like, no escapes).
  std::string s = subject;
  std::vector<std::string> parts;
  if (!s.empty() && s[0] == '/') {
    std::size_t pos = 1;
    while (pos <= s.size()) {
      std::size_t next = s.find('/', pos);
      if (next == std::string::npos) next = s.size();
      if (next > pos) parts.push_back(s.substr(pos, next - pos));
      pos = next + 1;
    }
  } else {
    std::size_t pos = 0;
    while (pos <= s.size()) {
      std::size_t next = s.find(',', pos);
      if (next == std::string::npos) next = s.size();
      std::string p = s.substr(pos, next - pos);
      while (!p.empty() && p.front() == ' ') p.erase(p.begin());
      if (!p.empty()) parts.push_back(p);
      pos = next + 1;
    }
  }
  if (parts.empty()) return make_error(KErr::einval, "empty subject");
  for (const auto& p : parts) {
    auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0)
      return make_error(KErr::einval, "subject component '" + p + "' is not TYPE=value");
    std::string type = p.substr(0, eq), value = p.substr(eq + 1);
    if (!X509_NAME_add_entry_by_txt(name.get(), type.c_str(), MBSTRING_UTF8,
                                    reinterpret_cast<const unsigned char*>(value.data()),
                                    static_cast<int>(value.size()), -1, 0)) {
      ERR_clear_error();
      return make_error(KErr::einval, "subject attribute type '" + type + "' is not known");
    }
  }
  X509_set_subject_name(x.get(), name.get());
  X509_set_issuer_name(x.get(), name.get());
  if (days <= 0 || !X509_gmtime_adj(X509_getm_notBefore(x.get()), 0) ||
      !X509_time_adj_ex(X509_getm_notAfter(x.get()), days, 0, nullptr))
    return make_error(KErr::einval, "validity of " + std::to_string(days) + " days cannot be encoded");
  EVP_PKEY* k = static_cast<EVP_PKEY*>(key.native());
  X509_set_pubkey(x.get(), k);

  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x.get(), x.get(), nullptr, nullptr, 0);
  for (auto [nid, value] : {std::pair{NID_basic_constraints, "critical,CA:FALSE"},
                            std::pair{NID_key_usage, "digitalSignature"},
                            std::pair{NID_subject_key_identifier, "hash"},
                            std::pair{NID_authority_key_identifier, "keyid:always"}}) {
    X509ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
    if (!ext || !X509_add_ext(x.get(), ext.get(), -1))
      return make_error(KErr::einval, "cannot add extension: " + openssl_error());
  }
  const EVP_MD* md = nullptr;
  if (key.algo() == KeyAlgo::rsa || key.algo() == KeyAlgo::ecdsa_p256) md = EVP_sha256();
  if (key.algo() == KeyAlgo::ecdsa_p384) md = EVP_sha384();
  if (key.algo() == KeyAlgo::ecdsa_p521) md = EVP_sha512();
  if (key.algo() == KeyAlgo::ecdsa_p192) md = EVP_sha256();
  if (X509_sign(x.get(), k, md) <= 0) return make_error(KErr::einval, "certificate signing failed: " + openssl_error());
  unsigned char* der = nullptr;
  int n = i2d_X509(x.get(), &der);
  if (n <= 0) return make_error(KErr::einval, "cannot encode certificate: " + openssl_error());
  Bytes b(der, der + n);
  OPENSSL_free(der);
  return from_der(b);
}

// ---------------------------------------------------------------------------- signatures

namespace {
Result<Bytes> openssl_ml_dsa_sign(const PrivateKey& key, ByteView msg) {
  EVP_PKEY* k = static_cast<EVP_PKEY*>(key.native());
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, k, nullptr));
  SigPtr alg(EVP_SIGNATURE_fetch(nullptr, ml_dsa_name(key.algo()), nullptr));
  if (!ctx || !alg || EVP_PKEY_sign_message_init(ctx.get(), alg.get(), nullptr) <= 0)
    return make_error(KErr::einval, "ML-DSA sign init: " + openssl_error());
  size_t len = 0;
  if (EVP_PKEY_sign(ctx.get(), nullptr, &len, msg.data(), msg.size()) <= 0)
    return make_error(KErr::einval, "ML-DSA sign: " + openssl_error());
  Bytes sig(len);
  if (EVP_PKEY_sign(ctx.get(), sig.data(), &len, msg.data(), msg.size()) <= 0)
    return make_error(KErr::einval, "ML-DSA sign: " + openssl_error());
  sig.resize(len);
  return sig;
}

Status openssl_ml_dsa_verify(const PublicKey& key, ByteView msg, ByteView sig, ByteView context = {}) {
  EVP_PKEY* k = static_cast<EVP_PKEY*>(key.native());
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, k, nullptr));
  SigPtr alg(EVP_SIGNATURE_fetch(nullptr, ml_dsa_name(key.algo()), nullptr));
  OSSL_PARAM params[2] = {OSSL_PARAM_END, OSSL_PARAM_END};
  if (!context.empty())
    params[0] = OSSL_PARAM_construct_octet_string(OSSL_SIGNATURE_PARAM_CONTEXT_STRING,
                                                  const_cast<std::uint8_t*>(context.data()), context.size());
  if (!ctx || !alg || EVP_PKEY_verify_message_init(ctx.get(), alg.get(), params) <= 0)
    return make_error(KErr::einval, "ML-DSA verify init: " + openssl_error());
  int rc = EVP_PKEY_verify(ctx.get(), sig.data(), sig.size(), msg.data(), msg.size());
  ERR_clear_error();
  if (rc != 1) return make_error(KErr::ekeyrejected, "signature does not verify");
  return ok_status();
}
}  // namespace

struct MlDsaMu::Impl {
  MdCtxPtr ctx{EVP_MD_CTX_new()};
};

MlDsaMu::MlDsaMu(ByteView pk) : impl_(std::make_unique<Impl>()) {
  std::uint8_t tr[64];
  MdCtxPtr t(EVP_MD_CTX_new());
  if (!t || !EVP_DigestInit_ex(t.get(), EVP_shake256(), nullptr) || !EVP_DigestUpdate(t.get(), pk.data(), pk.size()) ||
      !EVP_DigestFinalXOF(t.get(), tr, sizeof tr))
    throw std::runtime_error("SHAKE256(pk): " + openssl_error());
  static constexpr std::uint8_t prefix[2] = {0x00, 0x00};  // pure mode, empty context
  if (!impl_->ctx || !EVP_DigestInit_ex(impl_->ctx.get(), EVP_shake256(), nullptr) ||
      !EVP_DigestUpdate(impl_->ctx.get(), tr, sizeof tr) || !EVP_DigestUpdate(impl_->ctx.get(), prefix, 2))
    throw std::runtime_error("SHAKE256 init: " + openssl_error());
}
MlDsaMu::~MlDsaMu() = default;
void MlDsaMu::update(ByteView m) {
  if (!EVP_DigestUpdate(impl_->ctx.get(), m.data(), m.size())) throw std::runtime_error("SHAKE256: " + openssl_error());
}
Bytes MlDsaMu::final() {
  Bytes mu(64);
  if (!EVP_DigestFinalXOF(impl_->ctx.get(), mu.data(), mu.size())) throw std::runtime_error("SHAKE256: " + openssl_error());
  return mu;
}

namespace {
OSSL_PARAM* mu_params(int* one) {
  static thread_local OSSL_PARAM p[2];
  p[0] = OSSL_PARAM_construct_int(OSSL_SIGNATURE_PARAM_MU, one);
  p[1] = OSSL_PARAM_construct_end();
  return p;
}
}  // namespace

Result<Bytes> ml_dsa_sign_mu(const PrivateKey& key, ByteView mu) {
  if (!is_ml_dsa(key.algo()) || mu.size() != 64) return make_error(KErr::einval, "ML-DSA μ signing needs an ML-DSA key and 64 bytes");
  EVP_PKEY* k = static_cast<EVP_PKEY*>(key.native());
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, k, nullptr));
  SigPtr alg(EVP_SIGNATURE_fetch(nullptr, ml_dsa_name(key.algo()), nullptr));
  int one = 1;
  if (!ctx || !alg || EVP_PKEY_sign_message_init(ctx.get(), alg.get(), mu_params(&one)) <= 0)
    return make_error(KErr::einval, "ML-DSA μ sign init: " + openssl_error());
  size_t len = ml_dsa_signature_size(key.algo());
  Bytes sig(len);
  if (EVP_PKEY_sign(ctx.get(), sig.data(), &len, mu.data(), mu.size()) <= 0)
    return make_error(KErr::einval, "ML-DSA μ sign: " + openssl_error());
  sig.resize(len);
  return sig;
}

Status ml_dsa_verify_mu(const PublicKey& key, ByteView mu, ByteView signature) {
  if (!is_ml_dsa(key.algo()) || mu.size() != 64) return make_error(KErr::einval, "ML-DSA μ verification needs an ML-DSA key and 64 bytes");
  if (signature.size() != ml_dsa_signature_size(key.algo()))
    return make_error(KErr::ebadmsg, "ML-DSA signature of the wrong size");
  EVP_PKEY* k = static_cast<EVP_PKEY*>(key.native());
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, k, nullptr));
  SigPtr alg(EVP_SIGNATURE_fetch(nullptr, ml_dsa_name(key.algo()), nullptr));
  int one = 1;
  if (!ctx || !alg || EVP_PKEY_verify_message_init(ctx.get(), alg.get(), mu_params(&one)) <= 0)
    return make_error(KErr::einval, "ML-DSA μ verify init: " + openssl_error());
  const int rc = EVP_PKEY_verify(ctx.get(), signature.data(), signature.size(), mu.data(), mu.size());
  ERR_clear_error();
  if (rc != 1) return make_error(KErr::ekeyrejected, "signature does not verify");
  return ok_status();
}

Backend default_ml_dsa_backend(MlDsaOp op) {
  switch (op) {
    case MlDsaOp::sign: return Backend::botan;
    case MlDsaOp::verify: return Backend::botan;
  }
  return Backend::openssl;
}

Result<Bytes> sign_message(const PrivateKey& key, HashAlgo hash, ByteView message, Backend backend) {
  if (is_ml_dsa(key.algo())) {
    if (backend == Backend::botan) {
      // Per-thread cached Botan signer (botan_backend.cpp); the seed is read only when
      // this thread has no signer for the key yet.
      bool no_seed = false;
      try {
        return botan::ml_dsa_sign_cached(key.algo(), key.public_key().raw(), [&]() -> std::optional<Bytes> {
          auto seed = key.ml_dsa_seed();
          no_seed = !seed;
          return seed;
        }, message);
      } catch (const std::invalid_argument& e) {
        return make_error(KErr::einval, no_seed ? "the Botan backend needs an ML-DSA key with a seed" : e.what());
      }
    }
    return openssl_ml_dsa_sign(key, message);
  }
  return sign_digest(key, hash, digest(hash, message));
}

Result<Bytes> sign_digest(const PrivateKey& key, HashAlgo hash, ByteView d) {
  if (is_ml_dsa(key.algo())) return make_error(KErr::einval, "ML-DSA signs messages, not digests");
  if (d.size() != hash_info(hash).size) return make_error(KErr::einval, "digest of the wrong size");
  EVP_PKEY* k = static_cast<EVP_PKEY*>(key.native());
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, k, nullptr));
  if (!ctx || EVP_PKEY_sign_init(ctx.get()) <= 0 || EVP_PKEY_CTX_set_signature_md(ctx.get(), md_of(hash)) <= 0)
    return make_error(KErr::einval, "sign init: " + openssl_error());
  if (key.algo() == KeyAlgo::rsa && EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_PADDING) <= 0)
    return make_error(KErr::einval, "RSA padding: " + openssl_error());
  size_t len = 0;
  if (EVP_PKEY_sign(ctx.get(), nullptr, &len, d.data(), d.size()) <= 0)
    return make_error(KErr::einval, "sign: " + openssl_error());
  Bytes sig(len);
  if (EVP_PKEY_sign(ctx.get(), sig.data(), &len, d.data(), d.size()) <= 0)
    return make_error(KErr::einval, "sign: " + openssl_error());
  sig.resize(len);
  return sig;
}

Result<Bytes> rsa_public_raw(const PublicKey& key, ByteView signature) {
  if (key.algo() != KeyAlgo::rsa) return make_error(KErr::einval, "not an RSA key");
  EVP_PKEY* k = static_cast<EVP_PKEY*>(key.native());
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, k, nullptr));
  if (!ctx || EVP_PKEY_verify_recover_init(ctx.get()) <= 0 ||
      EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_NO_PADDING) <= 0)
    return make_error(KErr::einval, "RSA init: " + openssl_error());
  size_t len = static_cast<size_t>(EVP_PKEY_get_size(k));
  Bytes out(len);
  if (EVP_PKEY_verify_recover(ctx.get(), out.data(), &len, signature.data(), signature.size()) <= 0) {
    ERR_clear_error();
    return make_error(KErr::einval, "RSA public operation failed");
  }
  // Left-pad to the modulus size.
  out.resize(len);
  const std::size_t k_bytes = static_cast<std::size_t>(EVP_PKEY_get_size(k));
  if (out.size() < k_bytes) out.insert(out.begin(), k_bytes - out.size(), 0);
  return out;
}

Status ml_dsa_verify_with_context(const PublicKey& key, ByteView message, ByteView signature, ByteView context,
                                  Backend backend) {
  if (!is_ml_dsa(key.algo())) return make_error(KErr::einval, "not an ML-DSA key");
  if (context.size() > 255) return make_error(KErr::einval, "ML-DSA context string longer than 255 bytes");
  if (signature.size() != ml_dsa_signature_size(key.algo()))
    return make_error(KErr::ebadmsg, "ML-DSA signature of the wrong size");
  if (backend == Backend::botan) {
    if (!context.empty()) return make_error(KErr::einval, "Botan's ML-DSA API has no context string");
    if (!botan::ml_dsa_verify(key.algo(), key.raw(), message, signature))
      return make_error(KErr::ekeyrejected, "signature does not verify");
    return ok_status();
  }
  return openssl_ml_dsa_verify(key, message, signature, context);
}

Status verify_message(const PublicKey& key, HashAlgo hash, ByteView message, ByteView signature, Backend backend) {
  if (is_ml_dsa(key.algo())) {
    // crypto/mldsa.c: a signature of the wrong size is malformed (EBADMSG), not rejected.
    if (signature.size() != ml_dsa_signature_size(key.algo()))
      return make_error(KErr::ebadmsg, "ML-DSA signature is " + std::to_string(signature.size()) + " bytes, " +
                                           std::string(key_algo_name(key.algo())) + " needs " +
                                           std::to_string(ml_dsa_signature_size(key.algo())));
    if (backend == Backend::botan) {
      if (!botan::ml_dsa_verify(key.algo(), key.raw(), message, signature))
        return make_error(KErr::ekeyrejected, "signature does not verify");
      return ok_status();
    }
    return openssl_ml_dsa_verify(key, message, signature);
  }
  return verify_digest(key, hash, digest(hash, message), signature);
}

Status verify_digest(const PublicKey& key, HashAlgo hash, ByteView d, ByteView signature) {
  if (is_ml_dsa(key.algo())) return make_error(KErr::einval, "ML-DSA signs messages, not digests");
  if (d.size() != hash_info(hash).size)
    return make_error(KErr::einval, "digest is " + std::to_string(d.size()) + " bytes, " +
                                        std::string(hash_info(hash).name) + " gives " +
                                        std::to_string(hash_info(hash).size));
  EVP_PKEY* k = static_cast<EVP_PKEY*>(key.native());
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, k, nullptr));
  if (!ctx || EVP_PKEY_verify_init(ctx.get()) <= 0 || EVP_PKEY_CTX_set_signature_md(ctx.get(), md_of(hash)) <= 0)
    return make_error(KErr::einval, "verify init: " + openssl_error());
  if (key.algo() == KeyAlgo::rsa && EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_PADDING) <= 0)
    return make_error(KErr::einval, "RSA padding: " + openssl_error());
  int rc = EVP_PKEY_verify(ctx.get(), signature.data(), signature.size(), d.data(), d.size());
  ERR_clear_error();
  if (rc != 1) return make_error(KErr::ekeyrejected, "signature does not verify");
  return ok_status();
}

}  // namespace modsign::crypto
