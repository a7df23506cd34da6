// modsign command line: keygen, sign, sign-file, verify, info.
//
// Exit status (design.md): 0 success, 1 negative verdict (verification failed),
// 2 usage error, 3 unreadable or malformed input or I/O failure.  `sign-file` keeps
// scripts/sign-file's own statuses (1 on any error, 2 on usage).
// Errors go to stderr as "modsign: <file>: <what>".
#include <fcntl.h>
#include <getopt.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sys/xattr.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <set>
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
#include "digest/ima.hpp"
#include "digest/module_digest.hpp"
#include "cms/kernel.hpp"
#include "blacklist/sources.hpp"
#include "module/compression.hpp"
#include "module/module_sig_check.hpp"
#include "module/module_signature.hpp"
#include "batch.hpp"
#include "cli_common.hpp"
#include <sstream>

using namespace modsign;
using crypto::Certificate;
using crypto::PrivateKey;

using namespace modsign::cli;

namespace {

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

// -------------------------------------------------------------------------------- sign

struct SignArgs {
  std::string key, cert, hash = "sha512", dest, backend = "auto";
  BatchOptions batch;
  bool signed_attrs = false, keyid = false, p7s = false, p7s_only = false, replace = false, recompress = false;
  std::vector<std::string> modules, dirs;
  std::uint64_t max_size = module::kDefaultMaxDecompressed;
  std::uint64_t stream_above = std::uint64_t{64} << 20;
};

/// True for an uncompressed regular file larger than `threshold` bytes: those are read in
/// one streaming pass instead of into memory.
bool streamable(const std::string& path, std::uint64_t threshold) {
  // One stat() decides for the common small module (no open, no read: a batch reads each
  // module once, in read_module).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) <= threshold)
    return false;
  try {
    FileReader in(path);
    if (in.size() <= threshold || in.size() < 8) return false;
    return module::detect_compression(in.read_at(0, 8)) == module::Compression::none;
  } catch (const IoError&) {
    return false;  // the normal path reports the problem
  }
}

/// Signs an uncompressed module without holding it in memory: one pass in 1 MiB chunks
/// feeds the digest (or the ML-DSA μ) and the temporary output file; the SignedData is
/// then built from the digests (external μ) and appended.  Peak memory stays constant.
int sign_one_streaming(const SignArgs& a, const std::string& path, const PrivateKey& key, const Certificate& cert,
                       const cms::BuildOptions& opt, std::uint64_t size, std::ostream& os) {
  try {
    FileReader in(path);
    size = in.size();
    const Bytes tail = in.read_at(size - std::min<std::uint64_t>(size, 40), static_cast<std::size_t>(std::min<std::uint64_t>(size, 40)));
    std::uint64_t content_len = size;
    auto t = module::parse_tail(tail, size);
    if (t) {
      if (!a.replace) {
        complain(path, "module is already signed (use --replace to strip the old signature and re-sign)");
        return kExitInput;
      }
      content_len = t->content_len;
    } else if (t.error().code != KErr::enodata) {
      complain(path, "cannot strip the existing signature: " + std::string(errno_name(t.error().code)) + " " +
                         t.error().message);
      return kExitInput;
    }
    const bool use_mu = crypto::is_ml_dsa(key.algo()) && !opt.signed_attrs;
    std::optional<crypto::Hasher> h;
    std::optional<crypto::MlDsaMu> mu;
    if (use_mu) mu.emplace(key.public_key().raw());
    else h.emplace(opt.digest);
    const std::string out_path = a.dest.empty() ? path : a.dest;
    std::optional<AtomicFile> out;
    if (!a.p7s_only) out.emplace(out_path);
    Bytes buf;
    for (std::uint64_t off = 0; off < content_len;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(std::size_t{1} << 20, content_len - off));
      in.read_at(off, n, buf);
      const ByteView chunk(buf.data(), n);
      if (mu) mu->update(chunk);
      if (h) h->update(chunk);
      if (out) out->write(chunk);
      off += n;
    }
    cms::ContentDigests cd;
    if (mu) cd.mu = mu->final();
    if (h) cd.digest = h->final();
    auto cms_der = cms::build_detached_prehashed(key, cert, cd, opt);
    if (!cms_der) {
      complain(path, cms_der.error().message);
      return kExitInput;
    }
    if (out) {
      out->write(*cms_der);
      out->write(module::encode_module_signature(static_cast<std::uint32_t>(cms_der->size())));
      out->write(ByteView(reinterpret_cast<const std::uint8_t*>(module::kMarker.data()), module::kMarker.size()));
      out->commit();
    }
    if (a.p7s || a.p7s_only) write_file_atomic(out_path + ".p7s", *cms_der, 0644, false);
    os << printable(a.p7s_only ? out_path + ".p7s" : out_path) << ": signed (" << crypto::key_algo_name(key.algo())
              << ", " << (opt.signed_attrs ? "signedAttrs" : "no signedAttrs") << ", "
              << crypto::hash_info(opt.digest).name << ", CMS " << cms_der->size() << " bytes, streamed"
              << (use_mu ? " with external mu" : "") << ")\n";
    return kExitOk;
  } catch (const IoError& e) {
    complain("", e.what());
    return kExitInput;
  }
}

