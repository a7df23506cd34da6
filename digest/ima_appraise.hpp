// mirrors security/integrity/ima/ima_appraise.c ima_get_hash_algo, xattr_verify, ima_check_blacklist,
// ima_appraise_measurement (the security.ima and modsig paths), with the MODULE_CHECK reads of kernel/module/main.c
// init_module_from_file and ima_main.c process_measurement, Linux 7.2.13 What IMA's MODULE_CHECK hook appraises for a
// module file, and its verdict on a modsig.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "cms/kernel_model.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"
#include "digest/hash_info.hpp"
#include "digest/ima_policy.hpp"
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
bool ima_appraises_decompressed_image(const cms::KernelModel& profile);

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
ImaModuleRead ima_module_read(const module::ModuleImage& m, const cms::KernelModel& profile);

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
/// -1. an empty file, which kernel_read_file() refuses before IMA is asked: "empty", EINVAL;
/// 0. 7.x and a stream module_decompress() refuses: "decompress", EINVAL;
/// 1. ima_check_blacklist(): `check_blacklist` is asked for a listed key (the blacklist
///    layer knows which key and where it came from); a hit is "blacklisted", EPERM, and
///    the blacklisted-hash ima-buf record under `ima_hash`;
/// 2. ima_read_modsig() on the bytes ima_module_read() names: none (40 bytes or fewer, no
///    marker: ENOENT; a bad module_signature: mod_check_sig's errno; an unparsable PKCS#7)
///    is "no-modsig"; then ima_modsig_verify() against `keyring`: a failure is
///    "invalid-signature".  finit_module returns EACCES for IMA's refusals.
modsign::Appraisal ima_appraise_modsig(const ModuleFile& f, const cms::Keyring& keyring,
                                       const cms::KernelModel& profile, crypto::HashAlgo ima_hash,
                                       const std::function<std::optional<ImaBlacklistHit>()>& check_blacklist);

// ---- security.ima (appraise_type=imasig|sigv3) ---------------------------------------

/// ima_get_hash_algo(): the enum hash_algo IMA collects the file with for the value
/// `xattr` (nullopt: none): a type 0x03 value of more than 9 bytes with version 2 or 3, or
/// a type 0x06 value with version 3, names it in hash_algo (when < HASH_ALGO__LAST); a
/// type 0x04 (digest-ng) value in its second byte; a type 0x01 value of 17 bytes is md5,
/// of 21 bytes md5 or sha1; otherwise `ima_hash_algo` (the ima_hash= default).
/// `sigv3_files` false: a kernel before 7.1, whose ima_get_hash_algo() takes only version 2
/// from a type 0x03 value (a version 3 one leaves `ima_hash_algo`).
std::uint8_t ima_get_hash_algo(const std::optional<Bytes>& xattr, std::uint8_t ima_hash_algo,
                               std::uint8_t hash_algo_last = kHashAlgoLast, bool sigv3_files = true);
/// The same for the `profile` kernel: its HASH_ALGO__LAST (hash_algo_last()) and whether it
/// appraises sigv3 file signatures (ima_sigv3_file_signatures(): 7.1 and later).
std::uint8_t ima_get_hash_algo(const std::optional<Bytes>& xattr, std::uint8_t ima_hash_algo,
                               const cms::KernelModel& profile);

/// The verdict when the rule itself is refused (ima_parse_appraise_rule's error).
modsign::ImaFileAppraisal ima_rule_refused(std::string_view func, std::string_view type, const Error& e);

/// What an enforcing appraise rule with `flags` does on `profile` for a file whose digest
/// under `algo` (ima_get_hash_algo()) is `file_digest` and whose security.ima is `xattr`,
/// with the .ima keyring `keyring` and its .blacklist, in the kernel's order:
/// 1. ima_check_blacklist(): "bin:<file digest>" listed: EPERM, "blacklisted";
/// 2. no value or an empty one: "IMA-signature-required";
/// 3. xattr_verify(): 0x01/0x04 digests: "IMA-signature-required"; 0x03: version > 3
///    "invalid-signature-version" (version 3 before 7.1 too), sigv3 required and version
///    != 3 "IMA-sigv3-required", then integrity_digsig_verify(): EOPNOTSUPP leaves the
///    status unknown ("unknown"), any other errno is "invalid-signature"; 0x06 (fs-verity)
///    "IMA-signature-required"; other types "unknown-ima-data".
/// Every refusal makes open(2) fail with EACCES.  An appended signature (imasig|modsig) is
/// not looked for here (ima_appraise_modsig() does that for modules).  `backend`: the
/// library of an ML-DSA check (the same verdicts).
modsign::ImaFileAppraisal ima_appraise_xattr(const std::optional<Bytes>& xattr, ByteView file_digest, std::uint8_t algo,
                                             const ImaRuleFlags& flags, const cms::Keyring& keyring,
                                             const cms::KernelModel& profile,
                                             crypto::Backend backend = crypto::Backend::automatic);

}  // namespace modsign::digest
