// mirrors crypto/asymmetric_keys/mscode_parser.c mscode_parse, mscode_note_content_type, mscode_note_digest_algo,
// mscode_note_digest (grammar mscode.asn1), Linux 7.2.13
#include "cms/mscode_parser.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "asn1/der.hpp"

namespace modsign::cms {

namespace {

// The dotted OIDs of the kernel's OID registry (include/linux/oid_registry.h, Linux
// 7.2.13): look_up_OID() maps these to an enum value and every other OID to OID__NR.
constexpr std::string_view kRegistry[] = {
    "1.2.156.10197.1.301",
    "1.2.156.10197.1.401",
    "1.2.156.10197.1.501",
    "1.2.156.10197.1.504",
    "1.2.643.2.2.35.1",
    "1.2.643.2.2.35.2",
    "1.2.643.2.2.35.3",
    "1.2.643.7.1.1.1.1",
    "1.2.643.7.1.1.1.2",
    "1.2.643.7.1.1.2.2",
    "1.2.643.7.1.1.2.3",
    "1.2.643.7.1.1.3.2",
    "1.2.643.7.1.1.3.3",
    "1.2.643.7.1.2.1.1.1",
    "1.2.643.7.1.2.1.1.2",
    "1.2.643.7.1.2.1.1.3",
    "1.2.643.7.1.2.1.1.4",
    "1.2.643.7.1.2.1.2.1",
    "1.2.643.7.1.2.1.2.2",
    "1.2.643.7.1.2.1.2.3",
    "1.2.752.43.14.2",
    "1.2.752.43.14.3",
    "1.2.840.10030.4.3",
    "1.2.840.10040.4.1",
    "1.2.840.10045.2.1",
    "1.2.840.10045.3.1.1",
    "1.2.840.10045.3.1.7",
    "1.2.840.10045.4.1",
    "1.2.840.10045.4.3.1",
    "1.2.840.10045.4.3.2",
    "1.2.840.10045.4.3.3",
    "1.2.840.10045.4.3.4",
    "1.2.840.113549.1.1.1",
    "1.2.840.113549.1.1.11",
    "1.2.840.113549.1.1.12",
    "1.2.840.113549.1.1.13",
    "1.2.840.113549.1.1.14",
    "1.2.840.113549.1.1.5",
    "1.2.840.113549.1.7.1",
    "1.2.840.113549.1.7.2",
    "1.2.840.113549.1.9.1",
    "1.2.840.113549.1.9.15",
    "1.2.840.113549.1.9.16.2.11",
    "1.2.840.113549.1.9.3",
    "1.2.840.113549.1.9.4",
    "1.2.840.113549.1.9.5",
    "1.2.840.113554.1.2.2",
    "1.2.840.113554.1.2.2.3",
    "1.2.840.48018.1.2.2",
    "1.3.132.0.34",
    "1.3.132.0.35",
    "1.3.14.3.2.26",
    "1.3.5.1.5.2.7",
    "1.3.6.1.4.1.311.16.4",
    "1.3.6.1.4.1.311.2.1.11",
    "1.3.6.1.4.1.311.2.1.12",
    "1.3.6.1.4.1.311.2.1.15",
    "1.3.6.1.4.1.311.2.1.21",
    "1.3.6.1.4.1.311.2.1.4",
    "1.3.6.1.4.1.311.2.2.10",
    "1.3.6.1.4.1.311.2.2.30",
    "1.3.6.1.5.2.5",
    "1.3.6.1.5.5.14",
    "1.3.6.1.5.5.2",
    "1.3.6.1.5.5.7.1.1",
    "2.16.840.1.101.3.4.2.1",
    "2.16.840.1.101.3.4.2.10",
    "2.16.840.1.101.3.4.2.2",
    "2.16.840.1.101.3.4.2.3",
    "2.16.840.1.101.3.4.2.4",
    "2.16.840.1.101.3.4.2.8",
    "2.16.840.1.101.3.4.2.9",
    "2.16.840.1.101.3.4.3.10",
    "2.16.840.1.101.3.4.3.11",
    "2.16.840.1.101.3.4.3.12",
    "2.16.840.1.101.3.4.3.14",
    "2.16.840.1.101.3.4.3.15",
    "2.16.840.1.101.3.4.3.16",
    "2.16.840.1.101.3.4.3.17",
    "2.16.840.1.101.3.4.3.18",
    "2.16.840.1.101.3.4.3.19",
    "2.23.133.10.1.3",
    "2.23.133.10.1.4",
    "2.23.133.10.1.5",
    "2.5.29.14",
    "2.5.29.15",
    "2.5.29.17",
    "2.5.29.18",
    "2.5.29.19",
    "2.5.29.31",
    "2.5.29.32",
    "2.5.29.35",
    "2.5.29.37",
    "2.5.4.10",
    "2.5.4.11",
    "2.5.4.12",
    "2.5.4.13",
    "2.5.4.3",
    "2.5.4.4",
    "2.5.4.41",
    "2.5.4.42",
    "2.5.4.43",
    "2.5.4.44",
    "2.5.4.6",
    "2.5.4.7",
    "2.5.4.8",
};

bool in_registry(std::string_view dotted, const KernelModel& profile) {
  // The SHA-3 digest OIDs joined the registry in 6.7; profile "v6.1" predates them.
  if (profile.legacy_digests && dotted.starts_with("2.16.840.1.101.3.4.2.") &&
      (dotted.ends_with(".8") || dotted.ends_with(".9") || dotted.ends_with(".10")))
    return false;
  return std::find(std::begin(kRegistry), std::end(kRegistry), dotted) != std::end(kRegistry);
}

Error bad(const std::string& why) { return Error{KErr::ebadmsg, "MSCODE: " + why}; }

}  // namespace

Status mscode_parse(PefileContext& ctx, ByteView content, const KernelModel& profile) {
  using asn1::Reader;
  try {
    Reader top(content, asn1::Rules::ber);
    Reader mscode = top.enter(asn1::kSequence, "MSCode");
    top.finish("MSCode");
    Reader type = mscode.enter(asn1::kSequence, "type");
    const asn1::Element content_type = type.expect(asn1::kOid, "contentType");
    if (type.empty()) throw asn1::DecodeError("type: parameters missing");
    type.next();  // parameters ANY
    type.finish("type");
    Reader body = mscode.enter(asn1::kSequence, "content");
    mscode.finish("MSCode");
    Reader algo = body.enter(asn1::kSequence, "digestAlgorithm");
    const asn1::Element algorithm = algo.expect(asn1::kOid, "algorithm");
    if (!algo.empty()) algo.next();  // parameters ANY OPTIONAL
    algo.finish("digestAlgorithm");
    const asn1::Element digest = body.expect(asn1::kOctetString, "digest");
    body.finish("content");

    // mscode_note_content_type
    const std::string ct = asn1::oid_to_string(content_type.content);
    if (!in_registry(ct, profile)) return bad("Unknown OID: " + ct);
    if (ct != "1.3.6.1.4.1.311.2.1.15" && ct != "1.3.6.1.4.1.311.2.1.21")
      return bad("Unexpected content type OID " + ct);
    // mscode_note_digest_algo
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kDigests = {{
        {"1.3.14.3.2.26", "sha1"},
        {"2.16.840.1.101.3.4.2.1", "sha256"},
        {"2.16.840.1.101.3.4.2.2", "sha384"},
        {"2.16.840.1.101.3.4.2.3", "sha512"},
        {"2.16.840.1.101.3.4.2.8", "sha3-256"},
        {"2.16.840.1.101.3.4.2.9", "sha3-384"},
        {"2.16.840.1.101.3.4.2.10", "sha3-512"},
    }};
    const std::string da = asn1::oid_to_string(algorithm.content);
    if (!in_registry(da, profile)) return bad("Unknown OID: " + da);
    const auto it = std::find_if(kDigests.begin(), kDigests.end(), [&](const auto& d) { return d.first == da; });
    if (it == kDigests.end()) return Error{KErr::enopkg, "MSCODE: Unsupported content type: " + da};
    ctx.digest_algo = std::string(it->second);
    // mscode_note_digest
    ctx.digest.assign(digest.content.begin(), digest.content.end());
  } catch (const asn1::DecodeError& e) { return bad(std::string("SpcIndirectDataContent: ") + e.what()); }
  return ok_status();
}

}  // namespace modsign::cms
