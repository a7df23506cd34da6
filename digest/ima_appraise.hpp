// mirrors security/integrity/ima/ima_appraise.c ima_check_blacklist, ima_appraise_measurement (the modsig path), with the MODULE_CHECK reads of kernel/module/main.c init_module_from_file and ima_main.c process_measurement, Linux 7.2.13
// What IMA's MODULE_CHECK hook appraises for a module file, and its verdict on a modsig.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "cms/kernel_profile.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"
#include "modsign/digest_types.hpp"
#include "modsign/ima_types.hpp"
#include "module/decompress.hpp"

namespace modsign::digest {

/// finit_module(MODULE_INIT_COMPRESSED_FILE) of a compressed module: true on 7.x, where
/// init_module_from_file() reads the file with READING_MODULE_COMPRESSED (for which
/// process_measurement() only collects IMA's file hash and defers), decompresses it, and
/// hands the decompressed image to the MODULE_CHECK hook; false before 7.0 (v6), where IMA
/// appraises and measures the compressed file as read, which carries no appended signature
/// (the signature sits inside the compressed stream).  The one place this rule is decided.
bool ima_appraises_decompressed_image(const kernel::KernelProfile& profile);

/// The reason given when, under v6, IMA has no modsig because it reads the compressed file.
inline constexpr std::string_view kImaReadsCompressedFile =
    "under v6 IMA reads the compressed file, which has no appended signature";

/// Which bytes IMA's MODULE_CHECK hook sees for a module read as `m`.
enum class ImaModuleRead {
  file,                ///< uncompressed: the file as read
  image,               ///< 7.x, compressed: the decompressed image
  compressed_file,     ///< v6, compressed: the compressed file as read (no modsig there)
  decompress_refused,  ///< 7.x, compressed, module_decompress() refuses the stream: finit_module
                       ///< fails with EINVAL and IMA never appraises
};
ImaModuleRead ima_module_read(const module::ModuleImage& m, const kernel::KernelProfile& profile);

/// A module as finit_module() reads it: the stored bytes and the image.  A compressed
/// stream the kernel's module_decompress() refuses (corrupt, truncated, an xz check other
/// than CRC32/none) is a prediction, not an input error: it comes back with an empty image
/// and the problem in m.kernel_decompress_problem ("xz-compressed module: <why>").
struct ModuleFile {
  Bytes stored;
  module::ModuleImage m;
};
/// Read `path` (at most max(max_size, kMaxModuleSize) bytes) and decompress it.  Throws
/// IoError when it cannot be read; InputError "<path>: <format>-compressed module: <why>"
/// when decompression stops at modsign's own bounds (`max_size`, the zstd window limit).
ModuleFile read_module_file(const std::string& path, std::uint64_t max_size);

/// The "bin:" key ima_check_blacklist() looks up for a module with digests `d` (taken on
/// the bytes IMA sees): the d-modsig digest when a bin: entry can match it; IMA's file
/// hash (`file_hash`, of the whole file as stored) when IMA has no modsig it can use;
/// none when it has a modsig without a usable digest.
struct ImaBlacklistKey {
  DigestView::BinSource source = DigestView::BinSource::none;
  std::optional<std::string> entry;  ///< "bin:<hex>"
};
ImaBlacklistKey ima_blacklist_key(const ModuleDigests& d, ByteView file_hash);

/// A bin: entry ima_check_blacklist() found listed: the entry, is_binary_blacklisted()'s
/// EPERM, and the buffer of the "blacklisted-hash" record (the modsig digest).
struct ImaBlacklistHit {
  std::string entry;
  KErr err = KErr::eperm;
  Bytes ima_buffer;
};

/// The appraisal of one module under an enforcing "appraise func=MODULE_CHECK
/// appraise_type=imasig|modsig" rule without security.ima, in the kernel's order:
/// 0. 7.x and a stream module_decompress() refuses: "decompress", EINVAL;
/// 1. ima_check_blacklist(): `check_blacklist` is asked for a listed key (the blacklist
///    layer knows which key and where it came from); a hit is "blacklisted", EPERM, and
///    the blacklisted-hash ima-buf record under `ima_hash`;
/// 2. ima_read_modsig() on the bytes ima_module_read() names: none (40 bytes or fewer, no
///    marker: ENOENT; a bad module_signature: mod_check_sig's errno; an unparsable PKCS#7)
///    is "no-modsig"; then ima_modsig_verify() against `keyring`: a failure is
///    "invalid-signature".  finit_module returns EACCES for IMA's refusals.
modsign::Appraisal ima_appraise_modsig(const ModuleFile& f, const kernel::Keyring& keyring,
                                       const kernel::KernelProfile& profile, crypto::HashAlgo ima_hash,
                                       const std::function<std::optional<ImaBlacklistHit>()>& check_blacklist);

}  // namespace modsign::digest
