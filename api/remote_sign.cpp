// modsign — SignerCertificate, prepare_module_file() and attach_signature_file()
// (include/modsign/remote_sign.hpp): the two phases of signing with a key held elsewhere.
// What is signed is cms::signing_input() (cms/signed_data.cpp); the module is read and
// written by the same functions as sign_module_file() (api/sign.cpp).
#include "modsign/remote_sign.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "api/internal.hpp"
#include "cms/signed_data.hpp"
#include "common/base64.hpp"
#include "common/file.hpp"
#include "crypto/algorithms.hpp"
#include "module/compression.hpp"

namespace modsign {

struct SignerCertificate::Impl {
  crypto::Certificate cert;
  std::string path;
};

SignerCertificate::SignerCertificate(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
SignerCertificate::SignerCertificate(const SignerCertificate&) = default;
SignerCertificate& SignerCertificate::operator=(const SignerCertificate&) = default;
SignerCertificate::~SignerCertificate() = default;

SignerCertificate SignerCertificate::load(const std::string& cert_path) {
  auto certs = crypto::Certificate::load_all(cert_path);
  if (!certs) throw InputError(cert_path + ": " + certs.error().message);
  return SignerCertificate(std::make_shared<const Impl>(Impl{std::move(certs->front()), cert_path}));
}

SignerCertificate SignerCertificate::of(const Signer& signer) {
  return SignerCertificate(std::make_shared<const Impl>(Impl{impl_of(signer).cert, signer.certificate_path()}));
}

std::string SignerCertificate::algorithm() const {
  return std::string(crypto::key_algo_name(impl_->cert.public_key().algo()));
}
const std::string& SignerCertificate::path() const { return impl_->path; }
Bytes SignerCertificate::sha256() const { return crypto::digest(crypto::HashAlgo::sha256, impl_->cert.der()); }

std::string_view to_sign_name(ToSign t) {
  switch (t) {
    case ToSign::mu: return "mu";
    case ToSign::signed_attrs: return "signed-attrs";
    case ToSign::digest: return "digest";
  }
  return "?";
}

namespace {

/// The form options of `o` with the recorded ones of `p` (attach).
/// "<path>: signature does not verify with <cert>", with the reason when it is more than
/// that (EKEYREJECTED is the verification failing; others say why: a wrong size ...).
SignError mismatch_error(const std::string& label, const std::string& cert, const Error& e) {
  return SignError(SignRefusal::signature_mismatch,
                   label + "signature does not verify with " + cert +
                       (e.code == KErr::ekeyrejected ? std::string() : ": " + e.message));
}

SignOptions recorded_options(const PreparedModule& p, const SignOptions& o) {
  SignOptions so = o;
  so.hash = p.hash;
  so.signed_attrs = p.signed_attrs;
  so.skid = p.skid;
  so.replace = p.replace;
  so.recompress = p.recompress;
  so.raw = false;
  return so;
}

/// The digests the signer of the content needs (cms::signing_input()): H(content) with
/// signedAttrs and for RSA/ECDSA, μ for ML-DSA without signedAttrs.
struct ContentHashers {
  std::optional<crypto::Hasher> h;
  std::optional<crypto::MlDsaMu> mu;
  ContentHashers(const crypto::PublicKey& pk, const cms::BuildOptions& opt) {
    const bool ml_dsa = crypto::is_ml_dsa(pk.algo());
    if (opt.signed_attrs || !ml_dsa) h.emplace(opt.digest);
    if (!opt.signed_attrs && ml_dsa) mu.emplace(pk.raw());
  }
  void update(ByteView b) {
    if (h) h->update(b);
    if (mu) mu->update(b);
  }
  cms::ContentDigests final() {
    cms::ContentDigests cd;
    if (h) cd.digest = h->final();
    if (mu) cd.mu = mu->final();
    return cd;
  }
};

cms::SigningInput input_of(const crypto::PublicKey& pk, const cms::ContentDigests& cd, const cms::BuildOptions& opt,
                           const std::string& label) {
  auto in = cms::signing_input(pk, cd, opt);
  if (!in) throw SignError(SignRefusal::other, label + in.error().message);
  return std::move(in.value());
}

/// The signing input of `content` (in memory) for the key of `cert`.
cms::SigningInput input_of(const crypto::Certificate& cert, ByteView content, const cms::BuildOptions& opt,
                           const std::string& label) {
  ContentHashers hs(cert.public_key(), opt);
  hs.update(content);
  return input_of(cert.public_key(), hs.final(), opt, label);
}

/// One pass over a module file streamed in 1 MiB pieces: SHA-256 of the whole file, and the
/// signer's digests and SHA-256 of its first `content_len` bytes; each piece of those also
/// goes to `copy` when given.
struct StreamPass {
  Bytes file_sha256, content_sha256;
  cms::ContentDigests cd;
};
StreamPass stream_pass(const FileReader& in, std::uint64_t content_len, const crypto::PublicKey& pk,
                       const cms::BuildOptions& opt, bool whole_file, AtomicFile* copy) {
  crypto::Hasher file_sha(crypto::HashAlgo::sha256), content_sha(crypto::HashAlgo::sha256);
  ContentHashers hs(pk, opt);
  const std::uint64_t end = whole_file ? in.size() : content_len;
  Bytes buf;
  for (std::uint64_t off = 0; off < end;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(std::size_t{1} << 20, end - off));
    in.read_at(off, n, buf);
    const ByteView piece(buf.data(), n);
    if (whole_file) file_sha.update(piece);
    if (off < content_len) {
      const ByteView c(buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(n, content_len - off)));
      hs.update(c);
      content_sha.update(c);
      if (copy) copy->write(c);
    }
    off += n;
  }
  StreamPass r;
  if (whole_file) r.file_sha256 = file_sha.final();
  r.content_sha256 = content_sha.final();
  r.cd = hs.final();
  return r;
}

ToSign kind_of(cms::SigningInput::Kind k) {
  switch (k) {
    case cms::SigningInput::Kind::mu: return ToSign::mu;
    case cms::SigningInput::Kind::signed_attrs: return ToSign::signed_attrs;
    case cms::SigningInput::Kind::digest: return ToSign::digest;
  }
  return ToSign::digest;
}

/// The module `input` holds already carries the SignedData `signature` makes for
/// `prepared` (see attach_signature_file()).
bool already_attached(const crypto::Certificate& cert, const PreparedModule& prepared, ByteView signature,
                      const SignOptions& so, const cms::BuildOptions& opt, const std::string& label,
                      const InputLock& input) {
  try {
    const auto sm = api::read_stored_module(input, so.max_size);
    const auto outer = module::split(sm.m.image);
    if (!outer) return false;
    SignOptions strip = so;
    strip.replace = true;  // the content under every signature, as prepare read it
    const api::SignContent content = api::signing_content(sm.stored, &sm.m, strip, label);
    const cms::SigningInput in = input_of(cert, content.content, opt, label);
    if (in.to_sign != prepared.to_sign) return false;
    auto cms_der = cms::build_detached_with_signature(cert, in, signature, opt);
    return cms_der && std::equal(cms_der->begin(), cms_der->end(), outer->cms.begin(), outer->cms.end());
  } catch (const std::exception&) {
    return false;  // not readable as a signed module: "changed since prepare"
  }
}

/// The report of a module already_attached(): nothing written.
SignReport attached_report(const SignerCertificate& cert, const PreparedModule& prepared, const std::string& out) {
  SignReport r;
  r.path = out;
  r.algorithm = cert.algorithm();
  r.hash = prepared.hash;
  r.signed_attrs = prepared.signed_attrs;
  r.already_attached = true;
  return r;
}

}  // namespace

