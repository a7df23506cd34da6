// Batch runs over many modules; see batch.hpp.
#include "batch.hpp"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <latch>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

#include <modsign/tree.hpp>
#include "cli_common.hpp"

namespace modsign::cli {

namespace {
thread_local std::string* t_sink = nullptr;

bool ends_with(const std::string& s, const std::string& sfx) {
  return s.size() > sfx.size() && s.compare(s.size() - sfx.size(), sfx.size(), sfx) == 0;
}

}  // namespace

void add_batch_options(CLI::App* c, BatchOptions& o, bool with_sync, const char* inputs, const char* quiet_help) {
  c->add_option("--jobs,-j", o.jobs, "worker threads (default: the number of CPUs)");
  c->add_flag("--quiet,-q", o.quiet,
              quiet_help ? std::string(quiet_help)
                         : std::string("no progress bar, no summary, no line for ") + inputs +
                               " that succeed or are skipped without failing (symbolic links and compressed modules "
                               "under -r, a file named twice)");
  if (with_sync)
    c->add_option("--sync", o.sync,
                  "durability of the outputs: batch (background threads fsync and rename each output while the "
                  "work goes on), each (fsync and rename per file on the worker), none (no fsync)")
        ->check(CLI::IsMember({"batch", "each", "none"}))
        ->capture_default_str();
}

CaptureComplaints::CaptureComplaints(std::string& sink) : prev_(t_sink) { t_sink = &sink; }
CaptureComplaints::~CaptureComplaints() { t_sink = prev_; }
std::string* complaint_sink() { return t_sink; }

bool compressed_module_name(const std::string& path) {
  return ends_with(path, ".ko.xz") || ends_with(path, ".ko.zst") || ends_with(path, ".ko.gz");
}

bool module_inputs_usable(const std::vector<BatchInput>& inputs, const std::vector<std::string>& dirs,
                          const std::string& dest) {
  if (!dest.empty() && (inputs.size() != 1 || !dirs.empty())) {
    complain("", "--dest needs exactly one MODULE");
    return false;
  }
  if (inputs.empty() && dirs.empty()) {
    complain("", "no modules given (MODULE... or -r DIR)");
    return false;
  }
  return true;
}

std::optional<WalkedFile> walked_file(const BatchInput& in, const std::vector<std::string>& dirs) {
  if (!in.file) return std::nullopt;
  if (!in.from_dir) return WalkedFile{"", *in.file};  // a file named: its identity only
  if (in.dir >= dirs.size()) return std::nullopt;
  return WalkedFile{dirs[in.dir], *in.file};
}

namespace {
std::vector<BatchInput> expand_tree(const std::vector<std::string>& files, const std::vector<std::string>& dirs,
                                    std::size_t* dir_error, bool modules_only) {
  *dir_error = 0;
  std::vector<BatchInput> out;
  for (const auto& f : files) {
    BatchInput in{f, false, "", std::nullopt, BatchInput::kNoDir};
    struct stat st {};
    if (::stat(f.c_str(), &st) == 0 && S_ISREG(st.st_mode))
      in.file = FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
    out.push_back(std::move(in));
  }
  const auto is_module = [](std::string_view n) {
    const std::string s(n);
    return ends_with(s, ".ko") || compressed_module_name(s);
  };
  for (std::size_t di = 0; di < dirs.size(); ++di) {
    const std::string& d = dirs[di];
    const auto entries = modules_only ? walk_tree(d, is_module) : walk_tree(d);
    for (const auto& e : entries) {
      if (e.kind == TreeEntry::Kind::error || e.kind == TreeEntry::Kind::moved) {
        complain(e.path, tree_problem_text(e));
        ++*dir_error;
      } else {
        BatchInput in{e.path, true, std::string(tree_kind_text(e.kind)), std::nullopt, di};
        if (e.kind == TreeEntry::Kind::regular) in.file = e.file;
        out.push_back(std::move(in));
      }
    }
    if (entries.empty()) {  // one rule for every command: an -r DIR with nothing to handle is an input error
      complain(d, modules_only ? "no modules under it (*.ko, *.ko.xz, *.ko.zst, *.ko.gz)" : "no files under it");
      ++*dir_error;
    }
  }
  return out;
}
}  // namespace

std::vector<BatchInput> expand_module_tree(const std::vector<std::string>& files, const std::vector<std::string>& dirs,
                                           std::size_t* dir_error) {
  return expand_tree(files, dirs, dir_error, true);
}

std::vector<BatchInput> expand_file_tree(const std::vector<std::string>& files, const std::vector<std::string>& dirs,
                                         std::size_t* dir_error) {
  return expand_tree(files, dirs, dir_error, false);
}

void skip_sigfiles(std::vector<BatchInput>& inputs, const std::vector<std::string>& dirs, std::size_t* dir_error) {
  std::vector<std::pair<std::size_t, std::size_t>> per_dir(dirs.size());  // each DIR's entries, signature files
  for (auto& in : inputs) {
    if (!in.from_dir) continue;
    auto& [entries, sigs] = per_dir[in.dir];
    ++entries;
    if (in.not_regular.empty() && in.path.size() > 4 && in.path.compare(in.path.size() - 4, 4, ".sig") == 0) {
      in.not_regular = "signature file (--sigfile), not a file to sign or check";
      ++sigs;
    }
  }
  for (std::size_t di = 0; di < dirs.size(); ++di)
    if (per_dir[di].first != 0 && per_dir[di].first == per_dir[di].second) {
      complain(dirs[di], "no files under it but signature files (FILE.sig)");
      ++*dir_error;
    }
}

std::optional<std::vector<BatchInput>> ima_file_inputs(const std::vector<std::string>& files,
                                                       const std::vector<std::string>& dirs, bool sigfile,
                                                       std::size_t* dir_error, int* status) {
  auto inputs = expand_file_tree(files, dirs, dir_error);
  *status = kExitInput;
  if (inputs.empty() && *dir_error) return std::nullopt;  // every -r DIR failed or was empty (reported)
  if (sigfile) skip_sigfiles(inputs, dirs, dir_error);
  if (inputs.empty() && !*dir_error) {
    complain("", "no files given (FILE... or -r DIR)");
    *status = kExitUsage;
    return std::nullopt;
  }
  *status = kExitOk;
  return inputs;
}

namespace {
/// weakly_canonical(path), worked out from its directory's, each directory once (`known`):
/// a last component that is a plain name and no symbolic link only adds itself.  Spares
/// the readlink and stat per path component of every file in a batch (issue 28's profile:
/// 9 readlinks and 8 stats per file of a /usr sample).  With `keep_link` a symbolic link as
/// the last component is not followed (its own name).  Sets `ec` as weakly_canonical does.
std::filesystem::path canonical_of(const std::filesystem::path& p, std::map<std::string, std::filesystem::path>& known,
                                   std::error_code& ec, bool keep_link = false) {
  ec.clear();
  const auto name = p.filename();
  struct stat st {};
  if (name.empty() || name == "." || name == ".." || ::lstat(p.c_str(), &st) != 0 ||
      (S_ISLNK(st.st_mode) && !keep_link))
    return std::filesystem::weakly_canonical(p.empty() ? std::filesystem::path(".") : p, ec);
  const std::filesystem::path parent = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  auto it = known.find(parent.string());
  if (it == known.end()) {
    auto dir = canonical_of(parent, known, ec);  // a directory: links followed
    if (ec) return {};
    it = known.emplace(parent.string(), std::move(dir)).first;
  }
  return it->second / name;
}
}  // namespace

std::vector<std::size_t> duplicate_of(const std::vector<BatchInput>& inputs, const std::vector<std::string>& dirs,
                                      bool by_name) {
  std::vector<std::size_t> dup(inputs.size(), SIZE_MAX);
  std::map<std::string, std::size_t> first;
  // An entry found under -r is a regular file reached through no symbolic link (the walk
  // follows none), so its canonical path is its DIR's followed by its path below DIR: worked
  // out once per DIR, never through the directories below it, which may have been swapped
  // for links since the walk (two different files must not become one "same file").
  std::map<std::size_t, std::filesystem::path> dir_canon;
  std::map<std::string, std::filesystem::path> parent_canon;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const BatchInput& in = inputs[i];
    if (!in.not_regular.empty()) continue;  // skipped anyway; must not shadow the file
    std::error_code ec;
    std::string canon;
    if (in.from_dir && in.dir < dirs.size()) {
      const auto below = std::filesystem::path(in.path).lexically_relative(dirs[in.dir]);
      auto [it, added] = dir_canon.try_emplace(in.dir);
      if (added) it->second = std::filesystem::weakly_canonical(dirs[in.dir], ec);
      if (!ec && !below.empty() && *below.begin() != "..") canon = (it->second / below).lexically_normal().string();
      if (ec) dir_canon.erase(it);
    }
    if (canon.empty()) canon = canonical_of(in.path, parent_canon, ec, by_name).string();
    const auto [it, inserted] = first.emplace(ec ? in.path : canon, i);
    // The same path now, and the same file when each was found: a path that leads to
    // another file meanwhile (a directory on it swapped) is no duplicate.  The first is
    // handled only if it is still that file (walked_file()).
    const auto& a = inputs[it->second].file;
    // Both must be files found then: a name that led nowhere (weakly_canonical tidies
    // "missing/.." away as text) is no duplicate of a real file; it reports its own error.
    if (!inserted && a && in.file && *a == *in.file) dup[i] = it->second;
  }
  return dup;
}