/// Signs one module; returns an exit status.  The module is either fully signed or left
/// as it was; MODULE.p7s (or DEST.p7s) is written after the module.
int sign_one(const SignArgs& a, const std::string& path, const PrivateKey& key, const Certificate& cert,
             const cms::BuildOptions& opt, std::ostream& os, std::uint64_t* bytes) {
  if (streamable(path, a.stream_above)) {
    std::error_code ec;
    *bytes = std::filesystem::file_size(path, ec);
    return sign_one_streaming(a, path, key, cert, opt, 0, os);
  }
  auto lm = read_module(path, a.max_size);
  if (!lm) return kExitInput;
  *bytes = lm->stored.size();
  const auto& m = lm->m;
  if (m.compression != module::Compression::none && !a.recompress && !a.p7s_only) {
    complain(path, std::string(module::compression_name(m.compression)) +
                       "-compressed module: use --recompress (or decompress it, sign the .ko, then recompress; the "
                       "kernel checks the signature inside the decompressed image)");
    return kExitInput;
  }
  ByteView content = m.image;
  if (module::has_marker(m.image)) {
    if (!a.replace) {
      complain(path, "module is already signed (use --replace to strip the old signature and re-sign)");
      return kExitInput;
    }
    auto split = module::split(m.image);
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
  const std::string out = a.dest.empty() ? path : a.dest;
  try {
    if (!a.p7s_only) {
      Bytes signed_image = module::append_signature(content, cms_der.value());
      if (m.compression != module::Compression::none) signed_image = module::compress(signed_image, m.compression);
      write_file_atomic(out, signed_image);
    }
    if (a.p7s || a.p7s_only) write_file_atomic(out + ".p7s", cms_der.value(), 0644, false);
  } catch (const IoError& e) {
    complain("", e.what());
    return kExitInput;
  }
  os << printable(a.p7s_only ? out + ".p7s" : out) << ": signed (" << crypto::key_algo_name(key.algo()) << ", "
            << (opt.signed_attrs ? "signedAttrs" : "no signedAttrs") << ", " << crypto::hash_info(opt.digest).name
            << ", CMS " << cms_der->size() << " bytes"
            << (m.compression != module::Compression::none && !a.p7s_only
                    ? ", recompressed " + std::string(module::compression_name(m.compression))
                    : std::string())
            << ")\n";
  return kExitOk;
}

int cmd_sign(const SignArgs& a) {
  auto hash = crypto::hash_by_name(a.hash);
  if (!hash) {
    complain("", "unknown --hash '" + a.hash + "' (sha1|sha224|sha256|sha384|sha512|sha3-256|sha3-384|sha3-512)");
    return kExitUsage;
  }
  bool dir_error = false;
  const auto inputs = expand_module_tree(a.modules, a.dirs, &dir_error);
  if (!a.dest.empty() && (inputs.size() != 1 || !a.dirs.empty())) {
    complain("", "--dest needs exactly one MODULE");
    return kExitUsage;
  }
  if (inputs.empty() && a.dirs.empty()) {
    complain("", "no modules given (MODULE... or -r DIR)");
    return kExitUsage;
  }
  auto key = load_key(a.key);
  if (!key) return kExitInput;
  const std::string cert_file = a.cert.empty() ? a.key : a.cert;
  auto certs = load_certs({cert_file});
  if (!certs) return kExitInput;
  // The signing certificate is the one holding the key's public half.
  const Certificate* cert = nullptr;
  for (const auto& c : *certs)
    if (c.public_key() == key->public_key()) cert = &c;
  if (!cert) {
    complain(cert_file, "no certificate matches the private key " + a.key);
    return kExitInput;
  }
  if (a.keyid && !cert->skid()) {
    complain(cert_file, "certificate has no subjectKeyIdentifier (needed for --keyid)");
    return kExitInput;
  }
  if (crypto::is_ml_dsa(key->algo()) && a.signed_attrs && *hash != crypto::HashAlgo::sha512) {
    complain("", "ML-DSA with --signed-attrs needs --hash sha512: kernels refuse any other digest there "
                 "(crypto/asymmetric_keys/public_key.c)");
    return kExitUsage;
  }
  const bool has_seed = key->has_ml_dsa_seed();
  if (a.backend == "botan" && crypto::is_ml_dsa(key->algo()) && !has_seed) {
    complain(a.key, "--backend botan needs an ML-DSA key with its seed (RFC 9881 seed or both form)");
    return kExitUsage;
  }
  cms::BuildOptions opt;
  opt.digest = *hash;
  opt.signed_attrs = a.signed_attrs;
  opt.sid = a.keyid ? cms::SignerIdType::subject_key_id : cms::SignerIdType::issuer_and_serial;
  // auto: the faster library for ML-DSA signing as measured (bench/RESULTS.md, issue 5);
  // Botan needs the seed, an expandedKey-only key signs with OpenSSL.
  opt.backend = a.backend == "auto" ? (has_seed ? crypto::default_ml_dsa_backend(crypto::MlDsaOp::sign) : crypto::Backend::openssl)
                                    : backend_of(a.backend);
  // The same file named twice (decided before anything is written, by canonical path;
  // hard links are separate names and are signed separately).  Symbolic links found under
  // -r are skipped first and take no part in this.
  const auto duplicate = duplicate_of(inputs);
  auto work = [&](std::size_t i) {
    const BatchInput& in = inputs[i];
    ItemResult r;
    CaptureComplaints capture(r.err);
    if (!in.not_regular.empty()) {
      complain(in.path, "skipped: " + in.not_regular);
      r.state = ItemState::skipped;
      return r;
    }
    if (duplicate[i] != SIZE_MAX) {
      complain(in.path, duplicate_text(inputs[duplicate[i]].path));
      r.state = ItemState::skipped;
      return r;
    }
    // Under -r, compressed modules are reported and left alone unless --recompress (or
    // --p7s-only, which leaves the module untouched anyway) asks for them.
    if (in.from_dir && compressed_module_name(in.path) && !a.recompress && !a.p7s_only) {
      complain(in.path, "skipped: compressed module (--recompress signs it and recompresses it in the same format)");
      r.state = ItemState::skipped;
      return r;
    }
    std::ostringstream os;
    r.exit = sign_one(a, in.path, *key, *cert, opt, os, &r.bytes);
    r.state = r.exit == kExitOk ? ItemState::done : ItemState::failed;
    r.out = os.str();
    return r;
  };
  const int status = run_batch("sign", inputs.size(), work, a.batch, inputs.size() > 1 || !a.dirs.empty(),
                               [&](std::size_t i) { return inputs[i].path; });
  return dir_error ? std::max(status, kExitInput) : status;
}

// ------------------------------------------------------------------- strip / extract

struct StripArgs {
  std::vector<std::string> modules, dirs;
  std::string dest;
  bool recompress = false;
  std::uint64_t max_size = module::kDefaultMaxDecompressed;
};

/// Remove the appended signature (content only remains), recompressing if asked.
int cmd_strip(const StripArgs& a) {
  bool dir_error = false;
  const auto inputs = expand_module_tree(a.modules, a.dirs, &dir_error);
  if (!a.dest.empty() && (inputs.size() != 1 || !a.dirs.empty())) {
    complain("", "--dest needs exactly one MODULE");
    return kExitUsage;
  }
  CleanupOnSignal cleanup;  // no .modsign.XXXXXX left behind by SIGINT/SIGTERM/SIGHUP
  // As sign: symbolic links found under -r are skipped, then the same file named twice is
  // stripped once.
  const auto duplicate = duplicate_of(inputs);
  int worst = dir_error ? kExitInput : kExitOk;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string& path = inputs[i].path;
    if (!inputs[i].not_regular.empty()) {
      complain(path, "skipped: " + inputs[i].not_regular);
      continue;
    }
    if (duplicate[i] != SIZE_MAX) {
      complain(path, duplicate_text(inputs[duplicate[i]].path));
      continue;
    }
    auto lm = read_module(path, a.max_size);
    if (!lm) {
      worst = std::max(worst, kExitInput);
      continue;
    }
    const auto& m = lm->m;
    if (m.compression != module::Compression::none && !a.recompress) {
      complain(path, std::string(module::compression_name(m.compression)) + "-compressed module: use --recompress");
      worst = std::max(worst, kExitInput);
      continue;
    }
    if (!module::has_marker(m.image)) {
      std::cout << printable(path) << ": not signed, unchanged\n";
      continue;
    }
    auto split = module::split(m.image);
    if (!split) {
      complain(path, "cannot strip the signature: " + std::string(errno_name(split.error().code)) + " " +
                         split.error().message);
      worst = std::max(worst, kExitInput);
      continue;
    }
    try {
      Bytes out(split->content.begin(), split->content.end());
      if (m.compression != module::Compression::none) out = module::compress(out, m.compression);
      write_file_atomic(a.dest.empty() ? path : a.dest, out);
    } catch (const IoError& e) {
      complain("", e.what());
      worst = std::max(worst, kExitInput);
      continue;
    }
    std::cout << printable(a.dest.empty() ? path : a.dest) << ": signature removed (" << split->cms.size()
              << " bytes of CMS)\n";
  }
  return worst;
}

