// `modsign sign`: append a PKCS#7 signature to modules (scripts/sign-file's output), or
// write it as MODULE.p7s; many modules and -r DIR run as a batch (batch.hpp).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "batch.hpp"
#include "cli_common.hpp"
#include "cms/signed_data.hpp"
#include "common/file.hpp"
#include "crypto/crypto.hpp"
#include "module/compression.hpp"
#include "module/module_signature.hpp"
#include "options.hpp"
#include "registry.hpp"

namespace modsign::cli {

namespace {

using crypto::Certificate;
using crypto::PrivateKey;

struct SignArgs {
  std::string key, cert, hash = "sha512", dest, backend = "auto";
  BatchOptions batch;
  bool signed_attrs = false, keyid = false, p7s = false, p7s_only = false, replace = false, recompress = false;
  std::vector<std::string> modules, dirs;
  std::uint64_t max_size = module::kDefaultMaxDecompressed;
  std::uint64_t stream_above = std::uint64_t{64} << 20;
};

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

Runner setup_sign(CLI::App& c) {
  auto a = std::make_shared<SignArgs>();
  c.add_option("--key", a->key, "private key (PEM or DER; KBUILD_SIGN_PIN for encrypted keys)")->required();
  c.add_option("--cert", a->cert, "the signer's certificate (PEM or DER); default: the certificate in the key file");
  c.add_option("--hash", a->hash, "digestAlgorithm: sha256|sha384|sha512|sha3-256|sha3-384|sha3-512|sha224|sha1")
      ->capture_default_str();
  c.add_flag("--signed-attrs", a->signed_attrs, "add signedAttrs {contentType, messageDigest} (sign-file with OpenSSL 3.x)");
  c.add_flag("--keyid", a->keyid, "identify the signer by subjectKeyIdentifier (SignerInfo version 3)");
  auto* p7s = c.add_flag("--p7s", a->p7s, "also write OUTPUT.p7s (OUTPUT = MODULE, or the --out file)");
  auto* p7s_only = c.add_flag("--p7s-only", a->p7s_only, "only write MODULE.p7s; leave the module as it is")->excludes(p7s);
  add_out_option(&c, a->dest, "write the signed module here instead of in place (one MODULE)", "--dest")->excludes(p7s_only);
  c.add_flag("--replace", a->replace, "strip an existing signature first");
  add_backend_option(&c, a->backend, "signing");
  add_batch_options(&c, a->batch, true);
  c.add_flag("--recompress", a->recompress, "sign compressed modules: decompress, sign, recompress in the same format");
  add_module_inputs(&c, a->max_size, &a->stream_above, &a->dirs, "sign");
  c.add_option("MODULE", a->modules, "modules to sign");
  return [a] { return cmd_sign(*a); };
}

}  // namespace

const Registration kSign{{"sign", "append a signature to modules (or write .p7s)", setup_sign}};

}  // namespace modsign::cli
