// modsign command line: the --help layout (help_format.hpp).  CLI11 before 2.5 prints each
// description on one line (240 columns for sign --hash's); it indents the text after every
// newline to the description column, so wrapping the text is enough.
#include "help_format.hpp"

#include <iomanip>
#include <sstream>
#include <utility>
#include <vector>

namespace modsign::cli {

namespace {

/// The words of `line`, a word wider than `width` cut after each '|' ("a|b|c" lists of
/// values); .second: the piece follows a space.
std::vector<std::pair<std::string, bool>> pieces(const std::string& line, std::size_t width) {
  std::vector<std::pair<std::string, bool>> out;
  std::istringstream words(line);
  for (std::string word; words >> word;) {
    bool spaced = true;
    const bool cut_all = word.size() > width;
    while (cut_all && word.find('|') < word.size() - 1) {
      const std::size_t cut = word.find('|') + 1;
      out.emplace_back(word.substr(0, cut), spaced);
      word.erase(0, cut);
      spaced = false;
    }
    out.emplace_back(word, spaced);
  }
  return out;
}

}  // namespace

std::string wrap_words(const std::string& text, std::size_t width) {
  std::string out;
  std::istringstream lines(text);
  bool first = true;
  for (std::string given; std::getline(lines, given); first = false) {  // the text's own line breaks stay
    if (!first) out += "\n";
    std::string line;
    for (const auto& [piece, spaced] : pieces(given, width)) {
      const std::string gap = spaced && !line.empty() ? " " : "";
      if (!line.empty() && line.size() + gap.size() + piece.size() > width) {
        out += line + "\n";
        line = piece;
      } else {
        line += gap + piece;
      }
    }
    out += line;
  }
  return out;
}

namespace {

class WrappingFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string opts = CLI::Formatter::make_option_opts(opt);
    if (const auto at = opts.find(" " + get_label("Excludes") + ":"); at != std::string::npos) opts.erase(at);
    return opts;
  }

  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string desc = CLI::Formatter::make_option_desc(opt);
    if (!opt->get_excludes().empty()) {
      std::string names;
      for (const CLI::Option* other : opt->get_excludes()) names += (names.empty() ? "" : ", ") + other->get_name();
      desc += " (not with " + names + ")";
    }
    return wrap_words(desc, description_width());
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    std::ostringstream out;
    const std::string name = "  " + sub->get_display_name(true);
    out << std::setw(static_cast<int>(get_column_width())) << std::left << name;
    if (name.size() >= get_column_width()) out << "\n" << std::string(get_column_width(), ' ');
    for (const char c : wrap_words(sub->get_description(), description_width())) {
      out.put(c);
      if (c == '\n') out << std::string(get_column_width(), ' ');
    }
    out << "\n";
    return out.str();
  }

  std::string make_description(const CLI::App* app) const override {
    const std::string desc = CLI::Formatter::make_description(app);
    return desc.empty() ? desc : wrap_words(desc, kHelpWidth) + "\n";
  }

 private:
  std::size_t description_width() const {
    return kHelpWidth > get_column_width() + 20 ? kHelpWidth - get_column_width() : 20;
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> help_formatter() { return std::make_shared<WrappingFormatter>(); }

}  // namespace modsign::cli
