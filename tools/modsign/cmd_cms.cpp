// `modsign cms dump` and `modsign cms verify`: any CMS SignedData (a .p7s, a message from
// another implementation), through modsign::cms_dump_file() and cms_verify_file().
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <modsign/cms.hpp>

#include "cli_common.hpp"
#include "options.hpp"
#include "registry.hpp"

namespace modsign::cli {

namespace {

using nlohmann::json;

json tlv_json(const CmsTlv& t) { return {{"offset", t.offset}, {"length", t.length}}; }

json alg_json(const CmsAlgorithm& a) {
  return {{"name", a.name},
          {"oid", a.oid},
          {"parameters", a.parameters ? (a.parameters_null ? "NULL" : "present") : "absent"},
          {"offset", a.at.offset},
          {"length", a.at.length}};
}

json attrs_json(const std::vector<CmsAttribute>& attrs) {
  json out = json::array();
  for (const auto& a : attrs)
    out.push_back(
        {{"name", a.name}, {"oid", a.oid}, {"values", a.values}, {"offset", a.at.offset}, {"length", a.at.length}});
  return out;
}

json dump_json(const std::string& path, const CmsDump& d) {
  json certs = json::array(), signers = json::array(), digests = json::array();
  for (const auto& a : d.digest_algorithms) digests.push_back(alg_json(a));
  for (const auto& c : d.certificates)
    certs.push_back({{"subject", c.subject},
                     {"issuer", c.issuer},
                     {"serial", to_hex(c.serial)},
                     {"skid", c.skid ? json(to_hex(*c.skid)) : json(nullptr)},
                     {"public_key_algorithm", alg_json(c.public_key_algorithm)},
                     {"offset", c.at.offset},
                     {"length", c.at.length}});
  for (const auto& s : d.signers) {
    json sid =
        s.sid_is_skid
            ? json{{"type", "subjectKeyIdentifier"}, {"skid", to_hex(s.sid_skid)}}
            : json{{"type", "issuerAndSerialNumber"}, {"issuer", s.sid_issuer}, {"serial", to_hex(s.sid_serial)}};
    sid["offset"] = s.sid_at.offset;
    sid["length"] = s.sid_at.length;
    signers.push_back({{"version", s.version},
                       {"sid", sid},
                       {"digest_algorithm", alg_json(s.digest_algorithm)},
                       {"signed_attrs", s.signed_attrs_at ? attrs_json(s.signed_attrs) : json(nullptr)},
                       {"signed_attrs_at", s.signed_attrs_at ? tlv_json(*s.signed_attrs_at) : json(nullptr)},
                       {"content_type", s.content_type ? json(to_hex(*s.content_type)) : json(nullptr)},
                       {"message_digest", s.message_digest ? json(to_hex(*s.message_digest)) : json(nullptr)},
                       {"signing_time", s.signing_time ? json(*s.signing_time) : json(nullptr)},
                       {"signature_algorithm", alg_json(s.signature_algorithm)},
                       {"signature_length", s.signature_length},
                       {"signature_at", tlv_json(s.signature_at)},
                       {"unsigned_attrs", attrs_json(s.unsigned_attrs)},
                       {"offset", s.at.offset},
                       {"length", s.at.length}});
  }
  return {{"path", path},
          {"format", d.pem   ? "PEM"
                     : d.ber ? "BER"
                             : "DER"},
          {"encoding", d.ber ? "BER" : "DER"},
          {"module_signature", d.module_signature},
          {"der_size", d.der_size},
          {"content_type", alg_json(d.content_type)},
          {"signed_data",
           {{"version", d.version}, {"offset", d.signed_data_at.offset}, {"length", d.signed_data_at.length}}},
          {"digest_algorithms", digests},
          {"econtent_type", alg_json(d.econtent_type)},
          {"econtent", d.econtent ? json{{"length", d.econtent_length},
                                         {"offset", d.econtent_at->offset},
                                         {"tlv_length", d.econtent_at->length}}
                                  : json(nullptr)},
          {"certificates", certs},
          {"crls", d.crls},
          {"signer_infos", signers}};
}

std::string at_text(const CmsTlv& t) { return "[" + std::to_string(t.offset) + "+" + std::to_string(t.length) + "]"; }

std::string alg_text(const CmsAlgorithm& a) {
  return (a.name.empty() ? "(unknown)" : a.name) + " (" + a.oid + ")" +
         (a.parameters ? (a.parameters_null ? ", parameters NULL" : ", parameters present") : "") + " " + at_text(a.at);
}

void print_attrs(const char* what, const std::vector<CmsAttribute>& attrs) {
  for (const auto& a : attrs) {
    std::cout << "    " << what << ": " << (a.name.empty() ? "(unknown)" : a.name) << " (" << a.oid << ") "
              << at_text(a.at) << "\n";
    for (const auto& v : a.values) std::cout << "      " << v << "\n";
  }
}

void print_dump(const std::string& path, const CmsDump& d) {
  const char* encoding = d.ber ? "BER" : "DER";
  // "DER, 672 bytes"; a PEM file says what its base64 holds: "PEM, 672 bytes of DER"; a
  // signed module "module signature, DER, 672 bytes".
  std::cout << printable(path) << ": " << (d.module_signature ? "module signature, " : "") << (d.pem ? "PEM" : encoding)
            << ", " << d.der_size << " bytes" << (d.pem ? std::string(" of ") + encoding : std::string()) << "\n";
  std::cout << "ContentInfo.contentType: " << alg_text(d.content_type) << "\n";
  std::cout << "SignedData " << at_text(d.signed_data_at) << "\n  version: " << d.version << "\n";
  for (const auto& a : d.digest_algorithms) std::cout << "  digestAlgorithm: " << alg_text(a) << "\n";
  std::cout << "  eContentType: " << alg_text(d.econtent_type) << "\n";
  if (d.econtent) std::cout << "  eContent: " << d.econtent_length << " bytes " << at_text(*d.econtent_at) << "\n";
  else std::cout << "  eContent: absent (detached)\n";
  for (std::size_t i = 0; i < d.certificates.size(); ++i) {
    const auto& c = d.certificates[i];
    std::cout << "  certificate " << i + 1 << " " << at_text(c.at) << "\n    subject: " << printable(c.subject)
              << "\n    issuer: " << printable(c.issuer) << "\n    serial: " << to_hex(c.serial)
              << "\n    subjectKeyIdentifier: " << (c.skid ? to_hex(*c.skid) : "(none)")
              << "\n    public key: " << alg_text(c.public_key_algorithm) << "\n";
  }
  std::cout << "  crls: " << d.crls << "\n";
  for (std::size_t i = 0; i < d.signers.size(); ++i) {
    const auto& s = d.signers[i];
    std::cout << "  SignerInfo " << i + 1 << " " << at_text(s.at) << "\n    version: " << s.version << "\n";
    if (s.sid_is_skid)
      std::cout << "    sid: subjectKeyIdentifier " << to_hex(s.sid_skid) << " " << at_text(s.sid_at) << "\n";
    else
      std::cout << "    sid: issuerAndSerialNumber " << printable(s.sid_issuer) << ", serial " << to_hex(s.sid_serial)
                << " " << at_text(s.sid_at) << "\n";
    std::cout << "    digestAlgorithm: " << alg_text(s.digest_algorithm) << "\n";
    if (s.signed_attrs_at)
      std::cout << "    signedAttrs: " << s.signed_attrs.size() << " " << at_text(*s.signed_attrs_at) << "\n";
    else std::cout << "    signedAttrs: absent\n";
    print_attrs("signedAttr", s.signed_attrs);
    std::cout << "    signatureAlgorithm: " << alg_text(s.signature_algorithm)
              << "\n    signature: " << s.signature_length << " bytes " << at_text(s.signature_at)
              << "\n    unsignedAttrs: " << s.unsigned_attrs.size() << "\n";
    print_attrs("unsignedAttr", s.unsigned_attrs);
  }
}

struct DumpArgs {
  std::string file;
  bool json = false;
};

int cmd_dump(const DumpArgs& a) {
  const CmsDump d = cms_dump_file(a.file);
  if (a.json) std::cout << dump_json(a.file, d).dump(2) << "\n";
  else print_dump(a.file, d);
  return kExitOk;
}

struct VerifyArgs {
  std::string file, content, kernel;
  std::vector<std::string> keyrings;
  bool json = false, waive = false;
};

int cmd_verify(const VerifyArgs& a) {
  CmsVerifyOptions o;
  if (!a.content.empty()) o.content = a.content;
  o.certificates = a.keyrings;
  if (!a.kernel.empty()) {
    o.kernel = public_profile(a.kernel);
    set_waive_option(*o.kernel, a.waive);
  } else if (a.waive) {
    complain("", "--waive-mldsa-authattrs needs a v7.x --kernel (v7.0, v7.1, v7.2)");
    return kExitUsage;
  }
  const CmsVerification v = cms_verify_file(a.file, o);
  print_notes(v.notes);
  const bool kernel_ok = !v.kernel_errno || *v.kernel_errno == KErr::none;
  if (a.json) {
    json signers = json::array();
    for (const auto& s : v.signers)
      signers.push_back({{"verified", s.verified},
                         {"reason", s.reason},
                         {"signer", s.signer},
                         {"algorithm", s.algorithm},
                         {"signed_attrs", s.signed_attrs}});
    json j{{"path", a.file},
           {"verified", v.verified},
           {"detached", v.detached},
           {"module_signature", v.module_signature},
           {"signers", signers}};
    j["kernel"] = v.kernel_errno ? json{{"profile", o.kernel->name()},
                                        {"errno", std::string(errno_name(*v.kernel_errno))},
                                        {"reason", v.kernel_reason}}
                                 : json(nullptr);
    std::cout << j.dump(2) << "\n";
  } else {
    for (std::size_t i = 0; i < v.signers.size(); ++i) {
      const auto& s = v.signers[i];
      std::cout << printable(a.file) << ": SignerInfo " << i + 1 << ": "
                << (s.verified ? "verified (" + s.algorithm + (s.signer.empty() ? "" : ", " + printable(s.signer)) + ")"
                               : "not verified: " + s.reason)
                << "\n";
    }
    if (v.signers.empty()) std::cout << printable(a.file) << ": no SignerInfo\n";
    std::cout << printable(a.file) << ": " << (v.verified ? "verified" : "not verified") << " (RFC 5652)\n";
    if (v.kernel_errno)
      std::cout << printable(a.file) << ": kernel " << o.kernel->name() << ": "
                << (kernel_ok ? std::string("accepted")
                              : std::string(errno_name(*v.kernel_errno)) + ": " + v.kernel_reason)
                << "\n";
  }
  return v.verified && kernel_ok ? kExitOk : kExitVerdict;
}

Runner setup_cms(CLI::App& c) {
  Commands subs;
  auto d = std::make_shared<DumpArgs>();
  CLI::App* dump = c.add_subcommand("dump", "every field of a SignedData, with byte offsets");
  add_json_flag(dump, d->json, "");
  dump->add_option("FILE", d->file, "SignedData (DER or PEM), or a signed module (the SignedData appended to it)")
      ->required();
  subs.emplace_back(dump, [d] { return cmd_dump(*d); });

  auto v = std::make_shared<VerifyArgs>();
  CLI::App* verify =
      c.add_subcommand("verify", "verify a SignedData as RFC 5652/9882 define it (and as a kernel would)");
  verify->add_option("--content", v->content,
                     "the signed content of a detached SignedData (for a signed module: its content)");
  add_keyring_option(verify, v->keyrings);
  add_kernel_option(verify, v->kernel, "also give that kernel's verdict");
  add_waive_option(verify, v->waive);
  add_json_flag(verify, v->json, "");
  verify->add_option("FILE", v->file, "SignedData (DER or PEM), or a signed module (the SignedData appended to it)")
      ->required();
  subs.emplace_back(verify, [v] { return cmd_verify(*v); });
  c.require_subcommand(1);
  return run_selected(std::move(subs));
}

}  // namespace

const Registration kCms{{"cms", "dump or verify any CMS SignedData (.p7s)", setup_cms}};

}  // namespace modsign::cli
