// modsign — the data of include/modsign/digest.hpp: KernelDigestResult, ModuleDigests, DigestView.
// Plain data only (no KernelProfile, no functions), so that the library's internal layers
// can use these definitions without the facade's names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "modsign/result.hpp"

namespace modsign {

/// pkcs7_get_digest() as IMA calls it for an appended signature, under one kernel profile.
struct KernelDigestResult {
  /// KErr::none, or why IMA has no digest: ENOENT (no appended signature), the trailer's
  /// or pkcs7_parse_message's errno (EBADMSG, ENOPKG, EMSGSIZE for a PKCS#7 over 65535
  /// bytes ...), EINVAL (7.0 ML-DSA without signedAttrs; or a PKCS#7 with attached content,
  /// to which ima_collect_modsig cannot supply the file), EBADMSG (several signers).
  KErr status = KErr::none;
  std::string reason;           ///< the kernel's wording plus detail ("" when status is none)
  std::string algo;             ///< kernel hash name ("sha256"), when status is none
  Bytes bytes;                  ///< the digest IMA gets (for 7.0 ML-DSA with signedAttrs: the re-tagged signedAttrs)
  bool over_content = false;    ///< `bytes` is a hash of the module content (no signedAttrs)
  bool raw_attributes = false;  ///< 7.0 ML-DSA with signedAttrs: `bytes` are the re-tagged attributes, not a digest
};

/// The digests of one module file.
struct ModuleDigests {
  bool signed_module = false;  ///< the file ends in a module_signature trailer IMA accepts
  /// ima_read_modsig() succeeded: marker, module_signature and PKCS#7 parse all fine.
  /// (When it fails IMA simply has no modsig: no d-modsig and no modsig field.)
  bool modsig_parsed = false;
  std::uint64_t content_length = 0;  ///< bytes the signature covers (the whole image if unsigned)
  Bytes side_sha256;                 ///< SHA-256 of those bytes (32 bytes), always
  KernelDigestResult kernel;
  /// The IMA d-modsig field, "<algo>:" '\0' <digest> (ima_eventdigest_modsig_init);
  /// nullopt when IMA records none.
  std::optional<Bytes> d_modsig;
  /// A "bin:" entry can stop the module through its d-modsig digest: ima_check_blacklist()
  /// looks up that digest, and an entry holds at most 128 hex digits (64 bytes), so the
  /// raw attribute blob of 7.0 ML-DSA with signedAttrs never matches.
  bool blacklist_visible = false;
  /// The file is xz/zstd/gzip-compressed: the fields above describe its decompressed image,
  /// except under a v6 profile, where IMA reads only the compressed file, which carries no
  /// appended signature (kernel status ENOENT, no d-modsig).
  bool compressed = false;
  /// Size of the file as stored, bytes (0 when the digests were taken over bytes in memory).
  std::uint64_t file_size = 0;
  /// SHA-256 of the whole file as stored (trailer included; for a compressed module the
  /// compressed bytes): IMA's file hash with ima_hash=sha256.  Empty when the digests were
  /// taken over bytes in memory rather than a file.
  Bytes file_sha256;
};

/// What `modsign digest` reports for a module: its digests and the bin: key that stops it.
struct DigestView {
  ModuleDigests digests;
  /// Where the "bin:" key ima_check_blacklist() looks up comes from.
  enum class BinSource {
    d_modsig,  ///< the d-modsig digest (blacklist_visible)
    ima_hash,  ///< no modsig IMA can use: IMA's hash of the whole file (here SHA-256, ima_hash=sha256)
    none,      ///< IMA has a modsig but no usable digest: no bin: entry can stop the module
    not_read,  ///< an empty file: finit_module refuses it (kernel_read_file, EINVAL) before IMA
               ///< reads it, so no bin: entry is ever looked up
  };
  BinSource bin_source = BinSource::none;
  /// "bin:<lower-case hex>" of that key; nullopt for BinSource::none and not_read.
  std::optional<std::string> bin_entry;
};

}  // namespace modsign
