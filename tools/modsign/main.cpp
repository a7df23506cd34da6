// modsign command line: keygen, sign, sign-file, verify, info.
//
// Exit status (design.md): 0 success, 1 negative verdict (verification failed),
// 2 usage error, 3 unreadable or malformed input or I/O failure.  `sign-file` keeps
// scripts/sign-file's own statuses (1 on any error, 2 on usage).
// Errors go to stderr as "modsign: <file>: <what>".
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "asn1/der.hpp"
#include "cms/signed_data.hpp"
#include "common/file.hpp"
#include "crypto/crypto.hpp"
#include "module/module_signature.hpp"

using namespace modsign;
using crypto::Certificate;
using crypto::PrivateKey;

namespace {

constexpr int kExitOk = 0, kExitVerdict = 1, kExitUsage = 2, kExitInput = 3;

void complain(const std::string& file, const std::string& what) {
  std::cerr << "modsign: " << (file.empty() ? "" : file + ": ") << what << "\n";
}

std::optional<std::string> sign_pin() {
  if (const char* p = std::getenv("KBUILD_SIGN_PIN")) return std::string(p);
  return std::nullopt;
}

crypto::Backend backend_of(const std::string& s) {
  return s == "botan" ? crypto::Backend::botan : crypto::Backend::openssl;
}

/// Certificates from every file; reports and returns nullopt on the first failure.
std::optional<std::vector<Certificate>> load_certs(const std::vector<std::string>& files) {
  std::vector<Certificate> all;
  for (const auto& f : files) {
    try {
      auto certs = Certificate::load_all(f);
      if (!certs) {
        complain(f, certs.error().message);
        return std::nullopt;
      }
      for (auto& c : certs.value()) all.push_back(std::move(c));
    } catch (const IoError& e) {
      complain("", e.what());
      return std::nullopt;
    }
  }
  return all;
}

std::optional<PrivateKey> load_key(const std::string& path) {
  try {
    auto k = PrivateKey::load(path, sign_pin());
    if (!k) {
      complain(path, k.error().message);
      return std::nullopt;
    }
    return std::move(k.value());
  } catch (const IoError& e) {
    complain("", e.what());
    return std::nullopt;
  }
}

std::string hash_text(const cms::SignerInfo& si) {
  return si.digest_algorithm ? std::string(crypto::hash_info(*si.digest_algorithm).name)
                             : asn1::oid_to_string(si.digest_algorithm_oid);
}

std::string sig_algo_text(const cms::SignerInfo& si) {
  if (!si.signature_key_algo) return asn1::oid_to_string(si.signature_algorithm_oid);
  if (si.signature_key_algo == crypto::KeyAlgo::ecdsa_p256) return "ECDSA";
  return std::string(crypto::key_algo_name(*si.signature_key_algo));
}

/// Issuer CN of an issuerAndSerialNumber SignerInfo ("" for SKID), as modinfo shows "signer".
std::string signer_cn(const cms::SignerInfo& si) {
  if (si.sid_type != cms::SignerIdType::issuer_and_serial) return "";
  try {
    asn1::Reader name(si.issuer);
    asn1::Reader rdns = name.enter(asn1::kSequence, "Name");
    while (!rdns.empty()) {
      asn1::Reader set = rdns.enter(asn1::kSet, "RDN");
      while (!set.empty()) {
        asn1::Reader atv = set.enter(asn1::kSequence, "AttributeTypeAndValue");
        auto type = atv.expect(asn1::kOid, "type");
        auto value = atv.next();
        if (std::equal(type.content.begin(), type.content.end(), crypto::oid::common_name.begin(),
                       crypto::oid::common_name.end()))
          return std::string(value.content.begin(), value.content.end());
      }
    }
  } catch (const asn1::DecodeError&) {
  }
  return "";
}

std::string sig_key_text(const cms::SignerInfo& si) {
  return to_colon_hex(si.sid_type == cms::SignerIdType::issuer_and_serial ? si.serial : si.skid);
}

// ------------------------------------------------------------------------------ keygen

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
  if (a.days <= 0) {
    complain("", "--days must be positive");
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
  try {
    std::string key_file = pem.value();
    const std::string cert_pem = cert->pem();
    if (a.cert_out.empty()) key_file += cert_pem;
    write_file_atomic(a.out, ByteView(reinterpret_cast<const std::uint8_t*>(key_file.data()), key_file.size()), 0600,
                      false);
    std::fill(key_file.begin(), key_file.end(), '\0');
    if (!a.cert_out.empty())
      write_file_atomic(a.cert_out, ByteView(reinterpret_cast<const std::uint8_t*>(cert_pem.data()), cert_pem.size()),
                        0644, false);
  } catch (const IoError& e) {
    complain("", e.what());
    return kExitInput;
  }
  std::cout << a.out << ": " << crypto::key_algo_name(key.algo()) << " key, certificate "
            << cert->subject_text() << " serial " << to_colon_hex(cert->serial()) << "\n";
  return kExitOk;
}

// -------------------------------------------------------------------------------- sign

struct SignArgs {
  std::string key, cert, hash = "sha512", dest, backend = "openssl";
  bool signed_attrs = false, keyid = false, p7s = false, p7s_only = false, replace = false;
  std::vector<std::string> modules;
};

/// Signs one module; returns an exit status.
int sign_one(const SignArgs& a, const std::string& path, const PrivateKey& key, const Certificate& cert,
             const cms::BuildOptions& opt) {
  Bytes file;
  try {
    file = read_file(path);
  } catch (const IoError& e) {
    complain("", e.what());
    return kExitInput;
  }
  if (auto c = module::detect_compression(file); c != module::Compression::none) {
    complain(path, std::string(module::compression_name(c)) +
                       "-compressed module: decompress it, sign the .ko, then recompress (the kernel checks the "
                       "signature inside the decompressed image)");
    return kExitInput;
  }
  ByteView content = file;
  if (module::has_marker(file)) {
    if (!a.replace) {
      complain(path, "module is already signed (use --replace to strip the old signature and re-sign)");
      return kExitInput;
    }
    auto split = module::split(file);
    if (!split) {
      complain(path, "cannot strip the existing signature: " + std::string(errno_name(split.error().code)) + " " +
                         split.error().message);
      return kExitInput;
    }
    content = split->content;
  }
  auto cms_der = cms::build_detached(key, cert, content, opt);
  if (!cms_der) {
    complain(path, cms_der.error().message);
    return kExitInput;
  }
  try {
    if (a.p7s || a.p7s_only) write_file_atomic(path + ".p7s", cms_der.value(), 0644, false);
    if (!a.p7s_only) {
      Bytes out = module::append_signature(content, cms_der.value());
      write_file_atomic(a.dest.empty() ? path : a.dest, out);
    }
  } catch (const IoError& e) {
    complain("", e.what());
    return kExitInput;
  }
  std::cout << (a.p7s_only ? path + ".p7s" : a.dest.empty() ? path : a.dest) << ": signed ("
            << crypto::key_algo_name(key.algo()) << ", " << (opt.signed_attrs ? "signedAttrs" : "no signedAttrs")
            << ", " << crypto::hash_info(opt.digest).name << ", CMS " << cms_der->size() << " bytes)\n";
  return kExitOk;
}

int cmd_sign(const SignArgs& a) {
  auto hash = crypto::hash_by_name(a.hash);
  if (!hash) {
    complain("", "unknown --hash '" + a.hash + "'");
    return kExitUsage;
  }
  if (!a.dest.empty() && a.modules.size() != 1) {
    complain("", "--dest needs exactly one MODULE");
    return kExitUsage;
  }
  auto key = load_key(a.key);
  if (!key) return kExitInput;
  auto certs = load_certs({a.cert.empty() ? a.key : a.cert});
  if (!certs) return kExitInput;
  // The signing certificate is the one holding the key's public half.
  const Certificate* cert = nullptr;
  for (const auto& c : *certs)
    if (c.public_key() == key->public_key()) cert = &c;
  if (!cert) {
    complain(a.cert.empty() ? a.key : a.cert, "no certificate matches the private key " + a.key);
    return kExitInput;
  }
  cms::BuildOptions opt;
  opt.digest = *hash;
  opt.signed_attrs = a.signed_attrs;
  opt.sid = a.keyid ? cms::SignerIdType::subject_key_id : cms::SignerIdType::issuer_and_serial;
  opt.backend = backend_of(a.backend);
  int worst = kExitOk;
  for (const auto& m : a.modules) worst = std::max(worst, sign_one(a, m, *key, *cert, opt));
  return worst;
}

// --------------------------------------------------------------------------- sign-file

struct SignFileArgs {
  bool detached = false, save_p7s = false, keyid = false;
  std::string raw_sig;
  std::vector<std::string> positional;
};

/// scripts/sign-file: "sign-file [-dpk] HASH KEY X509 MODULE [DEST]" or
/// "sign-file -s RAWSIG HASH X509 MODULE [DEST]".  Errors exit 1, usage 2.
int cmd_sign_file(const SignFileArgs& a) {
  const auto& p = a.positional;
  const bool raw = !a.raw_sig.empty();
  const std::size_t need = raw ? 3 : 4;
  if (p.size() < need || p.size() > need + 1) {
    std::cerr << "Usage: modsign sign-file [-dpk] <hash algo> <key> <x509> <module> [<dest>]\n"
                 "       modsign sign-file -s <raw sig> <hash algo> <x509> <module> [<dest>]\n";
    return 2;
  }
  const std::string& hash_name = p[0];
  const std::string key_path = raw ? "" : p[1];
  const std::string& x509 = p[raw ? 1 : 2];
  const std::string& module_path = p[raw ? 2 : 3];
  const std::string dest = p.size() > need ? p[need] : module_path;
  try {
    Bytes file = read_file(module_path);
    Bytes cms_der;
    if (raw) {
      cms_der = read_file(a.raw_sig);
    } else {
      auto hash = crypto::hash_by_name(hash_name);
      if (!hash) {
        complain(hash_name, "unknown hash algorithm");
        return 1;
      }
      if (key_path.rfind("pkcs11:", 0) == 0) {
        complain(key_path, "PKCS#11 keys are not supported");
        return 1;
      }
      auto key = load_key(key_path);
      if (!key) return 1;
      auto certs = load_certs({x509});
      if (!certs) return 1;
      cms::BuildOptions opt;
      opt.digest = *hash;
      opt.signed_attrs = false;  // CMS_NOATTR, as sign-file does (for ML-DSA: built against OpenSSL 4)
      opt.sid = a.keyid ? cms::SignerIdType::subject_key_id : cms::SignerIdType::issuer_and_serial;
      auto built = cms::build_detached(*key, certs->front(), file, opt);
      if (!built) {
        complain(module_path, built.error().message);
        return 1;
      }
      cms_der = std::move(built.value());
    }
    if (a.save_p7s || a.detached) write_file_atomic(module_path + ".p7s", cms_der, 0644, false);
    if (a.detached) return 0;
    write_file_atomic(dest, module::append_signature(file, cms_der));
  } catch (const IoError& e) {
    complain("", e.what());
    return 1;
  }
  return 0;
}

// ------------------------------------------------------------------------------ verify

struct VerifyArgs {
  std::vector<std::string> certs, modules;
  std::string backend = "openssl";
  bool json = false;
};

int cmd_verify(const VerifyArgs& a) {
  auto certs = load_certs(a.certs);
  if (!certs) return kExitInput;
  int worst = kExitOk;
  for (const auto& path : a.modules) {
    nlohmann::json j{{"file", path}};
    Bytes file;
    try {
      file = read_file(path);
    } catch (const IoError& e) {
      complain("", e.what());
      worst = std::max(worst, kExitInput);
      continue;
    }
    if (auto c = module::detect_compression(file); c != module::Compression::none) {
      complain(path, std::string(module::compression_name(c)) + "-compressed module: decompress it first");
      worst = std::max(worst, kExitInput);
      continue;
    }
    auto fail = [&](const Error& e) {
      if (a.json) {
        j["result"] = "FAILED";
        j["errno"] = errno_name(e.code);
        j["reason"] = e.message;
        std::cout << j.dump() << "\n";
      } else {
        std::cout << path << ": FAILED " << errno_name(e.code) << " " << e.message << "\n";
      }
      worst = std::max(worst, kExitVerdict);
    };
    auto split = module::split(file);
    if (!split) {
      fail(split.error());
      continue;
    }
    auto sd = cms::parse(split->cms);
    if (!sd) {
      fail(sd.error());
      continue;
    }
    auto v = cms::verify(sd.value(), split->content, *certs, backend_of(a.backend));
    if (!v) {
      fail(v.error());
      continue;
    }
    const auto& signer = v->certificate_index < certs->size()
                             ? (*certs)[v->certificate_index]
                             : *Certificate::from_der(sd->certificates[v->certificate_index - certs->size()]);
    if (a.json) {
      j["result"] = "OK";
      j["errno"] = "OK";
      j["key_algorithm"] = crypto::key_algo_name(v->key_algo);
      j["signer"] = signer.subject_cn();
      j["signed_attrs"] = sd->signers.front().signed_attrs.has_value();
      std::cout << j.dump() << "\n";
    } else {
      std::cout << path << ": OK (" << crypto::key_algo_name(v->key_algo) << ", " << signer.subject_cn() << ")\n";
    }
  }
  return worst;
}

// -------------------------------------------------------------------------------- info

struct InfoArgs {
  std::vector<std::string> modules;
  bool json = false;
};

int cmd_info(const InfoArgs& a) {
  int worst = kExitOk;
  for (const auto& path : a.modules) {
    Bytes file;
    try {
      file = read_file(path);
    } catch (const IoError& e) {
      complain("", e.what());
      worst = std::max(worst, kExitInput);
      continue;
    }
    nlohmann::json j{{"file", path}, {"size", file.size()}};
    const auto comp = module::detect_compression(file);
    j["compressed"] = comp == module::Compression::none ? nlohmann::json(nullptr)
                                                        : nlohmann::json(module::compression_name(comp));
    if (comp != module::Compression::none) {
      complain(path, std::string(module::compression_name(comp)) + "-compressed module: decompress it first");
      worst = std::max(worst, kExitInput);
      continue;
    }
    if (!module::has_marker(file)) {
      j["signed"] = false;
      j["content_length"] = file.size();
    } else {
      auto split = module::split(file);
      if (!split) {
        complain(path, std::string(errno_name(split.error().code)) + ": " + split.error().message);
        worst = std::max(worst, kExitInput);
        continue;
      }
      auto sd = cms::parse(split->cms);
      if (!sd || sd->signers.empty()) {
        complain(path, sd ? "PKCS#7 has no SignerInfo"
                          : std::string(errno_name(sd.error().code)) + ": " + sd.error().message);
        worst = std::max(worst, kExitInput);
        continue;
      }
      const auto& si = sd->signers.front();
      j["signed"] = true;
      j["sig_id"] = "PKCS#7";
      j["signer"] = signer_cn(si);
      j["sig_key"] = sig_key_text(si);
      j["sig_hashalgo"] = hash_text(si);
      j["signer_id_type"] = si.sid_type == cms::SignerIdType::issuer_and_serial ? "issuerAndSerialNumber"
                                                                                : "subjectKeyIdentifier";
      j["signature_algorithm"] = sig_algo_text(si);
      j["signed_attrs"] = si.signed_attrs.has_value();
      j["signer_infos"] = sd->signers.size();
      j["certificates"] = sd->certificates.size();
      j["cms_length"] = split->cms.size();
      j["signature_length"] = si.signature.size();
      j["content_length"] = split->content.size();
    }
    if (a.json) {
      std::cout << j.dump() << "\n";
      continue;
    }
    std::cout << "file:                " << path << "\n";
    if (!j["signed"].get<bool>()) {
      std::cout << "signed:              no\n";
      continue;
    }
    for (const char* k : {"sig_id", "signer", "sig_key", "sig_hashalgo", "signer_id_type", "signature_algorithm"})
      std::cout << std::string(k) + ":" + std::string(21 - std::string(k).size() - 1, ' ') << j[k].get<std::string>()
                << "\n";
    std::cout << "signed_attrs:        " << (j["signed_attrs"].get<bool>() ? "yes" : "no") << "\n";
    for (const char* k : {"cms_length", "signature_length", "content_length"})
      std::cout << std::string(k) + ":" + std::string(21 - std::string(k).size() - 1, ' ') << j[k].get<std::size_t>()
                << "\n";
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  // sign-file's own option syntax (-dpk, -s FILE) is parsed by hand so that its command
  // line works unchanged.
  if (argc >= 2 && std::string(argv[1]) == "sign-file") {
    SignFileArgs a;
    for (int i = 2; i < argc; ++i) {
      std::string s = argv[i];
      if (s.size() > 1 && s[0] == '-' && a.positional.empty()) {
        for (std::size_t k = 1; k < s.size(); ++k) {
          switch (s[k]) {
            case 'd': a.detached = true; break;
            case 'p': a.save_p7s = true; break;
            case 'k': a.keyid = true; break;
            case 's':
              if (k + 1 < s.size()) {
                a.raw_sig = s.substr(k + 1);
              } else if (i + 1 < argc) {
                a.raw_sig = argv[++i];
              } else {
                std::cerr << "modsign sign-file: -s needs a file\n";
                return 2;
              }
              k = s.size();
              break;
            default: std::cerr << "modsign sign-file: unknown option -" << s[k] << "\n"; return 2;
          }
        }
      } else {
        a.positional.push_back(s);
      }
    }
    return cmd_sign_file(a);
  }

  CLI::App app{"modsign: ML-DSA (FIPS 204) and classic signing of Linux kernel modules"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "modsign 0.1.0");

  KeygenArgs kg;
  auto* keygen = app.add_subcommand("keygen", "new signing key and self-signed certificate");
  keygen->add_option("--algo", kg.algo, "ml-dsa-44|ml-dsa-65|ml-dsa-87|rsa-2048|rsa-3072|rsa-4096|ecdsa-p256|ecdsa-p384")
      ->capture_default_str();
  keygen->add_option("--out", kg.out, "private key (PKCS#8 PEM; ML-DSA in seed form), followed by the certificate "
                                      "unless --cert-out is given")->required();
  keygen->add_option("--cert-out", kg.cert_out, "write the certificate (PEM) here");
  keygen->add_option("--subject", kg.subject, "subject and issuer DN, e.g. 'CN=Build key,O=Example'")
      ->capture_default_str();
  keygen->add_option("--days", kg.days, "validity in days")->capture_default_str();

  SignArgs sg;
  auto* sign = app.add_subcommand("sign", "append a signature to modules (or write .p7s)");
  sign->add_option("--key", sg.key, "private key (PEM or DER; KBUILD_SIGN_PIN for encrypted keys)")->required();
  sign->add_option("--cert", sg.cert, "signer certificate (PEM or DER); default: the certificate in the key file");
  sign->add_option("--hash", sg.hash, "digestAlgorithm: sha256|sha384|sha512 (also sha3-256|sha3-384|sha3-512)")
      ->capture_default_str();
  sign->add_flag("--signed-attrs", sg.signed_attrs, "add signedAttrs {contentType, messageDigest} (sign-file with OpenSSL 3.x)");
  sign->add_flag("--keyid", sg.keyid, "identify the signer by subjectKeyIdentifier (SignerInfo version 3)");
  auto* p7s = sign->add_flag("--p7s", sg.p7s, "also write MODULE.p7s");
  sign->add_flag("--p7s-only", sg.p7s_only, "only write MODULE.p7s; leave the module as it is")->excludes(p7s);
  sign->add_option("--dest", sg.dest, "write the signed module here instead of in place (one MODULE)");
  sign->add_flag("--replace", sg.replace, "strip an existing signature first");
  sign->add_option("--backend", sg.backend, "ML-DSA signing library")
      ->check(CLI::IsMember({"openssl", "botan"}))->capture_default_str();
  sign->add_option("MODULE", sg.modules, "modules to sign")->required();

  auto* sf = app.add_subcommand("sign-file", "scripts/sign-file's command line: [-dpk] [-s RAWSIG] HASH KEY X509 MODULE [DEST]");
  (void)sf;

  VerifyArgs vf;
  auto* verify = app.add_subcommand("verify", "verify module signatures against certificates");
  verify->add_option("--cert", vf.certs, "certificate file (PEM bundle or DER); repeatable")->required()->allow_extra_args(false);
  verify->add_option("--backend", vf.backend, "ML-DSA verification library")
      ->check(CLI::IsMember({"openssl", "botan"}))->capture_default_str();
  verify->add_flag("--json", vf.json, "one JSON object per module");
  verify->add_option("MODULE", vf.modules, "modules to verify")->required();

  InfoArgs in;
  auto* info = app.add_subcommand("info", "what modinfo shows about a signature, and more");
  info->add_flag("--json", in.json, "one JSON object per module");
  info->add_option("MODULE", in.modules, "modules")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  try {
    if (*keygen) return cmd_keygen(kg);
    if (*sign) return cmd_sign(sg);
    if (*verify) return cmd_verify(vf);
    if (*info) return cmd_info(in);
  } catch (const std::exception& e) {
    complain("", std::string("internal error: ") + e.what());
    return kExitInput;
  }
  return kExitUsage;
}
