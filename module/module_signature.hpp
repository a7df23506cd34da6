// mirrors kernel/module_signature.c mod_check_sig and include/linux/module_signature.h struct module_signature,
// Linux 7.2.13 modsign — the appended module signature: CMS ‖ struct module_signature ‖ marker
// (include/linux/module_signature.h, kernel/module/signing.c, kernel/module_signature.c).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/result.hpp"

// Compression and detect_compression() are in module/decompress.hpp, included here for
// the files that reach them through this header.
#include "module/decompress.hpp"

namespace modsign::module {

/// MODULE_SIG_STRING, 28 bytes, no NUL.
inline constexpr std::string_view kMarker = "~Module signature appended~\n";
/// sizeof(struct module_signature).
inline constexpr std::size_t kModuleSignatureSize = 12;
/// PKEY_ID_PKCS7 (MODULE_SIGNATURE_TYPE_PKCS7).
inline constexpr std::uint8_t kIdTypePkcs7 = 2;

/// struct module_signature, decoded (sig_len converted from big-endian).
struct ModuleSignature {
  std::uint8_t algo = 0, hash = 0, id_type = kIdTypePkcs7, signer_len = 0, key_id_len = 0;
  std::uint8_t pad[3] = {0, 0, 0};
  std::uint32_t sig_len = 0;
};

/// The 12 bytes of struct module_signature for a PKCS#7 blob of `sig_len` bytes:
/// all zero except id_type = 2 and sig_len big-endian at offset 8.
Bytes encode_module_signature(std::uint32_t sig_len);

/// A signed module split into its parts.  Views point into the caller's buffer.
struct SplitModule {
  ByteView content;  ///< the bytes the signature covers
  ByteView cms;      ///< the PKCS#7 DER (sig_len bytes)
  ModuleSignature trailer;
};

/// A trailer whose sig_len is 0 passes mod_check_sig(), but the PKCS#7 message it points
/// at is then empty, which pkcs7_parse_message() refuses (mod_verify_sig fails with
/// EBADMSG): no signature to describe, extract or strip.  EBADMSG "the appended signature
/// is empty (sig_len 0)" for such a split; `info`, `extract` and `strip` (without legacy)
/// all use this.
Status check_signature_present(const SplitModule& s);

/// True if the file ends with the marker and is longer than it (module_sig_check step 2).
bool has_marker(ByteView file);

/// Split a signed module as mod_verify_sig()/mod_check_sig() do (kernel-semantics §5.2-5.3):
///  - no marker (or file not longer than 28 bytes): ENODATA "unsigned module";
///  - 12 bytes or fewer before the marker: EBADMSG;
///  - sig_len >= (length without marker) - 12: EBADMSG;
///  - id_type != 2: ENOPKG "not signed with expected PKCS#7 message";
///  - any of algo, hash, signer_len, key_id_len, pad non-zero: EBADMSG
///    ("PKCS#7 signature info has unexpected non-zero params").
Result<SplitModule> split(ByteView file);

/// Where the pieces of a module of `file_size` bytes lie, from its last (up to) 40 bytes
/// `tail`: the same checks and errors as split(), without the rest of the file.
struct TrailerInfo {
  std::uint64_t content_len = 0;
  std::uint32_t sig_len = 0;
};
Result<TrailerInfo> parse_tail(ByteView tail, std::uint64_t file_size);

/// Whether `t` is a trailer mod_check_sig() refuses as from before PKCS#7 module signing:
/// id_type 0 (PKEY_ID_PGP) or 1 (PKEY_ID_X509), or any of algo, hash, signer_len,
/// key_id_len, pad non-zero.
bool is_legacy(const ModuleSignature& t);

/// split() without the id_type and legacy-field checks (for stripping such a trailer):
/// the marker and sig_len are checked as in split(); the trailer is returned as found.
Result<SplitModule> split_any_trailer(ByteView file);

/// modsign's own (the kernel checks only the outermost signature): every signature
/// stacked in `file`, outermost first, e.g. a module signed again by scripts/sign-file,
/// which signs over an existing signature.  split() of the file, then of each content
/// while it still ends with the marker and splits; a content whose trailer does not
/// split ends the walk (it is part of the content the inner-most signature covers).
/// With `legacy`, split_any_trailer() instead.  Empty for an unsigned or malformed file.
std::vector<SplitModule> split_stack(ByteView file, bool legacy = false);

/// content ‖ cms ‖ module_signature ‖ marker: the layout sign-file writes.
Bytes append_signature(ByteView content, ByteView cms);

}  // namespace modsign::module
