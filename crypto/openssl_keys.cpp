// modsign's own: OpenSSL backend — key loading and generation, PKCS#8 PEM/DER, passphrases, cleanse.
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/proverr.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cstring>

#include "asn1/der.hpp"
#include "common/file.hpp"
#include "crypto/crypto.hpp"
#include "crypto/openssl_util.hpp"

namespace modsign::crypto {

namespace {

using ossl::BioPtr;
using ossl::ml_dsa_name;
using ossl::PemStep;
using ossl::read_pem_block;

std::shared_ptr<void> share(EVP_PKEY* p) {
  return std::shared_ptr<void>(p, [](void* q) { EVP_PKEY_free(static_cast<EVP_PKEY*>(q)); });
}
EVP_PKEY* pk(const std::shared_ptr<void>& p) { return static_cast<EVP_PKEY*>(p.get()); }

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
Result<PublicKey> public_from(EVP_PKEY* p);

int no_passphrase_cb(char*, int, int, void*) { return -1; }

/// The queue's text (openssl_error()), and in `invalid_key` whether a provider refused the key
/// material as inconsistent (PROV_R_INVALID_KEY: an ML-DSA seed and expandedKey, or a private
/// key and its public part, that disagree; RFC 9881 C.4), read from the codes.
std::string key_error(bool& invalid_key) {
  std::vector<unsigned long> codes;
  std::string why = openssl_error(&codes);
  invalid_key = std::any_of(codes.begin(), codes.end(), [](unsigned long e) {
    return ERR_GET_LIB(e) == ERR_LIB_PROV && ERR_GET_REASON(e) == PROV_R_INVALID_KEY;
  });
  return why;
}

int passphrase_cb(char* buf, int size, int, void* u) {
  const auto* s = static_cast<const std::string*>(u);
  if (static_cast<int>(s->size()) > size) return -1;
  std::copy_n(s->data(), s->size(), buf);  // a length-counted buffer: no NUL is needed
  return static_cast<int>(s->size());
}

}  // namespace

std::string openssl_error(std::vector<unsigned long>* codes) {
  std::string out;
  unsigned long e;
  char buf[256];
  while ((e = ERR_get_error()) != 0) {
    if (codes) codes->push_back(e);
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

void cleanse(void* p, std::size_t n) noexcept {
  if (p && n) OPENSSL_cleanse(p, n);
}

[[gnu::noinline]] void wipe_stack() noexcept {
  unsigned char below[65536];
  OPENSSL_cleanse(below, sizeof below);
}

// ------------------------------------------------------------------------------- keys

namespace {
Result<PublicKey> public_from(EVP_PKEY* p) {
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
                         std::ranges::equal(o.content, oid::ml_dsa_44) ||
                         std::ranges::equal(o.content, oid::ml_dsa_65) || std::ranges::equal(o.content, oid::ml_dsa_87);
      if (!known) return make_error(KErr::enopkg, "unsupported public key algorithm " + asn1::oid_to_string(o.content));
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
    } catch (const asn1::DecodeError&) {}
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

PublicKey PublicKey::unparsed(KeyAlgo algo, ByteView spki) {
  PublicKey out;
  out.algo_ = algo;
  out.spki_.assign(spki.begin(), spki.end());
  out.raw_ = out.spki_;
  return out;
}

Result<PublicKey> PublicKey::from_rsa(ByteView n, ByteView e) {
  auto unsigned_integer = [](asn1::Writer& w, ByteView v) {
    std::size_t i = 0;
    while (i + 1 < v.size() && v[i] == 0) ++i;
    Bytes b(v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
    if (b.empty() || (b[0] & 0x80)) b.insert(b.begin(), 0);
    w.tlv(asn1::kInteger, b);
  };
  asn1::Writer key;
  key.add(asn1::kSequence, [&](asn1::Writer& k) {
    unsigned_integer(k, n);
    unsigned_integer(k, e);
  });
  Bytes bits{0};
  const Bytes& kb = key.bytes();
  bits.insert(bits.end(), kb.begin(), kb.end());
  asn1::Writer spki;
  spki.add(asn1::kSequence, [&](asn1::Writer& s) {
    s.add(asn1::kSequence, [&](asn1::Writer& a) {
      a.oid(oid::rsa_encryption);
      a.null();
    });
    s.tlv(asn1::kBitString, bits);
  });
  return from_spki(spki.bytes());
}

Result<PublicKey> PublicKey::from_ec_point(KeyAlgo curve, ByteView point) {
  const char* group = nullptr;
  switch (curve) {
    case KeyAlgo::ecdsa_p192: group = "P-192"; break;
    case KeyAlgo::ecdsa_p256: group = "P-256"; break;
    case KeyAlgo::ecdsa_p384: group = "P-384"; break;
    case KeyAlgo::ecdsa_p521: group = "P-521"; break;
    default: return make_error(KErr::einval, "not an ECDSA curve");
  }
  OSSL_PARAM params[3] = {
      OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, const_cast<char*>(group), 0),
      OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, const_cast<std::uint8_t*>(point.data()), point.size()),
      OSSL_PARAM_END};
  ossl::PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
  EVP_PKEY* key = nullptr;
  if (!ctx || EVP_PKEY_fromdata_init(ctx.get()) <= 0 ||
      EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params) <= 0 || !key) {
    ERR_clear_error();
    return make_error(KErr::ebadmsg, std::string("not a point on ") + group);
  }
  const auto freed_after = share(key);  // public_from() takes a reference of its own
  return public_from(key);
}

bool PublicKey::operator==(const PublicKey& other) const {
  if (!pkey_ || !other.pkey_) return !pkey_ && !other.pkey_ && algo_ == other.algo_ && spki_ == other.spki_;
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

bool PrivateKey::has_ml_dsa_seed() const { return ml_dsa_seed().has_value(); }

std::optional<SecretBytes> PrivateKey::ml_dsa_seed() const {
  if (!is_ml_dsa(algo())) return std::nullopt;
  std::optional<SecretBytes> seed(SecretBytes(Bytes(32)));
  Bytes& s = seed->value();
  size_t len = 0;
  if (!EVP_PKEY_get_octet_string_param(pk(pkey_), OSSL_PKEY_PARAM_ML_DSA_SEED, s.data(), s.size(), &len) || len != 32) {
    ERR_clear_error();
    return std::nullopt;
  }
  return seed;
}

Result<PrivateKey> PrivateKey::load(const std::string& path, const std::optional<SecretString>& pass) {
  const SecretBytes b(read_file(path, kMaxSmallFileSize));
  return from_bytes(b.value(), pass);
}

namespace {
// 1-based index of the first PEM block of `in` that does not decode (bad base64 or
// armour), 0 when every block decodes.  Decoded bytes are cleansed (they may be a key).
int damaged_pem_block(ByteView in) {
  BioPtr bio(BIO_new_mem_buf(in.data(), static_cast<int>(in.size())));
  for (int index = 1;; ++index) {
    char* name = nullptr;
    char* header = nullptr;
    unsigned char* data = nullptr;
    long len = 0;
    const PemStep step = read_pem_block(bio.get(), &name, &header, &data, &len);
    if (step != PemStep::block) return step == PemStep::end ? 0 : index;
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_clear_free(data, static_cast<std::size_t>(len));
  }
}
}  // namespace

Result<PrivateKey> PrivateKey::from_bytes(ByteView in, const std::optional<SecretString>& pass) {
  if (in.size() > kMaxSmallFileSize) return make_error(KErr::ebadmsg, "key input larger than 16 MiB");
  EVP_PKEY* key = nullptr;
  const bool pem = in.size() >= 11 && std::memcmp(in.data(), "-----BEGIN", 10) == 0;
  const bool pem_anywhere =
      pem || std::string_view(reinterpret_cast<const char*>(in.data()), in.size()).find("-----BEGIN") !=
                 std::string_view::npos;
  if (pem_anywhere) {
    BioPtr bio(BIO_new_mem_buf(in.data(), static_cast<int>(in.size())));
    const std::string none;
    key = PEM_read_bio_PrivateKey(bio.get(), nullptr, pass ? passphrase_cb : no_passphrase_cb,
                                  const_cast<std::string*>(pass ? &pass->value() : &none));
    if (pass) wipe_stack();
    if (!key) {
      bool invalid_key = false;
      const std::string why = key_error(invalid_key);
      if (const int n = damaged_pem_block(in))
        return make_error(KErr::ebadmsg, "PEM block " + std::to_string(n) + " is damaged (bad base64 or armour)");
      const bool encrypted = std::string_view(reinterpret_cast<const char*>(in.data()), in.size()).find("ENCRYPTED") !=
                             std::string_view::npos;
      if (encrypted && !pass)
        return make_error(KErr::ebadmsg, "private key is encrypted and no passphrase was given (set KBUILD_SIGN_PIN)",
                          Error::Reason::needs_passphrase);
      if (encrypted) return make_error(KErr::ebadmsg, "cannot decrypt private key (wrong passphrase?)");
      if (invalid_key) return make_error(KErr::ebadmsg, "invalid private key (inconsistent key material): " + why);
      const std::string_view text(reinterpret_cast<const char*>(in.data()), in.size());
      if (text.find("PRIVATE KEY-----") == std::string_view::npos) {  // which blocks it has, by their labels
        const bool cert = text.find("-----BEGIN CERTIFICATE-----") != std::string_view::npos;
        return make_error(KErr::ebadmsg,
                          cert ? "holds a certificate, not a private key" : "holds no PEM PRIVATE KEY block");
      }
      return make_error(KErr::ebadmsg, "no usable private key in PEM input: " + why);
    }
  } else {
    const unsigned char* p = in.data();
    key = d2i_AutoPrivateKey(nullptr, &p, static_cast<long>(in.size()));
    if (!key && pass) {  // encrypted PKCS#8 (EncryptedPrivateKeyInfo) in DER
      ERR_clear_error();
      BioPtr bio(BIO_new_mem_buf(in.data(), static_cast<int>(in.size())));
      key = d2i_PKCS8PrivateKey_bio(bio.get(), nullptr, passphrase_cb, const_cast<std::string*>(&pass->value()));
      wipe_stack();
    }
    if (!key) {
      bool invalid_key = false;
      const std::string why = key_error(invalid_key);
      if (invalid_key) return make_error(KErr::ebadmsg, "invalid private key (inconsistent key material): " + why);
      return make_error(KErr::ebadmsg, "not a DER PKCS#8 private key: " + why);
    }
  }
  PrivateKey out;
  out.pkey_ = share(key);
  auto pub = public_from(key);
  if (!pub) return pub.error();
  out.pub_ = std::move(pub.value());
  return out;
}

Result<PrivateKey> PrivateKey::from_native(void* evp_pkey, std::shared_ptr<void> context) {
  auto* key = static_cast<EVP_PKEY*>(evp_pkey);
  PrivateKey out;
  out.pkey_ = std::shared_ptr<void>(key, [context = std::move(context)](void* q) mutable {
    EVP_PKEY_free(static_cast<EVP_PKEY*>(q));
    context.reset();  // the key first, then its library context
  });
  auto pub = public_from(key);
  if (!pub) return pub.error();
  out.pub_ = std::move(pub.value());
  return out;
}

PrivateKey PrivateKey::generate(KeyAlgo algo, int rsa_bits) {
  EVP_PKEY* key = nullptr;
  switch (algo) {
    case KeyAlgo::rsa: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(rsa_bits)); break;
    case KeyAlgo::ecdsa_p256: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"); break;
    case KeyAlgo::ecdsa_p384: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-384"); break;
    case KeyAlgo::ecdsa_p521: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-521"); break;
    case KeyAlgo::ecdsa_p192: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-192"); break;
    case KeyAlgo::ecrdsa_256:
    case KeyAlgo::ecrdsa_512: throw std::logic_error("GOST R 34.10-2012 keys cannot be generated");
    default: key = EVP_PKEY_Q_keygen(nullptr, nullptr, ml_dsa_name(algo)); break;
  }
  if (!key) throw LibraryError("key generation failed: " + openssl_error());
  PrivateKey out;
  out.pkey_ = share(key);
  out.pub_ = public_from(key).value();
  return out;
}

Result<SecretBytes> PrivateKey::pkcs8_der() const {
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
    const Bytes& xi = seed->value();
    const std::size_t body = 3 + alg.size() + 2 + 2 + xi.size();
    SecretBytes secret;
    Bytes& out = secret.value();
    out.reserve(2 + body);
    out.insert(out.end(), {asn1::kSequence, static_cast<std::uint8_t>(body), asn1::kInteger, 1, 0});
    out.insert(out.end(), alg.begin(), alg.end());
    out.insert(out.end(), {asn1::kOctetString, static_cast<std::uint8_t>(2 + xi.size()), asn1::context_prim(0),
                           static_cast<std::uint8_t>(xi.size())});
    out.insert(out.end(), xi.begin(), xi.end());
    return secret;
  }
  // A secure-heap memory BIO: its buffer is cleansed when freed.
  BioPtr bio(BIO_new(BIO_s_secmem()));
  if (!i2d_PKCS8PrivateKey_bio(bio.get(), pk(pkey_), nullptr, nullptr, 0, nullptr, nullptr))
    return make_error(KErr::einval, "cannot encode private key: " + openssl_error());
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return SecretBytes(Bytes(data, data + n));
}

Result<SecretString> PrivateKey::pkcs8_pem() const {
  auto der = pkcs8_der();
  if (!der) return der.error();
  BioPtr bio(BIO_new(BIO_s_secmem()));
  PEM_write_bio(bio.get(), "PRIVATE KEY", "", der->value().data(), static_cast<long>(der->value().size()));
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return SecretString(std::string(data, data + n));
}

}  // namespace modsign::crypto
