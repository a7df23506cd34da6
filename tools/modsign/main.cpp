// modsign command line: main() builds the CLI11 application from the command registry
// (registry.hpp; each command registers itself in its tools/modsign/cmd_*.cpp), parses it
// and runs the selected command.
//
// Exit status (design.md): 0 success, 1 negative verdict (verification failed),
// 2 usage error, 3 unreadable or malformed input or I/O failure.  `sign-file` keeps
// scripts/sign-file's own statuses (1 on any error, 2 on usage).
// Errors go to stderr as "modsign: <file>: <what>".
#include <CLI/CLI.hpp>
#include <algorithm>
#include <modsign/version.hpp>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "help_format.hpp"
#include "registry.hpp"

// The packaging helper sets this to the run path of the bundled OpenSSL/Botan libraries.
#ifndef MODSIGN_DEPS_RPATH
#define MODSIGN_DEPS_RPATH ""
#endif

namespace {

/// `modsign --version`: "modsign 0.2.0", then the OpenSSL and Botan in use, and the run
/// path of bundled libraries when the build names one, and every libcrypto loaded (more
/// than one: a warning line).
std::string version_text() {
  std::string v = std::string("modsign ") + modsign::version() + "\n" + modsign::crypto_library_versions();
  if (const std::string rpath = MODSIGN_DEPS_RPATH; !rpath.empty()) v += "\nrun path: " + rpath;
  const auto cryptos = modsign::loaded_libcrypto();
  for (const auto& c : cryptos) v += "\nlibcrypto: " + c;
  if (cryptos.size() > 1)
    v += "\nwarning: " + std::to_string(cryptos.size()) +
         " OpenSSL libraries in one process: a library modsign links brought its own (docs/development.md, "
         "One OpenSSL per process)";
  return v;
}

/// "sign", "ima sign": the subcommands a command line named, for the usage hint.
std::string command_path(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {
    const std::string rest = command_path(*sub);
    return sub->get_name() + (rest.empty() ? "" : " " + rest);
  }
  return "";
}

/// Levenshtein distance of two short words.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

/// The first word of the command line where a command is needed and none is named, with
/// the commands before it in `path` ("" when every word before the options names one).
/// CLI11 says only "A subcommand is required" for `modsign verfy`.
std::string unknown_command(const CLI::App& app, int argc, char** argv, std::string& path, std::string& closest) {
  const CLI::App* cur = &app;
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    const auto subs = const_cast<CLI::App*>(cur)->get_subcommands([](CLI::App*) { return true; });
    if (i == 1 && word.size() > 1 && word[0] == '-' && word != "-h" && word != "--help" && word != "--version")
      return word;  // an option before any command: modsign takes only --help and --version there
    if (word.empty() || word[0] == '-' || subs.empty()) return "";
    const CLI::App* next = nullptr;
    std::size_t best = 3;  // suggest a command at most two edits away
    closest.clear();
    for (const CLI::App* s : subs) {
      if (s->check_name(word)) next = s;
      if (const std::size_t d = edit_distance(word, s->get_name()); d < best) {
        best = d;
        closest = s->get_name();
      }
    }
    if (!next) return word;
    path += (path.empty() ? "" : " ") + word;
    cur = next;
  }
  return "";
}

}  // namespace

namespace modsign::cli {

int run_main(int argc, char** argv) {
  install_stdout_buffer();
  const auto registered = commands();
  // A command with its own command line (sign-file) gets argv from its name on.
  if (argc >= 2)
    for (const Command* c : registered)
      if (c->own_main && c->name == argv[1]) {
        // Its own statuses; a standard output that could not be written is still said, and
        // is sign-file's 1 (any error).
        const int rc = c->own_main(argc - 1, argv + 1);
        return finish_stdout(rc) == rc ? rc : 1;
      }

  CLI::App app{"modsign: ML-DSA (FIPS 204) and classic signing of Linux kernel modules"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text());
  app.formatter(help_formatter());  // before the subcommands: they copy it
  std::vector<std::pair<CLI::App*, Runner>> runners;
  for (const Command* c : registered) {
    CLI::App* sub = app.add_subcommand(c->name, c->summary);
    runners.emplace_back(sub, c->setup(*sub));
  }

  std::string path, closest;
  if (const std::string word = unknown_command(app, argc, argv, path, closest); !word.empty()) {
    complain("", std::string(word[0] == '-' ? "unknown option '" : "unknown command '") +
                     (path.empty() ? "" : path + " ") + word + "'" +
                     (closest.empty() ? "" : " (did you mean '" + closest + "'?)"));
    usage_hint(path);
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return finish_stdout(app.exit(e));  // --help, --version: standard output
    // CLI11's own refusals as modsign words every usage error, and the help of the command.
    complain("", e.what());
    usage_hint(command_path(app));
    return kExitUsage;
  }
  // The one place a command's error becomes an exit status (run_guarded: UsageError 2,
  // InputError and IoError 3, any other exception an internal error, 3).  Every command ends
  // by checking standard output: a full disk or a closed pipe is exit 3, not 0, and says so.
  // main() below catches only what escapes before a command runs (building the command
  // line) or is no std::exception.
  for (auto& [sub, run] : runners)
    if (*sub) return finish_stdout(run_guarded(run));
  return kExitUsage;
}

}  // namespace modsign::cli

int main(int argc, char** argv) {
  try {
    return modsign::cli::run_main(argc, argv);
  } catch (const std::exception& e) {  // not a UsageError, InputError or IoError: e.g. bad_alloc
    modsign::cli::complain("", std::string("internal error: ") + e.what());
  } catch (...) { modsign::cli::complain("", "internal error"); }
  return modsign::cli::kExitInput;
}
