// modsign's own: to_json/to_text of the reports verify, info and digest print (report_render.hpp).
#include "report_render.hpp"

#include <sstream>

#include "cli_common.hpp"

namespace modsign::cli {

namespace {

nlohmann::json signers_json(const std::vector<SignerSummary>& ss) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& s : ss)
    a.push_back(
        {{"sid", s.sid}, {"digest_algo", s.digest_algo}, {"sig_algo", s.sig_algo}, {"signed_attrs", s.signed_attrs}});
  return a;
}

nlohmann::json trusted_keys_json(const std::vector<TrustedKey>& keys) {
  nlohmann::json tk = nlohmann::json::array();
  for (const auto& k : keys) tk.push_back({{"cn", k.cn}, {"skid", k.skid}, {"serial", k.serial}});
  return tk;
}

/// The keys a signed module's signature has in info --json.
nlohmann::json signature_json(const SignatureInfo& si) {
  return {{"sig_id", si.sig_id},
          {"signer", si.signer},
          {"sig_key", si.sig_key},
          {"sig_hashalgo", si.sig_hashalgo},
          {"signature", si.signature},
          {"signer_id_type", si.signer_id_type},
          {"signature_algorithm", si.signature_algorithm},
          {"signed_attrs", si.signed_attrs},
          {"signer_infos", si.signer_infos},
          {"certificates", si.certificates},
          {"cms_length", si.cms_length},
          {"signature_length", si.signature_length},
          {"content_length", si.content_length},
          {"accepted_by", si.accepted_by}};
}

/// A signature the outermost one covers, in info --json's nested[].
nlohmann::json nested_json(const SignatureInfo& n) {
  return {{"cms_offset", n.content_length},
          {"cms_length", n.cms_length},
          {"signature_algorithm", n.signature_algorithm},
          {"sig_hashalgo", n.sig_hashalgo},
          {"signer", n.signer},
          {"sig_key", n.sig_key},
          {"signed_attrs", n.signed_attrs},
          {"content_length", n.content_length},
          {"accepted_by", n.accepted_by}};
}

}  // namespace

nlohmann::json to_json(const Verdict& v, const std::string& path, const KernelProfile& profile,
                       const std::vector<std::string>* warnings) {
  nlohmann::json j{{"path", path},
                   {"kernel", profile.name()},
                   {"profile", profile.label()},
                   {"outcome", outcome_name(v.outcome)},
                   {"predicts", kVerdictPredicts},
                   {"errno", errno_name(v.err)},
                   {"reason", v.reason},
                   {"signers", signers_json(v.signers)},
                   {"compressed", v.compression ? compression_json(*v.compression) : nlohmann::json(nullptr)},
                   {"log", v.log},  // always there, [] when the kernel logs nothing else
                   {"trusted_keys", trusted_keys_json(v.trusted_keys)}};
  if (!v.notes.empty()) j["notes"] = v.notes;
  if (warnings) j["warnings"] = *warnings;
  return j;
}

std::string to_text(const Verdict& v, const std::string& path, const KernelProfile& profile) {
  // A load passes the signature check; what the kernel checks after it is not predicted.
  const bool partial = v.outcome != LoadOutcome::refused;
  std::ostringstream os;
  os << printable(path) << ": " << outcome_name(v.outcome) << " (" << errno_name(v.err) << "): " << printable(v.reason)
     << (v.compression ? " [" + compression_text(*v.compression) + "]" : std::string()) << " [kernel "
     << profile.label() << (partial ? "; predicts " + std::string(kVerdictPredicts) + ", not the ELF checks" : "")
     << "]\n";
  return os.str();
}

nlohmann::json no_verdict_json(const std::string& path, const KernelProfile& profile, const char* outcome,
                               const std::string& reason) {
  return {{"path", path},
          {"kernel", profile.name()},
          {"profile", profile.label()},
          {"outcome", outcome},
          {"predicts", kVerdictPredicts},
          {"errno", nullptr},
          {"reason", reason},
          {"signers", nlohmann::json::array()},
          {"compressed", nullptr},
          {"log", nlohmann::json::array()},
          {"trusted_keys", nlohmann::json::array()}};
}

std::string kexec_label(const KernelProfile& profile, const KexecOptions& ko) {
  return profile.label() + (ko.arch != KexecArch::x86_64 ? "+" + std::string(kexec_arch_name(ko.arch)) : "") +
         (ko.sig_force ? "+kexec-sig-force" : "") + (ko.five_level_paging ? "+5level" : "");
}

