// modsign's own: OpenSSL backend — X.509 Certificate parsing, accessors, PEM bundles, self-signed certificates.
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
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
#include "crypto/openssl_util.hpp"

namespace modsign::crypto {

using ossl::BioPtr;
using ossl::PemStep;
using ossl::read_pem_block;
using ossl::X509ExtPtr;
using ossl::X509NamePtr;
using ossl::X509Ptr;

// ------------------------------------------------------------------------- certificates

ByteView Certificate::tbs() const { return ByteView(der_).subspan(tbs_off_, tbs_len_); }
ByteView Certificate::issuer() const { return ByteView(der_).subspan(issuer_off_, issuer_len_); }
ByteView Certificate::subject() const { return ByteView(der_).subspan(subject_off_, subject_len_); }
ByteView Certificate::serial() const { return ByteView(der_).subspan(serial_off_, serial_len_); }

std::string name_common_name(ByteView name_tlv, asn1::Rules rules) {
  try {
    asn1::Reader name(name_tlv, rules);
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
  } catch (const asn1::DecodeError&) {}
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
    if (!sig_key || *sig_key != ka)
      return make_error(KErr::ekeyrejected, "certificate signature algorithm differs from the key's");
    return verify_message(issuer_key, HashAlgo::sha512, tbs(), signature_value());
  }
  auto h = signature_hash();
  if (!h)
    return make_error(KErr::enopkg,
                      "unsupported certificate signature algorithm " + asn1::oid_to_string(signature_algorithm()));
  const bool rsa_sig = !ecdsa && !sig_key;  // sha*WithRSAEncryption
  if ((key_ecdsa && !ecdsa) || (ka == KeyAlgo::rsa && !rsa_sig))
    return make_error(KErr::ekeyrejected, "certificate signature algorithm differs from the key's");
  return verify_message(issuer_key, *h, tbs(), signature_value());
}

ByteView Certificate::signature_algorithm() const { return ByteView(der_).subspan(sigalg_off_, sigalg_len_); }

std::optional<HashAlgo> Certificate::signature_hash() const { return signature_hash_of(signature_algorithm()); }

std::optional<HashAlgo> signature_hash_of(ByteView o) {
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
      case 0x0a:
      case 0x0e: return HashAlgo::sha3_256;  // id-ecdsa-with-sha3-256, id-rsassa-pkcs1-v1_5-with-sha3-256
      case 0x0b:
      case 0x0f: return HashAlgo::sha3_384;
      case 0x0c:
      case 0x10: return HashAlgo::sha3_512;
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
  asn1::Reader r(issuer(), rules_);
  auto name = r.next();
  id.insert(id.end(), name.content.begin(), name.content.end());
  return id;
}