struct ExtractArgs {
  std::vector<std::string> modules;
  std::string out;
  std::uint64_t max_size = module::kDefaultMaxDecompressed;
};

/// Write each module's PKCS#7 as MODULE.p7s (or --out for one module).
int cmd_extract(const ExtractArgs& a) {
  if (!a.out.empty() && a.modules.size() != 1) {
    complain("", "--out needs exactly one MODULE");
    return kExitUsage;
  }
  int worst = kExitOk;
  for (const auto& path : a.modules) {
    auto lm = read_module(path, a.max_size);
    if (!lm) {
      worst = std::max(worst, kExitInput);
      continue;
    }
    auto split = module::split(lm->m.image);
    if (!split) {
      complain(path, std::string(errno_name(split.error().code)) + ": " + split.error().message);
      worst = std::max(worst, kExitInput);
      continue;
    }
    const std::string out = a.out.empty() ? path + ".p7s" : a.out;
    try {
      write_file_atomic(out, split->cms, 0644, false);
    } catch (const IoError& e) {
      complain("", e.what());
      worst = std::max(worst, kExitInput);
      continue;
    }
    std::cout << printable(out) << ": " << split->cms.size() << " bytes of PKCS#7\n";
  }
  return worst;
}

// --------------------------------------------------------------------------- sign-file

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

// ------------------------------------------------------------------------------ verify

struct VerifyArgs {
  std::vector<std::string> keyrings, modules, dirs, blacklists, revoked, dbx;
  std::uint64_t max_size = module::kDefaultMaxDecompressed;
  std::uint64_t stream_above = std::uint64_t{64} << 20;
  std::string kernel = "v7.0", backend = "auto";
  bool waive = false, enforce = false, lockdown = false, json = false;
  BatchOptions batch;
};

nlohmann::json signers_json(const std::vector<kernel::SignerSummary>& ss) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& s : ss)
    a.push_back({{"sid", s.sid}, {"digest_algo", s.digest_algo}, {"sig_algo", s.sig_algo}, {"signed_attrs", s.signed_attrs}});
  return a;
}

/// One verify line (or JSON object).
void report_verdict(const VerifyArgs& a, nlohmann::json& j, const std::string& path, const module::LoadVerdict& v,
                    const module::ModuleImage* m, std::ostream& os) {
  const KErr shown = v.outcome == module::LoadOutcome::loads ? KErr::none
                     : v.outcome == module::LoadOutcome::refused ? v.load_errno
                                                                 : v.sig_errno;
  const bool compressed = m && m->compression != module::Compression::none;
  if (a.json) {
    j["outcome"] = module::outcome_name(v.outcome);
    j["errno"] = errno_name(shown);
    j["reason"] = v.reason;
    j["signers"] = signers_json(v.signers);
    j["compressed"] = m ? compression_json(*m) : nlohmann::json(nullptr);
    if (!v.log.empty()) j["log"] = v.log;
    os << dump(j) << "\n";
  } else {
    os << printable(path) << ": " << module::outcome_name(v.outcome) << " (" << errno_name(shown)
              << "): " << printable(v.reason) << (compressed ? " [" + compression_text(*m) + "]" : std::string()) << "\n";
  }
}

