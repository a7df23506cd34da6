// modsign — a module file as the kernel sees it: how it is stored (plain, xz, zstd, gzip;
// kernel/module/decompress.c module_decompress, Linux 7.2.13), the image the signature
// check reads, and what its appended signature holds (what modinfo shows: sig_id, signer,
// sig_key, sig_hashalgo, signature; scripts/sign-file.c, kernel/module_signature.c).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/module_image.hpp"
#include "modsign/profile.hpp"
#include "modsign/result.hpp"

namespace modsign {

struct OpenOptions {
  /// Bound on the decompressed image in bytes; a file that decompresses to more is an
  /// InputError ("decompressed size exceeds ...").
  std::uint64_t max_size = kMaxModuleSize;
  /// A compressed file whose stream does not decompress (corrupt, truncated) is returned
  /// with an empty image and the reason in kernel_decompress_problem (a prediction: the
  /// kernel refuses it with EINVAL) instead of throwing.  modsign's own bounds (max_size,
  /// the zstd window limit) still throw.
  bool keep_bad_stream = false;
  /// Read a compressed file as module_decompress() does: bytes after the end of the
  /// stream are ignored and counted in ModuleImage::bytes_after_stream, instead of an
  /// InputError "<N> bytes of trailing data after the xz stream".
  bool ignore_after_stream = false;
};

/// A module file: the bytes as stored and the image.
struct ModuleFile {
  std::string path;
  Bytes stored;   ///< the file as stored (at most max(max_size, 1 GiB) bytes)
  ModuleImage m;  ///< the decompressed image and how it was stored
};

/// Read `path` and, if compressed, decompress it as module_decompress() would.
/// Throws IoError "<path>: <reason>" when it cannot be read (also: not a regular file, or
/// larger than max(max_size, 1 GiB)); InputError "<path>: <format>-compressed module:
/// <reason>" for a stream that does not decompress (unless keep_bad_stream) or exceeds a
/// bound.  `profile` is the kernel whose decompressor is modelled (the same for every
/// generation today).
MODSIGN_API ModuleFile open_module_file(const std::string& path, const KernelProfile& profile,
                                        const OpenOptions& options = {});

/// What the module's appended signature holds, as modinfo and `modsign info` show it.
struct SignatureInfo {
  bool is_signed = false;        ///< the "~Module signature appended~\n" marker is there
  std::uint64_t image_size = 0;  ///< bytes of the (decompressed) image
  // The rest is filled in for a signed module only.
  std::string sig_id;               ///< "PKCS#7" (struct module_signature id_type 2)
  std::string signer;               ///< issuer CN of an issuerAndSerialNumber SignerInfo; "" for SKID
  std::string sig_key;              ///< serial number or subjectKeyIdentifier, colon hex ("0A:1B")
  std::string sig_hashalgo;         ///< digest algorithm name ("sha256") or its OID
  std::string signature;            ///< the signature value, colon hex
  std::string signer_id_type;       ///< "issuerAndSerialNumber" or "subjectKeyIdentifier"
  std::string signature_algorithm;  ///< "RSA", "ECDSA", "ML-DSA-65", ... or the OID
  bool signed_attrs = false;        ///< the first SignerInfo carries signedAttrs
  std::size_t signer_infos = 0, certificates = 0;
  std::size_t cms_length = 0;        ///< bytes of the SignedData
  std::size_t signature_length = 0;  ///< bytes of the first SignerInfo's signature
  std::size_t content_length = 0;    ///< bytes the signature covers (the whole image when unsigned)
  /// The kernels whose PKCS#7 parser and module-usage checks (pkcs7_parse_message,
  /// pkcs7_verify; trust in the signer aside) accept the signature, from "v6.1", "v6",
  /// "v7.0", "v7.0+waiver" (CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA), in that
  /// order: every profile `verify --kernel` knows.
  std::vector<std::string> accepted_by;
};

/// Describe the first SignerInfo of the module's signature (the one modinfo shows).
/// Unsigned module: is_signed false, content_length = image size.  Throws InputError
/// "<path>: <ERRNO>: <reason>" for a malformed trailer (mod_check_sig: EBADMSG), an empty
/// signature ("<path>: EBADMSG: the appended signature is empty (sig_len 0)") or
/// SignedData, and "<path>: PKCS#7 has no SignerInfo".
MODSIGN_API SignatureInfo describe_signature(const ModuleFile& module);

/// Every signature stacked in the module, outermost first (the one the kernel checks),
/// then each one the outer signature covers (a module signed again by scripts/sign-file,
/// which signs over the old signature): entry i describes the image with the i outer
/// signatures removed, its content_length the offset of its PKCS#7 in the image.  The walk
/// (modsign's own; the kernel reads only the outermost) stops at the first content whose
/// trailer does not split (module/module_signature split_stack).  One entry (is_signed
/// false) for an unsigned module.  Throws as describe_signature().
MODSIGN_API std::vector<SignatureInfo> describe_signatures(const ModuleFile& module);

}  // namespace modsign