void check_prepared(const SignerCertificate& cert, const PreparedModule& p) {
  const std::string label = p.path + ": ";
  auto edited = [&](const char* field, const std::string& why) {
    throw InputError(label + "\"" + field + "\" " + why + " (edited since prepare)");
  };
  if (p.algorithm != cert.algorithm())
    edited("algorithm", "is " + p.algorithm + ", the certificate's key is " + cert.algorithm());
  const bool ml_dsa = crypto::is_ml_dsa(impl_of(cert).cert.public_key().algo());
  const ToSign kind = !ml_dsa ? ToSign::digest : p.signed_attrs ? ToSign::signed_attrs : ToSign::mu;
  if (!ml_dsa && p.kind != kind)
    edited("to_sign_type",
           "is " + std::string(to_sign_name(p.kind)) + ", an " + cert.algorithm() + " key signs a digest");
  if (kind == ToSign::digest && p.signed_attrs != !p.signed_attrs_der.empty())
    edited("form", p.signed_attrs ? "is signedAttrs, but the line has no signed_attrs_der"
                                  : "is no signedAttrs, but the line has signed_attrs_der");
  if (p.kind != kind)
    edited("form", "is " + std::string(p.signed_attrs ? "signedAttrs" : "no signedAttrs") +
                       ", which makes to_sign_type " + std::string(to_sign_name(kind)) + ", not " +
                       std::string(to_sign_name(p.kind)));
  const auto h = crypto::hash_by_name(p.hash);
  if (!h) edited("hash", "is " + p.hash + ", not a digest modsign knows");
  if (kind == ToSign::digest && p.to_sign.size() != crypto::hash_info(*h).size)
    edited("hash", "is " + p.hash + " (" + std::to_string(crypto::hash_info(*h).size) + " bytes), to_sign has " +
                       std::to_string(p.to_sign.size()));
  if (kind == ToSign::mu && p.to_sign.size() != 64)
    edited("to_sign", "has " + std::to_string(p.to_sign.size()) + " bytes, a μ has 64");
  if (p.skid && !impl_of(cert).cert.skid()) edited("keyid", "is true, the certificate has no subjectKeyIdentifier");
  Bytes head;
  {
    const FileReader f(p.path);
    f.read_at(0, static_cast<std::size_t>(std::min<std::uint64_t>(f.size(), 512)), head);
  }
  const module::Compression actual = module::detect_compression(head);
  const std::string actual_name =
      actual == module::Compression::none ? "" : std::string(module::compression_name(actual));
  if (p.compression != actual_name)
    edited("compression", "is " + (p.compression.empty() ? std::string("null") : p.compression) + ", the module is " +
                              (actual_name.empty() ? std::string("not compressed") : actual_name + "-compressed"));
  if (p.recompress && actual_name.empty()) edited("recompress", "is true, the module is not compressed");
}

