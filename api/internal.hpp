// modsign — what the facade implementations (api/) share: the handles' insides and the
// conversion of the public KernelProfile.  Not installed.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blacklist/sources.hpp"
#include "cms/kernel.hpp"
#include "cms/signed_data.hpp"
#include "common/file.hpp"
#include "crypto/crypto.hpp"
#include "modsign/output.hpp"
#include "modsign/profile.hpp"
#include "modsign/sign.hpp"
#include "modsign/trust.hpp"
#include "modsign/verdict.hpp"
#include "module/decompress.hpp"
#include "module/module_signature.hpp"

namespace modsign {

/// The library's access to the handles' insides: their Impl, and the constructor from one
/// (both private to callers of the public headers).
struct detail::Access {
  template <class Handle>
  static const typename Handle::Impl& impl(const Handle& h) noexcept {
    return *h.impl_;
  }
  static OutputBatch::Impl& impl(OutputBatch& b) noexcept { return *b.impl_; }
  template <class Handle>
  static Handle make(std::shared_ptr<const typename Handle::Impl> impl) {
    return Handle(std::move(impl));
  }
};

/// The insides of a Signer, SignerCertificate, TrustStore or OutputBatch.
template <class Handle>
decltype(auto) impl_of(Handle& h) noexcept {
  return detail::Access::impl(h);
}

struct Signer::Impl {
  crypto::PrivateKey key;
  crypto::Certificate cert;
  std::string cert_path;
  std::string key_path;
  std::vector<std::string> notes;
  std::string pin_path;  ///< KeyOptions::pin_file: never an output either
};

/// keyring.blacklist is a copy of sources.keyring (what verify_pkcs7_signature consults);
/// `sources` keeps the origins for blacklist checks.
struct TrustStore::Impl {
  KernelProfile profile;
  cms::Keyring keyring;
  blacklist::Sources sources;
  std::vector<std::string> notes, keyring_notes;
};

namespace api {
/// The internal profile with the public one's generation and switches.
cms::KernelModel to_model(const KernelProfile& p);
/// The profiles whose parser and module usage checks (pkcs7_parse_message,
/// pkcs7_supply_detached_data, pkcs7_verify; trust aside) accept the SignedData `cms_der`
/// over `content`: "v6.1", "v6", "v7.0", "v7.0+waiver" (ModuleSignatureInfo::accepted_by).
std::vector<std::string> accepted_by(ByteView cms_der, ByteView content);
/// The ML-DSA backend a `backend` option names: "botan", "openssl", "auto" (the measured
/// table, crypto::Backend::automatic); another name is a UsageError (api/verdict.cpp).
crypto::Backend backend_named(const std::string& name);

/// A module file read for signing or stripping: the stored bytes and the image the kernel
/// checks.  Throws IoError (unreadable, larger than max(max_size, 1 GiB)) and InputError
/// "<path>: <fmt>-compressed module: <reason>" for a stream that does not decompress within
/// `max_size` (api/sign.cpp).
struct StoredModule {
  Bytes stored;
  module::ModuleImage m;
};
StoredModule read_stored_module(const std::string& path, std::uint64_t max_size);
/// The same, of the file `lock` holds open (what was locked and checked is what is read).
StoredModule read_stored_module(const InputLock& lock, std::uint64_t max_size);
/// AtomicFile for `out`, made in the input's directory (InputLock::dir()) when `out` is the
/// input itself or the input's name + ".p7s": an in-place output is never made through a
/// path that leads elsewhere by then.
void open_output(std::optional<AtomicFile>& f, const std::string& out, const InputLock* input);
/// Throws InputError "PATH: empty file, not a module" or "PATH: a PEM file (-----BEGIN
/// ...), not a module" (a key or certificate named as the module).
void refuse_non_module(const std::string& path);
void refuse_non_module(const InputLock& lock);
/// The notes for the extended attributes `f` did not keep because they described the old
/// content (security.ima, security.evm): "note: WHICHNAME not kept: it was the old
/// content's (modsign ima sign --setxattr makes one for the new)", `which` "" or "FILE: ".
std::vector<std::string> dropped_xattr_notes(const AtomicFile& f, const std::string& which = "");
/// refuse_output_over() of the output `out` where it is made (InputLock::beside(): in the
/// input's directory for an output beside the input).
void refuse_output_over(const FileAt& out, const std::vector<KeptFile>& kept);
/// True when `out` exists and is the file `input` holds (st_dev, st_ino).
bool is_input(const FileAt& out, const InputLock& input);
/// An explicit output `out` that is the input under another name (a symbolic or hard link,
/// another spelling) would replace it: throws IoError "OUT: is the same file as the input
/// IN; refusing to overwrite it (to VERB in place, give no output)".  The same spelling is
/// working in place and is not refused.
void refuse_input_alias(const std::string& out, const InputLock& input, const char* verb);
/// The files a signer reads, which no output may replace: its private key, certificate and
/// PIN file (those that are files).
std::vector<KeptFile> signer_files(const Signer& signer);
/// refuse_output_over() for sign_module_file(): the signed module `out` (unless p7s_only)
/// against the input and `kept` (the signer's files, or a certificate alone); the .p7s
/// `p7s` (if written) against those and `out`.  Outputs beside the input are checked in its
/// directory.  Throws IoError.
void refuse_sign_outputs(std::vector<KeptFile> kept, const InputLock& input, const std::string& out,
                         const std::string& p7s, const SignOptions& o);
/// What is signed in a module file's bytes `stored` (`m` its opened image, nullptr for a
/// raw file): the image without an existing signature (with `o.replace`), and its
/// compression.  Throws SignError compressed (without recompress or p7s_only),
/// already_signed (without replace), other (a malformed old trailer); `label` ("<path>: "
/// or "") before the messages.  `content` points into `stored` or `*m`.
struct SignContent {
  ByteView content;
  module::Compression compression = module::Compression::none;
  std::vector<std::string> notes;  ///< legacy trailers removed, stacked signatures replaced
};
SignContent signing_content(ByteView stored, const module::ModuleImage* m, const SignOptions& o,
                            const std::string& label);
/// The signed module (`c.content` ‖ `cms` ‖ trailer, recompressed as `c` was, unless
/// p7s_only) and the SignedData; report.cms_size and recompressed set.
SignedImage signed_image(const SignContent& c, Bytes cms, const SignOptions& o);
/// Writes `si` as sign_module_file() does: the module to `out` (unless p7s_only) and the
/// SignedData to `p7s` (p7s, p7s_only), both opened before either is replaced; sets
/// files_written and path.  Throws IoError.
/// With `input` (the module read, locked): nothing is replaced unless it is unchanged then.
/// The outputs go by `route`.
SignReport write_signed(SignedImage& si, const std::string& out, const std::string& p7s, const SignOptions& o,
                        const InputLock* input, const CommitRoute& route);
/// Both outputs committed together (commit_together, by `route`): all or nothing; `input`
/// as for write_signed(); the extended attributes an output did not keep become notes of `r`.
void commit_outputs(std::optional<AtomicFile>& out, std::optional<AtomicFile>& p7s_file, const InputLock* input,
                    SignReport& r, const CommitRoute& route);
/// The internal route of `route` (OutputBatch's CommitBatch, the item) (api/output.cpp).
CommitRoute commit_route(const OutputRoute& route);
/// "note: removed a legacy trailer (id_type 1 X509, algo 0, hash 0, signer_len 0, key_id_len
/// 0): the kernel refuses it (mod_check_sig)" for a trailer module::is_legacy() (api/strip.cpp).
std::string legacy_note(const module::ModuleSignature& t);
/// The bytes of the uncompressed module file `in` (named `path`) that a streaming signer
/// signs: all of it, or with `o.replace` those before its signatures (every stacked trailer
/// as mod_check_sig() reads it).  Throws SignError already_signed, other (a malformed
/// trailer) (api/sign_stream.cpp).
std::uint64_t streamed_content_length(const FileReader& in, const std::string& path, const SignOptions& o);
/// The end of a streamed signing: `cms` ‖ struct module_signature ‖ marker after the
/// content already written to `out` (when opened), `cms` to `p7s_file` (when opened), both
/// committed by `route`; sets files_written, path, cms_size and streamed of `r`.  Throws
/// IoError.
void finish_streamed(std::optional<AtomicFile>& out, std::optional<AtomicFile>& p7s_file, ByteView cms,
                     const std::string& out_path, const std::string& p7s, const SignOptions& o, SignReport& r,
                     const InputLock* input, const CommitRoute& route);
/// sign_module_file() in one streaming pass (api/sign_stream.cpp); `input` the module,
/// locked; the outputs go by `route`.
SignReport sign_streaming(const Signer& signer, const std::string& path, const SignOptions& options,
                          const InputLock* input, const CommitRoute& route);
/// The cms::BuildOptions of `options` for the certificate `cert` (read from `cert_path`):
/// the checks of check_sign_options() that need no private key (unknown_hash,
/// mldsa_signed_attrs_hash, no_skid, the backend name); backend left at openssl.
cms::BuildOptions form_options(const crypto::Certificate& cert, const std::string& cert_path,
                               const SignOptions& options, const std::string& prefix);
/// The cms::BuildOptions of `options` for `signer`, after check_sign_options() (api/sign.cpp);
/// `prefix` ("<path>: " or "") goes before the hash messages.
cms::BuildOptions build_options(const Signer& signer, const SignOptions& options, const std::string& prefix);
}  // namespace api

}  // namespace modsign