int cmd_verify(const VerifyArgs& a) {
  auto profile = kernel_profile(a.kernel);
  if (!profile) return kExitUsage;
  profile->waive_mldsa_authattrs = a.waive;
  profile->enforce = a.enforce;
  profile->lockdown = a.lockdown;
  if (a.waive && profile->generation != kernel::Generation::v7_0) {
    complain("", "--waive-mldsa-authattrs exists only for --kernel v7.0");
    return kExitUsage;
  }
  kernel::Keyring keyring;
  if (!load_keyring(a.keyrings, *profile, keyring)) return kExitInput;
  {
    // The .blacklist keyring: tbs: entries and revoked certificates (bin: entries are
    // IMA's, which module_sig_check does not consult).
    blacklist::Sources sources;
    if (!load_blacklist_sources(a.blacklists, a.revoked, a.dbx, *profile, sources)) return kExitInput;
    keyring.blacklist = std::move(sources.keyring);
  }
  const crypto::Backend backend =
      a.backend == "auto" ? crypto::default_ml_dsa_backend(crypto::MlDsaOp::verify) : backend_of(a.backend);
  bool dir_error = false;
  const auto inputs = expand_module_tree(a.modules, a.dirs, &dir_error);
  const auto duplicate = duplicate_of(inputs);
  // Each module on its own: the keyring and profile are shared read-only by the workers.
  auto work = [&](std::size_t i) {
    const std::string& path = inputs[i].path;
    ItemResult r;
    CaptureComplaints capture(r.err);
    std::ostringstream os;
    nlohmann::json j{{"path", path}, {"kernel", profile->name()}};
    auto error_json = [&](const std::string& reason, const char* outcome = "error") {
      if (!a.json) return;
      j["outcome"] = outcome;
      j["errno"] = nullptr;
      j["reason"] = reason;
      j["signers"] = nlohmann::json::array();
      j["compressed"] = nullptr;  // same keys as a verdict record
      os << dump(j) << "\n";
    };
    auto finish = [&](int exit, ItemState state) {
      r.exit = exit;
      r.state = state;
      r.out = os.str();
      return r;
    };
    if (!inputs[i].not_regular.empty()) {
      complain(path, "skipped: " + inputs[i].not_regular);
      error_json(inputs[i].not_regular, "skipped");
      return finish(kExitOk, ItemState::skipped);
    }
    if (duplicate[i] != SIZE_MAX) {  // the same file named twice: verified once, as sign signs it once
      const std::string t = duplicate_text(inputs[duplicate[i]].path);
      complain(path, t);
      error_json(t.substr(std::string("skipped: ").size()), "skipped");
      return finish(kExitOk, ItemState::skipped);
    }
    // Large uncompressed modules: one streaming pass, constant memory.
    if (streamable(path, a.stream_above)) {
      module::LoadVerdict v;
      try {
        std::error_code ec;
        r.bytes = std::filesystem::file_size(path, ec);
        v = module::module_sig_check_file(path, keyring, *profile);
      } catch (const std::exception& e) {
        complain(path, e.what());
        return finish(kExitInput, ItemState::failed);
      }
      report_verdict(a, j, path, v, nullptr, os);
      return v.outcome == module::LoadOutcome::loads ? finish(kExitOk, ItemState::done)
                                                     : finish(kExitVerdict, ItemState::failed);
    }
    std::string why;
    auto lm = read_module(path, a.max_size, &why);
    if (!lm) {
      error_json(why);
      return finish(kExitInput, ItemState::failed);
    }
    r.bytes = lm->stored.size();
    const auto& m = lm->m;
    module::LoadVerdict v;
    if (!m.kernel_decompress_problem.empty()) {
      // In-kernel decompression fails before any signature check.
      v.outcome = module::LoadOutcome::refused;
      v.load_errno = KErr::einval;
      v.sig_errno = KErr::einval;
      v.reason = m.kernel_decompress_problem;
    } else {
      try {
        v = module::module_sig_check(m.image, keyring, *profile, false, backend);
      } catch (const std::exception& e) {  // e.g. out of memory: report this module, go on
        complain(path, std::string("internal error: ") + e.what());
        error_json(std::string("internal error: ") + e.what());
        return finish(kExitInput, ItemState::failed);
      }
    }
    report_verdict(a, j, path, v, &m, os);
    return v.outcome == module::LoadOutcome::loads ? finish(kExitOk, ItemState::done)
                                                   : finish(kExitVerdict, ItemState::failed);
  };
  BatchOptions bo = a.batch;
  bo.sync = "none";  // verify writes nothing
  bo.always_print_out = a.json;  // --quiet keeps the JSON lines (they are the result)
  const int status = run_batch("verify", inputs.size(), work, bo, inputs.size() > 1 || !a.dirs.empty(),
                               [&](std::size_t i) { return inputs[i].path; });
  return dir_error ? std::max(status, kExitInput) : status;
}

// ------------------------------------------------------------------------------ digest

struct DigestArgs {
  std::vector<std::string> modules;
  std::string kernel = "v7.0";
  bool json = false;
  std::uint64_t max_size = module::kDefaultMaxDecompressed;
};