nlohmann::json to_json(const KexecVerdict* v, const std::string& path, const KernelProfile& profile,
                       const KexecOptions& ko, const std::string& error) {
  static const KexecVerdict kNone;  // an error: every key, empty
  const KexecVerdict& r = v ? *v : kNone;
  auto errno_json = [&](KErr e) { return v ? nlohmann::json(errno_name(e)) : nlohmann::json(nullptr); };
  // No signature was checked (an error, or the loader's probe refused the image): no
  // sig_errno and no keyring, rather than an "OK" no check gave.
  const bool checked = !r.keyring.empty();
  return {{"path", path},
          {"kernel", profile.name()},
          {"profile", kexec_label(profile, ko)},
          {"usage", "kexec"},
          {"arch", kexec_arch_name(ko.arch)},
          {"outcome", v ? kexec_outcome_name(r.outcome) : "error"},
          {"predicts", kKexecVerdictPredicts},
          {"errno", errno_json(r.err)},
          {"sig_errno", checked ? errno_json(r.sig_errno) : nullptr},
          {"load_errno", errno_json(r.load_errno)},
          {"keyring", checked ? nlohmann::json(r.keyring) : nullptr},
          {"reason", v ? r.reason : error},
          {"signers", signers_json(r.signers)},
          {"digest_algo", r.digest_algo},
          {"signed_digest", to_hex(r.signed_digest)},
          {"image_digest", to_hex(r.image_digest)},
          {"trusted_keys", trusted_keys_json(r.trusted_keys)}};
}

std::string to_text(const KexecVerdict& v, const std::string& path, const KernelProfile& profile,
                    const KexecOptions& ko) {
  return printable(path) + ": " + std::string(kexec_outcome_name(v.outcome)) + " (" + std::string(errno_name(v.err)) +
         "): " + printable(v.reason) + " [kernel " + kexec_label(profile, ko) +
         (v.outcome != KexecOutcome::refused ? "; predicts " + std::string(kKexecVerdictPredicts) + ", not the load"
                                             : "") +
         "]\n";
}

nlohmann::json to_json(const std::vector<SignatureInfo>& stack, const std::string& path, const ModuleImage& m) {
  const SignatureInfo& si = stack.front();
  nlohmann::json j{{"path", path}, {"size", m.image.size()}, {"compressed", compression_json(m)}};
  j["signed"] = si.is_signed;
  if (!si.is_signed) {
    j["content_length"] = si.content_length;
    return j;
  }
  j.update(signature_json(si));
  if (stack.size() > 1) {  // the signatures the outermost one covers
    nlohmann::json nested = nlohmann::json::array();
    for (std::size_t k = 1; k < stack.size(); ++k) nested.push_back(nested_json(stack[k]));
    j["nested"] = nested;
  }
  return j;
}

std::string to_text(const std::vector<SignatureInfo>& stack, const std::string& path, const ModuleImage& m) {
  std::ostringstream os;
  auto line = [&](const std::string& k, const std::string& v) {
    os << k << ":" << std::string(k.size() < 20 ? 20 - k.size() : 1, ' ') << printable(v) << "\n";
  };
  const SignatureInfo& si = stack.front();
  line("file", path);
  if (m.compression != Compression::none) {
    line("compressed", compression_text(m));
    if (!m.kernel_decompress_problem.empty()) line("kernel_decompress", m.kernel_decompress_problem);
  }
  line("signed", si.is_signed ? "yes" : "no");
  if (!si.is_signed) {
    line("content_length", std::to_string(m.image.size()));
    return os.str();
  }
  line("sig_id", si.sig_id);
  line("signer", si.signer);
  line("sig_key", si.sig_key);
  line("sig_hashalgo", si.sig_hashalgo);
  line("signer_id_type", si.signer_id_type);
  line("signature_algorithm", si.signature_algorithm);
  line("signed_attrs", si.signed_attrs ? "yes" : "no");
  line("signer_infos", std::to_string(si.signer_infos));
  line("certificates", std::to_string(si.certificates));
  line("cms_length", std::to_string(si.cms_length));
  line("signature_length", std::to_string(si.signature_length));
  line("content_length", std::to_string(si.content_length));
  std::string acc;
  for (const auto& p : si.accepted_by) acc += (acc.empty() ? "" : " ") + p;
  line("accepted_by", acc.empty() ? "(none)" : acc);
  line("signature", si.signature.size() > 47 ? si.signature.substr(0, 47) + ":..." : si.signature);
  for (std::size_t k = 1; k < stack.size(); ++k)  // "nested[1]: RSA sha256, CMS 720 bytes at 4096"
    line("nested[" + std::to_string(k) + "]",
         stack[k].signature_algorithm + " " + stack[k].sig_hashalgo + ", CMS " + std::to_string(stack[k].cms_length) +
             " bytes at " + std::to_string(stack[k].content_length) + (stack[k].signed_attrs ? ", signedAttrs" : ""));
  return os.str();
}

