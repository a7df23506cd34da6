// `modsign sign`: append a PKCS#7 signature to modules (scripts/sign-file's output), or
// write it as MODULE.p7s; many modules and -r DIR run as a batch (batch.hpp).  The signing
// itself is modsign::sign_module_file() (<modsign/sign.hpp>).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <modsign/sign.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "batch.hpp"
#include "cli_common.hpp"
#include "options.hpp"
#include "registry.hpp"
#include "sign_prepare_attach.hpp"

namespace modsign::cli {

namespace {

/// With --signed-attrs, which the kernel refuses on a module signature unless ML-DSA's under
/// the waiver (a trial signed RSA modules no kernel loads, and nothing said so): a warning
/// when no kernel loads the form, else (unless `quiet`) a note when only the waiver does.
void say_which_kernels_load(const Signer& signer, const SignOptions& opt, bool quiet) {
  const std::vector<std::string> kernels = kernels_accepting_form(signer, opt);
  const std::string form = signer.algorithm() + ", " + opt.hash + ", signedAttrs";
  if (kernels.empty())
    complain("",
             "warning: no kernel modsign models (v6.1, v6, v7.0, v7.0+waiver) loads a module signature of this "
             "form (" +
                 form + "): leave out --signed-attrs");
  else if (!quiet && kernels == std::vector<std::string>{"v7.0+waiver"})
    complain("",
             "note: only a 7.x kernel built with CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y loads this "
             "form (" +
                 form + ")");
}

struct SignArgs {
  std::string key, cert, dest;
  KeyOptions key_options;  // --pin-file
  SignOptions sign;        // hash, signed_attrs, skid, replace, recompress, p7s, p7s_only, backend, sizes
  BatchOptions batch;
  std::vector<std::string> modules, dirs;
  KernelBuildOptions kernel;  // --kernel-build / --kernel-config
  bool hash_given = false;    // --hash on the command line (else CONFIG_MODULE_SIG_HASH, if any)
  RemoteArgs remote;          // --prepare, --attach, --signatures (sign_prepare_attach.hpp)
};

/// "PATH: signed (ALGO, [no ]signedAttrs, HASH, CMS N bytes[, streamed[ with external mu]]
/// [, recompressed FORMAT])".
std::string signed_line(const SignReport& r) {
  std::ostringstream os;
  os << printable(r.path) << ": signed (" << r.algorithm << ", " << (r.signed_attrs ? "signedAttrs" : "no signedAttrs")
     << ", " << r.hash << ", CMS " << r.cms_size << " bytes" << (r.streamed ? ", streamed" : "")
     << (r.external_mu ? " with external mu" : "")
     << (r.recompressed.empty() ? std::string() : ", recompressed " + r.recompressed) << ")\n";
  return os.str();
}

/// The message of a refusal, worded with this command's options ("" = the library's).
std::string refusal_text(const SignError& e) {
  switch (e.reason()) {
    case SignRefusal::already_signed:
      return "module is already signed (use --replace to strip the old signature and re-sign)";
    case SignRefusal::compressed:
      return e.format() +
             "-compressed module: use --recompress (or decompress it, sign the .ko, then recompress; the "
             "kernel checks the signature inside the decompressed image)";
    default: return "";
  }
}

/// check_sign_options() refusals as this command words them; the exit status.
int report_option_refusal(const SignError& e, const SignArgs& a) {
  switch (e.reason()) {
    case SignRefusal::unknown_hash:
      complain("",
               "unknown --hash '" + a.sign.hash + "' (sha1|sha224|sha256|sha384|sha512|sha3-256|sha3-384|sha3-512)");
      return kExitUsage;
    case SignRefusal::no_skid: complain("", std::string(e.what()) + " (needed for --keyid)"); return kExitInput;
    case SignRefusal::mldsa_signed_attrs_hash:
      complain("",
               "ML-DSA with --signed-attrs needs --hash sha512: kernels refuse any other digest there "
               "(crypto/asymmetric_keys/public_key.c)");
      return kExitUsage;
    case SignRefusal::backend_needs_seed: complain(a.key, backend_needs_seed_text()); return kExitUsage;
    default: complain("", e.what()); return kExitInput;
  }
}

int cmd_sign(const SignArgs& a) {
  SignOptions opt = a.sign;
  opt.out = a.dest;
  // The target kernel's settings: its digest unless --hash, its key and certificate unless --key.
  const auto kconfig = load_kernel_config(a.kernel);
  const bool remote = remote_requested(a.remote);
  std::string key = a.key, cert = a.cert;
  if (kconfig && !a.hash_given && !kconfig->sig_hash.empty()) {
    check_kernel_config_hash(*kconfig);  // a bad CONFIG_MODULE_SIG_HASH is that file's error, not --hash's
    opt.hash = kconfig->sig_hash;
  }
  if (kconfig && !remote && key.empty() && !kconfig->sig_key.empty()) {
    key = kconfig->sig_key;
    if (cert.empty()) cert = kconfig->sig_cert;
  }
  if (key.empty() && !remote) {
    complain("", kconfig ? "--key is required (or --kernel-build DIR, whose CONFIG_MODULE_SIG_KEY is used)"
                         : "--key is required");
    usage_hint("sign");
    return kExitUsage;
  }
  try {
    check_sign_options(opt);  // the names, before anything is read
  } catch (const SignError& e) { return report_option_refusal(e, a); }
  if (remote) {
    const SignWording words{[&](const SignError& e) { return report_option_refusal(e, a); }, refusal_text, signed_line};
    return run_remote(a.remote, a.key, a.cert, opt, a.batch, a.modules, a.dirs, words);
  }
  std::size_t dir_error = 0;  // entries under -r DIR not handled (reported)
  const auto inputs = expand_module_tree(a.modules, a.dirs, &dir_error);
  if (inputs.empty() && dir_error) return kExitInput;  // every -r DIR failed or was empty (reported)
  if (!module_inputs_usable(inputs, a.dirs, a.dest)) return kExitUsage;
  auto signer = load_signer(key, cert, a.key_options);
  try {
    check_sign_options(signer, opt);
  } catch (const SignError& e) { return report_option_refusal(e, a); }
  if (opt.signed_attrs) say_which_kernels_load(signer, opt, a.batch.quiet || kconfig);
  if (kconfig)
    print_notes(kernel_config_warnings(*kconfig,
                                       "the new signature (" + signer.algorithm() + ", " + opt.hash + ", " +
                                           (opt.signed_attrs ? "signedAttrs)" : "no signedAttrs)"),
                                       signer.algorithm(), opt.hash, opt.signed_attrs));
  // The same file named twice (decided before anything is written, by canonical path;
  // hard links are separate names and are signed separately).  Symbolic links found under
  // -r are skipped first and take no part in this.
  // Under -r, compressed modules are left alone unless --recompress (or --p7s-only, which
  // leaves the module untouched anyway) asks for them.
  return run_file_batch("sign", inputs, a.dirs, opt.recompress || opt.p7s_only, dir_error, a.batch,
                        [&](std::size_t i, ItemResult& r, const OutputRoute& to) {
                          const BatchInput& in = inputs[i];
                          SignOptions o = opt;
                          o.expect_file = walked_file(in, a.dirs);
                          try {
                            const SignReport rep = sign_module_file(signer, in.path, o, to);
                            r.bytes = rep.bytes_read;
                            for (const auto& n : rep.notes) complain(in.path, n);
                            r.out = signed_line(rep);
                          } catch (const SignError& e) {
                            r.bytes = e.bytes_read();
                            const std::string hint = refusal_text(e);
                            if (hint.empty()) complain("", e.what());
                            else complain(in.path, hint);
                            return kExitInput;
                          }
                          return kExitOk;
                        });
}

Runner setup_sign(CLI::App& c) {
  auto a = std::make_shared<SignArgs>();
  add_signer_options(&c, a->key, a->cert, a->key_options.pin_file,
                     "private key (PEM or DER; KBUILD_SIGN_PIN for encrypted keys), or a pkcs11: URI; required unless "
                     "--kernel-build, --prepare or --attach");
  auto* hash = c.add_option("--hash", a->sign.hash,
                            "digestAlgorithm: sha256|sha384|sha512|sha3-256|sha3-384|sha3-512|sha224|sha1")
                   ->capture_default_str();
  c.add_flag("--signed-attrs", a->sign.signed_attrs,
             "add signedAttrs {contentType, messageDigest} (sign-file with OpenSSL 3.x)");
  c.add_flag("--keyid", a->sign.skid, "identify the signer by subjectKeyIdentifier (SignerInfo version 3)");
  auto* p7s = c.add_flag("--p7s", a->sign.p7s, "also write OUTPUT.p7s (OUTPUT = MODULE, or the --out file)");
  auto* p7s_only =
      c.add_flag("--p7s-only", a->sign.p7s_only, "only write MODULE.p7s; leave the module as it is")->excludes(p7s);
  add_out_option(&c, a->dest, "write the signed module here instead of in place (one MODULE)", "--dest")
      ->excludes(p7s_only);
  c.add_flag("--replace", a->sign.replace, "strip the existing signature (every stacked one) first");
  c.add_flag("--legacy", a->sign.legacy,
             "with --replace: also strip a trailer the kernel refuses as legacy (id_type 0/1, non-zero legacy "
             "fields), with a note");
  add_backend_option(&c, a->sign.backend, "signing");
  add_batch_options(&c, a->batch, true);
  c.add_flag("--recompress", a->sign.recompress,
             "sign compressed modules: decompress, sign, recompress in the same format");
  add_module_inputs(&c, a->sign.max_size, &a->sign.stream_above, &a->dirs, "sign");
  add_kernel_build_options(&c, a->kernel,
                           "CONFIG_MODULE_SIG_HASH unless --hash, CONFIG_MODULE_SIG_KEY and certs/signing_key.x509 "
                           "unless --key, warnings when that kernel would not accept the signature",
                           "CONFIG_MODULE_SIG_HASH unless --hash (no key: give --key), warnings when that kernel "
                           "would not accept the signature");
  c.add_flag("--deterministic", a->sign.deterministic,
             "reproducible signatures: deterministic ML-DSA (rnd = 0), ECDSA nonces per RFC 6979");
  add_remote_options(c, a->remote);
  c.add_option("MODULE", a->modules, "modules to sign");
  return [a, hash] {
    a->hash_given = hash->count() > 0;
    return cmd_sign(*a);
  };
}

}  // namespace

const Registration kSign{{"sign", "append a signature to modules (or write .p7s)", setup_sign}};

}  // namespace modsign::cli