/// The kernel's pkcs7_get_digest result as IMA would take it, the side SHA-256, the
/// d-modsig field and whether a bin: entry can stop the module.
int cmd_digest(const DigestArgs& a) {
  auto profile = kernel_profile(a.kernel);
  if (!profile) return kExitUsage;
  int worst = kExitOk;
  for (const auto& path : a.modules) {
    Result<digest::ModuleDigests> r = make_error(KErr::einval, "");
    try {
      r = digest::digest_module_file(path, *profile, a.max_size);
    } catch (const IoError& e) {
      complain("", e.what());
      worst = std::max(worst, kExitInput);
      continue;
    }
    if (!r) {
      complain(path, r.error().message);
      worst = std::max(worst, kExitInput);
      continue;
    }
    const auto& d = *r;
    const bool ok = d.kernel.status == KErr::none;
    // The bin: key ima_check_blacklist() looks up (as blacklist::module_entry): the d-modsig
    // digest; or, when IMA has no modsig it can use, its hash of the whole file (sha256 here;
    // `blacklist entry --ima-hash` for other ima_hash= values); none when IMA has a modsig but
    // no usable digest.
    const bool file_key = !d.modsig_parsed;
    const std::optional<std::string> bin_key =
        d.blacklist_visible ? std::optional<std::string>("bin:" + to_hex(d.kernel.bytes))
        : file_key          ? std::optional<std::string>("bin:" + to_hex(d.file_sha256))
                            : std::nullopt;
    if (a.json) {
      nlohmann::json kd{{"status", ok ? "ok" : std::string(errno_name(d.kernel.status))}};
      kd["algo"] = ok ? nlohmann::json(d.kernel.algo) : nlohmann::json(nullptr);
      kd["hex"] = ok ? nlohmann::json(to_hex(d.kernel.bytes)) : nlohmann::json(nullptr);
      if (!ok) kd["reason"] = d.kernel.reason;
      nlohmann::json j{{"path", path},
                       {"kernel", profile->name()},
                       {"signed", d.signed_module},
                       {"content_length", d.content_length},
                       {"kernel_digest", kd},
                       {"side_sha256", to_hex(d.side_sha256)},
                       {"d_modsig", d.d_modsig ? nlohmann::json(to_hex(*d.d_modsig)) : nlohmann::json(nullptr)},
                       {"blacklist_visible", bin_key.has_value()},
                       {"bin_entry", bin_key ? nlohmann::json(*bin_key) : nlohmann::json(nullptr)},
                       {"bin_source", d.blacklist_visible ? nlohmann::json("d-modsig")
                                      : file_key          ? nlohmann::json("ima-hash")
                                                          : nlohmann::json(nullptr)},
                       {"file_sha256", to_hex(d.file_sha256)},
                       {"side_bin_entry", "bin:" + to_hex(d.side_sha256)}};
      std::cout << dump(j) << "\n";
      continue;
    }
    std::cout << printable(path) << " (kernel " << profile->name() << "):\n";
    if (ok)
      std::cout << "  kernel_digest: " << d.kernel.algo << ":" << to_hex(d.kernel.bytes)
                << (d.kernel.raw_attributes ? "  (the re-tagged signedAttrs themselves, not a digest: 7.0 ML-DSA quirk)"
                    : d.kernel.over_content ? ""
                                            : "  (hash of the signedAttrs, not of the module)")
                << "\n";
    else
      std::cout << "  kernel_digest: " << errno_name(d.kernel.status) << " (" << printable(d.kernel.reason) << ")\n";
    std::cout << "  side_sha256:   " << to_hex(d.side_sha256) << "  (" << d.content_length << " bytes signed)\n";
    std::cout << "  d_modsig:      " << (d.d_modsig ? to_hex(*d.d_modsig) : std::string("none: IMA records no d-modsig"))
              << "\n";
    if (d.blacklist_visible)
      std::cout << "  blacklist:     " << *bin_key << " stops it (IMA bin: check on the d-modsig digest)\n";
    else if (file_key)
      std::cout << "  blacklist:     " << *bin_key
                << " stops it when the policy requires a signature (no modsig IMA can use: IMA's sha256 of the whole "
                   "file as stored; other ima_hash: modsign blacklist entry --ima-hash)\n";
    else
      std::cout << "  blacklist:     no bin: entry can stop it under " << profile->name()
                << " (IMA has a modsig but no usable digest); with the proposed side SHA-256: bin:"
                << to_hex(d.side_sha256) << "\n";
  }
  return worst;
}

// --------------------------------------------------------------------------------- ima

struct ImaArgs {
  std::string template_name = "ima-modsig", path, kernel = "v7.0", ima_hash = "sha256", bank = "sha1", pcrs;
  std::string file;
  bool side = false, json = false;
};

int cmd_ima_template(const ImaArgs& a) {
  auto profile = kernel_profile(a.kernel);
  if (!profile) return kExitUsage;
  auto h = ima_hash_option(a.ima_hash, *profile);
  if (!h) return kExitUsage;
  Bytes file;
  try {
    file = read_file(a.file);
  } catch (const IoError& e) {
    complain("", e.what());
    return kExitInput;
  }
  std::optional<Bytes> xattr;
  const ssize_t want = ::getxattr(a.file.c_str(), "security.ima", nullptr, 0);
  if (want > 0) {
    Bytes buf(static_cast<std::size_t>(want));
    const ssize_t n = ::getxattr(a.file.c_str(), "security.ima", buf.data(), buf.size());
    if (n > 0) xattr = Bytes(buf.begin(), buf.begin() + n);
  }
  auto e = digest::ima_template(a.template_name, a.path.empty() ? a.file : a.path, file, xattr, *profile, *h, a.side);
  if (!e) {
    complain(a.file, std::string(errno_name(e.error().code)) + ": " + e.error().message);
    return e.error().code == KErr::einval && e.error().message.rfind("unknown template", 0) == 0 ? kExitUsage : kExitVerdict;
  }
  if (a.json) {
    nlohmann::json f = nlohmann::json::array();
    for (const auto& fld : e->fields) f.push_back({{"name", fld.name}, {"hex", to_hex(fld.data)}, {"length", fld.data.size()}});
    std::cout << dump({{"template", e->name}, {"kernel", profile->name()}, {"fields", f}, {"template_data", to_hex(e->data)},
                       {"template_hash_sha1", to_hex(e->sha1)}, {"template_hash_sha256", to_hex(e->sha256)}})
              << "\n";
    return kExitOk;
  }
  std::cout << "template: " << e->name << " (kernel " << profile->name() << (a.side ? ", side SHA-256 d-modsig" : "") << ")\n";
  for (const auto& fld : e->fields)
    std::cout << "  " << fld.name << " (" << fld.data.size() << " bytes): "
              << (fld.data.size() > 48 ? to_hex(ByteView(fld.data).first(48)) + "..." : to_hex(fld.data)) << "\n";
  std::cout << "  template hash sha1:   " << to_hex(e->sha1) << "\n  template hash sha256: " << to_hex(e->sha256) << "\n";
  return kExitOk;
}

