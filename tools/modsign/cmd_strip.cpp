// `modsign strip` (remove the appended signature) and `modsign extract` (write it out as
// MODULE.p7s).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "batch.hpp"
#include "cli_common.hpp"
#include "common/file.hpp"
#include "module/compression.hpp"
#include "module/module_signature.hpp"
#include "options.hpp"
#include "registry.hpp"

namespace modsign::cli {

namespace {

struct StripArgs {
  std::vector<std::string> modules, dirs;
  std::string dest;
  bool recompress = false;
  std::uint64_t max_size = module::kDefaultMaxDecompressed;
};

/// Remove the appended signature (content only remains), recompressing if asked.
int cmd_strip(const StripArgs& a) {
  bool dir_error = false;
  const auto inputs = expand_module_tree(a.modules, a.dirs, &dir_error);
  if (!a.dest.empty() && (inputs.size() != 1 || !a.dirs.empty())) {
    complain("", "--dest needs exactly one MODULE");
    return kExitUsage;
  }
  CleanupOnSignal cleanup;  // no .modsign.XXXXXX left behind by SIGINT/SIGTERM/SIGHUP
  // As sign: symbolic links found under -r are skipped, then the same file named twice is
  // stripped once.
  const auto duplicate = duplicate_of(inputs);
  int worst = dir_error ? kExitInput : kExitOk;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string& path = inputs[i].path;
    if (!inputs[i].not_regular.empty()) {
      complain(path, "skipped: " + inputs[i].not_regular);
      continue;
    }
    if (duplicate[i] != SIZE_MAX) {
      complain(path, duplicate_text(inputs[duplicate[i]].path));
      continue;
    }
    auto lm = read_module(path, a.max_size);
    if (!lm) {
      worst = std::max(worst, kExitInput);
      continue;
    }
    const auto& m = lm->m;
    if (m.compression != module::Compression::none && !a.recompress) {
      complain(path, std::string(module::compression_name(m.compression)) + "-compressed module: use --recompress");
      worst = std::max(worst, kExitInput);
      continue;
    }
    if (!module::has_marker(m.image)) {
      std::cout << printable(path) << ": not signed, unchanged\n";
      continue;
    }
    auto split = module::split(m.image);
    if (!split) {
      complain(path, "cannot strip the signature: " + std::string(errno_name(split.error().code)) + " " +
                         split.error().message);
      worst = std::max(worst, kExitInput);
      continue;
    }
    try {
      Bytes out(split->content.begin(), split->content.end());
      if (m.compression != module::Compression::none) out = module::compress(out, m.compression);
      write_file_atomic(a.dest.empty() ? path : a.dest, out);
    } catch (const IoError& e) {
      complain("", e.what());
      worst = std::max(worst, kExitInput);
      continue;
    }
    std::cout << printable(a.dest.empty() ? path : a.dest) << ": signature removed (" << split->cms.size()
              << " bytes of CMS)\n";
  }
  return worst;
}

struct ExtractArgs {
  std::vector<std::string> modules;
  std::string out;
  std::uint64_t max_size = module::kDefaultMaxDecompressed;
};

/// Write each module's PKCS#7 as MODULE.p7s (or --out for one module).
int cmd_extract(const ExtractArgs& a) {
  if (!a.out.empty() && a.modules.size() != 1) {
    complain("", "--out needs exactly one MODULE");
    return kExitUsage;
  }
  int worst = kExitOk;
  for (const auto& path : a.modules) {
    auto lm = read_module(path, a.max_size);
    if (!lm) {
      worst = std::max(worst, kExitInput);
      continue;
    }
    auto split = module::split(lm->m.image);
    if (!split) {
      complain(path, std::string(errno_name(split.error().code)) + ": " + split.error().message);
      worst = std::max(worst, kExitInput);
      continue;
    }
    const std::string out = a.out.empty() ? path + ".p7s" : a.out;
    try {
      write_file_atomic(out, split->cms, 0644, false);
    } catch (const IoError& e) {
      complain("", e.what());
      worst = std::max(worst, kExitInput);
      continue;
    }
    std::cout << printable(out) << ": " << split->cms.size() << " bytes of PKCS#7\n";
  }
  return worst;
}

Runner setup_strip(CLI::App& c) {
  auto a = std::make_shared<StripArgs>();
  add_out_option(&c, a->dest, "write the result here instead of in place (one MODULE)", "--dest");
  c.add_flag("--recompress", a->recompress, "strip compressed modules and recompress them");
  add_module_inputs(&c, a->max_size, nullptr, &a->dirs, "strip");
  c.add_option("MODULE", a->modules, "modules");
  return [a] { return cmd_strip(*a); };
}

Runner setup_extract(CLI::App& c) {
  auto a = std::make_shared<ExtractArgs>();
  add_out_option(&c, a->out, "output file (one MODULE)");
  add_module_inputs(&c, a->max_size);
  c.add_option("MODULE", a->modules, "modules")->required();
  return [a] { return cmd_extract(*a); };
}

}  // namespace

const Registration kStrip{{"strip", "remove the appended signature", setup_strip}};
const Registration kExtract{{"extract", "write the appended PKCS#7 as MODULE.p7s", setup_extract}};

}  // namespace modsign::cli
