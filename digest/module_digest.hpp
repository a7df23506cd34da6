// modsign — digests of a module as the kernel and IMA take them, plus the side SHA-256.
//
// One pass over the signed content feeds every hash that is needed at once, in fixed-size
// chunks, so memory use does not grow with the module (uncompressed modules; compressed
// ones are decompressed in memory first).  The kernel's own digest comes from the
// kernel mirror (pkcs7_get_digest, cms/kernel.hpp) fed with these precomputed digests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cms/kernel.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::digest {

/// Several hashes over one stream of bytes (OpenSSL EVP), updated together.
class MultiHash {
 public:
  /// Adds `a` unless present; returns its position.
  std::size_t add(crypto::HashAlgo a);
  void update(ByteView data);
  /// Digests in the order added; call once.
  std::vector<Bytes> final();
  const std::vector<crypto::HashAlgo>& algos() const { return algos_; }

 private:
  std::vector<crypto::HashAlgo> algos_;
  std::vector<std::unique_ptr<crypto::Hasher>> hashers_;
};

/// pkcs7_get_digest() as IMA calls it for an appended signature (ima_read_modsig +
/// ima_collect_modsig), under one kernel profile.
struct KernelDigestResult {
  KErr status = KErr::none;  ///< none, or ENOENT (no modsig), the trailer's/parser's errno, EINVAL (7.0 ML-DSA; or a PKCS#7 with attached content, which ima_collect_modsig cannot supply data to) ...
  std::string reason;
  std::string algo;          ///< kernel hash name ("sha256"), when status is none
  Bytes bytes;               ///< the digest IMA gets (the re-tagged attributes for 7.0 ML-DSA + signedAttrs)
  bool over_content = false; ///< true when `bytes` is a hash of the module content (no signedAttrs)
  bool raw_attributes = false;  ///< 7.0 ML-DSA with signedAttrs: `bytes` are the re-tagged attributes
};

/// Everything `modsign digest` reports for one module.
struct ModuleDigests {
  bool signed_module = false;
  /// ima_read_modsig succeeded: marker, module_signature and PKCS#7 parse all fine.
  /// (When it fails IMA simply has no modsig: empty d-modsig and modsig fields.)
  bool modsig_parsed = false;
  std::uint64_t content_length = 0;  ///< bytes the signature covers (whole file if unsigned)
  Bytes side_sha256;                 ///< SHA-256 of those bytes, always
  KernelDigestResult kernel;
  /// The IMA d-modsig template field: "<algo>:" '\0' <digest>
  /// (ima_template_lib.c ima_eventdigest_modsig_init), nullopt when IMA records none.
  std::optional<Bytes> d_modsig;
  /// True when a `bin:` blacklist entry can stop this module under the profile
  /// (ima_check_blacklist looks up the d-modsig digest; an entry holds at most 128 hex
  /// digits, so the raw attribute blob of 7.0 ML-DSA with signedAttrs can never match).
  bool blacklist_visible = false;
  /// The file is xz/zstd/gzip-compressed; the fields above describe its decompressed image,
  /// except under a v6 profile, where IMA reads only the compressed file: no modsig there
  /// (kernel ENOENT, no d-modsig), as blacklist::module_entry() has it.
  bool compressed = false;
  /// SHA-256 of the whole file as stored (signature trailer included; the compressed bytes
  /// of a compressed module): the key ima_check_blacklist() looks up, with ima_hash=sha256,
  /// when IMA has no modsig it can use (!modsig_parsed).  Set by digest_module_file() only
  /// (on the reads it already makes); digest_module_image() leaves it empty, as its callers
  /// hash the file themselves when they need to.
  Bytes file_sha256;
};

/// Compute ModuleDigests for a module file, reading it once in 1 MiB chunks (pread;
/// only the trailer and the PKCS#7 are held in memory).  Compressed modules are
/// decompressed (bounded by `max_size`) and handled in memory.  Errors: I/O failures
/// throw IoError; a broken compressed stream returns its Error (EINVAL).
Result<ModuleDigests> digest_module_file(const std::string& path, const kernel::KernelProfile& profile,
                                         std::uint64_t max_size);

/// The same over bytes already in memory (the image, decompressed).
ModuleDigests digest_module_image(ByteView image, const kernel::KernelProfile& profile);

/// The d-ng / d-modsig field encoding: "<algo>:" '\0' <digest> (ima_template_lib.c).
Bytes ima_digest_field(const std::string& algo, ByteView digest);

}  // namespace modsign::digest
