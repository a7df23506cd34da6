// `modsign strip` (remove the appended signature) and `modsign extract` (write it out as
// MODULE.p7s): modsign::strip_module_file() and extract_signature_file().
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <modsign/output.hpp>
#include <modsign/sign.hpp>

#include "batch.hpp"
#include "cli_common.hpp"
#include "options.hpp"
#include "registry.hpp"

namespace modsign::cli {

namespace {

struct StripArgs {
  std::vector<std::string> modules, dirs;
  std::string dest;
  bool recompress = false, all = false, legacy = false;
  std::uint64_t max_size = StripOptions{}.max_size;
  BatchOptions batch;
};

/// Remove the appended signature (content only remains), recompressing if asked: one
/// batch, as sign (run_batch: --jobs, --quiet, --sync, the summary line).
int cmd_strip(const StripArgs& a) {
  std::size_t dir_error = 0;  // entries under -r DIR not handled (reported)
  const auto inputs = expand_module_tree(a.modules, a.dirs, &dir_error);
  if (inputs.empty() && dir_error) return kExitInput;  // every -r DIR failed or was empty (reported)
  if (!module_inputs_usable(inputs, a.dirs, a.dest)) return kExitUsage;
  // As sign: symbolic links found under -r are skipped, then the same file named twice is
  // stripped once; compressed modules under -r are left alone unless --recompress.
  return run_file_batch("strip", inputs, a.dirs, a.recompress, dir_error, a.batch,
                        [&](std::size_t i, ItemResult& r, const OutputRoute& to) {
                          const BatchInput& in = inputs[i];
                          StripOptions o;
                          o.recompress = a.recompress;
                          o.out = a.dest;
                          o.max_size = a.max_size;
                          o.all = a.all;
                          o.legacy = a.legacy;
                          o.expect_file = walked_file(in, a.dirs);
                          try {
                            const StripReport s = strip_module_file(in.path, o, to);
                            r.bytes = s.bytes_read;
                            for (const auto& n : s.notes) complain(in.path, n);
                            if (!s.was_signed) r.out = printable(in.path) + ": not signed, unchanged\n";
                            else if (s.signatures_removed > 1)
                              r.out = printable(s.path) + ": " + std::to_string(s.signatures_removed) +
                                      " signatures removed (" + std::to_string(s.cms_size) + " bytes of CMS)\n";
                            else
                              r.out = printable(s.path) + ": signature removed (" + std::to_string(s.cms_size) +
                                      " bytes of CMS)\n";
                          } catch (const SignError& e) {
                            if (e.reason() == SignRefusal::compressed)
                              complain(in.path, e.format() + "-compressed module: use --recompress");
                            else complain("", e.what());
                            return kExitInput;
                          }
                          return kExitOk;
                        });
}

struct ExtractArgs {
  std::vector<std::string> modules;
  std::string out;
  std::uint64_t max_size = StripOptions{}.max_size;
};

/// Write each module's PKCS#7 as MODULE.p7s (or --out for one module).
int cmd_extract(const ExtractArgs& a) {
  if (!a.out.empty() && a.modules.size() != 1) {
    complain("", "--out needs exactly one MODULE");
    return kExitUsage;
  }
  int worst = kExitOk;
  for (const auto& path : a.modules) {
    worst = std::max(worst, run_guarded(
                                [&] {
                                  const ExtractReport r = extract_signature_file(path, a.out, a.max_size);
                                  std::cout << printable(r.path) << ": " << r.cms_size << " bytes of PKCS#7\n";
                                  return kExitOk;
                                },
                                nullptr, path));
  }
  return worst;
}

Runner setup_strip(CLI::App& c) {
  auto a = std::make_shared<StripArgs>();
  add_out_option(&c, a->dest, "write the result here instead of in place (one MODULE)", "--dest");
  c.add_flag("--recompress", a->recompress, "strip compressed modules and recompress them");
  c.add_flag("--all", a->all, "remove every stacked signature (a module signed twice), not only the outermost");
  c.add_flag("--legacy", a->legacy,
             "also strip a trailer the kernel refuses as legacy (id_type 0/1, non-zero legacy fields), with a note");
  add_module_inputs(&c, a->max_size, nullptr, &a->dirs, "strip");
  add_batch_options(&c, a->batch, true);
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
