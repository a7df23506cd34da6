// modsign — what a kernel does when a signed module is loaded: init_module's signature
// check (kernel/module/signing.c module_sig_check, mod_verify_sig;
// kernel/module_signature.c mod_check_sig; certs/system_keyring.c verify_pkcs7_signature;
// Linux 7.2.13), predicted errno for errno.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/load_verdict.hpp"
#include "modsign/module.hpp"
#include "modsign/profile.hpp"
#include "modsign/result.hpp"
#include "modsign/tree.hpp"
#include "modsign/trust.hpp"

namespace modsign {

struct PredictOptions {
  /// Bound on the decompressed image, bytes (OpenOptions::max_size).
  std::uint64_t max_size = kMaxModuleSize;
  /// An uncompressed regular file larger than this many bytes is read in one streaming
  /// pass (1 MiB chunks, constant memory) instead of into memory; same verdict.
  std::uint64_t stream_above = std::uint64_t{64} << 20;
  /// Verification backend for ML-DSA: "auto" (the library measured faster for
  /// verification, Botan; OpenSSL for the external-μ form of a streamed module), "openssl"
  /// or "botan"; every other algorithm always uses OpenSSL.  Same verdicts.  Another name
  /// is a UsageError "unknown backend 'X' (auto|openssl|botan)".
  std::string backend = "auto";
  /// A compressed stream that does not decompress at all (corrupt, truncated) is the
  /// kernel's EINVAL verdict (step 1) instead of an InputError (`modsign verify` keeps
  /// the InputError: such a file is reported as bad input, exit 3).
  bool keep_bad_stream = false;
  /// The file a walk of -r DIR (or a batch, for a path it was given) found at the path
  /// (WalkedFile): it is opened once and read from there; a symbolic link on the way or
  /// another file at the path now is refused as SignOptions::expect_file says.
  std::optional<WalkedFile> expect_file;
};

/// Predict init_module for the module file at `path`, as the kernel of `profile` loading
/// it with the keys of `trust` (finit_module, as kmod loads modules):
///  0. an empty file is refused with EINVAL before anything else (kernel_read_file: outcome
///     refused, err/sig_errno/load_errno EINVAL), enforcement or not;
///  1. a compressed file is decompressed first (module_decompress); a stream the kernel
///     cannot decompress refuses the module with EINVAL before any signature check
///     (outcome refused, err/sig_errno/load_errno EINVAL, reason = the problem); bytes
///     after the end of the stream are ignored, as module_decompress() stops there (the
///     verdict is the decompressed image's; Verdict::compression->bytes_after_stream
///     counts them, signature_after_stream says a signature appended there is never seen);
///  2. the trailer is checked as mod_check_sig does (no marker: ENODATA; a malformed
///     struct module_signature: EBADMSG), the PKCS#7 parsed, verified over the image and
///     its signer looked up in `trust` (verify_pkcs7_signature: unknown algorithms ENOPKG,
///     untrusted signer ENOKEY, a bad signature or messageDigest, a revoked or tbs:-listed
///     signer EKEYREJECTED, ...);
///  3. module_sig_check: ENODATA/ENOPKG/ENOKEY are soft (see Verdict).
/// Mainline behaviour: Debian's kernels also try the platform keyring (UEFI db, MOK) on
/// ENOKEY, which is not modelled.  Throws IoError when the file cannot be read;
/// InputError "<path>: <format>-compressed module: <reason>" for a file over a bound
/// (max_size, zstd window) or, without keep_bad_stream, a stream that does not decompress.
MODSIGN_API Verdict predict_module_file(const std::string& path, const TrustStore& trust, const KernelProfile& profile,
                                        const PredictOptions& options);

/// The same with the default options, except that a compressed module is an InputError
/// "<path>: <format>-compressed module: the kernel checks the decompressed image;
/// decompress it first" (the first facade's behaviour, kept).
MODSIGN_API Verdict predict_module_file(const std::string& path, const TrustStore& trust, const KernelProfile& profile);

/// Steps 1-3 for a module already read (open_module_file, with keep_bad_stream for step
/// 1's prediction).  `backend` as PredictOptions::backend.  Never throws for module
/// content (std::bad_alloc aside); UsageError for an unknown backend name.
MODSIGN_API Verdict predict_module_image(const ModuleImage& module, const TrustStore& trust,
                                         const KernelProfile& profile, const std::string& backend = "auto");

}  // namespace modsign
