// `modsign info`: what modinfo shows about each module's signature (sig_id, signer,
// sig_key, sig_hashalgo, signature), the SignedData's shape and the kernels that accept it.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_common.hpp"
#include "cms/kernel.hpp"
#include "cms/signed_data.hpp"
#include "module/module_signature.hpp"
#include "options.hpp"
#include "registry.hpp"

namespace modsign::cli {

namespace {

struct InfoArgs {
  std::vector<std::string> modules;
  bool json = false;
  std::uint64_t max_size = module::kDefaultMaxDecompressed;
};

/// The kernel profiles whose parser and module usage gate accept the signature (trust in
/// the signer aside): "v6", "v7.0", "v7.0+waiver".
nlohmann::json accepted_by(ByteView cms_der, ByteView content) {
  nlohmann::json out = nlohmann::json::array();
  auto profiles = std::vector<std::pair<std::string, kernel::KernelProfile>>{
      {"v6", kernel::KernelProfile::v6()}, {"v7.0", kernel::KernelProfile::v7_0()}};
  auto waived = kernel::KernelProfile::v7_0();
  waived.waive_mldsa_authattrs = true;
  profiles.emplace_back("v7.0+waiver", waived);
  for (const auto& [name, prof] : profiles) {
    auto msg = kernel::pkcs7_parse_message(cms_der, prof);
    if (!msg || !kernel::pkcs7_supply_detached_data(*msg, content)) continue;
    if (kernel::pkcs7_verify(*msg, kernel::Usage::module, prof)) out.push_back(name);
  }
  return out;
}

/// What modinfo shows about each module's signature, and more.  With --json, line N is
/// input N: an input that cannot be read or parsed is a line {"path": ..., "error": ...}
/// too (the message is also on stderr), as verify --json does.
int cmd_info(const InfoArgs& a) {
  int worst = kExitOk;
  for (const auto& path : a.modules) {
    auto failed = [&](const std::string& why) {
      worst = std::max(worst, kExitInput);
      if (a.json) std::cout << dump({{"path", path}, {"error", why}}) << "\n";
    };
    std::string why;
    auto lm = read_module(path, a.max_size, &why);
    if (!lm) {
      failed(why);
      continue;
    }
    const Bytes& file = lm->m.image;
    nlohmann::json j{{"path", path}, {"size", file.size()}, {"compressed", compression_json(lm->m)}};
    if (!module::has_marker(file)) {
      j["signed"] = false;
      j["content_length"] = file.size();
    } else {
      auto split = module::split(file);
      if (!split) {
        const std::string e = std::string(errno_name(split.error().code)) + ": " + split.error().message;
        complain(path, e);
        failed(e);
        continue;
      }
      auto sd = cms::parse(split->cms);
      if (!sd || sd->signers.empty()) {
        const std::string e =
            sd ? "PKCS#7 has no SignerInfo" : std::string(errno_name(sd.error().code)) + ": " + sd.error().message;
        complain(path, e);
        failed(e);
        continue;
      }
      const auto& si = sd->signers.front();
      j["signed"] = true;
      j["sig_id"] = "PKCS#7";
      j["signer"] = signer_cn(si);
      j["sig_key"] = sig_key_text(si);
      j["sig_hashalgo"] = hash_text(si);
      j["signature"] = to_colon_hex(si.signature);
      j["signer_id_type"] = si.sid_type == cms::SignerIdType::issuer_and_serial ? "issuerAndSerialNumber"
                                                                                : "subjectKeyIdentifier";
      j["signature_algorithm"] = sig_algo_text(si);
      j["signed_attrs"] = si.signed_attrs.has_value();
      j["signer_infos"] = sd->signers.size();
      j["certificates"] = sd->certificates.size();
      j["cms_length"] = split->cms.size();
      j["signature_length"] = si.signature.size();
      j["content_length"] = split->content.size();
      try {
        j["accepted_by"] = accepted_by(split->cms, split->content);
      } catch (const std::exception& e) {
        complain(path, std::string("internal error: ") + e.what());
        failed(std::string("internal error: ") + e.what());
        continue;
      }
    }
    if (a.json) {
      std::cout << dump(j) << "\n";
      continue;
    }
    auto line = [](const std::string& k, const std::string& v) {
      std::cout << k << ":" << std::string(k.size() < 20 ? 20 - k.size() : 1, ' ') << printable(v) << "\n";
    };
    line("file", path);
    if (lm->m.compression != module::Compression::none) {
      line("compressed", compression_text(lm->m));
      if (!lm->m.kernel_decompress_problem.empty()) line("kernel_decompress", lm->m.kernel_decompress_problem);
    }
    line("signed", j["signed"].get<bool>() ? "yes" : "no");
    if (!j["signed"].get<bool>()) {
      line("content_length", std::to_string(file.size()));
      continue;
    }
    for (const char* k : {"sig_id", "signer", "sig_key", "sig_hashalgo", "signer_id_type", "signature_algorithm"})
      line(k, j[k].get<std::string>());
    line("signed_attrs", j["signed_attrs"].get<bool>() ? "yes" : "no");
    for (const char* k : {"signer_infos", "certificates", "cms_length", "signature_length", "content_length"})
      line(k, std::to_string(j[k].get<std::size_t>()));
    std::string acc;
    for (const auto& p : j["accepted_by"]) acc += (acc.empty() ? "" : " ") + p.get<std::string>();
    line("accepted_by", acc.empty() ? "(none)" : acc);
    const std::string sig = j["signature"].get<std::string>();
    line("signature", sig.size() > 47 ? sig.substr(0, 47) + ":..." : sig);
  }
  return worst;
}

Runner setup_info(CLI::App& c) {
  auto a = std::make_shared<InfoArgs>();
  add_json_flag(&c, a->json);
  add_module_inputs(&c, a->max_size);
  c.add_option("MODULE", a->modules, "modules")->required();
  return [a] { return cmd_info(*a); };
}

}  // namespace

const Registration kInfo{{"info", "what modinfo shows about a signature, and more", setup_info}};

}  // namespace modsign::cli
