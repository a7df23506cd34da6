// mirrors crypto/asymmetric_keys/mscode_parser.c mscode_parse, mscode_note_content_type, mscode_note_digest_algo,
// mscode_note_digest (grammar mscode.asn1), Linux 7.2.13
#pragma once

#include "cms/kernel_model.hpp"
#include "cms/verify_pefile.hpp"
#include "common/result.hpp"

namespace modsign::cms {

/// mscode_parse(): decode the SpcIndirectDataContent `content` (the whole TLV: the kernel
/// steps back over the header pkcs7_get_content_data reports) as MSCode ::= SEQUENCE {
/// type SEQUENCE { contentType OID, parameters ANY }, content SEQUENCE { digestAlgorithm
/// SEQUENCE { algorithm OID, parameters ANY OPTIONAL }, digest OCTET STRING } } (BER, as
/// lib/asn1_decoder.c; anything after the outer SEQUENCE is an error), noting into `ctx`:
///  - contentType must be SPC_PE_IMAGE_DATAOBJ or SPC_INDIVIDUAL_SP_KEY_PURPOSE_OBJID (the
///    OID an old pesign wrote): otherwise EBADMSG;
///  - algorithm: sha1, sha256, sha384, sha512, sha3-256/384/512 (not for profile "v6.1",
///    whose OID registry lacks the SHA-3 OIDs: EBADMSG); another OID of the kernel's OID
///    registry (md4, md5, sha224, sm3, streebog, a signature OID, ...) is ENOPKG
///    ("Unsupported content type"); an OID outside the registry EBADMSG;
///  - digest: its contents.
/// Structural decoding errors are EBADMSG.
Status mscode_parse(PefileContext& ctx, ByteView content, const KernelModel& profile);

}  // namespace modsign::cms
