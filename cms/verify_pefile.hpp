// mirrors crypto/asymmetric_keys/verify_pefile.c pefile_parse_binary, pefile_strip_sig_wrapper, pefile_compare_shdrs,
// pefile_digest_pe_contents, pefile_digest_pe, verify_pefile_signature, Linux 7.2.13 The kernel's own reading of a
// signed PE image (the EFI stub of a bzImage) for kexec_file_load.  It is not the PE reader of pe/: the kernel checks
// fewer fields, takes the Section Table right after the data directories (SizeOfOptionalHeader is ignored), orders
// sections by PointerToRawData with its own tie-breaks, and hashes the trailing data as FILE_SIZE -
// (SUM_OF_BYTES_HASHED + Certificate Table size), in 32-bit arithmetic.
#pragma once

#include <cstdint>
#include <string>

#include "cms/kernel_model.hpp"
#include "cms/system_keyring.hpp"
#include "common/result.hpp"

namespace modsign::cms {

/// struct pefile_context (verify_pefile.h): what pefile_parse_binary and mscode_parse note.
/// Offsets are file offsets, sizes bytes; all 32-bit as in the kernel.
struct PefileContext {
  std::uint32_t header_size = 0;            ///< SizeOfHeaders
  std::uint32_t image_checksum_offset = 0;  ///< the CheckSum field
  std::uint32_t cert_dirent_offset = 0;     ///< data directory entry 4 (Certificate Table)
  std::uint32_t n_data_dirents = 0;         ///< NumberOfRvaAndSizes
  std::uint32_t n_sections = 0;             ///< COFF NumberOfSections
  std::uint32_t secs_offset = 0;            ///< Section Table: right after the data directories
  std::uint32_t certs_size = 0;             ///< Certificate Table size from its directory entry
  std::uint32_t sig_offset = 0;             ///< PKCS#7 start (after pefile_strip_sig_wrapper)
  std::uint32_t sig_len = 0;                ///< PKCS#7 length (after pefile_strip_sig_wrapper)
  std::string digest_algo;                  ///< from SpcIndirectDataContent ("sha256")
  Bytes digest;                             ///< the image digest the signature vouches for
};

/// pefile_parse_binary(): ELIBBAD for a structure outside the image (the kernel's chkaddr:
/// offset below its base, size >= the file, end beyond it), a missing "MZ" or "PE\0\0",
/// an Optional Header magic other than 0x10b/0x20b, SizeOfHeaders not beyond the fixed
/// headers or not below the file size, more data directories or sections than fit in
/// SizeOfHeaders; ENODATA ("Unsigned PE binary") when the Certificate Table entry has a
/// zero offset or size.  Where the kernel would read past the image (entry 4 of a short
/// data directory beyond the file), modsign reports ELIBBAD.
Status pefile_parse_binary(ByteView pe, PefileContext& ctx);

/// pefile_strip_sig_wrapper(): the WIN_CERTIFICATE at the table's start.  ELIBBAD when
/// the table is shorter than the 8-byte header, dwLength exceeds the table, or what follows
/// is not a DER SEQUENCE whose length fits; ENOTSUPP (524) for a wRevision other than
/// 0x0200 or a wCertificateType other than 2; EKEYREJECTED when fewer than 4 bytes follow
/// the header; EMSGSIZE for a SEQUENCE length of 3 or more length octets.  sig_len becomes
/// the SEQUENCE's size (padding dropped), or dwLength - 8 for an indefinite length.
Status pefile_strip_sig_wrapper(ByteView pe, PefileContext& ctx);

/// pefile_digest_pe(): the digest named by ctx.digest_algo over the kernel's byte runs
/// (headers without CheckSum and entry 4, sections in pefile_compare_shdrs order, then
/// the trailing data), compared with ctx.digest.  EBADMSG when the digest length differs
/// from the algorithm's, ENOPKG for an algorithm modsign cannot compute, ELIBBAD when the
/// Certificate Table size does not fit after the hashed bytes, EKEYREJECTED ("Digest
/// mismatch") when the values differ.  A section whose raw data lies outside the image
/// (which the kernel does not check) is ELIBBAD.  `computed` receives the digest.
Status pefile_digest_pe(ByteView pe, const PefileContext& ctx, Bytes* computed = nullptr);

/// What verify_pefile_signature() found, beyond the verdict.
struct PefileReport {
  VerifyReport pkcs7;  ///< verify_pkcs7_signature()'s report; pkcs7.err is the verdict
  PefileContext ctx;
  Bytes computed;  ///< the kernel's image digest (empty when not reached)
};

/// verify_pefile_signature(): parse, strip the wrapper, verify_pkcs7_signature() of the
/// embedded PKCS#7 with usage VERIFYING_KEXEC_PE_SIGNATURE against `keyring` with
/// mscode_parse() as the content viewer, then pefile_digest_pe().  Each step's errno as
/// documented there (pkcs7 steps: system_keyring.hpp).
PefileReport verify_pefile_signature(ByteView pe, const Keyring& keyring, const KernelModel& profile,
                                     crypto::Backend backend = crypto::Backend::automatic);

}  // namespace modsign::cms
