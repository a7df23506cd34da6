// modsign — Signer, check_sign_options(), sign_module_file() and sign_module_image()
// (include/modsign/sign.hpp); the streaming pass is api/sign_stream.cpp.
#include "modsign/sign.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <vector>

#include "api/internal.hpp"
#include "cms/signed_data.hpp"
#include "common/file.hpp"
#include "common/module_read.hpp"
#include "crypto/algorithms.hpp"
#include "crypto/pkcs11_store.hpp"
#include "module/compression.hpp"

namespace modsign {

Signer::Signer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
Signer::Signer(const Signer&) = default;
Signer& Signer::operator=(const Signer&) = default;
Signer::~Signer() = default;

SignError::SignError(SignRefusal reason, const std::string& what, std::uint64_t bytes_read, std::string format)
    : InputError(what), reason_(reason), bytes_read_(bytes_read), format_(std::move(format)) {}

namespace {
/// The key-file warning of Signer::notes(): group or others may access a private key.
std::optional<std::string> permission_note(const std::string& key_path) {
  struct stat st {};
  if (::stat(key_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 077) == 0) return std::nullopt;
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return std::string("warning: permissions ") + mode + " let group or others access this private key (chmod 600 " +
         key_path + ")";
}

/// The first line of a PIN file, without its line end (the buffer read is wiped).
crypto::SecretString read_pin_file(const std::string& path) {
  const crypto::SecretBytes b(read_file(path, 4096));
  const auto& v = b.value();
  auto end = std::find(v.begin(), v.end(), '\n');
  if (end != v.begin() && end[-1] == '\r') --end;
  if (end == v.begin()) throw InputError(path + ": empty PIN file");
  return crypto::SecretString(std::string(v.begin(), end));
}

/// "<cert>: no certificate matches the private key <key>", with both algorithms when the
/// first certificate's differs from the key's: "(the key is RSA, the certificate ML-DSA-65)".
InputError no_matching_certificate(const std::string& cert, const std::string& key_label, const crypto::PrivateKey& key,
                                   const std::vector<crypto::Certificate>& certs) {
  std::string algos;
  if (!certs.empty() && certs.front().public_key().algo() != key.algo())
    algos = " (the key is " + std::string(crypto::key_algo_name(key.algo())) + ", the certificate " +
            std::string(crypto::key_algo_name(certs.front().public_key().algo())) + ")";
  return InputError(cert + ": no certificate matches the private key " + key_label + algos);
}

/// The signer of a token key (crypto/pkcs11_store.hpp).
Signer load_token(const std::string& key_path, const std::string& cert_path, const PassphraseProvider& ask,
                  const KeyOptions& ko, std::optional<crypto::SecretString> pin) {
  const std::string uri = "pkcs11:" + key_path.substr(7);        // "PKCS11:" as "pkcs11:"
  const std::string shown = crypto::pkcs11::printable_uri(uri);  // never the PIN, no raw control bytes
  if (crypto::pkcs11::pin_in_uri(uri))
    throw UsageError(shown +
                     ": PINs are not accepted in the URI (pin-value): use KBUILD_SIGN_PIN, --pin-file or the prompt");
  std::vector<crypto::Certificate> certs;
  if (!cert_path.empty()) {
    auto c = crypto::Certificate::load_all(cert_path);
    if (!c) throw InputError(cert_path + ": " + c.error().message);
    certs = std::move(c.value());
  }
  crypto::pkcs11::TokenOptions to;
  to.provider = ko.pkcs11_provider;
  to.pin = std::move(pin);
  if (ask)
    to.ask = [&]() -> std::optional<crypto::SecretString> {
      auto typed = ask(uri);
      if (!typed) return std::nullopt;
      return crypto::SecretString(std::move(*typed));
    };
  if (!certs.empty()) to.expect = certs.front().public_key().algo();
  to.with_certs = cert_path.empty();
  auto tk = crypto::pkcs11::load(uri, to);
  if (!tk) throw InputError(shown + ": " + tk.error().message);
  const std::string cert_file = cert_path.empty() ? uri : cert_path;
  if (cert_path.empty()) certs = std::move(tk->certs);
  for (auto& c : certs)
    if (c.public_key() == tk->key.public_key())
      return detail::Access::make<Signer>(std::make_shared<const Signer::Impl>(
          Signer::Impl{std::move(tk->key), std::move(c), cert_file, uri, {}, ko.pin_file}));
  throw no_matching_certificate(cert_path.empty() ? shown : cert_path, shown, tk->key, certs);
}
}  // namespace

Signer Signer::load(const std::string& key_path, const std::string& cert_path, const PassphraseProvider& ask) {
  return load(key_path, cert_path, ask, KeyOptions{});
}

Signer Signer::load(const std::string& key_path, const std::string& cert_path, const PassphraseProvider& ask,
                    const KeyOptions& ko) {
  // The PIN or passphrase is a crypto::SecretString: wiped on every path out of here.
  std::optional<crypto::SecretString> pin;
  if (!ko.pin_file.empty()) pin = read_pin_file(ko.pin_file);
  else if (const char* p = std::getenv("KBUILD_SIGN_PIN")) pin = crypto::SecretString(std::string(p));
  if (crypto::pkcs11::is_uri(key_path)) return load_token(key_path, cert_path, ask, ko, std::move(pin));
  const bool pin_given = pin.has_value();
  auto key = crypto::PrivateKey::load(key_path, pin);
  pin.reset();
  if (!key && !pin_given && ask && key.error().reason == Error::Reason::needs_passphrase) {
    if (auto typed = ask(key_path)) {
      const std::optional<crypto::SecretString> pass(crypto::SecretString(std::move(*typed)));
      key = crypto::PrivateKey::load(key_path, pass);
    }
  }
  if (!key) throw InputError(key_path + ": " + key.error().message);
  std::vector<std::string> notes;
  if (auto n = permission_note(key_path)) notes.push_back(std::move(*n));  // only a file that holds a key
  const std::string cert_file = cert_path.empty() ? key_path : cert_path;
  auto certs = crypto::Certificate::load_all(cert_file);
  if (!certs && cert_path.empty())  // the key file alone, and it holds no certificate
    throw InputError(cert_file + ": " + certs.error().message +
                     "; the key file holds no certificate: give it with --cert");
  if (!certs) throw InputError(cert_file + ": " + certs.error().message);
  for (auto& c : certs.value())
    if (c.public_key() == key->public_key())
      return Signer(std::make_shared<const Impl>(
          Impl{std::move(key.value()), std::move(c), cert_file, key_path, std::move(notes), ko.pin_file}));
  throw no_matching_certificate(cert_file, key_path, *key, certs.value());
}

std::string Signer::algorithm() const { return std::string(crypto::key_algo_name(impl_->key.algo())); }
const std::string& Signer::key_path() const { return impl_->key_path; }
const std::string& Signer::certificate_path() const { return impl_->cert_path; }
const std::vector<std::string>& Signer::notes() const { return impl_->notes; }

namespace api {

namespace {
crypto::HashAlgo check_names(const SignOptions& o, const std::string& prefix) {
  // Only the documented names, in lower case (crypto::hash_by_name also knows md5 and
  // takes any case, for IMA).
  static constexpr const char* kNames[] = {"sha1",   "sha224",   "sha256",   "sha384",
                                           "sha512", "sha3-256", "sha3-384", "sha3-512"};
  const bool documented = std::any_of(std::begin(kNames), std::end(kNames), [&](const char* n) { return o.hash == n; });
  const auto hash = documented ? crypto::hash_by_name(o.hash) : std::nullopt;
  if (!hash) throw SignError(SignRefusal::unknown_hash, prefix + "unknown hash '" + o.hash + "'");
  (void)api::backend_named(o.backend);  // UsageError for an unknown name
  return *hash;
}
}  // namespace

cms::BuildOptions form_options(const crypto::Certificate& cert, const std::string& cert_path, const SignOptions& o,
                               const std::string& prefix) {
  const auto hash = std::optional<crypto::HashAlgo>(check_names(o, prefix));
  if (crypto::is_ml_dsa(cert.public_key().algo()) && o.signed_attrs && *hash != crypto::HashAlgo::sha512)
    throw SignError(SignRefusal::mldsa_signed_attrs_hash,
                    prefix + "ML-DSA with signedAttrs needs sha512 (kernels refuse any other digest there)");
  if (o.skid && !cert.skid())
    throw SignError(SignRefusal::no_skid, cert_path + ": certificate has no subjectKeyIdentifier");
  cms::BuildOptions opt;
  opt.digest = *hash;
  opt.signed_attrs = o.signed_attrs;
  opt.sid = o.skid ? cms::SignerIdType::subject_key_id : cms::SignerIdType::issuer_and_serial;
  opt.deterministic = o.deterministic;
  return opt;
}

cms::BuildOptions build_options(const Signer& signer, const SignOptions& o, const std::string& prefix) {
  const auto& s = impl_of(signer);
  cms::BuildOptions opt = form_options(s.cert, s.cert_path, o, prefix);
  // A token's ECDSA signer picks its own nonce (pkcs11-provider offers no RFC 6979 nonce
  // type): --deterministic cannot be honoured, so it is refused rather than ignored.
  if (o.deterministic && crypto::is_ecdsa(s.key.algo()) && crypto::pkcs11::is_uri(signer.key_path()))
    throw SignError(SignRefusal::other, prefix + signer.key_path() +
                                            ": deterministic ECDSA (RFC 6979) is not available for a key on a "
                                            "PKCS#11 token: its signer chooses the nonce");
  if (o.backend == "botan" && crypto::is_ml_dsa(s.key.algo()) && !s.key.has_ml_dsa_seed())
    throw SignError(SignRefusal::backend_needs_seed,
                    s.key_path + ": the botan backend needs an ML-DSA key with its seed (RFC 9881 seed or both form)");
  // auto: the measured table (crypto::Backend::automatic; a key without seed signs with OpenSSL).
  opt.backend = api::backend_named(o.backend);
  return opt;
}

namespace {
StoredModule stored_module(Bytes stored, const std::string& path, std::uint64_t max_size) {
  StoredModule sm;
  sm.stored = std::move(stored);
  auto img = module::open_module(sm.stored, max_size);
  if (!img)
    throw InputError(path + ": " + std::string(module::compression_name(module::detect_compression(sm.stored))) +
                     "-compressed module: " + img.error().message);
  sm.m = std::move(img.value());
  return sm;
}

constexpr std::string_view kPem = "-----BEGIN ";

/// InputError for an empty file or a PEM file given as a module: `head` its first bytes
/// (at least kPem's, or the whole file), `size` its size.
void refuse_non_module_head(ByteView head, std::uint64_t size, const std::string& path) {
  if (size == 0) throw InputError(path + ": empty file, not a module");
  if (head.size() >= kPem.size() && std::equal(kPem.begin(), kPem.end(), head.begin()))
    throw InputError(path + ": a PEM file (-----BEGIN ...), not a module");
}

void refuse_non_module(const FileReader& f, const std::string& path) {
  const Bytes head = f.read_at(0, static_cast<std::size_t>(std::min<std::uint64_t>(f.size(), kPem.size())));
  refuse_non_module_head(head, f.size(), path);
}
}  // namespace

StoredModule read_stored_module(const std::string& path, std::uint64_t max_size) {
  return stored_module(read_module_bytes(path, max_size), path, max_size);
}

StoredModule read_stored_module(const InputLock& lock, std::uint64_t max_size) {
  return stored_module(read_module_bytes(lock, max_size), lock.path(), max_size);
}

void refuse_non_module(const std::string& path) { refuse_non_module(FileReader(path), path); }
void refuse_non_module(const InputLock& lock) { refuse_non_module(FileReader(lock), lock.path()); }

void open_output(std::optional<AtomicFile>& f, const std::string& out, const InputLock* input) {
  if (input && input->beside(out).dir != AT_FDCWD) f.emplace(out, input->dir());
  else f.emplace(out);
}

std::vector<std::string> dropped_xattr_notes(const AtomicFile& f, const std::string& which) {
  std::vector<std::string> notes;
  for (const auto& name : f.dropped_xattrs())
    notes.push_back("note: " + which + name + " not kept: it was the old content's (modsign ima sign" +
                    (name.starts_with("user.") ? " --xattr-user" : " --setxattr") + " makes one for the new)");
  return notes;
}

void refuse_input_alias(const std::string& out, const InputLock& input, const char* verb) {
  if (out != input.path() && is_input(input.beside(out), input))
    throw IoError(out + ": is the same file as the input " + input.path() + "; refusing to overwrite it (to " + verb +
                  " in place, give no output)");
}

std::vector<KeptFile> signer_files(const Signer& signer) {
  return {{signer.key_path(), "the private key"},
          {signer.certificate_path(), "the certificate"},
          {impl_of(signer).pin_path, "the PIN file"}};
}

void refuse_sign_outputs(std::vector<KeptFile> kept, const InputLock& input, const std::string& out,
                         const std::string& p7s, const SignOptions& o) {
  if (!o.p7s_only) refuse_input_alias(out, input, "sign");
  if (!o.p7s_only) refuse_output_over(input.beside(out), kept);
  if (o.p7s || o.p7s_only) {
    const FileAt at = input.beside(p7s);
    if (is_input(at, input))
      throw IoError(p7s + ": is the same file as the input " + input.path() + "; refusing to overwrite it");
    if (!o.p7s_only && out != input.path()) kept.push_back({out, "the signed module"});
    refuse_output_over(at, kept);
  }
}

SignContent signing_content(ByteView stored, const module::ModuleImage* m, const SignOptions& o,
                            const std::string& label) {
  const std::uint64_t n = stored.size();
  SignContent c;
  c.compression = m ? m->compression : module::Compression::none;
  if (c.compression != module::Compression::none && !o.recompress && !o.p7s_only) {
    const std::string f(module::compression_name(c.compression));
    throw SignError(
        SignRefusal::compressed,
        label + f + "-compressed module: set recompress, or decompress it, sign the .ko, then recompress it", n, f);
  }
  c.content = m ? ByteView(m->image) : stored;
  // A stream that decompresses to nothing: no module inside (mod_check_sig would refuse its
  // signature, EBADMSG), as an empty file is none (hostile review of session 20).
  if (m && m->compression != module::Compression::none && c.content.empty())
    throw SignError(
        SignRefusal::other,
        label + std::string(module::compression_name(c.compression)) + "-compressed empty file, not a module", n);
  if (m && !o.raw && module::has_marker(c.content)) {
    if (!o.replace) throw SignError(SignRefusal::already_signed, label + "module is already signed", n);
    auto split = o.legacy ? module::split_any_trailer(c.content) : module::split(c.content);
    if (!split)
      throw SignError(SignRefusal::other,
                      label + "cannot strip the existing signature: " + std::string(errno_name(split.error().code)) +
                          " " + split.error().message,
                      n);
    const auto stack = module::split_stack(c.content, o.legacy);  // every stacked signature goes
    for (const auto& st : stack)
      if (module::is_legacy(st.trailer)) c.notes.push_back(legacy_note(st.trailer));
    if (stack.size() > 1) c.notes.push_back("note: replaced " + std::to_string(stack.size()) + " stacked signatures");
    c.content = stack.back().content;
  }
  return c;
}

SignedImage signed_image(const SignContent& c, Bytes cms, const SignOptions& o) {
  SignedImage r;
  r.report.notes = c.notes;
  r.cms = std::move(cms);
  if (!o.p7s_only) {
    r.module = module::append_signature(c.content, r.cms);
    if (c.compression != module::Compression::none) {
      r.module = module::compress(r.module, c.compression);
      r.report.recompressed = std::string(module::compression_name(c.compression));
      if (o.raw)
        r.report.notes.push_back("note: " + r.report.recompressed +
                                 "-compressed module: signed the decompressed image (what the kernel checks) and "
                                 "compressed it again as " +
                                 r.report.recompressed);
    }
  } else if (o.raw && c.compression != module::Compression::none) {
    r.report.notes.push_back("note: " + std::string(module::compression_name(c.compression)) +
                             "-compressed module: the signature covers the decompressed image (what the kernel "
                             "checks)");
  }
  r.report.cms_size = r.cms.size();
  return r;
}

void commit_outputs(std::optional<AtomicFile>& out, std::optional<AtomicFile>& p7s_file, const InputLock* input,
                    SignReport& r, const CommitRoute& route) {
  std::vector<AtomicFile*> files;
  for (auto* f : {&out, &p7s_file})
    if (*f) {
      if (input) (*f)->require_unchanged(*input);
      files.push_back(&**f);
    }
  commit_together(files, route);
  for (AtomicFile* f : files) {
    r.files_written.push_back(f->path_in());
    // The module's notes are about the module; the .p7s is named.
    const std::string which = f == files.front() && out ? "" : f->path_in() + ": ";
    for (auto& n : dropped_xattr_notes(*f, which)) r.notes.push_back(std::move(n));
  }
}

SignReport write_signed(SignedImage& si, const std::string& out, const std::string& p7s, const SignOptions& o,
                        const InputLock* input, const CommitRoute& route) {
  SignReport& r = si.report;
  // Every target is opened (and checked) before any is replaced; all or none is replaced.
  std::optional<AtomicFile> module_file, p7s_file;
  if (!o.p7s_only) open_output(module_file, out, input);
  if (o.p7s || o.p7s_only) open_output(p7s_file, p7s, input);
  if (module_file) module_file->write(si.module);
  if (p7s_file) p7s_file->write(si.cms);
  commit_outputs(module_file, p7s_file, input, r, route);
  r.path = o.p7s_only ? p7s : out;
  return std::move(r);
}

namespace {

/// The signing of `stored` (a module file's bytes); `label` prefixes the messages.
SignedImage sign_stored(const Signer& signer, ByteView stored, const module::ModuleImage* m, const SignOptions& o,
                        const std::string& label) {
  const auto opt = build_options(signer, o, label);
  const SignContent c = signing_content(stored, m, o, label);
  auto cms_der = cms::build_detached(impl_of(signer).key, impl_of(signer).cert, c.content, opt);
  if (!cms_der) throw SignError(SignRefusal::other, label + cms_der.error().message, stored.size());
  SignedImage r = signed_image(c, std::move(cms_der.value()), o);
  r.report.algorithm = signer.algorithm();
  r.report.hash = std::string(crypto::hash_info(opt.digest).name);
  r.report.signed_attrs = o.signed_attrs;
  r.report.bytes_read = stored.size();
  return r;
}

}  // namespace
}  // namespace api

void check_sign_options(const Signer& signer, const SignOptions& options) {
  (void)api::build_options(signer, options, "");
}
void check_sign_options(const SignOptions& options) { (void)api::check_names(options, ""); }

std::vector<std::string> kernels_accepting_form(const Signer& signer, const SignOptions& options) {
  SignOptions o = options;
  o.raw = true;  // the empty module as it is: no ELF, no compression to look for
  o.replace = false;
  const SignedImage probe = api::sign_stored(signer, {}, nullptr, o, "");
  return api::accepted_by(probe.cms, {});
}

SignedImage sign_module_image(const Signer& signer, ByteView image, const SignOptions& options) {
  if (options.raw) return api::sign_stored(signer, image, nullptr, options, "");
  auto img = module::open_module(image, options.max_size);
  if (!img)
    throw InputError(std::string(module::compression_name(module::detect_compression(image))) +
                     "-compressed module: " + img.error().message);
  return api::sign_stored(signer, image, &img.value(), options, "");
}

SignReport sign_module_file(const Signer& signer, const std::string& path, const SignOptions& options,
                            const OutputRoute& to) {
  const CommitRoute route = api::commit_route(to);
  (void)api::build_options(signer, options, path + ": ");  // before anything is read
  const std::string out = options.out.empty() ? path : options.out;
  const std::string p7s = options.p7s_out.empty() ? out + ".p7s" : options.p7s_out;
  // Held until the outputs are in place: another modsign signing it waits, and a change
  // by anything else while it is read is found before anything is replaced.  Everything
  // is read from the locked file, never by its path again.
  const InputLock input(path, options.expect_file);
  if (!options.raw && input.identity().size > options.stream_above &&
      module::streamable_file(FileReader(input), options.stream_above)) {
    api::refuse_non_module(input);
    api::refuse_sign_outputs(api::signer_files(signer), input, out, p7s, options);
    return api::sign_streaming(signer, path, options, &input, route);
  }
  // Read once: every check below works on these bytes.
  Bytes file = read_module_bytes(input, options.max_size);
  api::refuse_non_module_head(file, file.size(), path);
  api::refuse_sign_outputs(api::signer_files(signer), input, out, p7s, options);
  // raw (sign-file): the file as it is; with recompress or p7s_only a compressed one's
  // decompressed image as it is, existing signature and all.
  const bool raw_as_is = options.raw && (!(options.recompress || options.p7s_only) ||
                                         module::detect_compression(file) == module::Compression::none);
  SignedImage si;
  if (raw_as_is) {
    si = api::sign_stored(signer, file, nullptr, options, path + ": ");
  } else {
    const auto sm = api::stored_module(std::move(file), path, options.max_size);
    si = api::sign_stored(signer, sm.stored, &sm.m, options, path + ": ");
  }
  return api::write_signed(si, out, p7s, options, &input, route);
}

std::string append_signature_file(const std::string& path, const std::string& cms_path, const std::string& out,
                                  const OutputRoute& to) {
  api::refuse_non_module(path);
  std::string dest = out.empty() ? path : out;
  refuse_output_over(dest, {{cms_path, "the input"}});
  const Bytes file = read_file(path);
  const Bytes cms_der = read_file(cms_path);
  write_file_atomic(dest, module::append_signature(file, cms_der), 0644, true, api::commit_route(to));
  return dest;
}

}  // namespace modsign
