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
    std::optional<DigestView> view;
    std::string why;
    if (const int st = run_guarded(
            [&] {
              view = digest_module_file(path, profile, a.max_size);
              return kExitOk;
            },
            &why, path);
        st != kExitOk) {  // with --json, line N stays input N, as info --json
      if (a.json) std::cout << dump({{"path", path}, {"error", why}}) << "\n";
      worst = std::max(worst, st);
      continue;
    }
    const ModuleDigests& d = view->digests;
    const bool ok = d.kernel.status == KErr::none;
    const auto& bin_key = view->bin_entry;
    const char* bin_source = view->bin_source == DigestView::BinSource::d_modsig   ? "d-modsig"
                             : view->bin_source == DigestView::BinSource::ima_hash ? "ima-hash"
                             : view->bin_source == DigestView::BinSource::not_read ? "not-read"
                                                                                   : nullptr;
    if (a.json) {
      nlohmann::json kd{{"status", ok ? "ok" : std::string(errno_name(d.kernel.status))}};
      kd["algo"] = ok ? nlohmann::json(d.kernel.algo) : nlohmann::json(nullptr);
      kd["hex"] = ok ? nlohmann::json(to_hex(d.kernel.bytes)) : nlohmann::json(nullptr);
      if (!ok) kd["reason"] = d.kernel.reason;
      nlohmann::json j{{"path", path},
                       {"kernel", profile.name()},
                       {"signed", d.signed_module},
                       {"content_length", d.content_length},
                       {"kernel_digest", kd},
                       {"side_sha256", to_hex(d.side_sha256)},
                       {"d_modsig", d.d_modsig ? nlohmann::json(to_hex(*d.d_modsig)) : nlohmann::json(nullptr)},
                       {"blacklist_visible", bin_key.has_value()},
                       {"bin_entry", bin_key ? nlohmann::json(*bin_key) : nlohmann::json(nullptr)},
                       {"bin_source", bin_source ? nlohmann::json(bin_source) : nlohmann::json(nullptr)},
                       {"file_sha256", to_hex(d.file_sha256)},
                       {"side_bin_entry", "bin:" + to_hex(d.side_sha256)}};
      std::cout << dump(j) << "\n";
      continue;
    }
    std::cout << printable(path) << " (kernel " << profile.name() << "):\n";
    if (ok)
      std::cout << "  kernel_digest: " << d.kernel.algo << ":" << to_hex(d.kernel.bytes)
                << (d.kernel.raw_attributes ? "  (the re-tagged signedAttrs themselves, not a digest: 7.0 ML-DSA quirk)"
                    : d.kernel.over_content ? ""
                                            : "  (hash of the signedAttrs, not of the module)")
                << "\n";
    else std::cout << "  kernel_digest: " << errno_name(d.kernel.status) << " (" << printable(d.kernel.reason) << ")\n";
    std::cout << "  side_sha256:   " << to_hex(d.side_sha256) << "  (" << d.content_length << " bytes signed)\n";
    std::cout << "  d_modsig:      "
              << (d.d_modsig ? to_hex(*d.d_modsig) : std::string("none: IMA records no d-modsig")) << "\n";
    if (view->bin_source == DigestView::BinSource::d_modsig)
      std::cout << "  blacklist:     " << *bin_key << " stops it (IMA bin: check on the d-modsig digest)\n";
    else if (view->bin_source == DigestView::BinSource::ima_hash)
      std::cout << "  blacklist:     " << *bin_key
                << " stops it when the policy requires a signature (no modsig IMA can use: IMA's sha256 of the whole "
                   "file as stored; other ima_hash: modsign blacklist entry --ima-hash)\n";
    else if (view->bin_source == DigestView::BinSource::not_read)
      std::cout << "  blacklist:     no bin: entry is looked up: finit_module refuses an empty file (EINVAL, "
                   "kernel_read_file) before IMA reads it\n";
    else
      std::cout << "  blacklist:     no bin: entry can stop it under " << profile.name()
                << " (IMA has a modsig but no usable digest); with the proposed side SHA-256: bin:"
                << to_hex(d.side_sha256) << "\n";
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