namespace {
// The key algorithm a BER SubjectPublicKeyInfo names (rsaEncryption, id-ecPublicKey on a
// curve modsign knows, id-ml-dsa-*, GOST R 34.10-2012), or nullopt.
std::optional<KeyAlgo> key_algo_of_spki(ByteView spki) {
  try {
    asn1::Reader top(spki, asn1::Rules::ber);
    asn1::Reader seq = top.enter(asn1::kSequence, "SubjectPublicKeyInfo");
    asn1::Reader alg = seq.enter(asn1::kSequence, "algorithm");
    const ByteView o = alg.expect(asn1::kOid, "algorithm OID").content;
    auto is = [&](ByteView x) { return std::ranges::equal(o, x); };
    if (is(oid::rsa_encryption)) return KeyAlgo::rsa;
    if (is(oid::ml_dsa_44)) return KeyAlgo::ml_dsa_44;
    if (is(oid::ml_dsa_65)) return KeyAlgo::ml_dsa_65;
    if (is(oid::ml_dsa_87)) return KeyAlgo::ml_dsa_87;
    // id-tc26-gost3410-12-256/512 (x509_extract_key_data: "ecrdsa").  (Generated case
    // x509:AlgorithmIdentifier.algorithm.oid-1.2.643.7.1.1.1.1 in the SubjectPublicKeyInfo.)
    static constexpr std::uint8_t gost256[] = {0x2a, 0x85, 0x03, 0x07, 0x01, 0x01, 0x01, 0x01};
    static constexpr std::uint8_t gost512[] = {0x2a, 0x85, 0x03, 0x07, 0x01, 0x01, 0x01, 0x02};
    if (is(ByteView(gost256))) return KeyAlgo::ecrdsa_256;
    if (is(ByteView(gost512))) return KeyAlgo::ecrdsa_512;
    if (is(oid::ec_public_key) && alg.peek(asn1::kOid)) {
      static constexpr std::uint8_t p192[] = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x01};
      static constexpr std::uint8_t p521[] = {0x2b, 0x81, 0x04, 0x00, 0x23};
      const ByteView c = alg.expect(asn1::kOid, "curve").content;
      if (std::ranges::equal(c, oid::prime256v1)) return KeyAlgo::ecdsa_p256;
      if (std::ranges::equal(c, oid::secp384r1)) return KeyAlgo::ecdsa_p384;
      if (std::ranges::equal(c, ByteView(p192))) return KeyAlgo::ecdsa_p192;
      if (std::ranges::equal(c, ByteView(p521))) return KeyAlgo::ecdsa_p521;
    }
  } catch (const asn1::DecodeError&) {}
  return std::nullopt;
}
}  // namespace

