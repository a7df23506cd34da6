// `modsign digest`: the kernel's pkcs7_get_digest result for each module, the side
// SHA-256, IMA's d-modsig field and the bin: entry that can stop the module.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <modsign/digest.hpp>
#include <modsign/profile.hpp>

#include "cli_common.hpp"
#include "options.hpp"
#include "registry.hpp"
#include "report_render.hpp"

namespace modsign::cli {

namespace {

struct DigestArgs {
  std::vector<std::string> modules;
  std::string kernel = "v7.0";
  bool json = false;
  std::uint64_t max_size = kMaxModuleSize;  // --max-size
};

/// The kernel's pkcs7_get_digest result as IMA would take it, the side SHA-256, the
/// d-modsig field and whether a bin: entry can stop the module.
int cmd_digest(const DigestArgs& a) {
  const auto profile = public_profile(a.kernel);
  int worst = kExitOk;
  for (const auto& path : a.modules) {
    const auto view = guarded(path, [&] { return digest_module_file(path, profile, a.max_size); });
    if (!view.value) {  // with --json, line N stays input N, as info --json
      if (a.json) std::cout << dump({{"path", path}, {"error", view.reason}}) << "\n";
      worst = std::max(worst, view.status);
      continue;
    }
    std::cout << (a.json ? dump(to_json(*view.value, path, profile.name())) + "\n"
                         : to_text(*view.value, path, profile.name()));
  }
  return worst;
}

Runner setup_digest(CLI::App& c) {
  auto a = std::make_shared<DigestArgs>();
  add_kernel_option(&c, a->kernel);
  add_json_flag(&c, a->json);
  add_module_inputs(&c, a->max_size);
  c.add_option("MODULE", a->modules, "modules")->required();
  return [a] { return cmd_digest(*a); };
}

}  // namespace

const Registration kDigest{
    {"digest", "the kernel's pkcs7_get_digest, the side SHA-256 and IMA's d-modsig", setup_digest}};

}  // namespace modsign::cli
