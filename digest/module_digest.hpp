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
#include "modsign/digest_types.hpp"

namespace modsign::digest {

/// Several hashes over one stream of bytes (OpenSSL EVP), updated together.
class MultiHash {
 public:
  /// Adds `a` unless present; returns its position.
  std::size_t add(crypto::HashAlgo a);
  /// Adds a digest HashAlgo leaves out by the kernel's name (SM3, Streebog), unless present;
  /// false when Botan cannot compute it.
  bool add_kernel_only(const std::string& name);
  void update(ByteView data);
  /// Digests in the order added; call once.  The kernel-only ones are in named() after it.
  std::vector<Bytes> final();
  const std::vector<crypto::HashAlgo>& algos() const { return algos_; }
  /// (kernel hash name, digest) of each add_kernel_only(), after final().
  const std::vector<std::pair<std::string, Bytes>>& named() const { return named_digests_; }

 private:
  std::vector<crypto::HashAlgo> algos_;
  std::vector<std::unique_ptr<crypto::Hasher>> hashers_;
  std::vector<std::pair<std::string, std::unique_ptr<crypto::botan::KernelOnlyHasher>>> named_;
  std::vector<std::pair<std::string, Bytes>> named_digests_;
};

/// pkcs7_get_digest() as IMA calls it and everything `modsign digest` reports for one
/// module: defined once, in the public include/modsign/digest_types.hpp.
using KernelDigestResult = modsign::KernelDigestResult;
using ModuleDigests = modsign::ModuleDigests;

/// Compute ModuleDigests for a module file, reading it once in 1 MiB chunks (pread;
/// only the trailer and the PKCS#7 are held in memory).  Compressed modules are
/// decompressed (bounded by `max_size`) and handled in memory.  Errors: I/O failures
/// throw IoError; a broken compressed stream returns its Error (EINVAL).
Result<ModuleDigests> digest_module_file(const std::string& path, const cms::KernelModel& profile,
                                         std::uint64_t max_size);

/// The same over bytes already in memory (the image, decompressed).
ModuleDigests digest_module_image(ByteView image, const cms::KernelModel& profile);

/// The d-ng / d-modsig field encoding: "<algo>:" '\0' <digest> (ima_template_lib.c).
Bytes ima_digest_field(const std::string& algo, ByteView digest);

}  // namespace modsign::digest
