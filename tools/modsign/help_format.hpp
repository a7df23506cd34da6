// modsign command line: the --help layout (CLI11's, with every text wrapped to 100 columns).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

namespace modsign::cli {

/// The widest line of any --help text, in columns.
inline constexpr std::size_t kHelpWidth = 100;

/// Each line of `text` split at spaces into lines of at most `width` characters (a longer
/// word keeps its own line), joined by "\n"; runs of spaces become one.
std::string wrap_words(const std::string& text, std::size_t width);

/// The formatter every command's --help uses: CLI11's, with option and subcommand
/// descriptions wrapped at the description column and the command's description at
/// kHelpWidth; an option's "Excludes: --a --b" moves from the name column to the end of its
/// description as "(not with --a, --b)".  Give it to the application before adding
/// subcommands (they copy it).
std::shared_ptr<CLI::Formatter> help_formatter();

}  // namespace modsign::cli