void check_sign_options(const SignerCertificate& cert, const SignOptions& options) {
  (void)api::form_options(impl_of(cert).cert, cert.path(), options, "");
}

PreparedModule prepare_module_file(const SignerCertificate& cert, const std::string& path, const SignOptions& options) {
  const auto& c = impl_of(cert);
  SignOptions so = options;
  so.raw = false;
  const std::string label = path + ": ";
  const auto opt = api::form_options(c.cert, c.path, so, label);  // before anything is read
  // Read from one locked file (as sign_module_file(); with expect_file, the one a walk found).
  const InputLock input(path, so.expect_file, LockMode::shared);
  api::refuse_non_module(input);
  PreparedModule p;
  cms::SigningInput in;
  if (module::streamable_file(FileReader(input), so.stream_above)) {
    const FileReader f(input);
    const auto pass =
        stream_pass(f, api::streamed_content_length(f, path, so), c.cert.public_key(), opt, true, nullptr);
    in = input_of(c.cert.public_key(), pass.cd, opt, label);
    p.size = f.size();
    p.sha256 = pass.file_sha256;
  } else {
    const auto sm = api::read_stored_module(input, so.max_size);
    const api::SignContent content = api::signing_content(sm.stored, &sm.m, so, label);
    in = input_of(c.cert, content.content, opt, label);
    p.size = sm.stored.size();
    p.sha256 = crypto::digest(crypto::HashAlgo::sha256, sm.stored);
    if (sm.m.compression != module::Compression::none)
      p.compression = std::string(module::compression_name(sm.m.compression));
  }
  p.path = path;
  p.certificate = c.path;
  p.certificate_sha256 = cert.sha256();
  p.algorithm = cert.algorithm();
  p.hash = std::string(crypto::hash_info(opt.digest).name);
  p.signed_attrs = so.signed_attrs;
  p.skid = so.skid;
  p.replace = so.replace;
  p.recompress = so.recompress && !p.compression.empty();  // as sign: nothing to recompress otherwise
  p.kind = kind_of(in.kind);
  p.to_sign = in.to_sign;
  p.mu = in.mu;
  p.digest_info = in.digest_info;
  if (in.attrs_set) p.signed_attrs_der = *in.attrs_set;
  return p;
}

