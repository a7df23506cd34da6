// `modsign keygen`: a new signing key (ML-DSA in seed form, RSA or ECDSA) and its
// self-signed certificate, as certs/Makefile makes signing_key.pem.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>

#include "cli_common.hpp"
#include "crypto/crypto.hpp"
#include "options.hpp"
#include "registry.hpp"

namespace modsign::cli {

namespace {

using crypto::Certificate;
using crypto::PrivateKey;

struct KeygenArgs {
  std::string algo = "ml-dsa-65", out, cert_out, subject = "CN=modsign module signing key";
  int days = 36500;
};

int cmd_keygen(const KeygenArgs& a) {
  int bits = 4096;
  auto algo = crypto::key_algo_by_name(a.algo, &bits);
  if (!algo) {
    complain("", "unknown --algo '" + a.algo + "' (ml-dsa-44|ml-dsa-65|ml-dsa-87|rsa-2048|rsa-3072|rsa-4096|ecdsa-p256|ecdsa-p384)");
    return kExitUsage;
  }
  if (a.days <= 0 || a.days > 3000000) {
    complain("", "--days must be between 1 and 3000000");
    return kExitUsage;
  }
  if (!a.cert_out.empty() && a.cert_out == a.out) {
    complain("", "--out and --cert-out name the same file; omit --cert-out to write key and certificate together");
    return kExitUsage;
  }
  PrivateKey key = PrivateKey::generate(*algo, bits);
  auto cert = Certificate::self_signed(key, a.subject, a.days);
  if (!cert) {
    complain("", cert.error().message);
    return kExitUsage;
  }
  auto pem = key.pkcs8_pem();
  if (!pem) {
    complain(a.out, pem.error().message);
    return kExitInput;
  }
  crypto::CleanseOnExit pem_guard(pem.value());
  try {
    const std::string cert_pem = cert->pem();
    std::string key_file;
    crypto::CleanseOnExit key_file_guard(key_file);
    key_file.reserve(pem->size() + cert_pem.size());  // no reallocation leaves a copy behind
    key_file = pem.value();
    if (a.cert_out.empty()) key_file += cert_pem;
    // The certificate first: a failure then leaves no key without its certificate.
    if (!a.cert_out.empty())
      write_file_atomic(a.cert_out, ByteView(reinterpret_cast<const std::uint8_t*>(cert_pem.data()), cert_pem.size()),
                        0644, false);
    write_file_atomic(a.out, ByteView(reinterpret_cast<const std::uint8_t*>(key_file.data()), key_file.size()), 0600,
                      false);
  } catch (const IoError& e) {
    complain("", e.what());
    return kExitInput;
  }
  const std::string algo_text = key.algo() == crypto::KeyAlgo::rsa ? "RSA-" + std::to_string(bits)
                                                                   : std::string(crypto::key_algo_name(key.algo()));
  std::cout << printable(a.out) << ": " << algo_text << " key, certificate "
            << printable(cert->subject_text()) << " serial " << to_colon_hex(cert->serial()) << "\n";
  return kExitOk;
}

Runner setup_keygen(CLI::App& c) {
  auto a = std::make_shared<KeygenArgs>();
  c.add_option("--algo", a->algo, "ml-dsa-44|ml-dsa-65|ml-dsa-87|rsa-2048|rsa-3072|rsa-4096|ecdsa-p256|ecdsa-p384")
      ->capture_default_str();
  add_out_option(&c, a->out, "private key (PKCS#8 PEM; ML-DSA in seed form), followed by the certificate "
                             "unless --cert-out is given")->required();
  c.add_option("--cert-out", a->cert_out, "write the signer's certificate (PEM) here");
  c.add_option("--subject", a->subject, "subject and issuer DN, e.g. 'CN=Build key,O=Example'")->capture_default_str();
  c.add_option("--days", a->days, "validity in days")->capture_default_str();
  return [a] { return cmd_keygen(*a); };
}

}  // namespace

const Registration kKeygen{{"keygen", "new signing key and self-signed certificate", setup_keygen}};

}  // namespace modsign::cli
