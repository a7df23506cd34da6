// `modsign info`: what modinfo shows about each module's signature (sig_id, signer,
// sig_key, sig_hashalgo, signature), the SignedData's shape and the kernels that accept it.
#include <modsign/modsign.hpp>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli_common.hpp"
#include "options.hpp"
#include "registry.hpp"

namespace modsign::cli {

namespace {

struct InfoArgs {
  std::vector<std::string> modules;
  bool json = false;
  std::uint64_t max_size = kMaxModuleSize;
};

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
    if (!lm) {  // "<path>: <reason>": the reason alone in the JSON, as digest and verify give it
      failed(without_path(path, why));
      continue;
    }
    const std::size_t size = lm->m.image.size();
    nlohmann::json j{{"path", path}, {"size", size}, {"compressed", compression_json(lm->m)}};
    SignatureInfo si;
    std::vector<SignatureInfo> stack;
    try {
      stack = describe_signatures(*lm);
      si = stack.front();
    } catch (const InputError& e) {
      complain("", e.what());
      failed(without_path(path, e.what()));
      continue;
    } catch (const std::exception& e) {
      complain(path, std::string("internal error: ") + e.what());
      failed(std::string("internal error: ") + e.what());
      continue;
    }
    j["signed"] = si.is_signed;
    if (!si.is_signed) {
      j["content_length"] = si.content_length;
    } else {
      j["sig_id"] = si.sig_id;
      j["signer"] = si.signer;
      j["sig_key"] = si.sig_key;
      j["sig_hashalgo"] = si.sig_hashalgo;
      j["signature"] = si.signature;
      j["signer_id_type"] = si.signer_id_type;
      j["signature_algorithm"] = si.signature_algorithm;
      j["signed_attrs"] = si.signed_attrs;
      j["signer_infos"] = si.signer_infos;
      j["certificates"] = si.certificates;
      j["cms_length"] = si.cms_length;
      j["signature_length"] = si.signature_length;
      j["content_length"] = si.content_length;
      j["accepted_by"] = si.accepted_by;
      if (stack.size() > 1) {  // the signatures the outermost one covers
        nlohmann::json nested = nlohmann::json::array();
        for (std::size_t k = 1; k < stack.size(); ++k) {
          const SignatureInfo& n = stack[k];
          nested.push_back({{"cms_offset", n.content_length},
                            {"cms_length", n.cms_length},
                            {"signature_algorithm", n.signature_algorithm},
                            {"sig_hashalgo", n.sig_hashalgo},
                            {"signer", n.signer},
                            {"sig_key", n.sig_key},
                            {"signed_attrs", n.signed_attrs},
                            {"content_length", n.content_length},
                            {"accepted_by", n.accepted_by}});
        }
        j["nested"] = nested;
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
    if (lm->m.compression != Compression::none) {
      line("compressed", compression_text(lm->m));
      if (!lm->m.kernel_decompress_problem.empty()) line("kernel_decompress", lm->m.kernel_decompress_problem);
    }
    line("signed", j["signed"].get<bool>() ? "yes" : "no");
    if (!j["signed"].get<bool>()) {
      line("content_length", std::to_string(size));
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
    for (std::size_t k = 1; k < stack.size(); ++k)  // "nested[1]: RSA sha256, CMS 720 bytes at 4096"
      line("nested[" + std::to_string(k) + "]",
           stack[k].signature_algorithm + " " + stack[k].sig_hashalgo + ", CMS " + std::to_string(stack[k].cms_length) +
               " bytes at " + std::to_string(stack[k].content_length) + (stack[k].signed_attrs ? ", signedAttrs" : ""));
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
