// modsign — signing a kernel module with an appended PKCS#7 signature, as the kernel's
// scripts/sign-file does (a detached CMS SignedData, struct module_signature, the
// "~Module signature appended~\n" marker; kernel/module_signature.c, Linux 7.2.13), and
// the reverse: stripping and extracting that signature.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/output.hpp"
#include "modsign/result.hpp"
#include "modsign/tree.hpp"

namespace modsign {

/// Asks for the passphrase of the encrypted key file `key_path` (e.g. a prompt on the
/// terminal); nullopt = none available.  The library cleanses the returned string once
/// the key is decrypted.
using PassphraseProvider = std::function<std::optional<std::string>(const std::string& key_path)>;

/// Where Signer::load() takes a PIN or passphrase from, and which pkcs11-provider it uses.
struct KeyOptions {
  /// Read the PIN (token) or passphrase (encrypted key file) from this file: its first
  /// line, without the line end.  Takes precedence over KBUILD_SIGN_PIN and the prompt.
  std::string pin_file;
  /// pkcs11-provider's pkcs11.so for `pkcs11:` keys; "" = $MODSIGN_PKCS11_PROVIDER, else
  /// $OPENSSL_MODULES/pkcs11.so, else the build's default (-DMODSIGN_PKCS11_PROVIDER,
  /// which tools/check sets to tools/bootstrap-deps' PKCS11_PROVIDER), else OpenSSL's own
  /// modules directory.  The token's PKCS#11 module is $PKCS11_PROVIDER_MODULE (read by
  /// pkcs11-provider itself; unset: its default, p11-kit's proxy).
  std::string pkcs11_provider;
};

/// A private key and the X.509 certificate that holds its public half.  Copies share the
/// loaded key (immutable; usable from several threads at once).
class MODSIGN_API Signer {
 public:
  /// Load the private key from `key_path` (PEM: PKCS#8, encrypted PKCS#8, traditional
  /// RSA/EC, the first key block of a file that may also hold certificates; or DER
  /// PKCS#8; ML-DSA in any RFC 9881 §6 form) and the certificate from `cert_path`, or from
  /// the key file itself when `cert_path` is empty (PEM CERTIFICATE blocks, or one DER
  /// certificate).  Of several certificates the one whose public key equals the key's is
  /// used.  An encrypted key takes its passphrase from the environment variable
  /// KBUILD_SIGN_PIN, as sign-file does; when that is unset, `ask` (if given) is called
  /// once for it.  Passphrases are cleansed after use and never appear in messages.
  /// Keys: RSA 2048..4096, ECDSA P-256/P-384, ML-DSA-44/65/87.
  /// Throws IoError "<file>: <reason>" when a file cannot be read; InputError
  /// "<file>: <reason>" when the key file holds no usable or decryptable key ("private key
  /// is encrypted and no passphrase was given ..." without a passphrase), the certificate
  /// file holds no certificate, or no certificate matches the key ("<cert file>: no
  /// certificate matches the private key <key_path>").
  static Signer load(const std::string& key_path, const std::string& cert_path = "",
                     const PassphraseProvider& ask = {});
  /// load() with a PIN file and provider choice (KeyOptions).  `key_path` may also be an
  /// RFC 7512 URI, "pkcs11:token=LABEL;object=LABEL" (id=, serial=, model=, manufacturer=
  /// select too; type=private is implied): the key stays on the token and signs through
  /// OpenSSL's pkcs11-provider (loaded into a library context of its own) and OSSL_STORE.
  /// The certificate is `cert_path`, or, when empty, the token's certificate of the same
  /// URI with type=cert.  The PIN: KeyOptions::pin_file, else KBUILD_SIGN_PIN, else `ask`
  /// (once, only when the token asks for a login); never from the URI (pin-value is
  /// refused), cleansed after the login.  Messages show the URI with any pin-value's value
  /// replaced by "(not shown)" and control or non-ASCII octets percent-encoded.  Throws
  /// UsageError "<key_path>: PINs are not accepted in the URI (pin-value): use
  /// KBUILD_SIGN_PIN, --pin-file or the prompt" (a pin-value in the path or the query);
  /// InputError "<key_path>: <reason>": "not a PKCS#11 URI (RFC 7512): <why>" (e.g. "%00
  /// (a NUL byte) in 'token': no PKCS#11 attribute value holds one"), "PKCS#11 module
  /// <path> (PKCS11_PROVIDER_MODULE) does not exist or is not a file" (or "(module-path
  /// in the URI)"), "pkcs11-provider not found (tried ...): ...", "no token matches the URI in
  /// <module>", "token 'LABEL' (MANUFACTURER MODEL): wrong PIN (CKR_PIN_INCORRECT)",
  /// "token ...: no private key matches the URI", "token ...: no certificate matches the
  /// URI (type=cert)", "token ... has no CKM_ML_DSA mechanism: ML-DSA signing needs a
  /// PKCS#11 3.2 token that offers it" (an ML-DSA certificate with a token that lacks
  /// PKCS#11 3.2's CKM_ML_DSA, SoftHSM 2.6 for one); "<pin_file>: empty PIN file";
  /// IoError when the PIN file cannot be read.
  static Signer load(const std::string& key_path, const std::string& cert_path, const PassphraseProvider& ask,
                     const KeyOptions& key_options);