int cmd_ima_replay(const ImaArgs& a) {
  auto bank = crypto::hash_by_name(a.bank);
  if (!bank) {
    complain("", "unknown --bank '" + a.bank + "'");
    return kExitUsage;
  }
  Bytes list;
  try {
    list = read_file(a.file, kMaxModuleSize);
  } catch (const IoError& e) {
    complain("", e.what());
    return kExitInput;
  }
  auto recs = digest::parse_measurement_list(list, *bank);
  if (!recs) {
    complain(a.file, recs.error().message);
    return kExitInput;
  }
  std::size_t mismatches = 0, violations = 0;
  nlohmann::json bad = nlohmann::json::array();
  for (std::size_t i = 0; i < recs->size(); ++i) {
    const auto& r = (*recs)[i];
    if (r.violation) ++violations;
    else if (r.recomputed != r.digest) {
      ++mismatches;
      if (a.json) bad.push_back({{"record", i + 1}, {"offset", r.offset}, {"template", r.template_name},
                     {"recorded", to_hex(r.digest)}, {"recomputed", to_hex(r.recomputed)}});
      if (!a.json)
        std::cout << "record " << i + 1 << " (" << printable(r.template_name) << ", offset " << r.offset
                  << "): template hash " << to_hex(r.digest) << " != recomputed " << to_hex(r.recomputed) << "\n";
    }
  }
  auto pcrs = digest::replay_pcrs(*recs, *bank);
  // Expected PCRs, one per line: "PCR-10: <hex>", "10: <hex>", "pcr10 <hex>", the TPM 1.2
  // sysfs form with spaced bytes ("PCR-10: 2F 3A ..."), or tpm2_pcrread's "  10: 0x<hex>"
  // under "sha1:"/"sha256:" bank headers (only the --bank section counts).
  std::size_t pcr_mismatch = 0;
  nlohmann::json pj = nlohmann::json::object();
  std::map<std::uint32_t, std::string> expected;
  if (!a.pcrs.empty()) {
    std::string text;
    try {
      Bytes t = read_file(a.pcrs, kMaxSmallFileSize);
      text.assign(t.begin(), t.end());
    } catch (const IoError& e) {
      complain("", e.what());
      return kExitInput;
    }
    std::string section;  // current tpm2_pcrread bank header, if any
    std::size_t lineno = 0;
    for (std::size_t pos = 0; pos < text.size();) {
      std::size_t nl = text.find('\n', pos);
      std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      pos = nl == std::string::npos ? text.size() : nl + 1;
      ++lineno;
      std::string trimmed = line;
      trimmed.erase(0, trimmed.find_first_not_of(" \t"));
      while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\r' || trimmed.back() == '\t')) trimmed.pop_back();
      if (trimmed.empty()) continue;
      if (trimmed.back() == ':' && crypto::hash_by_name(trimmed.substr(0, trimmed.size() - 1))) {
        section = trimmed.substr(0, trimmed.size() - 1);
        continue;
      }
      std::size_t i = 0;
      while (i < trimmed.size() && !std::isdigit(static_cast<unsigned char>(trimmed[i]))) ++i;
      std::string digits;
      while (i < trimmed.size() && std::isdigit(static_cast<unsigned char>(trimmed[i]))) digits += trimmed[i++];
      while (i < trimmed.size() && (trimmed[i] == ':' || trimmed[i] == ' ' || trimmed[i] == '\t' || trimmed[i] == '=')) ++i;
      if (i + 1 < trimmed.size() && trimmed[i] == '0' && (trimmed[i + 1] == 'x' || trimmed[i + 1] == 'X')) i += 2;
      std::string hex;
      for (; i < trimmed.size(); ++i) {
        const char c = trimmed[i];
        if (c == ' ' || c == '\t') continue;
        if (!std::isxdigit(static_cast<unsigned char>(c))) {
          complain(a.pcrs, "line " + std::to_string(lineno) + ": not a PCR value: " + line);
          return kExitInput;
        }
        hex += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      if (digits.empty() || hex.empty() || digits.size() > 3) {
        complain(a.pcrs, "line " + std::to_string(lineno) + ": not a PCR value: " + line);
        return kExitInput;
      }
      if (!section.empty() && crypto::hash_by_name(section) != bank) continue;  // another bank
      const auto idx = static_cast<std::uint32_t>(std::stoul(digits));
      if (!expected.emplace(idx, hex).second) {
        complain(a.pcrs, "line " + std::to_string(lineno) + ": PCR " + digits + " given twice");
        return kExitInput;
      }
    }
    if (expected.empty()) {
      complain(a.pcrs, "no PCR value for bank " + a.bank + " in this file");
      return kExitInput;
    }
    for (const auto& [idx, hex] : expected) {
      if (hex.size() != 2 * crypto::hash_info(*bank).size) {
        complain(a.pcrs, "PCR " + std::to_string(idx) + ": " + std::to_string(hex.size() / 2) + " bytes, a " + a.bank +
                             " PCR has " + std::to_string(crypto::hash_info(*bank).size));
        return kExitInput;
      }
      // A PCR the list never extends keeps its reset value (zeros): compare with that.
      pcrs.try_emplace(idx, Bytes(crypto::hash_info(*bank).size, 0));
    }
  }
  for (const auto& [idx, v] : pcrs) {
    pj[std::to_string(idx)] = to_hex(v);
    auto it = expected.find(idx);
    const bool differs = it != expected.end() && it->second != to_hex(v);
    pcr_mismatch += differs;
    if (!a.json)
      std::cout << "PCR-" << idx << ": " << to_hex(v)
                << (it == expected.end() ? "" : differs ? "  MISMATCH (expected " + it->second + ")" : "  matches") << "\n";
  }
  if (a.json)
    std::cout << dump({{"list", a.file}, {"bank", a.bank}, {"records", recs->size()}, {"violations", violations},
                       {"template_hash_mismatches", bad}, {"pcrs", pj}, {"pcr_mismatches", pcr_mismatch}})
              << "\n";
  else
    std::cout << recs->size() << " records, " << violations << " violations, " << mismatches
              << " template hash mismatches\n";
  return mismatches || pcr_mismatch ? kExitVerdict : kExitOk;
}

// -------------------------------------------------------------------------------- info

struct InfoArgs {
  std::vector<std::string> modules;
  bool json = false;
  std::uint64_t max_size = module::kDefaultMaxDecompressed;
};

/// The kernel profiles whose parser and module usage gate accept the signature (trust in
/// the signer aside): "v6", "v7.0", "v7.0+waiver".
nlohmann::json accepted_by(ByteView cms_der, ByteView content) {
  nlohmann::json out = nlohmann::json::array();
  auto profiles = std::vector<std::pair<std::string, kernel::KernelProfile>>{
      {"v6", kernel::KernelProfile::v6()}, {"v7.0", kernel::KernelProfile::v7_0()}};
  auto waived = kernel::KernelProfile::v7_0();
  waived.waive_mldsa_authattrs = true;
  profiles.emplace_back("v7.0+waiver", waived);
  for (const auto& [name, prof] : profiles) {
    auto msg = kernel::pkcs7_parse_message(cms_der, prof);
    if (!msg || !kernel::pkcs7_supply_detached_data(*msg, content)) continue;
    if (kernel::pkcs7_verify(*msg, kernel::Usage::module, prof)) out.push_back(name);
  }
  return out;
}

int cmd_info(const InfoArgs& a) {
  int worst = kExitOk;
  for (const auto& path : a.modules) {
    auto lm = read_module(path, a.max_size);
    if (!lm) {
      worst = std::max(worst, kExitInput);
      continue;
    }
    const Bytes& file = lm->m.image;
    nlohmann::json j{{"file", path}, {"size", file.size()}, {"compressed", compression_json(lm->m)}};
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
      j["signature"] = to_colon_hex(si.signature);
      j["signer_id_type"] = si.sid_type == cms::SignerIdType::issuer_and_serial ? "issuerAndSerialNumber"
                                                                                : "subjectKeyIdentifier";
      j["signature_algorithm"] = sig_algo_text(si);
      j["signed_attrs"] = si.signed_attrs.has_value();
      j["signer_infos"] = sd->signers.size();
      j["certificates"] = sd->certificates.size();
      j["cms_length"] = split->cms.size();
      j["signature_length"] = si.signature.size();
      j["content_length"] = split->content.size();
      try {
        j["accepted_by"] = accepted_by(split->cms, split->content);
      } catch (const std::exception& e) {
        complain(path, std::string("internal error: ") + e.what());
        worst = std::max(worst, kExitInput);
        continue;
      }
    }
    if (a.json) {
      std::cout << dump(j) << "\n";
      continue;
    }
    auto line = [](const std::string& k, const std::string& v) {
      std::cout << k << ":" << std::string(k.size() < 20 ? 20 - k.size() : 1, ' ') << printable(v) << "\n";
    };
    line("file", path);
    if (lm->m.compression != module::Compression::none) {
      line("compressed", compression_text(lm->m));
      if (!lm->m.kernel_decompress_problem.empty()) line("kernel_decompress", lm->m.kernel_decompress_problem);
    }
    line("signed", j["signed"].get<bool>() ? "yes" : "no");
    if (!j["signed"].get<bool>()) {
      line("content_length", std::to_string(file.size()));
      continue;
    }
    for (const char* k : {"sig_id", "signer", "sig_key", "sig_hashalgo", "signer_id_type", "signature_algorithm"})
      line(k, j[k].get<std::string>());
    line("signed_attrs", j["signed_attrs"].get<bool>() ? "yes" : "no");
    for (const char* k : {"signer_infos", "certificates", "cms_length", "signature_length", "content_length"})
      line(k, std::to_string(j[k].get<std::size_t>()));
    std::string acc;
    for (const auto& p : j["accepted_by"]) acc += (acc.empty() ? "" : " ") + p.get<std::string>();
    line("accepted_by", acc.empty() ? "(none)" : acc);
    const std::string sig = j["signature"].get<std::string>();
    line("signature", sig.size() > 47 ? sig.substr(0, 47) + ":..." : sig);
  }
  return worst;
}

}  // namespace