void recheck_prepared(const SignerCertificate& cert, const PreparedModule& p, const SignOptions& options) {
  check_prepared(cert, p);
  const std::string label = p.path + ": ";
  auto edited = [&](const std::string& field, const std::string& why) {
    throw InputError(label + "\"" + field + "\" " + why + " (edited since prepare)");
  };
  SignOptions so = options;  // max_size, stream_above, p7s_only, backend: the attach's own
  so.hash = p.hash;
  so.signed_attrs = p.signed_attrs;
  so.skid = p.skid;
  so.replace = p.replace;
  so.recompress = p.recompress;
  {
    const FileReader f(p.path);
    if (f.size() != p.size) return;  // changed, or attached already: attach_signature_file() says which
  }
  PreparedModule again;
  try {
    again = prepare_module_file(cert, p.path, so);
  } catch (const SignError& e) {
    switch (e.reason()) {
      case SignRefusal::unknown_hash:
      case SignRefusal::mldsa_signed_attrs_hash:
        return edited("hash", "is " + p.hash + ", which prepare refuses: " + e.what());
      case SignRefusal::no_skid: return edited("keyid", std::string("is true: ") + e.what());
      case SignRefusal::already_signed:
        return edited("replace", std::string("is false, the module is signed: ") + e.what());
      case SignRefusal::compressed:
        return edited("recompress", "is false, the module is " + e.format() + "-compressed");
      default: throw;
    }
  }
  if (again.sha256 != p.sha256) return;  // the same size, other bytes: attach_signature_file() refuses it
  if (again.hash != p.hash) edited("hash", "is " + p.hash + ", prepare writes it " + again.hash);
  if (again.to_sign != p.to_sign || again.kind != p.kind)
    edited("to_sign", "is not what the module gives with the recorded hash " + p.hash + " and form " +
                          (p.signed_attrs ? "signedAttrs" : "no signedAttrs"));
  // A manifest carries signed_attrs_der for a digest only (for ML-DSA the SET is to_sign).
  if (!p.signed_attrs_der.empty() && again.signed_attrs_der != p.signed_attrs_der)
    edited("signed_attrs_der", "is not the module's");
  if (!p.mu.empty() && again.mu != p.mu) edited("mu", "is not the module's");
  if (!p.digest_info.empty() && again.digest_info != p.digest_info) edited("digest_info", "is not the module's");
}