namespace {
const char* bin_source_name(DigestView::BinSource s) {
  switch (s) {
    case DigestView::BinSource::d_modsig: return "d-modsig";
    case DigestView::BinSource::ima_hash: return "ima-hash";
    case DigestView::BinSource::not_read: return "not-read";
    case DigestView::BinSource::none: break;
  }
  return nullptr;
}
}  // namespace

nlohmann::json to_json(const DigestView& v, const std::string& path, const std::string& kernel) {
  const ModuleDigests& d = v.digests;
  const bool ok = d.kernel.status == KErr::none;
  nlohmann::json kd{{"status", ok ? "ok" : std::string(errno_name(d.kernel.status))},
                    {"algo", ok ? nlohmann::json(d.kernel.algo) : nlohmann::json(nullptr)},
                    {"hex", ok ? nlohmann::json(to_hex(d.kernel.bytes)) : nlohmann::json(nullptr)}};
  if (!ok) kd["reason"] = d.kernel.reason;
  const char* source = bin_source_name(v.bin_source);
  return {{"path", path},
          {"kernel", kernel},
          {"signed", d.signed_module},
          {"content_length", d.content_length},
          {"kernel_digest", kd},
          {"side_sha256", to_hex(d.side_sha256)},
          {"d_modsig", d.d_modsig ? nlohmann::json(to_hex(*d.d_modsig)) : nlohmann::json(nullptr)},
          {"blacklist_visible", v.bin_entry.has_value()},
          {"bin_entry", v.bin_entry ? nlohmann::json(*v.bin_entry) : nlohmann::json(nullptr)},
          {"bin_source", source ? nlohmann::json(source) : nlohmann::json(nullptr)},
          {"file_sha256", to_hex(d.file_sha256)},
          {"side_bin_entry", "bin:" + to_hex(d.side_sha256)}};
}

std::string to_text(const DigestView& v, const std::string& path, const std::string& kernel) {
  const ModuleDigests& d = v.digests;
  std::ostringstream os;
  os << printable(path) << " (kernel " << kernel << "):\n";
  if (d.kernel.status == KErr::none)
    os << "  kernel_digest: " << d.kernel.algo << ":" << to_hex(d.kernel.bytes)
       << (d.kernel.raw_attributes ? "  (the re-tagged signedAttrs themselves, not a digest: 7.0 ML-DSA quirk)"
           : d.kernel.over_content ? ""
                                   : "  (hash of the signedAttrs, not of the module)")
       << "\n";
  else os << "  kernel_digest: " << errno_name(d.kernel.status) << " (" << printable(d.kernel.reason) << ")\n";
  os << "  side_sha256:   " << to_hex(d.side_sha256) << "  (" << d.content_length << " bytes signed)\n";
  os << "  d_modsig:      " << (d.d_modsig ? to_hex(*d.d_modsig) : std::string("none: IMA records no d-modsig"))
     << "\n";
  switch (v.bin_source) {
    case DigestView::BinSource::d_modsig:
      os << "  blacklist:     " << *v.bin_entry << " stops it (IMA bin: check on the d-modsig digest)\n";
      break;
    case DigestView::BinSource::ima_hash:
      os << "  blacklist:     " << *v.bin_entry
         << " stops it when the policy requires a signature (no modsig IMA can use: IMA's sha256 of the whole "
            "file as stored; other ima_hash: modsign blacklist entry --ima-hash)\n";
      break;
    case DigestView::BinSource::not_read:
      os << "  blacklist:     no bin: entry is looked up: finit_module refuses an empty file (EINVAL, "
            "kernel_read_file) before IMA reads it\n";
      break;
    case DigestView::BinSource::none:
      os << "  blacklist:     no bin: entry can stop it under " << kernel
         << " (IMA has a modsig but no usable digest); with the proposed side SHA-256: bin:" << to_hex(d.side_sha256)
         << "\n";
  }
  return os.str();
}

}  // namespace modsign::cli
