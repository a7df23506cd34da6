// `modsign sign-file`: scripts/sign-file's own command line (getopt, not CLI11) and exit
// statuses (1 on any error, 2 on usage), signing with modsign::sign_module_file() (raw: the
// file's bytes as they are, as sign-file signs them; a compressed module's decompressed
// image, compressed again, where sign-file would corrupt it).
#include <getopt.h>

#include <iostream>
#include <string>
#include <vector>

#include <modsign/sign.hpp>

#include "cli_common.hpp"
#include "registry.hpp"

namespace modsign::cli {

namespace {

constexpr const char* kSignFileUsage =
    "Usage: modsign sign-file [-dpk] <hash algo> <key> <x509> <module> [<dest>]\n"
    "       modsign sign-file -s <raw sig> <hash algo> <x509> <module> [<dest>]\n";

/// scripts/sign-file (7.2): getopt "sdpk"; "sign-file [-dpk] HASH KEY X509 MODULE [DEST]"
/// or "sign-file -s RAWSIG HASH X509 MODULE [DEST]"; errors exit 1, usage 2.  Our own
/// additions: -h/--help print the usage on stdout and exit 0; --deterministic
/// (SignOptions::deterministic: reproducible ML-DSA and ECDSA signatures).
int cmd_sign_file(int argc, char** argv) {
  auto usage = [] {
    std::cerr << kSignFileUsage;
    return 2;
  };
  constexpr int kDeterministic = 1000;  // a long option only
  static const option kLong[] = {{"help", no_argument, nullptr, 'h'},
                                 {"deterministic", no_argument, nullptr, kDeterministic},
                                 {nullptr, 0, nullptr, 0}};
  bool raw = false, save_p7s = false, detached = false, keyid = false, deterministic = false;
  optind = 1;
  opterr = 1;
  for (int opt; (opt = getopt_long(argc, argv, "sdpkh", kLong, nullptr)) != -1;) {
    switch (opt) {
      case 's': raw = true; break;
      case 'p': save_p7s = true; break;
      case 'd': detached = save_p7s = true; break;
      case 'k': keyid = true; break;
      case kDeterministic: deterministic = true; break;
      case 'h': std::cout << kSignFileUsage << "See modsign-sign-file(1).\n"; return 0;
      default: return usage();
    }
  }
  std::vector<std::string> p(argv + optind, argv + argc);
  if (p.size() < 4 || p.size() > 5) return usage();
  const std::string& hash_name = raw ? p[1] : p[0];
  const std::string& x509 = p[2];
  const std::string& module_path = p[3];
  const std::string dest = p.size() == 5 ? p[4] : module_path;
  // sign-file's own exit status: 1 for every failure (run_guarded() reports it).
  const int status = run_guarded(
      [&] {
        if (raw) {
          append_signature_file(module_path, p[0], dest);
          return kExitOk;
        }
        SignOptions opt;
        opt.hash = hash_name;
        opt.raw = true;            // no look for an existing signature (one is signed over)
        opt.recompress = true;     // a compressed module: its decompressed image, compressed again
        opt.signed_attrs = false;  // CMS_NOATTR (for ML-DSA: sign-file built against OpenSSL 4)
        opt.skid = keyid;
        opt.deterministic = deterministic;
        opt.backend = "openssl";
        opt.out = dest;
        opt.p7s = save_p7s;
        opt.p7s_only = detached;
        opt.p7s_out = module_path + ".p7s";  // -p names the .p7s after MODULE, also with DEST
        try {
          check_sign_options(opt);
        } catch (const SignError&) {
          complain(hash_name, "unknown hash algorithm");
          return kExitInput;
        }
        const Signer signer = load_signer(p[1], x509);
        for (const auto& n : sign_module_file(signer, module_path, opt).notes) complain(module_path, n);
        return kExitOk;
      },
      nullptr, module_path);
  return status == kExitOk ? 0 : 1;
}

/// Nothing to declare: main() hands sign-file its argv (Command::own_main); the subcommand
/// exists for `modsign --help`.
Runner setup_sign_file(CLI::App&) {
  return [] { return kExitUsage; };
}

}  // namespace

const Registration kSignFile{{"sign-file",
                              "scripts/sign-file's command line: [-dpk] [-s] ... (see modsign-sign-file(1))",
                              setup_sign_file, cmd_sign_file}};

}  // namespace modsign::cli
