// modsign — generate_key() (include/modsign/keygen.hpp).
#include "modsign/keygen.hpp"

#include <sys/stat.h>

#include <optional>

#include "common/file.hpp"
#include "crypto/algorithms.hpp"
#include "crypto/crypto.hpp"

namespace modsign {

namespace {
ByteView bytes_of(const std::string& s) { return ByteView(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()); }
}  // namespace

KeygenReport generate_key(const KeygenOptions& o) {
  int bits = 4096;
  const auto algo = crypto::key_algo_by_name(o.algorithm, &bits);
  if (!algo)
    throw KeygenError(KeygenRefusal::unknown_algorithm,
                      "unknown algorithm '" + o.algorithm +
                          "' (ml-dsa-44|ml-dsa-65|ml-dsa-87|rsa-2048|rsa-3072|rsa-4096|ecdsa-p256|ecdsa-p384)");
  if (o.days <= 0 || o.days > 3000000) throw KeygenError(KeygenRefusal::days, "days must be between 1 and 3000000");
  if (!o.cert_out.empty() && (o.cert_out == o.out || same_file(o.cert_out, o.out)))
    throw KeygenError(KeygenRefusal::same_file, "out and cert_out name the same file");
  if (!o.replace_existing)
    for (const std::string* p : {&o.cert_out, &o.out}) {
      struct stat st {};
      if (!p->empty() && (::lstat(p->c_str(), &st) == 0))
        throw KeygenError(KeygenRefusal::exists, *p + ": exists; refusing to overwrite it");
    }
  const crypto::PrivateKey key = crypto::PrivateKey::generate(*algo, bits);
  auto cert = crypto::Certificate::self_signed(key, o.subject, o.days);
  if (!cert) throw KeygenError(KeygenRefusal::certificate, cert.error().message);
  const auto pem = key.pkcs8_pem();  // secrets: wiped when destroyed
  if (!pem) throw InputError(o.out + ": " + pem.error().message);
  KeygenReport r;
  const std::string cert_pem = cert->pem();
  crypto::SecretString key_file;
  key_file.value().reserve(pem->value().size() + cert_pem.size());  // no reallocation leaves a copy behind
  key_file.value() = pem->value();
  if (o.cert_out.empty()) key_file.value() += cert_pem;
  // Both targets opened (checked) before either is replaced, and put in place together:
  // both or neither (commit_together restores the first if the second cannot be).
  std::optional<AtomicFile> cert_file;
  if (!o.cert_out.empty()) cert_file.emplace(o.cert_out, 0644, false);
  AtomicFile key_out(o.out, 0600, false);
  if (cert_file) cert_file->write(bytes_of(cert_pem));
  key_out.write(bytes_of(key_file.value()));
  commit_together({cert_file ? &*cert_file : nullptr, &key_out});
  if (cert_file) r.files_written.push_back(o.cert_out);
  r.files_written.push_back(o.out);
  r.key_path = o.out;
  r.cert_path = o.cert_out.empty() ? o.out : o.cert_out;
  r.algorithm = key.algo() == crypto::KeyAlgo::rsa ? "RSA-" + std::to_string(bits)
                                                   : std::string(crypto::key_algo_name(key.algo()));
  r.subject = cert->subject_text();
  r.serial = to_colon_hex(cert->serial());
  return r;
}

}  // namespace modsign
