// `modsign sign --prepare MANIFEST` and `modsign sign --attach MANIFEST --signatures S`:
// signing with a key held elsewhere (modsign::prepare_module_file() and
// attach_signature_file(), <modsign/remote_sign.hpp>).  The manifest is one JSON object per
// line, one line per module (docs/cli/modsign-sign.1.md, REMOTE SIGNING).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <modsign/sign.hpp>

#include "batch.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace modsign::cli {

struct RemoteArgs {
  std::string prepare;     ///< --prepare MANIFEST ("-": standard output)
  std::string attach;      ///< --attach MANIFEST
  std::string signatures;  ///< --signatures FILE|DIR
};
/// Declares --prepare, --attach and --signatures on `sign`.  Their combinations are checked
/// by run_remote() (not by CLI11, whose "Excludes:" notes would enter the help's flag column).
void add_remote_options(CLI::App& sign, RemoteArgs& r);
/// True when any of the three is given.
bool remote_requested(const RemoteArgs& r);

/// How `sign` words what the library reports, shared with its one-step path.
struct SignWording {
  std::function<int(const SignError&)> option_refusal;      ///< prints; returns the exit status
  std::function<std::string(const SignError&)> hint;        ///< "" = the library's message
  std::function<std::string(const SignReport&)> done_line;  ///< the "PATH: signed (...)" line
};

/// Runs --prepare or --attach (`r` says which) with the certificate `cert` ("" = the
/// manifest's for --attach), the form options of `opt`, and the batch options.  Usage
/// errors (exit 2): a `key` given, both steps, --attach without --signatures, --signatures
/// without --attach.  Returns the exit status: 0, 2 (usage), 3 (a module failed; the
/// others are done).
int run_remote(const RemoteArgs& r, const std::string& key, const std::string& cert, const SignOptions& opt,
               const BatchOptions& batch, const std::vector<std::string>& modules, const std::vector<std::string>& dirs,
               const SignWording& words);

}  // namespace modsign::cli
