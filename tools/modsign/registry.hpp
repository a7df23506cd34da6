// The modsign command registry: each tools/modsign/cmd_*.cpp registers its top-level
// command with one static Registration object, and main() builds the command line from
// the registry (in kCommandOrder) instead of knowing every command itself.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace modsign::cli {

/// Runs the selected command once the command line is parsed; returns the exit status.
using Runner = std::function<int()>;

/// One top-level command (`modsign NAME ...`).
struct Command {
  std::string name;     ///< "sign", "verify", ...
  std::string summary;  ///< the line `modsign --help` shows for it
  /// Declares the command's options (and subcommands) on `cmd`, the subcommand main() made
  /// for it, and returns what runs it; the options are bound to state the Runner owns.
  std::function<Runner(CLI::App& cmd)> setup;
  /// A command with its own command line (sign-file, getopt as scripts/sign-file): when
  /// set, main() passes it argv from the command name on, unparsed, and returns its status.
  int (*own_main)(int argc, char** argv) = nullptr;
};

/// The order of `modsign --help` (and of the registry): keygen, sign, sign-file, strip,
/// extract, verify, info, digest, ima, blacklist, dbx, cms.  A registered name missing here is
/// listed after these, by name.
inline const std::vector<std::string> kCommandOrder = {
    "keygen", "sign", "sign-file", "strip", "extract", "verify", "info", "digest", "ima", "blacklist", "dbx", "cms"};

/// Every registered command, in kCommandOrder.
std::vector<const Command*> commands();

/// `const Registration kSign{{"sign", "...", setup}};` at namespace scope in a command's
/// file adds it to the registry before main() runs.
class Registration {
 public:
  explicit Registration(Command c);
};

/// Subcommands of a command (ima template|replay|appraise, blacklist ..., dbx ...) with
/// the runner of each.
using Commands = std::vector<std::pair<CLI::App*, Runner>>;
/// A Runner that runs the runner of whichever of `subs` was selected (the parent
/// requires one: CLI::App::require_subcommand(1)).
Runner run_selected(Commands subs);

}  // namespace modsign::cli
