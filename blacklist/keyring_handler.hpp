// mirrors security/integrity/platform_certs/keyring_handler.c get_handler_for_db, get_handler_for_mok,
// get_handler_for_dbx and their handlers (uefi_blacklist_x509_tbs, uefi_blacklist_binary, uefi_revocation_list_x509),
// Linux 7.2.13
//   get_handler_for_db/_mok/_dbx()   security/integrity/platform_certs/keyring_handler.c:50-102
//   mark_hash_blacklisted()          certs/blacklist.c:205-217 (get_raw_hash 147-177)
//   add_key_to_revocation_list()     certs/blacklist.c:263-283
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blacklist/efi_parser.hpp"
#include "blacklist/load_uefi.hpp"
#include "blacklist/sources.hpp"
#include "cms/kernel_model.hpp"
#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::blacklist::efi {

/// What one entry becomes in the kernel (public modsign::EfiEntryKind).
using EntryKind = modsign::EfiEntryKind;
/// "bin", "tbs", "revoked", "platform", "ignored".
std::string_view entry_kind_name(EntryKind k);

/// One entry with the kernel's outcome: the public modsign::EfiEntryEffect plus the parsed
/// EFI_CERT_X509 certificate.
struct EntryEffect : modsign::EfiEntryEffect {
  std::optional<crypto::Certificate> cert;  ///< parsed EFI_CERT_X509 data
};

/// The kernel's view of one variable.
struct VariableEffects {
  Variable variable = Variable::dbx;
  std::vector<EntryEffect> entries;                       ///< every entry of every parsed list, in order
  std::vector<crypto::Certificate> keyring_certificates;  ///< db/MokListRT certificates the kernel loads
  std::vector<crypto::Certificate> revoked_certificates;  ///< dbx/MokListXRT revoked certificates
  std::vector<std::string> notes;                         ///< e.g. the never-matching tbs: entries
};

/// The certificate x509_cert_parse() finds in an EFI_CERT_X509 entry's data: the first DER
/// element, parsed by crypto::Certificate::from_der().  Bytes after it (padding) are
/// ignored, as lib/asn1_decoder.c ignores them (ASN1_OP_COMPLETE returns without checking
/// dp == datalen, Linux 7.2.13); `trailing` gets their count (0 on error).  Errors:
/// from_der()'s EBADMSG for data that is not a certificate (also when empty).
Result<crypto::Certificate> parse_entry_certificate(ByteView data, std::size_t& trailing);

/// Run the handler get_handler_for_{db,mok,dbx}() returns for each list's type over every
/// entry of `lists` (keyring_handler.c:50-102).  A certificate is refused (key_error) as
/// x509_key_preparse would refuse it: EINVAL for 0 bytes (asymmetric_key_preparse),
/// EBADMSG when it does not parse, ENOPKG for an algorithm `profile` does not support
/// (cms::x509_supported), EKEYREJECTED when its TBS hash is in `blacklist` (7.0: SHA-256
/// of the TBS; v6: the signature's hash; x509_get_sig_params).  Not modelled: a
/// self-signed certificate whose own signature fails (x509_check_for_self_signed).  Bytes
/// after the certificate's DER element are ignored, as lib/asn1_decoder.c ignores them
/// (ASN1_OP_COMPLETE does not check for trailing data), with a note naming their count.
/// Never throws.
VariableEffects apply_handlers(const ParsedLists& lists, Variable v,
                               const cms::KernelModel& profile = cms::KernelModel::v7_0(),
                               const cms::Blacklist* blacklist = nullptr);

/// Load a dbx / MokListXRT into `out` as load_uefi_certs() does: every bin:/tbs: key
/// (duplicates keep their first origin first, as mark_hash_blacklisted's -EEXIST does) and
/// every revoked certificate, with Origin{file, "list L entry E (TYPE)"} (1-based L, E).
/// Notes for never-matching tbs: entries go to out.notes.  Entries the kernel would refuse
/// are not added (a note says so); a revoked certificate is checked against `out.keyring`
/// as it stands when the entry is reached (the kernel loads dbx after the build-time
/// hash list, at late_initcall).  `v` must be dbx or MokListXRT (std::invalid_argument
/// otherwise).  Returns the variable's parse status (EBADMSG when parsing stopped; the
/// entries before it are added, as in the kernel).
Status add_to_sources(const ParsedLists& lists, Variable v, const std::string& file, Sources& out,
                      const cms::KernelModel& profile = cms::KernelModel::v7_0());

}  // namespace modsign::blacklist::efi
