// mirrors security/integrity/ima/ima_template_lib.c and ima_template.c: the template fields (d-ng, n-ng, sig, d-modsig,
// modsig, buf), ima_template, ima_buffer_template, Linux 7.2.13 The templates ima-ng, ima-sig, ima-modsig and ima-buf
// (docs/kernel-semantics.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cms/kernel_model.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"
#include "modsign/ima_types.hpp"

namespace modsign::digest {

/// A template field and a template entry: defined once, in the public include/modsign/ima_types.hpp.
using TemplateField = modsign::TemplateField;
using TemplateEntry = modsign::TemplateEntry;

/// The largest digest field the kernel can build: ima_eventdigest_init_common()
/// (security/integrity/ima/ima_template_lib.c, Linux 7.2.13) assembles "<algo>:" '\0' digest
/// in a stack buffer of DIGEST_TYPE_NAME_LEN_MAX (7) + CRYPTO_MAX_ALG_NAME (128) + 2 +
/// IMA_MAX_DIGEST_SIZE (64) = 201 bytes and copies the digest without a length check.
inline constexpr std::size_t kImaDigestFieldMax = 201;

/// The longest d-modsig field a kernel built for `machine` survives writing into that
/// buffer: past kImaDigestFieldMax the C code's behaviour is undefined, and what happens is
/// the build's.  Measured on the Linux 7.2.13 builds of tools/build-test-kernel (Debian 12's
/// gcc 12, no CONFIG_STACKPROTECTOR) under qemu:
///  - x86_64: 201 (202 bytes oops: a NULL pointer dereference, the task killed);
///  - s390x: 265.  The buffer is bytes 167-367 of a 296-byte frame; past it lie the
///    caller's unused save slot of r6 and the saved r7-r13, then the saved return address
///    (r14) at byte 265 of the field.  Fields of 202 to 265 bytes were recorded whole (the
///    bytes written past the buffer were the zeros of a padding attribute), 266 bytes
///    killed the task (SIGSEGV), 278 panicked the kernel ("Invalid kernel stack pointer");
///  - arm64: 209.  The buffer's last byte is followed by a saved frame pointer (x29, field
///    bytes 201-208) and then a saved return address (x30, from byte 209).  Fields of 202 to
///    209 bytes were recorded whole (the bytes past the buffer were a padding attribute's
///    0x5a), 210 to 408 bytes oopsed at the address written ("pc : 0xffff80008035eb5a" for
///    210, 0x5a5a... beyond) and killed the task; the kernel went on.
std::size_t ima_digest_field_survivable(Machine machine);

/// The template data IMA records for a file, under a kernel profile:
///  - d-ng: "<algo>:" '\0' H(whole file), H = the hash `security_ima` names (signature v2/v3
///    or digest-ng xattr; ima_get_hash_algo), else `ima_hash` (IMA's ima_hash= setting);
///  - n-ng: `path` with spaces replaced by '_', and a NUL;
///  - sig: `security_ima` when its first byte is 0x03 (IMA signature) or 0x06 (fs-verity
///    signature), else empty (the EVM portable-signature fallback is not modelled);
///  - d-modsig: empty without a parsable appended signature (ima_read_modsig failed, e.g.
///    ML-DSA on v6), else "<algo>:" '\0' pkcs7_get_digest();
///  - modsig: the appended PKCS#7 DER, or empty.
/// A compressed `file` (detect_compression) under v7.0 is taken as loaded with
/// MODULE_INIT_COMPRESSED_FILE: 7.2 measures it once, after module_decompress(), with d-ng
/// the hash of the file as stored (collected on the first, deferred read) and d-modsig and
/// modsig from the decompressed image; under v6 IMA sees only the compressed file (no modsig).
/// Templates: "ima-ng" (d-ng|n-ng), "ima-sig" (+sig), "ima-modsig" (+sig|d-modsig|modsig).
/// Each field's length goes into the template data (and so the hashes) in `profile`'s IMA
/// byte order (digest/ima_fs.hpp ima_list_big_endian).
/// `side_sha256` replaces the kernel's d-modsig digest by the side SHA-256 of the signed
/// content ("what IMA would record" under the proposal).  Errors: EINVAL when an appended
/// signature exists but pkcs7_get_digest has no digest (ima_eventdigest_modsig_init fails,
/// so no entry is recorded: 7.0 ML-DSA without signedAttrs), the template is unknown, or a
/// compressed file (v7.0) the kernel's module_decompress() refuses (no entry either);
/// EMSGSIZE when the d-modsig field would exceed ima_digest_field_survivable() of the
/// profile's machine (7.0 ML-DSA with signedAttrs longer than 193 bytes with SHA-512, e.g.
/// with an extra attribute; the 140 bytes of `openssl cms -sign -nosmimecap` fit):
/// pkcs7_get_digest hands IMA the re-tagged signedAttrs, the kernel overflows its stack
/// buffer and the task dies (x86_64: 194 bytes of signedAttrs already oops), so there is
/// no record to predict.  A field past kImaDigestFieldMax that the machine survives (s390x)
/// is recorded whole, with a note of the overflow.
Result<TemplateEntry> ima_template(const std::string& template_name, const std::string& path, ByteView file,
                                   const std::optional<Bytes>& security_ima, const cms::KernelModel& profile,
                                   crypto::HashAlgo ima_hash = crypto::HashAlgo::sha256, bool side_sha256 = false);

/// The "ima-buf" entry (d-ng|n-ng|buf) process_buffer_measurement() records for a buffer
/// (security/integrity/ima/ima_main.c, kernel 7.2): d-ng = "<algo>:" '\0' H(buf) with H =
/// `ima_hash` (IMA's ima_hash= setting), n-ng = `event_name` and a NUL, buf = the bytes.
/// Used for the "blacklisted-hash" record of ima_check_blacklist().  Field lengths in
/// `profile`'s IMA byte order (ima_list_big_endian), as ima_template's.  No errors.
TemplateEntry ima_buffer_template(const std::string& event_name, ByteView buf, crypto::HashAlgo ima_hash,
                                  const cms::KernelModel& profile);

}  // namespace modsign::digest
