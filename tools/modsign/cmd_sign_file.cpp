// `modsign sign-file`: scripts/sign-file's own command line (getopt, not CLI11) and exit
// statuses (1 on any error, 2 on usage).
#include <getopt.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "cms/signed_data.hpp"
#include "common/file.hpp"
#include "crypto/crypto.hpp"
#include "module/module_signature.hpp"
#include "registry.hpp"

namespace modsign::cli {

namespace {

/// scripts/sign-file (7.2): getopt "sdpk"; "sign-file [-dpk] HASH KEY X509 MODULE [DEST]"
/// or "sign-file -s RAWSIG HASH X509 MODULE [DEST]"; errors exit 1, usage 2.
int cmd_sign_file(int argc, char** argv) {
  auto usage = [] {
    std::cerr << "Usage: modsign sign-file [-dpk] <hash algo> <key> <x509> <module> [<dest>]\n"
                 "       modsign sign-file -s <raw sig> <hash algo> <x509> <module> [<dest>]\n";
    return 2;
  };
  bool raw = false, save_p7s = false, detached = false, keyid = false;
  optind = 1;
  opterr = 1;
  for (int opt; (opt = getopt(argc, argv, "sdpk")) != -1;) {
    switch (opt) {
      case 's': raw = true; break;
      case 'p': save_p7s = true; break;
      case 'd': detached = save_p7s = true; break;
      case 'k': keyid = true; break;
      default: return usage();
    }
  }
  std::vector<std::string> p(argv + optind, argv + argc);
  if (p.size() < 4 || p.size() > 5) return usage();
  const std::string& hash_name = raw ? p[1] : p[0];
  const std::string& x509 = p[2];
  const std::string& module_path = p[3];
  const std::string dest = p.size() == 5 ? p[4] : module_path;
  try {
    Bytes file = read_file(module_path);
    Bytes cms_der;
    if (raw) {
      cms_der = read_file(p[0]);
    } else {
      auto hash = crypto::hash_by_name(hash_name);
      if (!hash) {
        complain(hash_name, "unknown hash algorithm");
        return 1;
      }
      if (p[1].rfind("pkcs11:", 0) == 0) {
        complain(p[1], "PKCS#11 keys are not supported");
        return 1;
      }
      auto key = load_key(p[1]);
      if (!key) return 1;
      auto certs = load_certs({x509});
      if (!certs) return 1;
      cms::BuildOptions opt;
      opt.digest = *hash;
      opt.signed_attrs = false;  // CMS_NOATTR (for ML-DSA: sign-file built against OpenSSL 4)
      opt.sid = keyid ? cms::SignerIdType::subject_key_id : cms::SignerIdType::issuer_and_serial;
      auto built = cms::build_detached(*key, certs->front(), file, opt);
      if (!built) {
        complain(built.error().code == KErr::ekeyrejected ? x509 : module_path, built.error().message);
        return 1;
      }
      cms_der = std::move(built.value());
      if (save_p7s) write_file_atomic(module_path + ".p7s", cms_der, 0644, false);
      if (detached) return 0;
    }
    write_file_atomic(dest, module::append_signature(file, cms_der));
  } catch (const IoError& e) {
    complain("", e.what());
    return 1;
  }
  return 0;
}

/// Nothing to declare: main() hands sign-file its argv (Command::own_main); the subcommand
/// exists for `modsign --help`.
Runner setup_sign_file(CLI::App&) {
  return [] { return kExitUsage; };
}

}  // namespace

const Registration kSignFile{
    {"sign-file", "scripts/sign-file's command line: [-dpk] [-s] ... (see README)", setup_sign_file, cmd_sign_file}};

}  // namespace modsign::cli