  /// The key's algorithm: "RSA", "ECDSA-P256", "ECDSA-P384", "ML-DSA-44", "ML-DSA-65",
  /// "ML-DSA-87".
  std::string algorithm() const;
  /// The file the key was read from (`key_path`; the URI for a token key).
  const std::string& key_path() const;
  /// The file the certificate was taken from (`cert_path`, or `key_path` when that was
  /// empty; the key's URI for a certificate taken from the token); TrustStore::from_certificates()
  /// accepts it (a file, not a URI).
  const std::string& certificate_path() const;
  /// Warnings about the key, each about key_path(): "warning: permissions 0644 let group
  /// or others access this private key (chmod 600 <key_path>)" for a regular key file
  /// whose mode & 077 is not 0 (ssh refuses such keys; sign-file does not check).  The key
  /// is used anyway.
  const std::vector<std::string>& notes() const;

  Signer(const Signer&);
  Signer& operator=(const Signer&);
  ~Signer();

  /// The library's side of the handle (opaque to callers).
  struct Impl;

 private:
  friend struct detail::Access;
  explicit Signer(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

/// Why a signing or stripping call refused its input (SignError::reason()), so that a
/// caller can word its own hint (e.g. the option of its command line that changes it).
enum class SignRefusal {
  other,                    ///< anything else (unreadable stream, signing failure, ...)
  unknown_hash,             ///< SignOptions::hash is no digest name modsign knows
  mldsa_signed_attrs_hash,  ///< ML-DSA, signed_attrs, and a hash other than sha512
  no_skid,                  ///< skid asked for, the certificate has no subjectKeyIdentifier
  backend_needs_seed,       ///< backend "botan" with an ML-DSA key without its seed
  already_signed,           ///< a marker is present and replace is not set
  compressed,               ///< a compressed module without recompress (SignError::format())
  /// attach_signature_file(): the signature given does not verify with the certificate
  /// over the module's to_sign (another module's, another key's, or altered).
  signature_mismatch,
};

/// InputError with the SignRefusal, the bytes of module read before the refusal (0 when
/// the refusal came first) and, for SignRefusal::compressed, the format ("xz", "zstd",
/// "gzip").
class MODSIGN_API SignError : public InputError {
 public:
  SignError(SignRefusal reason, const std::string& what, std::uint64_t bytes_read = 0, std::string format = "");
  SignRefusal reason() const noexcept { return reason_; }
  std::uint64_t bytes_read() const noexcept { return bytes_read_; }
  const std::string& format() const noexcept { return format_; }

 private:
  SignRefusal reason_;
  std::uint64_t bytes_read_;
  std::string format_;
};

/// How sign_module_file() and sign_module_image() sign.
struct SignOptions {
  /// SignerInfo digestAlgorithm: "sha1", "sha224", "sha256", "sha384", "sha512",
  /// "sha3-256", "sha3-384" or "sha3-512" (any case).  ML-DSA with signed_attrs needs
  /// "sha512" (crypto/asymmetric_keys/public_key.c refuses any other digest there).
  std::string hash = "sha512";
  /// Add signedAttrs {contentType id-data, messageDigest} (RFC 5652 §5.4; for ML-DSA
  /// RFC 9882 §3.3).  Without them ML-DSA signs the module bytes themselves.
  bool signed_attrs = false;
  /// Identify the signer by subjectKeyIdentifier (SignerInfo version 3) instead of
  /// issuerAndSerialNumber (version 1); the certificate must carry one.
  bool skid = false;
  /// Strip every existing appended signature (all of a stack, e.g. from signing twice with
  /// sign-file, which signs over the first) and sign again; without it an already signed
  /// module is refused (SignRefusal::already_signed).
  bool replace = false;
  /// With replace: a trailer mod_check_sig() refuses as legacy (id_type 0 PGP / 1 X509,
  /// non-zero algo/hash/signer_len/key_id_len/pad) is stripped too, by its sig_len, with a
  /// note; without it such a trailer is refused ("cannot strip the existing signature").
  bool legacy = false;
  /// Sign a compressed module (xz, zstd, gzip, recognised by magic): the signature is
  /// appended to the decompressed image (which the kernel checks, kernel/module/
  /// decompress.c), and the result is compressed again in the same format with the kernel
  /// build's settings.  Without it a compressed module is refused unless p7s_only.
  bool recompress = false;
  /// Also write the SignedData alone (DER) as OUT.p7s (mode 0644), after the module.
  bool p7s = false;
  /// Only write OUT.p7s; the module is left as it is (compressed modules too).
  bool p7s_only = false;
  /// Write the signed module here instead of replacing `path` ("" = in place); OUT above.
  std::string out;
  /// Where p7s and p7s_only write the SignedData ("" = OUT.p7s).
  std::string p7s_out;
  /// Sign the file's bytes as they are, as scripts/sign-file does: no decompression, no
  /// look for an existing signature (one is signed over and a second appended after it).
  /// With recompress (or p7s_only), a compressed file (by magic) is decompressed first and
  /// its image signed as it is (an existing signature in it signed over), then compressed
  /// again: what `modsign sign-file` does, where scripts/sign-file appends the signature
  /// after the compressed stream (a module no kernel loads).
  bool raw = false;
  /// An uncompressed module file larger than this many bytes is signed in one streaming
  /// pass in 1 MiB pieces (constant memory; for ML-DSA without signedAttrs by external μ)
  /// instead of being read whole.  The result is the same bytes.
  std::uint64_t stream_above = std::uint64_t{64} << 20;
  /// The file a walk found at the module's path (WalkedFile: the DIR walked and
  /// TreeEntry::file), or the file a batch found at a path it was given (WalkedFile with
  /// an empty root).  A walked file is opened beneath that DIR without following a
  /// symbolic link, and its outputs are made and renamed in the directory so opened
  /// (renameat): nothing outside DIR is opened.  Refused before the file is locked or
  /// read, with the IoErrors WalkedFile lists: a symbolic link on the way ("<path>: not
  /// the file found there by the walk of -r DIR (...); not handled") or another file there
  /// now ("<path>: changed by another process since ...; not handled").
  std::optional<WalkedFile> expect_file;
  /// Bound on a decompressed module image in bytes (default 1 GiB); a file read whole is
  /// also refused above max(max_size, 1 GiB).
  std::uint64_t max_size = kMaxModuleSize;
  /// The ML-DSA signing library: "auto" (the faster one as measured, Botan, for a key with
  /// its seed; OpenSSL otherwise), "openssl" or "botan" (needs a key with its seed).  RSA
  /// and ECDSA always sign with OpenSSL.
  std::string backend = "auto";
  /// Reproducible signatures: ML-DSA in the FIPS 204 deterministic variant (rnd = 32 zero
  /// bytes, Alg. 2 line 5) and ECDSA with RFC 6979 nonces, so signing the same module
  /// twice gives the same bytes (RSA PKCS#1 v1.5 always does).  Default off: hedged
  /// ML-DSA and random ECDSA nonces resist fault and side-channel attacks better (FIPS 204
  /// §3.4).  Applies on every path (in memory, streaming, with either backend).
  bool deterministic = false;
};

/// What a signing call did.  Sizes in bytes.
struct SignReport {
  std::string path;       ///< the file named as the result: OUT (or the input), OUT.p7s with p7s_only
  std::string algorithm;  ///< Signer::algorithm(), e.g. "ML-DSA-65"
  std::string hash;       ///< the digest name, e.g. "sha512"
  bool signed_attrs = false;
  std::size_t cms_size = 0;                ///< bytes of the DER ContentInfo(SignedData)
  bool streamed = false;                   ///< signed in one streaming pass (stream_above)
  bool external_mu = false;                ///< streamed ML-DSA without signedAttrs: signed from μ
  std::string recompressed;                ///< "xz", "zstd" or "gzip" when the output was recompressed, else ""
  std::uint64_t bytes_read = 0;            ///< bytes of the module file as stored
  std::vector<std::string> files_written;  ///< in order: the module (unless p7s_only), OUT.p7s
  /// Notes for the user, one line each: with replace, legacy_note per legacy trailer
  /// removed ("note: removed a legacy trailer (id_type 1 X509, algo 0, hash 0, signer_len 0,
  /// key_id_len 0): the kernel refuses it (mod_check_sig)") and "note: replaced N stacked
  /// signatures" for N > 1 (not on the streaming path); with raw, for a compressed module "note: xz-compressed
  /// module: signed the decompressed image (what the kernel checks) and compressed it
  /// again as xz", or with p7s_only "note: xz-compressed module: the signature covers the
  /// decompressed image (what the kernel checks)" (the format named).
  std::vector<std::string> notes;
  /// attach_signature_file() only: the module already carried exactly the SignedData this
  /// signature makes (an attach run again after a partial failure); nothing was written
  /// (files_written empty).
  bool already_attached = false;
};

/// Checks that `options` can be honoured with `signer` before any module is read:
/// throws SignError unknown_hash ("unknown hash 'X'"), mldsa_signed_attrs_hash ("ML-DSA
/// with signedAttrs needs sha512 (kernels refuse any other digest there)"), no_skid
/// ("<certificate_path>: certificate has no subjectKeyIdentifier"), backend_needs_seed
/// ("<key_path>: the botan backend needs an ML-DSA key with its seed (RFC 9881 seed or
/// both form)"), or UsageError for a backend other than auto, openssl and botan.
MODSIGN_API void check_sign_options(const Signer& signer, const SignOptions& options);
/// The kernels whose module check accepts the form `signer` and `options` make (trust in the
/// signer aside): the names ModuleSignatureInfo::accepted_by uses ("v6.1", "v6", "v7.0",
/// "v7.0+waiver"), in that order.  Judged by the mirrors (pkcs7_parse_message, pkcs7_verify's
/// module usage) on a signature of an empty module: one signing operation (a token signs
/// once).  Empty for a form no kernel loads, e.g. RSA or ECDSA with signed_attrs
/// (EKEYREJECTED, "Invalid module sig (has authattrs)"); only "v7.0+waiver" for ML-DSA with
/// signed_attrs.  Throws as sign_module_image().
MODSIGN_API std::vector<std::string> kernels_accepting_form(const Signer& signer, const SignOptions& options);
/// The checks of check_sign_options() that need no key (unknown_hash, the backend name),
/// for a caller that wants them before loading one.
MODSIGN_API void check_sign_options(const SignOptions& options);

/// Sign the module at `path`: module ‖ SignedData ‖ struct module_signature (12 bytes,
/// id_type PKEY_ID_PKCS7, sig_len big-endian) ‖ "~Module signature appended~\n" replaces
/// OUT atomically (a temporary file in the same directory, then rename; mode, owner and
/// group kept when replacing).  The SignedData is detached, holds no certificates and one
/// SignerInfo, byte for byte sign-file's structure with OpenSSL 3.x.  `route` decides when
/// the outputs are fsynced and renamed (output.hpp): by default each before the call
/// returns; with a batch, by its policy as outputs of route.item.
/// Throws IoError when the module cannot be read (or is larger than 1 GiB) or an output
/// cannot be written; SignError as check_sign_options() (with "<path>: " before the
/// unknown_hash and mldsa_signed_attrs_hash messages), and "<path>: module is already
/// signed" (already_signed), "<path>: xz-compressed module: set recompress, or
/// decompress it, sign the .ko, then recompress it" (compressed; the format named), "<path>: xz-compressed module:
/// <reason>" for a stream that does not decompress within max_size, "<path>: cannot strip
/// the existing signature: <ERRNO> <reason>" for a replace whose old signature is
/// malformed, "<path>: <reason>" when signing fails.  On a throw no output is touched.
MODSIGN_API SignReport sign_module_file(const Signer& signer, const std::string& path, const SignOptions& options = {},
                                        const OutputRoute& route = {});

/// A module signed in memory.
struct SignedImage {
  Bytes module;       ///< the signed module, recompressed when the input was compressed
  Bytes cms;          ///< the DER ContentInfo(SignedData) appended (what OUT.p7s holds)
  SignReport report;  ///< path and files_written empty; streamed false
};
/// sign_module_file() for module bytes already in memory (`image` as a file holds them;
/// out, p7s, p7s_only and stream_above are ignored, nothing is written).  Throws as
/// sign_module_file(), the messages without the "<path>: " prefix.
MODSIGN_API SignedImage sign_module_image(const Signer& signer, ByteView image, const SignOptions& options = {});

/// Append the ready-made PKCS#7 in the file `cms_path` (DER) to the module
/// at `path` as sign-file -s does (no check of either), writing `out` ("" = in place).
/// Both files are read whole (at most 1 GiB each).
/// Returns the file written (put in place as `route` says, as sign_module_file()).  Throws
/// IoError.
MODSIGN_API std::string append_signature_file(const std::string& path, const std::string& cms_path,
                                              const std::string& out = "", const OutputRoute& route = {});

/// True when sign_module_file() would stream the file at `path`: a regular file larger
/// than `threshold` bytes that is not compressed.  One stat() decides for a small file;
/// a file that cannot be read is not streamable (the whole-file path reports it).
MODSIGN_API bool streamable_module_file(const std::string& path, std::uint64_t threshold);

/// How strip_module_file() writes.
struct StripOptions {
  /// Strip a compressed module and compress the result again in the same format;
  /// without it a compressed module is refused (SignRefusal::compressed).
  bool recompress = false;
  std::string out;                          ///< write here instead of replacing `path` ("" = in place)
  std::optional<WalkedFile> expect_file;    ///< as SignOptions::expect_file
  std::uint64_t max_size = kMaxModuleSize;  ///< bound on the decompressed image
  /// Remove every stacked signature (module_signature trailers one inside the other), not
  /// only the outermost.
  bool all = false;
  /// Strip a legacy trailer (SignOptions::legacy) too, with a note, instead of refusing it.
  bool legacy = false;
};
/// What strip_module_file() did.
struct StripReport {
  std::string path;          ///< the file written (out, or the input); the input when unsigned
  bool was_signed = false;   ///< false: no marker, nothing written
  std::size_t cms_size = 0;  ///< bytes of the removed PKCS#7 (all of them with `all`)
  std::string recompressed;  ///< the format when the output was recompressed, else ""
  std::uint64_t bytes_read = 0;
  std::vector<std::string> files_written;
  std::size_t signatures_removed = 0;  ///< trailers removed (1, or the stack's depth with `all`)
  std::uint64_t content_size = 0;      ///< bytes left (the decompressed image) when was_signed
  /// "note: removed a legacy trailer (id_type 1 X509, algo 0, hash 0, signer_len 0,
  /// key_id_len 0): the kernel refuses it (mod_check_sig)" per legacy trailer; without
  /// `all`, "note: 1 more signature inside (strip --all removes them)" ("N more
  /// signatures") when signatures remain.
  std::vector<std::string> notes;
};
/// Remove the appended signature (marker, struct module_signature and PKCS#7) of the module
/// at `path` (every stacked one with `all`), leaving the content sign-file signed.  Throws IoError (read/write);
/// SignError "<path>: xz-compressed module: set recompress to strip it" (compressed;
/// checked before the marker), "<path>: xz-compressed module: <reason>" for a stream that does not
/// decompress, "<path>: cannot strip the signature: <ERRNO> <reason>" (other) for a
/// malformed trailer (mod_check_sig() rules, kernel/module_signature.c) and, without
/// `legacy`, for one whose sig_len is 0 ("EBADMSG the appended signature is empty (sig_len
/// 0) (strip --legacy removes such a trailer)", as describe_signature() and
/// extract_signature() refuse it; with `legacy` it is removed with a note).  The output is
/// put in place as `route` says, as sign_module_file().
MODSIGN_API StripReport strip_module_file(const std::string& path, const StripOptions& options = {},
                                          const OutputRoute& route = {});

/// The appended PKCS#7 (DER) of the module at `path` (decompressed first when compressed,
/// within `max_size`).  Throws IoError; InputError "<path>: <ERRNO>: <reason>" when there is
/// no well-formed signature (ENODATA: no marker; EBADMSG: bad trailer), or
/// "<path>: xz-compressed module: <reason>".
MODSIGN_API Bytes extract_signature(const std::string& path, std::uint64_t max_size = kMaxModuleSize);
/// What extract_signature_file() wrote.
struct ExtractReport {
  std::string path;          ///< the file written
  std::size_t cms_size = 0;  ///< its size: bytes of PKCS#7
};
/// extract_signature() written to `out` ("" = <path>.p7s; mode 0644; put in place as
/// `route` says, as sign_module_file()).  Throws as
/// extract_signature(), and IoError when writing fails.
MODSIGN_API ExtractReport extract_signature_file(const std::string& path, const std::string& out = "",
                                                 std::uint64_t max_size = kMaxModuleSize,
                                                 const OutputRoute& route = {});

}  // namespace modsign
