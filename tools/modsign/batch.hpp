// Batch runs of one operation over many modules (modsign sign / verify with many MODULE
// arguments or -r DIR): a pool of --jobs threads, per-module output printed in input
// order, a progress bar on a terminal, a summary line and one exit status.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <modsign/output.hpp>
#include <modsign/tree.hpp>

namespace CLI {
class App;
}

namespace modsign::cli {

/// Options shared by the batch commands.
struct BatchOptions {
  unsigned jobs = 0;              ///< worker threads; 0 = the number of CPUs
  bool quiet = false;             ///< no progress, no summary, no lines for modules that succeed
  std::string sync = "batch";     ///< "batch" | "each" | "none" (SyncPolicy)
  bool always_print_out = false;  ///< print `out` of successful items even with --quiet (JSON)
  /// Entries under -r DIR that could not be handled (already reported): the summary line
  /// says ", N not handled" after "skipped".
  std::size_t not_handled = 0;
  /// Outputs belong to the names, not the files (ima sign --sigfile: NAME.sig): a named
  /// symbolic link to another input is its own name, not a duplicate (duplicate_of()).
  bool outputs_by_name = false;
  /// Items are checks (verify, ima verify): a negative verdict (exit 1) is a check made, not a
  /// failure; the summary says "D checked, E errors" (errors: no verdict) for "done, failed".
  bool verdicts = false;
};
/// Adds --jobs/-j, --quiet/-q and (if `with_sync`) --sync to a subcommand.
void add_batch_options(CLI::App* c, BatchOptions& o, bool with_sync, const char* inputs = "modules",
                       const char* quiet_help = nullptr);

/// One input of a batch.
struct BatchInput {
  std::string path;
  bool from_dir = false;  ///< found under -r DIR (not named on the command line)
  /// Why a -r entry is not processed ("" = process it): e.g. "symbolic link, not followed",
  /// "FIFO, not a regular file".
  std::string not_regular;
  /// For a regular file found under -r DIR: the file the walk found; for an argument: the
  /// file stat() found (links followed) when the inputs were expanded, if a regular file.
  /// Checked again when it is opened (SignOptions::expect_file, through walked_file()).
  std::optional<FileId> file;
  /// The index of the -r DIR it was found under in the command's DIR list (kNoDir for an
  /// argument).
  std::size_t dir = kNoDir;
  static constexpr std::size_t kNoDir = SIZE_MAX;
};

/// What the library checks an input against (SignOptions::expect_file and the others): a
/// walked entry's -r DIR (of `dirs`, the command's DIR list) and the file the walk found;
/// an argument's file as found when the inputs were expanded (WalkedFile::root empty);
/// nullopt when there is none (an argument that was not a regular file then).
std::optional<WalkedFile> walked_file(const BatchInput& in, const std::vector<std::string>& dirs);

/// MODULE arguments (in the order given) and then, for each -r DIR in turn, every
/// directory entry under it named *.ko, *.ko.xz, *.ko.zst or *.ko.gz (the kernel's module
/// names; modules_install compresses to those suffixes), sorted by path (walk_tree(),
/// <modsign/tree.hpp>: symbolic links not followed, any depth).  Entries that are not
/// regular files are returned with `not_regular` set so that the caller reports them.
/// What cannot be handled is reported with complain() ("modsign: PATH: <reason>") and
/// counts in `*dir_error` (exit status 3 for the caller; BatchOptions::not_handled): a directory that cannot be opened
/// or read (the rest is walked), an entry whose path is PATH_MAX bytes or longer ("File name too long (the path is N
/// bytes, PATH_MAX is 4096): not handled"), a directory moved while walked, and a DIR with no module name under it ("no
/// modules under it (*.ko,
/// *.ko.xz, *.ko.zst, *.ko.gz)": the same rule for every command).
std::vector<BatchInput> expand_module_tree(const std::vector<std::string>& files, const std::vector<std::string>& dirs,
                                           std::size_t* dir_error);

/// FILE arguments and then every entry under each -r DIR (any name; `ima sign`, `ima
/// verify`), walked and reported as expand_module_tree() does ("no files under it").
std::vector<BatchInput> expand_file_tree(const std::vector<std::string>& files, const std::vector<std::string>& dirs,
                                         std::size_t* dir_error);
/// With --sigfile: the FILE.sig files found under -r DIR are the signatures, not files to
/// sign or check (skipped with "signature file (--sigfile), not a file to sign or check").
/// A DIR whose entries are all such signature files has nothing to handle: "DIR: no files
/// under it but signature files (FILE.sig)", counted in `*dir_error` (exit 3), as an empty
/// DIR.
void skip_sigfiles(std::vector<BatchInput>& inputs, const std::vector<std::string>& dirs, std::size_t* dir_error);
/// The inputs of `ima sign` and `ima verify`: expand_file_tree(), then (with `sigfile`)
/// skip_sigfiles().  Nothing to do is reported and gives nullopt with `*status`: kExitInput
/// when every -r DIR failed or was empty, kExitUsage ("no files given (FILE... or -r
/// DIR)") when neither FILE nor DIR was given.
std::optional<std::vector<BatchInput>> ima_file_inputs(const std::vector<std::string>& files,
                                                       const std::vector<std::string>& dirs, bool sigfile,
                                                       std::size_t* dir_error, int* status);

/// The usage checks of a command that writes modules (sign, strip): "--dest needs exactly
/// one MODULE" when `dest` is set and the inputs are not exactly one MODULE argument, and
/// "no modules given (MODULE... or -r DIR)" when there are none.  Reports the first that
/// applies with complain() and returns false (the caller exits kExitUsage).
bool module_inputs_usable(const std::vector<BatchInput>& inputs, const std::vector<std::string>& dirs,
                          const std::string& dest);

/// For each input, the index of the earlier input naming the same file (by
/// std::filesystem::weakly_canonical path; for an entry found under -r DIR, DIR's canonical
/// path followed by the entry's path below DIR, as the walk found it: `dirs` is the
/// command's DIR list) that was the same file when each was found (BatchInput::file), or
/// SIZE_MAX for a first occurrence.  Inputs with
/// `not_regular` set (e.g. a symbolic link found under -r) take no part: they are reported as
/// skipped by the caller and neither count as an occurrence nor shadow the real file.  Hard
/// links are separate names and are not duplicates.  With `by_name` a named symbolic link
/// as the last component is not followed: its name is what an output beside it belongs to.
std::vector<std::size_t> duplicate_of(const std::vector<BatchInput>& inputs, const std::vector<std::string>& dirs,
                                      bool by_name = false);

/// The line a batch prints for a duplicate: "skipped: same file as FIRST; handled once".
std::string duplicate_text(const std::string& first);

/// True for a name ending in .ko.xz, .ko.zst or .ko.gz.
bool compressed_module_name(const std::string& path);

/// Whether a batch that rewrites modules (sign, sign --prepare, strip: `verb`) skips
/// inputs[i], and if so reports why with complain(): an entry that is not a regular file
/// ("skipped: <why>"), a later name of the same file (duplicate_text(); `duplicate` is
/// duplicate_of(inputs, dirs)), or a compressed module found under -r when `compressed_ok` is
/// false ("skipped: compressed module (--recompress <verb>s it and recompresses it in the
/// same format)").
bool skip_sign_input(const std::vector<BatchInput>& inputs, const std::vector<std::size_t>& duplicate, std::size_t i,
                     bool compressed_ok, const std::string& verb = "sign");

/// How one item ended.
enum class ItemState { done, failed, skipped };

/// What one work item produced.  `out` and `err` are printed (to stdout, stderr) in input
/// order once every earlier item is printed.
struct ItemResult {
  ItemState state = ItemState::done;
  int exit = 0;             ///< exit status this item asks for (kExit*)
  std::uint64_t bytes = 0;  ///< bytes of module read
  std::string out, err;
};

/// While alive, complain() on this thread appends to `sink` instead of writing to stderr.
class CaptureComplaints {
 public:
  explicit CaptureComplaints(std::string& sink);
  ~CaptureComplaints();
  CaptureComplaints(const CaptureComplaints&) = delete;
  CaptureComplaints& operator=(const CaptureComplaints&) = delete;