/// The options every module-reading command shares: --max-size, and where given
/// --stream-above (`verb` names the operation) and -r DIR.
void add_module_inputs(CLI::App* c, std::uint64_t& max_size, std::uint64_t* stream_above, std::vector<std::string>* dirs,
                       const char* verb) {
  add_bytes_option(c, "--max-size", max_size, "largest decompressed module, bytes");
  if (stream_above)
    add_bytes_option(c, "--stream-above", *stream_above,
                     std::string(verb) + " uncompressed modules larger than this many bytes in one streaming pass (constant memory)");
  if (dirs)
    c->add_option("-r", *dirs, "also every *.ko, *.ko.xz, *.ko.zst, *.ko.gz under DIR (recursive, sorted)")
        ->allow_extra_args(false);
}

int main(int argc, char** argv) {
  // sign-file keeps its own getopt command line.
  if (argc >= 2 && std::string(argv[1]) == "sign-file") return cmd_sign_file(argc - 1, argv + 1);

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
  sign->add_option("--hash", sg.hash, "digestAlgorithm: sha256|sha384|sha512|sha3-256|sha3-384|sha3-512|sha224|sha1")
      ->capture_default_str();
  sign->add_flag("--signed-attrs", sg.signed_attrs, "add signedAttrs {contentType, messageDigest} (sign-file with OpenSSL 3.x)");
  sign->add_flag("--keyid", sg.keyid, "identify the signer by subjectKeyIdentifier (SignerInfo version 3)");
  auto* p7s = sign->add_flag("--p7s", sg.p7s, "also write OUTPUT.p7s (OUTPUT = MODULE, or DEST)");
  auto* p7s_only = sign->add_flag("--p7s-only", sg.p7s_only, "only write MODULE.p7s; leave the module as it is")->excludes(p7s);
  sign->add_option("--dest", sg.dest, "write the signed module here instead of in place (one MODULE)")->excludes(p7s_only);
  sign->add_flag("--replace", sg.replace, "strip an existing signature first");
  sign->add_option("--backend", sg.backend, "ML-DSA signing library (auto: the faster one measured, Botan with a seed key)")
      ->check(CLI::IsMember({"auto", "openssl", "botan"}))->capture_default_str();
  add_batch_options(sign, sg.batch, true);
  sign->add_flag("--recompress", sg.recompress, "sign compressed modules: decompress, sign, recompress in the same format");
  add_module_inputs(sign, sg.max_size, &sg.stream_above, &sg.dirs, "sign");
  sign->add_option("MODULE", sg.modules, "modules to sign");

  StripArgs st;
  auto* strip = app.add_subcommand("strip", "remove the appended signature");
  strip->add_option("--dest", st.dest, "write the result here instead of in place (one MODULE)");
  strip->add_flag("--recompress", st.recompress, "strip compressed modules and recompress them");
  add_module_inputs(strip, st.max_size, nullptr, &st.dirs, "strip");
  strip->add_option("MODULE", st.modules, "modules");

  ExtractArgs ex;
  auto* extract = app.add_subcommand("extract", "write the appended PKCS#7 as MODULE.p7s");
  extract->add_option("--out,-o", ex.out, "output file (one MODULE)");
  add_module_inputs(extract, ex.max_size, nullptr, nullptr, "extract");
  extract->add_option("MODULE", ex.modules, "modules")->required();

  app.add_subcommand("sign-file", "scripts/sign-file's command line: [-dpk] [-s] ... (see README)");

  VerifyArgs vf;
  auto* verify = app.add_subcommand("verify", "predict what a kernel does when loading each module");
  verify->add_option("--keyring,--cert", vf.keyrings,
                     "trusted certificates: PEM bundle, DER file or directory of them; repeatable")
      ->allow_extra_args(false);
  add_kernel_option(verify, vf.kernel, "");
  verify->add_option("--blacklist", vf.blacklists, "CONFIG_SYSTEM_BLACKLIST_HASH_LIST file (tbs: entries); repeatable")
      ->allow_extra_args(false);
  verify->add_option("--revoked", vf.revoked, "revoked certificates (CONFIG_SYSTEM_REVOCATION_KEYS); repeatable")
      ->allow_extra_args(false);
  verify->add_option("--dbx", vf.dbx, "UEFI dbx / MokListXRT file: its EFI_CERT_X509 entries are revoked keys; repeatable")
      ->allow_extra_args(false);
  verify->add_flag("--waive-mldsa-authattrs", vf.waive, "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y (v7.0)");
  verify->add_flag("--enforce", vf.enforce, "module.sig_enforce=1 / CONFIG_MODULE_SIG_FORCE=y");
  verify->add_flag("--lockdown", vf.lockdown, "kernel lockdown (integrity) active");
  verify->add_option("--backend", vf.backend, "ML-DSA verification library (auto: the faster one measured, Botan)")
      ->check(CLI::IsMember({"auto", "openssl", "botan"}))->capture_default_str();
  add_batch_options(verify, vf.batch, false);
  verify->add_flag("--json", vf.json, "one JSON object per module");
  add_module_inputs(verify, vf.max_size, &vf.stream_above, &vf.dirs, "verify");
  verify->add_option("MODULE", vf.modules, "modules to verify");

  DigestArgs dg;
  auto* dig = app.add_subcommand("digest", "the kernel's pkcs7_get_digest, the side SHA-256 and IMA's d-modsig");
  add_kernel_option(dig, dg.kernel, "");
  dig->add_flag("--json", dg.json, "one JSON object per module");
  add_module_inputs(dig, dg.max_size, nullptr, nullptr, "digest");
  dig->add_option("MODULE", dg.modules, "modules")->required();

  ImaArgs im;
  auto* ima = app.add_subcommand("ima", "IMA template data, measurement lists and modsig appraisal");
  ima->require_subcommand(1);
  auto* ima_t = ima->add_subcommand("template", "the template data and hashes IMA records for a file");
  ima_t->add_option("--template", im.template_name, "ima-modsig|ima-sig|ima-ng")->capture_default_str();
  ima_t->add_option("--path", im.path, "the path IMA would record (n-ng); default: FILE");
  add_kernel_option(ima_t, im.kernel, "");
  ima_t->add_option("--ima-hash", im.ima_hash, "IMA's file hash (ima_hash=)")->capture_default_str();
  ima_t->add_flag("--side-sha256", im.side, "d-modsig from the side SHA-256 (the proposal)");
  ima_t->add_flag("--json", im.json, "JSON output");
  ima_t->add_option("FILE", im.file, "file")->required();
  auto* ima_r = ima->add_subcommand("replay", "recompute template hashes and replay PCRs of a binary measurement list");
  ima_r->add_option("--bank", im.bank, "digest size of the list's records: sha1 (binary_runtime_measurements), sha256, ...")
      ->capture_default_str();
  ima_r->add_option("--pcrs", im.pcrs, "expected PCR values (lines 'PCR-10: <hex>')");
  ima_r->add_flag("--json", im.json, "JSON output");
  ima_r->add_option("LIST", im.file, "binary_runtime_measurements file")->required();

  InfoArgs in;
  auto* info = app.add_subcommand("info", "what modinfo shows about a signature, and more");
  info->add_flag("--json", in.json, "one JSON object per module");
  add_module_inputs(info, in.max_size, nullptr, nullptr, "info");
  info->add_option("MODULE", in.modules, "modules")->required();

  Commands more;
  add_ima_appraise_command(*ima, more);
  // add_xxx_commands(app, more) of tools/modsign/cmd_xxx.cpp go here.
  add_blacklist_commands(app, more);
  add_dbx_commands(app, more);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  try {
    if (*keygen) return cmd_keygen(kg);
    if (*sign) return cmd_sign(sg);
    if (*strip) return cmd_strip(st);
    if (*extract) return cmd_extract(ex);
    if (*verify) return cmd_verify(vf);
    if (*info) return cmd_info(in);
    if (*dig) return cmd_digest(dg);
    if (*ima_t) return cmd_ima_template(im);
    if (*ima_r) return cmd_ima_replay(im);
    for (auto& [cmd, run] : more)
      if (*cmd) return run();
  } catch (const std::exception& e) {
    complain("", std::string("internal error: ") + e.what());
    return kExitInput;
  }
  return kExitUsage;
}