std::string duplicate_text(const std::string& first) { return "skipped: same file as " + first + "; handled once"; }

bool skip_sign_input(const std::vector<BatchInput>& inputs, const std::vector<std::size_t>& duplicate, std::size_t i,
                     bool compressed_ok, const std::string& verb) {
  const BatchInput& in = inputs[i];
  if (!in.not_regular.empty()) {
    complain(in.path, "skipped: " + in.not_regular);
    return true;
  }
  if (duplicate[i] != SIZE_MAX) {
    complain(in.path, duplicate_text(inputs[duplicate[i]].path));
    return true;
  }
  // Under -r, compressed modules are reported and left alone unless the caller asks for them.
  if (in.from_dir && compressed_module_name(in.path) && !compressed_ok) {
    complain(in.path,
             "skipped: compressed module (--recompress " + verb + "s it and recompresses it in the same format)");
    return true;
  }
  return false;
}

int run_file_batch(const std::string& verb, const std::vector<BatchInput>& inputs, const std::vector<std::string>& dirs,
                   bool compressed_ok, std::size_t dir_error, BatchOptions o,
                   const std::function<int(std::size_t, ItemResult&, const OutputRoute&)>& handle) {
  const auto duplicate = duplicate_of(inputs, dirs, o.outputs_by_name);
  auto work = [&](std::size_t i, const OutputRoute& to) {
    ItemResult r;
    CaptureComplaints capture(r.err);
    if (skip_sign_input(inputs, duplicate, i, compressed_ok, verb)) {
      r.state = ItemState::skipped;
      return r;
    }
    r.exit = run_guarded([&] { return handle(i, r, to); }, nullptr, inputs[i].path);
    r.state = r.exit == kExitOk ? ItemState::done : ItemState::failed;
    return r;
  };
  o.not_handled = dir_error;
  const int status = run_batch(verb, inputs.size(), work, o, inputs.size() > 1 || !dirs.empty(),
                               [&](std::size_t i) { return inputs[i].path; });
  return dir_error ? std::max(status, kExitInput) : status;
}

}  // namespace modsign::cli
