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
#include "report_render.hpp"

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
    std::string why;  // the reason alone in the JSON, as digest and verify give it
    std::string out;
    const int st = run_guarded(
        [&] {
          const LoadedModule lm = open_module_file(path, modsign::KernelProfile(), OpenOptions{a.max_size, false});
          const std::vector<SignatureInfo> stack = describe_signatures(lm);
          out = a.json ? dump(to_json(stack, path, lm.m)) + "\n" : to_text(stack, path, lm.m);
          return kExitOk;
        },
        &why, path);
    if (st != kExitOk) {
      worst = std::max(worst, st);
      if (a.json) out = dump({{"path", path}, {"error", why}}) + "\n";
    }
    std::cout << out;
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