namespace {

/// attach_signature_file() for a module above stream_above: one pass checks the file and
/// computes to_sign, a second copies the content into the output while hashing it again
/// (a file changed between the passes is refused before anything is replaced).
SignReport attach_streaming(const SignerCertificate& cert, const PreparedModule& prepared, ByteView signature,
                            const SignOptions& so, const std::string& out_path, const std::string& p7s,
                            const InputLock& input, const CommitRoute& route) {
  const auto& c = impl_of(cert);
  const std::string& path = prepared.path;
  const std::string label = path + ": ";
  const auto opt = api::form_options(c.cert, c.path, so, label);
  const FileReader f(input);
  if (f.size() != prepared.size && already_attached(c.cert, prepared, signature, so, opt, label, input))
    return attached_report(cert, prepared, out_path);
  if (f.size() != prepared.size)
    throw InputError(label + "changed since prepare (" + std::to_string(f.size()) + " bytes, prepared with " +
                     std::to_string(prepared.size) + ")");
  const std::uint64_t content_len = api::streamed_content_length(f, path, so);
  const auto first = stream_pass(f, content_len, c.cert.public_key(), opt, true, nullptr);
  if (first.file_sha256 != prepared.sha256) throw InputError(label + "changed since prepare (SHA-256 differs)");
  const cms::SigningInput in = input_of(c.cert.public_key(), first.cd, opt, label);
  if (in.to_sign != prepared.to_sign)
    throw InputError(label + "to_sign differs from the module's (the prepared data was altered)");
  auto cms_der = cms::build_detached_with_signature(c.cert, in, signature, opt);
  if (!cms_der) throw mismatch_error(label, c.path, cms_der.error());
  std::optional<AtomicFile> out, p7s_file;  // both opened (checked) before either is replaced
  if (!so.p7s_only) api::open_output(out, out_path, &input);
  if (so.p7s || so.p7s_only) api::open_output(p7s_file, p7s, &input);
  if (out) {
    const auto second = stream_pass(f, content_len, c.cert.public_key(), opt, false, &*out);
    if (second.content_sha256 != first.content_sha256) throw InputError(label + "changed while being written");
  }
  SignReport r;
  api::finish_streamed(out, p7s_file, *cms_der, out_path, p7s, so, r, &input, route);
  r.algorithm = cert.algorithm();
  r.hash = prepared.hash;
  r.signed_attrs = so.signed_attrs;
  r.external_mu = in.kind == cms::SigningInput::Kind::mu;
  r.bytes_read = f.size();
  return r;
}

}  // namespace

SignReport attach_signature_file(const SignerCertificate& cert, const PreparedModule& prepared, ByteView signature,
                                 const SignOptions& output, const OutputRoute& to) {
  const CommitRoute route = api::commit_route(to);
  const auto& c = impl_of(cert);
  const std::string& path = prepared.path;
  const std::string label = path + ": ";
  const SignOptions so = recorded_options(prepared, output);
  const auto opt = api::form_options(c.cert, c.path, so, label);
  if (prepared.certificate_sha256 != cert.sha256())
    throw InputError(c.path + ": not the certificate the module was prepared with (SHA-256 differs)");
  check_prepared(cert, prepared);
  const std::string out = so.out.empty() ? path : so.out;
  const std::string p7s = so.p7s_out.empty() ? out + ".p7s" : so.p7s_out;
  const InputLock input(path, so.expect_file);  // as sign_module_file()
  api::refuse_non_module(input);
  api::refuse_sign_outputs({{c.path, "the certificate"}}, input, out, p7s, so);
  if (module::streamable_file(FileReader(input), so.stream_above))
    return attach_streaming(cert, prepared, signature, so, out, p7s, input, route);
  const auto sm = api::read_stored_module(input, so.max_size);
  const bool same_size = sm.stored.size() == prepared.size;
  if ((!same_size || crypto::digest(crypto::HashAlgo::sha256, sm.stored) != prepared.sha256) &&
      already_attached(c.cert, prepared, signature, so, opt, label, input))
    return attached_report(cert, prepared, out);
  if (!same_size)
    throw InputError(label + "changed since prepare (" + std::to_string(sm.stored.size()) + " bytes, prepared with " +
                     std::to_string(prepared.size) + ")");
  if (crypto::digest(crypto::HashAlgo::sha256, sm.stored) != prepared.sha256)
    throw InputError(label + "changed since prepare (SHA-256 differs)");
  const api::SignContent content = api::signing_content(sm.stored, &sm.m, so, label);
  const cms::SigningInput in = input_of(c.cert, content.content, opt, label);
  if (in.to_sign != prepared.to_sign)
    throw InputError(label + "to_sign differs from the module's (the prepared data was altered)");
  auto cms_der = cms::build_detached_with_signature(c.cert, in, signature, opt);
  if (!cms_der) throw mismatch_error(label, c.path, cms_der.error());
  SignedImage si = api::signed_image(content, std::move(cms_der.value()), so);
  si.report.algorithm = cert.algorithm();
  si.report.hash = prepared.hash;
  si.report.signed_attrs = so.signed_attrs;
  si.report.bytes_read = sm.stored.size();
  return api::write_signed(si, out, p7s, so, &input, route);
}

}  // namespace modsign