 private:
  std::string* prev_;
};
/// The capture sink of this thread, or nullptr (used by complain()).
std::string* complaint_sink();

// CleanupOnSignal (no .modsign.XXXXXX left behind by SIGINT/SIGTERM/SIGHUP) is the public
// modsign::CleanupOnSignal of <modsign/output.hpp>.

/// The work of item `i` of a batch; the files it writes go by `to` (the batch's OutputBatch,
/// item `i`), given to the library calls that write them.
using BatchWork = std::function<ItemResult(std::size_t i, const OutputRoute& to)>;

/// Runs `work(i, to)` for every i in [0, n) on min(jobs, n) threads (jobs 1: on the calling
/// thread; fewer if no more threads can be created, and the summary names the number that
/// ran) inside a CleanupOnSignal and an OutputBatch of the chosen sync policy (`to` routes
/// item i's outputs to it), prints every item's `out`/`err` in input order (under
/// --sync batch only once the item's outputs are in place; an item whose fsync or rename
/// failed prints "modsign: <file>: fsync: <reason>" instead of its `out` and is failed,
/// exit 3), draws a progress
/// bar on stderr when it is a terminal (not with --quiet), waits until every output is in
/// place (OutputBatch::finish(); a failure there is reported and fails its item), and
/// prints the summary "modsign: <verb>: D done, F failed, S skipped, B bytes, T s, J jobs"
/// on stderr when `summary` and not --quiet.  Returns the highest item exit status, or
/// kExitInput if an output could not be put in place.  `work` must be thread-safe; an
/// exception it throws fails its item (exit 3) with a "modsign: <name(i)>: internal error:
/// <what>" line (without "<name(i)>: " when `name` is empty).
int run_batch(const std::string& verb, std::size_t n, const BatchWork& work, const BatchOptions& o, bool summary,
              const std::function<std::string(std::size_t)>& name = {});

/// run_batch() over the files of a command that handles each on its own (sign, strip, ima
/// sign): `inputs` from expand_module_tree() or expand_file_tree() with the command's -r
/// `dirs`; an entry skip_sign_input() skips (`compressed_ok` as there) is skipped; else
/// `handle(i, r, to)` handles inputs[i] under run_guarded() (its complaints go to r.err, its
/// lines to r.out) and returns the item's exit status.  `dir_error` entries not handled
/// count in the summary and make the status at least kExitInput.
int run_file_batch(const std::string& verb, const std::vector<BatchInput>& inputs, const std::vector<std::string>& dirs,
                   bool compressed_ok, std::size_t dir_error, BatchOptions o,
                   const std::function<int(std::size_t, ItemResult&, const OutputRoute&)>& handle);

}  // namespace modsign::cli
