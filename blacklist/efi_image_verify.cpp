// mirrors EDK2 SecurityPkg/Library/DxeImageVerificationLib DxeImageVerificationHandler(), IsForbiddenByDbx(),
// IsAllowedByDb(), IsCertHashFoundInDbx(), IsSignatureFoundInDatabase(); UEFI 2.10 §32.5.3.3
#include "blacklist/efi_image_verify.hpp"

#include <algorithm>

#include "crypto/crypto.hpp"
#include "crypto/openssl_pkcs7.hpp"

namespace modsign::blacklist::efi_image {

namespace {

using crypto::HashAlgo;

constexpr std::array<HashAlgo, 4> kAlgos = {HashAlgo::sha256, HashAlgo::sha1, HashAlgo::sha384, HashAlgo::sha512};

/// The EFI_CERT_<hash> signature type of an image digest (mCertType).
EfiGuid hash_type(HashAlgo a) {
  switch (a) {
    case HashAlgo::sha1: return efi_guids::cert_sha1;
    case HashAlgo::sha384: return efi_guids::cert_sha384;
    case HashAlgo::sha512: return efi_guids::cert_sha512;
    default: return efi_guids::cert_sha256;
  }
}

const Bytes* digest_of(const Image& img, HashAlgo a) {
  for (std::size_t i = 0; i < kAlgos.size(); ++i)
    if (kAlgos[i] == a) return &img.digests[i];
  return nullptr;
}

/// IsSignatureFoundInDatabase(): an entry of `type` whose data is exactly `digest`.
const EfiDatabaseEntry* find_hash(const std::vector<EfiDatabase>& dbs, const EfiGuid& type, const Bytes& digest) {
  for (const auto& db : dbs)
    for (const auto& e : db.entries)
      if (e.type == type && e.data == digest) return &e;
  return nullptr;
}

std::string subject_of(ByteView der) {
  auto c = crypto::Certificate::from_der(Bytes(der.begin(), der.end()));
  return c ? c->subject_text() : "(certificate not readable: " + c.error().message + ")";
}

struct CertHashHit {
  const EfiDatabaseEntry* entry = nullptr;
  EfiTime revocation;
};

/// IsCertHashFoundInDbx(): the certificate's TBSCertificate hashed as each
/// EFI_CERT_X509_SHA256/384/512 dbx entry asks, compared with the entry's first 32/48/64
/// bytes; the 16 bytes after them are its TimeOfRevocation.
std::optional<CertHashHit> cert_hash_in_dbx(const std::vector<EfiDatabase>& dbx, ByteView cert_der) {
  auto c = crypto::Certificate::from_der(Bytes(cert_der.begin(), cert_der.end()));
  if (!c) return std::nullopt;
  const std::pair<EfiGuid, HashAlgo> kinds[] = {{efi_guids::cert_x509_sha256, HashAlgo::sha256},
                                                {efi_guids::cert_x509_sha384, HashAlgo::sha384},
                                                {efi_guids::cert_x509_sha512, HashAlgo::sha512}};
  for (const auto& [type, algo] : kinds) {
    std::optional<Bytes> h;
    for (const auto& db : dbx)
      for (const auto& e : db.entries) {
        if (e.type != type) continue;
        if (!h) h = crypto::digest(algo, c->tbs());
        if (e.data.size() != h->size() + EfiTime::kSize) continue;  // SignatureSize EDK2 expects
        if (!std::equal(h->begin(), h->end(), e.data.begin())) continue;
        return CertHashHit{&e, EfiTime::from_bytes(e.data.data() + h->size())};
      }
  }
  return std::nullopt;
}

bool time_is_zero(const EfiTime& t) {
  const auto b = t.bytes();
  return std::all_of(b.begin(), b.end(), [](std::uint8_t x) { return x == 0; });
}

/// AuthenticodeVerify(): the signed digest equals the image's, and PKCS7_verify() with
/// `anchor` as the only trusted certificate succeeds.
bool authenticode_verify(const Signature& s, const Bytes& image_digest, ByteView anchor) {
  if (s.signed_digest != image_digest) return false;
  return crypto::pkcs7_verify_trusted(s.pkcs7, s.content, anchor).ok();
}

void revocation_note(EfiImageVerdict& out, const CertHashHit& hit) {
  if (!time_is_zero(hit.revocation))
    out.notes.push_back("the certificate was revoked at " + hit.revocation.str() +
                        "; firmware admits a signature with an RFC 3161 timestamp before that time verified by dbt, "
                        "which modsign does not evaluate");
}

}  // namespace

void decide(const Image& img, const EfiImagePolicy& pol, EfiImageVerdict& out) {
  out.refused = true;
  out.rule = EfiImageRule::not_allowed_by_db;
  std::vector<EfiDatabase> allow = pol.db;
  allow.insert(allow.end(), pol.mok.begin(), pol.mok.end());

  if (!img.has_certificate_table) {
    // An unsigned image: its SHA-256 hash alone decides, dbx before db.
    const Bytes& digest = *digest_of(img, HashAlgo::sha256);
    if (const auto* e = find_hash(pol.dbx, efi_guids::cert_sha256, digest)) {
      out.rule = EfiImageRule::hash_in_dbx;
      out.entry = *e;
    } else if (const auto* e = find_hash(allow, efi_guids::cert_sha256, digest)) {
      out.refused = false;
      out.rule = EfiImageRule::allowed_by_db_hash;
      out.entry = *e;
    }
    return;
  }

  bool verified = false;
  for (const Signature& s : img.signatures) {
    EfiSignatureVerdict sv;
    sv.index = s.index;
    sv.signer = s.error.empty() ? s.signer : "(unreadable: " + s.error + ")";
    sv.digest_algorithm = s.algo_name;
    const Bytes* digest = s.algo ? digest_of(img, *s.algo) : nullptr;
    sv.digest_matches = digest && *digest == s.signed_digest;
    if (!s.error.empty() || !digest) {  // the handler skips such an entry
      out.notes.push_back(
          "signature " + std::to_string(s.index) + ": " +
          (s.error.empty() ? "digest algorithm " + s.algo_name + " is not one firmware hashes with" : s.error) +
          "; skipped");
      out.signatures.push_back(std::move(sv));
      continue;
    }
    // IsForbiddenByDbx(): a dbx certificate the signature verifies against ...
    for (const auto& db : pol.dbx)
      for (const auto& e : db.entries)
        if (e.type == efi_guids::cert_x509 && authenticode_verify(s, *digest, e.data)) {
          sv.forbidden_by = e;
          sv.forbidden_certificate = subject_of(e.data);
          out.rule = EfiImageRule::certificate_in_dbx;
          out.entry = e;
          out.signatures.push_back(std::move(sv));
          return;
        }
    // ... or a certificate of the signature whose TBSCertificate hash dbx lists.
    for (const auto& cert : s.certificates)
      if (auto hit = cert_hash_in_dbx(pol.dbx, cert)) {
        sv.forbidden_by = *hit->entry;
        sv.forbidden_certificate = subject_of(cert);
        sv.revocation_time = hit->revocation;
        revocation_note(out, *hit);
        out.rule = EfiImageRule::certificate_hash_in_dbx;
        out.entry = *hit->entry;
        out.signatures.push_back(std::move(sv));
        return;
      }
    // IsAllowedByDb(): a db certificate the signature verifies against, unless that
    // certificate's own hash is in dbx.
    if (!verified)
      for (const auto& db : allow) {
        for (const auto& e : db.entries) {
          if (e.type != efi_guids::cert_x509 || !authenticode_verify(s, *digest, e.data)) continue;
          if (auto hit = cert_hash_in_dbx(pol.dbx, e.data)) {
            out.notes.push_back("signature " + std::to_string(s.index) + " verifies against " + e.file + " list " +
                                std::to_string(e.list) + " entry " + std::to_string(e.entry) +
                                ", but that certificate's hash is in dbx (" + hit->entry->file + ", byte offset " +
                                std::to_string(hit->entry->offset) + ")");
            revocation_note(out, *hit);
            continue;
          }
          verified = true;
          sv.allowed_by = e;
          sv.allowed_certificate = subject_of(e.data);
          out.rule = EfiImageRule::allowed_by_db_certificate;
          out.entry = e;
          break;
        }
        if (verified) break;
      }
    out.signatures.push_back(std::move(sv));
    // The image's hash in the signature's algorithm: dbx refuses, db admits.
    if (const auto* e = find_hash(pol.dbx, hash_type(*s.algo), *digest)) {
      out.refused = true;
      out.rule = EfiImageRule::hash_in_dbx;
      out.entry = *e;
      return;
    }
    if (!verified)
      if (const auto* e = find_hash(allow, hash_type(*s.algo), *digest)) {
        verified = true;
        out.rule = EfiImageRule::allowed_by_db_hash;
        out.entry = *e;
      }
  }
  out.refused = !verified;
  if (!verified) {
    out.rule = EfiImageRule::not_allowed_by_db;
    out.entry.reset();
  }
}

}  // namespace modsign::blacklist::efi_image
