// The modsign command registry; see registry.hpp.
#include "registry.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>

#include "cli_common.hpp"

namespace modsign::cli {

namespace {

/// Filled by the Registration objects during static initialisation (a function-local
/// static, so that it exists before the first of them runs, in whatever order).
std::vector<Command>& registry() {
  static std::vector<Command> all;
  return all;
}

std::size_t rank(const std::string& name) {
  return static_cast<std::size_t>(std::find(kCommandOrder.begin(), kCommandOrder.end(), name) - kCommandOrder.begin());
}

}  // namespace

Registration::Registration(Command c) { registry().push_back(std::move(c)); }

std::vector<const Command*> commands() {
  std::vector<const Command*> out;
  for (const auto& c : registry()) out.push_back(&c);
  std::sort(out.begin(), out.end(), [](const Command* a, const Command* b) {
    return std::make_pair(rank(a->name), a->name) < std::make_pair(rank(b->name), b->name);
  });
  return out;
}

Runner run_selected(Commands subs) {
  return [subs = std::move(subs)] {
    for (const auto& [cmd, run] : subs)
      if (*cmd) return run();
    return kExitUsage;
  };
}

}  // namespace modsign::cli
