// modsign — the durability of the files the library writes (signed modules, .p7s files, keys): each output is
// written to a temporary file in the target's directory and renamed into place, so that a target is always either its
// old or its new content.  An OutputBatch lets many outputs share the cost of fsync (background committer threads), and
// CleanupOnSignal removes the temporaries when the process is interrupted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/module_image.hpp"  // kMaxModuleSize
#include "modsign/result.hpp"

namespace modsign {

/// The checks write_file_atomic() makes before it writes, made now: its directory takes a
/// temporary file (made and removed again), and an existing `path` is a regular file this
/// process may replace (not a device, FIFO, socket or directory; not immutable or
/// append-only; not another user's in a sticky directory; a name the file system takes).
/// For an output written at the end of a long run (ima sign --manifest): its problem is said
/// before the run, not after.  Throws IoError naming the file, as write_file_atomic() would.
MODSIGN_API void check_output_file(const std::string& path, unsigned mode = 0644, bool keep_mode = true);

// ---- durability --------------------------------------------------------------------------

/// How an output is made durable before it replaces its target.
enum class SyncPolicy {
  batch,  ///< inside an OutputBatch: closed, then fsynced and renamed by the batch's
          ///< committer threads while the caller goes on; finish() waits for them
  each,   ///< fsync the temporary file, then rename it, on the writing thread (the
          ///< default outside a batch; ~4 ms per file on ext4)
  none,   ///< rename at once without fsync (the page cache writes the data back later)
};

/// The outputs of many operations (e.g. signing a module tree with several threads).
/// An operation given an OutputRoute to this batch (sign_module_file(), strip_module_file(),
/// attach_signature_file(), ima_sign_file_sigfile(), ...) writes its files by the batch's
/// policy, as outputs of the route's item.  Under SyncPolicy::batch up to `committers`
/// background threads fsync each staged output and rename it into place (a target is
/// replaced only after its own data is on disk); with `committers` = 0 finish() does it.
/// Per-item failures are returned as data, never printed.  Thread-safe; not copyable.
class MODSIGN_API OutputBatch {
 public:
  /// The item of outputs routed to this batch without one (OutputRoute{&batch}).
  static constexpr std::size_t kNoItem = static_cast<std::size_t>(-1);

  explicit OutputBatch(SyncPolicy policy = SyncPolicy::batch, unsigned committers = 8);
  /// Stops the committers: outputs already in place stay, the temporary files of the
  /// others are removed (their targets keep the old content).
  ~OutputBatch();
  OutputBatch(const OutputBatch&) = delete;
  OutputBatch& operator=(const OutputBatch&) = delete;
  SyncPolicy policy() const noexcept;

  /// An output that could not be put in place (it was removed; the target is untouched).
  struct Failure {
    std::size_t item;     ///< the OutputRoute's item
    std::string message;  ///< "<path>: fsync: <strerror>" or "<path>: rename: <strerror>"
  };
  /// Waits until every staged output is fsynced and renamed, then fsyncs each directory
  /// that received one (making the renames durable).  Returns the failures not already
  /// taken by settle(), ordered by item; the batch is empty afterwards and can be reused.
  /// Nothing to wait for under SyncPolicy::each and none.
  std::vector<Failure> finish();
  /// True when every output staged for `item` so far is settled (in place, or failed);
  /// then appends the messages of its failures to `*messages` and forgets them (finish()
  /// no longer returns them).  False while one is still queued or being committed.
  bool settle(std::size_t item, std::vector<std::string>* messages);
  /// Calls `f(item)` (on a committer thread, no lock of the batch held) each time the last
  /// pending output of `item` is settled; an empty `f` removes the callback.
  void on_settled(std::function<void(std::size_t)> f);

  /// The library's side (opaque to callers).
  struct Impl;

 private:
  friend struct detail::Access;
  std::unique_ptr<Impl> impl_;
};

/// Where an operation's outputs go, given in the call: `{}` (no batch) writes each output
/// now, fsynced and renamed before the call returns (SyncPolicy::each); `{&batch, i}` hands
/// them to `batch` as outputs of item `i` (e.g. the index of the module being signed),
/// which puts them in place by its policy (settle(i), finish()).
struct OutputRoute {
  OutputBatch* batch = nullptr;
  std::size_t item = OutputBatch::kNoItem;
};

/// While alive, SIGINT, SIGTERM and SIGHUP (those neither ignored nor blocked when the
/// first CleanupOnSignal was made, so that `nohup` keeps its meaning) are blocked on the
/// calling thread (and so on every thread it starts afterwards) and taken by one
/// background thread, started once per process.  On such a signal that thread removes
/// every temporary file the library has open or staged (no `.modsign.XXXXXX` stays behind;
/// each target keeps its old or its new content), stops every further write, and ends the
/// process by the same signal with its default action (exit status 128+N in a shell).  If
/// the thread cannot be started, the signals are left as they were.  Make it before
/// starting worker threads; destroying it restores the previous signal mask.
class MODSIGN_API CleanupOnSignal {
 public:
  CleanupOnSignal();
  ~CleanupOnSignal();
  CleanupOnSignal(const CleanupOnSignal&) = delete;
  CleanupOnSignal& operator=(const CleanupOnSignal&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace modsign
