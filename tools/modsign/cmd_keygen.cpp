// `modsign keygen`: a new signing key (ML-DSA in seed form, RSA or ECDSA) and its
// self-signed certificate, as certs/Makefile makes signing_key.pem (modsign::generate_key()).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <modsign/keygen.hpp>
#include <string>

#include "cli_common.hpp"
#include "options.hpp"
#include "registry.hpp"

namespace modsign::cli {

namespace {

struct KeygenArgs {
  std::string algo = "ml-dsa-65", out, cert_out, subject = "CN=modsign module signing key";
  int days = 36500;
  bool force = false;
};

constexpr const char* kAlgos = "ml-dsa-44|ml-dsa-65|ml-dsa-87|rsa-2048|rsa-3072|rsa-4096|ecdsa-p256|ecdsa-p384";

/// A refusal of generate_key() said in the command line's words; its exit status.
int refused(const KeygenError& e, const std::string& algo) {
  switch (e.reason()) {
    case KeygenRefusal::unknown_algorithm: complain("", "unknown --algo '" + algo + "' (" + kAlgos + ")"); break;
    case KeygenRefusal::days: complain("", "--days must be between 1 and 3000000"); break;
    case KeygenRefusal::same_file:
      complain("", "--out and --cert-out name the same file; omit --cert-out to write key and certificate together");
      break;
    case KeygenRefusal::certificate: complain("", e.what()); break;
    case KeygenRefusal::exists: complain("", std::string(e.what()) + " (--force replaces it)"); return kExitInput;
  }
  return kExitUsage;
}

int cmd_keygen(const KeygenArgs& a) {
  KeygenOptions o;
  o.algorithm = a.algo;
  o.subject = a.subject;
  o.days = a.days;
  o.out = a.out;
  o.cert_out = a.cert_out;
  o.replace_existing = a.force;
  KeygenReport r;
  try {
    r = generate_key(o);
  } catch (const KeygenError& e) { return refused(e, a.algo); }
  // Where the certificate went: its own file, or the key file (PEM blocks one after the other).
  std::cout << printable(r.key_path) << ": " << r.algorithm << " key, certificate " << printable(r.subject)
            << " serial " << r.serial
            << (r.cert_path != r.key_path ? " in " + printable(r.cert_path) : std::string(" in the same file")) << "\n";
  return kExitOk;
}

Runner setup_keygen(CLI::App& c) {
  auto a = std::make_shared<KeygenArgs>();
  c.add_option("--algo", a->algo, kAlgos)->capture_default_str();
  add_out_option(&c, a->out,
                 "private key (PKCS#8 PEM; ML-DSA in seed form), followed by the certificate "
                 "unless --cert-out is given")
      ->required();
  not_stdout(c.add_option("--cert-out", a->cert_out, "write the signer's certificate (PEM) here"));
  c.add_flag("--force", a->force, "replace --out and --cert-out if they exist (never both the same file)");
  c.add_option("--subject", a->subject, "subject and issuer DN, e.g. 'CN=Build key,O=Example'")->capture_default_str();
  c.add_option("--days", a->days, "validity in days")->capture_default_str();
  return [a] { return cmd_keygen(*a); };
}

}  // namespace

const Registration kKeygen{{"keygen", "new signing key and self-signed certificate", setup_keygen}};

}  // namespace modsign::cli