Result<Certificate> Certificate::from_der(ByteView der, asn1::Rules rules) {
  Certificate c;
  c.rules_ = rules;
  c.der_.assign(der.begin(), der.end());
  const ByteView d(c.der_);
  auto off = [&](ByteView sub) { return static_cast<std::size_t>(sub.data() - d.data()); };
  try {
    asn1::Reader top(d, rules);
    asn1::Reader cert = top.enter(asn1::kSequence, "Certificate");
    top.finish("Certificate");
    auto tbs_el = cert.expect(asn1::kSequence, "TBSCertificate");
    c.tbs_off_ = off(tbs_el.tlv);
    c.tbs_len_ = tbs_el.tlv.size();
    asn1::Reader tbs(tbs_el.content, rules);
    asn1::Element e;
    tbs.maybe(asn1::context_cons(0), e);  // version
    auto serial = tbs.expect(asn1::kInteger, "serialNumber");
    c.serial_off_ = off(serial.content);
    c.serial_len_ = serial.content.size();
    tbs.expect(asn1::kSequence, "signature AlgorithmIdentifier");
    auto issuer = tbs.expect(asn1::kSequence, "issuer");
    asn1::check_name(issuer.content, rules);
    c.issuer_off_ = off(issuer.tlv);
    c.issuer_len_ = issuer.tlv.size();
    {
      asn1::Reader validity = tbs.enter(asn1::kSequence, "validity");
      // Under the kernel's BER decoder notAfter (a CHOICE at the end of Validity) may be
      // absent: it stays 0, as x509_cert_parse's zeroed certificate has it.
      std::int64_t* times[] = {&c.valid_from_, &c.valid_to_};
      for (int i = 0; i < 2; ++i) {
        if (rules == asn1::Rules::ber && i == 1 && validity.empty()) break;
        auto t = validity.next();
        auto v = asn1::decode_time(t.tag, t.content);
        if (!v) throw asn1::DecodeError("invalid validity time");
        *times[i] = *v;
      }
    }
    auto subject = tbs.expect(asn1::kSequence, "subject");
    asn1::check_name(subject.content, rules);
    c.subject_off_ = off(subject.tlv);
    c.subject_len_ = subject.tlv.size();
    auto spki = tbs.expect(asn1::kSequence, "subjectPublicKeyInfo");
    tbs.maybe(asn1::context_prim(1), e);  // issuerUniqueID
    tbs.maybe(asn1::context_prim(2), e);  // subjectUniqueID
    if (tbs.maybe(asn1::context_cons(3), e)) {
      asn1::Reader exts_outer(e.content, rules);
      asn1::Reader exts = exts_outer.enter(asn1::kSequence, "extensions");
      // x509_process_extension keeps the last authorityKeyIdentifier's bytes (raw_akid) and
      // x509_cert_parse decodes that one after the certificate: an earlier one, whatever it
      // holds, is never read.  (Generated case x509:Extension.extnid.oid-2.5.29.35, 7.2.13.)
      std::optional<ByteView> last_akid;
      while (!exts.empty()) {
        asn1::Reader ext = exts.enter(asn1::kSequence, "Extension");
        auto id = ext.expect(asn1::kOid, "extnID");
        asn1::Element crit;
        ext.maybe(0x01, crit);
        auto val = ext.expect(asn1::kOctetString, "extnValue");
        static constexpr std::uint8_t akid_oid[] = {0x55, 0x1d, 0x23};
        if (std::ranges::equal(id.content, oid::subject_key_identifier)) {
          asn1::Reader v(val.content, rules);
          auto k = v.expect(asn1::kOctetString, "subjectKeyIdentifier");
          c.skid_ = Bytes(k.content.begin(), k.content.end());
        } else if (std::ranges::equal(id.content, akid_oid)) {
          last_akid = val.content;
        }
      }
      if (last_akid) {
        asn1::Reader v(*last_akid, rules);
        asn1::Reader akid = v.enter(asn1::kSequence, "authorityKeyIdentifier");
        asn1::Element e2;
        std::optional<Bytes> name, serial;
        if (akid.maybe(asn1::context_prim(0), e2)) c.akid_keyid_ = Bytes(e2.content.begin(), e2.content.end());
        if (akid.maybe(asn1::context_cons(1), e2)) {
          asn1::Reader gns(e2.content, rules);
          while (!gns.empty()) {
            auto gn = gns.next();
            // directoryName [4] EXPLICIT Name; the kernel's decoder also takes it primitive
            // (cms/x509_cert_parser.cpp general_name).
            if (gn.tag == asn1::context_cons(4) || (rules == asn1::Rules::ber && gn.tag == asn1::context_prim(4))) {
              asn1::Reader dn(gn.content, rules);
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
    {
      asn1::Reader sa = cert.enter(asn1::kSequence, "signatureAlgorithm");
      auto o = sa.expect(asn1::kOid, "signatureAlgorithm OID");
      c.sigalg_off_ = off(o.content);
      c.sigalg_len_ = o.content.size();
    }
    {
      auto sv = cert.expect(asn1::kBitString, "signatureValue");
      // No unused-bits octet, or one that is not 0: malformed for us (signature_has_unused_bits),
      // refused by the kernel's x509_note_signature (EBADMSG), not a reason to stop reading.
      c.sigval_off_ = off(sv.content) + (sv.content.empty() ? 0 : 1);
      c.sigval_len_ = sv.content.empty() || sv.content[0] != 0 ? static_cast<std::size_t>(-1) : sv.content.size() - 1;
    }
    cert.finish("Certificate");
    auto pub = PublicKey::from_spki(spki.tlv);
    if (!pub && rules == asn1::Rules::ber) {
      // x509_extract_key_data keeps the algorithm and the key bytes; the key itself is
      // parsed only when used (crypto_sig_set_pubkey, cms/public_key).
      if (auto algo = key_algo_of_spki(spki.tlv)) pub = PublicKey::unparsed(*algo, spki.tlv);
    }
    if (!pub) return make_error(pub.error().code, "certificate: " + pub.error().message);
    c.pub_ = std::move(pub.value());
  } catch (const asn1::DecodeError& ex) {
    return make_error(KErr::ebadmsg, std::string("malformed certificate: ") + ex.what());
  }
  return c;
}

Result<std::vector<Certificate>> Certificate::load_all(const std::string& path, std::vector<Error>* unsupported) {
  return from_bytes(read_file(path, kMaxSmallFileSize), unsupported);
}

Result<std::vector<Certificate>> Certificate::from_bytes(ByteView in, std::vector<Error>* unsupported,
                                                         asn1::Rules rules) {
  std::vector<Certificate> out;
  if (in.size() > kMaxSmallFileSize) return make_error(KErr::ebadmsg, "certificate input larger than 16 MiB");
  if (in.size() >= 2 && in[0] == 0x30 && in[1] == 0x82) {
    auto c = from_der(in, rules);
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
    // Only "no further PEM block" ends the bundle; a damaged block is an error.
    const PemStep step = read_pem_block(bio.get(), &name, &header, &data, &len);
    if (step == PemStep::damaged)
      return make_error(KErr::ebadmsg, "PEM block " + std::to_string(index + 1) + " is damaged (bad base64 or armour)");
    if (step == PemStep::end) break;
    ++index;
    const bool is_cert = std::strcmp(name, "CERTIFICATE") == 0 || std::strcmp(name, "X509 CERTIFICATE") == 0;
    Result<Certificate> c = make_error(KErr::ebadmsg, "");
    if (is_cert) c = from_der(ByteView(data, static_cast<std::size_t>(len)), rules);
    OPENSSL_free(name);
    OPENSSL_free(header);
    OPENSSL_free(data);
    if (!is_cert) continue;
    if (!c) {
      Error e = make_error(c.error().code, "PEM block " + std::to_string(index) + ": " + c.error().message);
      if (unsupported && e.code == KErr::enopkg) {
        unsupported->push_back(std::move(e));
        continue;
      }
      return e;
    }
    out.push_back(std::move(c.value()));
  }
  if (out.empty() && unsupported && !unsupported->empty()) return out;  // every block unsupported
  if (out.empty()) {
    if (!in.empty() && in[0] == 0x30) {
      auto c = from_der(in, rules);
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
  for (auto [nid, value] :
       {std::pair{NID_basic_constraints, "critical,CA:FALSE"}, std::pair{NID_key_usage, "digitalSignature"},
        std::pair{NID_subject_key_identifier, "hash"}, std::pair{NID_authority_key_identifier, "keyid:always"}}) {
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

std::optional<std::string> key_material_kind(ByteView data) {
  // PEM: a line "-----BEGIN <label>-----" (one CR before the LF allowed), as OpenSSL's
  // PEM reader starts a block; a key file cut short still counts.
  const std::string_view text(reinterpret_cast<const char*>(data.data()), data.size());
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    std::string_view line = text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    at = nl == std::string_view::npos ? text.size() : nl + 1;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (!line.starts_with("-----BEGIN ") || !line.ends_with("-----") || line.size() < 16) continue;
    const std::string_view label = line.substr(11, line.size() - 16);
    if (label.ends_with("PRIVATE KEY")) return "a private key (PEM)";
    if (label == "CERTIFICATE" || label == "TRUSTED CERTIFICATE" || label == "X509 CERTIFICATE")
      return "a certificate (PEM)";
  }
  if (data.empty() || data[0] != 0x30) return std::nullopt;
  const long len = static_cast<long>(data.size());
  const unsigned char* const end = data.data() + data.size();
  // True when `parse` reads one object of the whole of `data` (freed again).
  const auto whole = [&](auto parse, auto freer) {
    const unsigned char* p = data.data();
    auto* obj = parse(&p);
    const bool all = obj && p == end;
    if (obj) freer(obj);
    return all;
  };
  if (whole([&](const unsigned char** p) { return d2i_X509(nullptr, p, len); }, X509_free))
    return "a certificate (DER)";
  if (whole([&](const unsigned char** p) { return d2i_PKCS8_PRIV_KEY_INFO(nullptr, p, len); },
            PKCS8_PRIV_KEY_INFO_free) ||
      whole([&](const unsigned char** p) { return d2i_X509_SIG(nullptr, p, len); }, X509_SIG_free) ||
      whole([&](const unsigned char** p) { return d2i_AutoPrivateKey(nullptr, p, len); }, EVP_PKEY_free)) {
    ERR_clear_error();
    return "a private key (DER)";
  }
  ERR_clear_error();
  return std::nullopt;
}

}  // namespace modsign::crypto
