// modsign — whole-file reads and atomic writes.
#pragma once

#include <fcntl.h>  // AT_FDCWD (FileAt)
#include <sys/stat.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/result.hpp"
#include "modsign/module_image.hpp"  // kMaxModuleSize
#include "modsign/output.hpp"        // check_output_file, OutputBatch
#include "modsign/tree.hpp"          // FileId

namespace modsign {

class CommitBatch;

/// Where a commit goes: with no `batch` the output is fsynced and renamed now
/// (SyncPolicy::each); else the batch's policy applies, the output attributed to `item`
/// (the public OutputRoute, modsign/output.hpp, made internal by api::commit_route()).
struct CommitRoute {
  CommitBatch* batch = nullptr;
  std::size_t item = 0;
};

// ---- whole files (the library's own, and the CLI's; not exported) --------------------

/// Largest key, certificate or keyring file (16 MiB).
inline constexpr std::uint64_t kMaxSmallFileSize = std::uint64_t{16} << 20;

/// Read a whole regular file of at most `max_size` bytes.  Throws IoError
/// "<path>: <reason>" when it cannot be opened or read, is not a regular file (directory,
/// FIFO, device, socket) or is larger than `max_size`.
Bytes read_file(const std::string& path, std::uint64_t max_size = kMaxModuleSize);

/// A file an operation reads and so must never replace: `role` is how messages name it
/// ("the private key", "the certificate", "the input").
struct KeptFile {
  std::string path;
  std::string role;
};

/// Refuses `out` as an output when it is one of `kept` or holds a private key or a
/// certificate.  Identity is st_dev + st_ino after following symbolic links when both
/// exist, else the std::filesystem::weakly_canonical paths (an output that does not exist
/// yet).  Throws IoError "OUT: is the same file as ROLE PATH; refusing to overwrite it", or,
/// for an existing regular file of at most kMaxSmallFileSize bytes that is not an ELF or
/// compressed image, "OUT: holds KIND; refusing to overwrite it", KIND one of "a private key
/// (PEM)", "a certificate (PEM)" (a line "-----BEGIN ...PRIVATE KEY-----" or
/// "-----BEGIN [TRUSTED |X509 ]CERTIFICATE-----"), "a private key (DER)" (the whole file one
/// PKCS#8 PrivateKeyInfo or OneAsymmetricKey, EncryptedPrivateKeyInfo, or traditional RSA or
/// EC key), "a certificate (DER)" (one X.509 Certificate).  Call it for every output before
/// anything is written.
void refuse_output_over(const std::string& out, const std::vector<KeptFile>& kept);

/// True when `a` and `b` name the same file (the identity of refuse_output_over()).
bool same_file(const std::string& a, const std::string& b);

/// Write `data` to `path` atomically: a temporary file in the same directory (mode
/// `mode` less the process umask; or, when `path` exists and `keep_mode`, its mode, owner
/// and group), fsync,
/// rename.  A symbolic link at `path` is followed and its target replaced.  An existing
/// `path` that is not a regular file (device, FIFO, socket, directory) is refused.  On any
/// failure the temporary file is removed and `path` is untouched.  A file with other hard
/// links keeps its old content under those names (rename replaces this name only).
/// Throws IoError naming the file.  With a `route` to a batch, the batch's policy applies
/// (AtomicFile::commit()).
void write_file_atomic(const std::string& path, ByteView data, unsigned mode = 0644, bool keep_mode = true,
                       const CommitRoute& route = {});

/// A file named in an open directory: `name` is looked up in `dir` (openat, fstatat), or,
/// with dir AT_FDCWD, `name` is a path; `shown` is how messages name it.  An output beside a
/// locked input (InputLock::dir()) is checked in that directory, never by a path that a
/// directory swapped meanwhile would lead elsewhere.
struct FileAt {
  int dir;
  std::string name, shown;
  /// The path `path` itself (AT_FDCWD).
  static FileAt path(const std::string& path);
};

/// A regular file opened for positioned reads (pread), for streaming large inputs.
class FileReader {
 public:
  /// Throws IoError "<path>: <reason>" if it cannot be opened or is not a regular file.
  explicit FileReader(const std::string& path);
  /// The same, of `f.name` in `f.dir` (messages name `f.shown`).
  explicit FileReader(const FileAt& f);
  /// The file `lock` holds open (its own descriptor, a dup): what the lock checked is what
  /// is read, whatever its path leads to by now.
  explicit FileReader(const class InputLock& lock);
  ~FileReader();
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;
  std::uint64_t size() const { return size_; }
  /// Exactly `len` bytes at `off` into `out` (resized); throws IoError if the file
  /// cannot be read or has shrunk.
  void read_at(std::uint64_t off, std::size_t len, Bytes& out) const;
  Bytes read_at(std::uint64_t off, std::size_t len) const {
    Bytes b;
    read_at(off, len, b);
    return b;
  }
  /// The whole file, read from the start to its end whatever size() says: the pseudo-files
  /// of securityfs and procfs (IMA's binary_runtime_measurements) show size 0.  Throws
  /// IoError if it cannot be read or holds more than `max_size` bytes.
  Bytes read_to_end(std::uint64_t max_size) const;

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

/// What a file is at one moment: the identity compared before an output replaces its
/// target, so that a change made by another process in between is never overwritten.
struct FileIdentity {
  bool exists = false;
  std::uint64_t dev = 0, ino = 0, size = 0;
  std::int64_t mtime_ns = 0, ctime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};
/// stat(2) of `path` (symbolic links followed); exists = false when it is not there.
FileIdentity identity_of(const std::string& path);
/// The same, of `f.name` in `f.dir` (fstatat).
FileIdentity identity_of(const FileAt& f);

/// How an InputLock holds its file: exclusive for an operation that rewrites it (sign,
/// strip, attach, ima sign's xattr and FILE.sig), shared for one that only reads it (verify,
/// sign --prepare, ima sign --manifest, ima verify): readers run together, and wait for a
/// writer to finish (they read the file it wrote).
enum class LockMode { exclusive, shared };

/// An input held for the whole of an operation: the file is opened and locked (flock
/// LOCK_EX or LOCK_SH per `mode`; waits up to 60 s for another holder), following a
/// replacement made while waiting, and its identity taken.  A second modsign signing the
/// same module waits, then reads the signed one ("already signed") instead of both
/// reporting "signed".  Throws IoError naming the file.
class InputLock {
 public:
  /// With `walked` (WalkedFile, <modsign/tree.hpp>): the file it names is the only one
  /// locked or read.  A walked entry (root set) and its directory are opened beneath the
  /// walked DIR with no symbolic link followed: a link or ".." on the way is IoError
  /// "<path>: not the file found there by the walk of -r DIR (a directory on its path
  /// replaced meanwhile, by a symbolic link?); not handled", another file there now
  /// "<path>: changed by another process since the walk of -r DIR found it; not handled".
  /// A file named (root empty) is opened as named and must be `walked->id`: "<path>:
  /// changed by another process since the command started (no longer the file it named
  /// then); not handled".  Both are checked before the file is locked.
  explicit InputLock(const std::string& path, const std::optional<WalkedFile>& walked = std::nullopt,
                     LockMode mode = LockMode::exclusive);
  const FileIdentity& identity() const { return identity_; }
  const std::string& path() const { return path_; }
  /// Keeps the lock while shared (a staged commit holds it until its rename).
  std::shared_ptr<const void> hold() const { return fd_; }
  /// The open, locked file (valid while this lives).
  int fd() const { return *fd_; }
  /// Its directory, open and checked to hold the file under its name when it was locked;
  /// null when `path` names it through a symbolic link (outputs are then made by path).
  const std::shared_ptr<const int>& dir() const { return dir_; }
  /// Where the output `out` is checked and made: in dir() when `out` is the input itself or
  /// the input's name + ".p7s" or ".sig" (an in-place output, or one beside the input), else
  /// the path `out`.
  FileAt beside(const std::string& out) const;

 private:
  std::string path_;
  std::shared_ptr<const int> fd_;
  std::shared_ptr<const int> dir_;
  FileIdentity identity_;
};

/// A file that must still be as it was read just before a commit: its path, that
/// identity, and the directory it is looked up in (its name only; none: by the path).
struct UnchangedFile {
  std::string path;
  FileIdentity identity;
  std::shared_ptr<const int> dir;
};

/// One target of a commit: the temporary file, the target, and what must still hold
/// just before the rename (each file with the identity it had when it was read).
struct CommitPart {
  std::string tmp, path, path_in;
  /// The target's directory, open since the AtomicFile was made: the identity check and
  /// the rename are made in it (renameat), never through a path that a directory replaced
  /// meanwhile (by a symbolic link) would lead elsewhere.
  std::shared_ptr<const int> dir;
  bool target_existed = false;
  std::vector<UnchangedFile> unchanged;
  std::vector<std::shared_ptr<const void>> holds;
};

/// A file written in pieces and then renamed into place, with the guarantees of
/// write_file_atomic().  Destroying it without commit() removes the temporary file.
/// An existing target is checked when this is made, before anything is written: it must be
/// a regular file, not immutable or append-only, writable by this user (root excepted, as
/// for sign-file's open), replaceable in its directory (a sticky directory's file of
/// another user is not), with a name the file system takes; with keep_mode its owner,
/// group and extended attributes (ACLs included) must be settable on the new file; else
/// IoError "<path>: <reason>; not replacing it".  security.ima and security.evm (and user.ima,
/// user.evm: the same values under --xattr-user) are not
/// carried over: they describe the old content (dropped_xattrs() names them).
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path, unsigned mode = 0644, bool keep_mode = true);
  /// The target `path` in the directory `dir` (open; an InputLock's dir(), for an output
  /// beside the input): the directory is not looked up again by path.
  AtomicFile(const std::string& path, std::shared_ptr<const int> dir, unsigned mode = 0644, bool keep_mode = true);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  void write(ByteView data);
  /// The commit refuses (IoError "<path>: changed by another process ...", nothing
  /// replaced) unless the file `input` locked is still there under its name, unchanged
  /// (InputLock::identity()), just before the rename, looked up in the directory the lock
  /// checked (InputLock::dir(); by its path when it has none); the lock is held until
  /// then.  The target's own identity at construction is always required.
  void require_unchanged(const InputLock& input);
  /// Mode, fsync, close, rename (commit_together() of this file alone).  With a `route` to
  /// a batch the batch's policy applies instead (batch: close and hand the file to the
  /// batch as an output of route.item, which fsyncs and renames it; none: no fsync).
  /// Throws IoError.
  void commit(const CommitRoute& route = {});
  /// Extended attributes of the replaced file that the new one does not get.
  const std::vector<std::string>& dropped_xattrs() const { return dropped_; }
  const std::string& path_in() const { return path_in_; }

 private:
  friend void commit_together(const std::vector<AtomicFile*>& files, const CommitRoute& route);
  [[noreturn]] void fail(const char* what);
  void check_target(const struct stat& st);
  void keep_metadata(const struct stat& st);
  int open_target() const;
  CommitPart close_for_commit(SyncPolicy policy);
  std::string path_in_, path_, tmp_;
  std::shared_ptr<const int> dir_;
  int fd_ = -1;
  unsigned mode_ = 0644;
  bool exists_ = false, keep_mode_ = true;
  std::vector<std::string> dropped_;
  std::vector<UnchangedFile> unchanged_;
  std::vector<std::shared_ptr<const void>> holds_;
};

/// Puts every file of `files` (null entries skipped) in place, or none of them: all are
/// closed and made durable first; then, before any target is replaced, every required
/// identity is checked; a rename that fails puts every target already replaced back as it
/// was (kept meanwhile under a hard link in its directory).  With a `route` to a batch of
/// SyncPolicy::batch the files are staged as one unit of route.item.  Throws IoError naming
/// the file.
void commit_together(const std::vector<AtomicFile*>& files, const CommitRoute& route = {});

// SyncPolicy (how AtomicFile::commit() makes an output durable) is the public enum of
// modsign/output.hpp; CommitBatch is the implementation behind modsign::OutputBatch.

/// The outputs of a batch of files (modsign sign --jobs N).  Under SyncPolicy::batch,
/// AtomicFile::commit() only closes the temporary file and hands it to the batch; up to
/// `committers` background threads then fsync each one and rename it into place, while
/// the callers go on with their work.  Concurrent fsyncs are grouped by the file system
/// into few journal commits, and the I/O waits overlap the computation.  Each output stays
/// all-or-nothing: a target is replaced only after its own data is on disk.  With
/// `committers` = 0 everything is done by finish().  Thread-safe.  A commit given a
/// CommitRoute to the batch follows the batch's policy.
class CommitBatch {
 public:
  explicit CommitBatch(SyncPolicy policy, unsigned committers = 8) : policy_(policy), committers_(committers) {}
  /// Stops the committers: outputs already put in place stay, the temporary files of the
  /// others are removed.
  ~CommitBatch();
  CommitBatch(const CommitBatch&) = delete;
  CommitBatch& operator=(const CommitBatch&) = delete;
  SyncPolicy policy() const { return policy_; }

  /// A staged output that could not be put in place (defined once, in modsign/output.hpp).
  using Failure = OutputBatch::Failure;
  /// OutputBatch::finish() (with no committers: the commits are done now, up to 32 files at
  /// once; a file whose fsync or rename fails is removed).
  std::vector<Failure> finish();
  /// OutputBatch::settle().
  bool settle(std::size_t item, std::vector<std::string>* messages);
  /// OutputBatch::on_settled().
  void on_settled(std::function<void(std::size_t)> f);

 private:
  friend void commit_together(const std::vector<AtomicFile*>& files, const CommitRoute& route);
  struct Staged {
    std::size_t item = 0;
    std::vector<CommitPart> parts;
  };
  void stage(Staged s);
  void commit_one(const Staged& s);  // fsync + rename_group; records a failure or the directories
  void committer();
  SyncPolicy policy_;
  unsigned committers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Staged> queue_;
  std::vector<std::thread> pool_;
  bool closing_ = false, abandon_ = false, spawned_ = false;
  std::map<std::size_t, unsigned> pending_;  // item -> staged outputs not yet settled
  std::function<void(std::size_t)> on_settled_;
  std::vector<Failure> failures_;
  /// The directories renamed in, by (st_dev, st_ino), to fsync once each: their open
  /// descriptors (AtomicFile's), never their paths, which may lead elsewhere by then.  At
  /// most kMaxDirs are held; more are fsynced on the way.
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::shared_ptr<const int>> dirs_;
  static constexpr std::size_t kMaxDirs = 128;
};

/// Removes every temporary file of AtomicFile and CommitBatch that exists now (written,
/// or staged and not yet renamed) and blocks for good every thread that then tries to
/// create, rename or remove one.  For a signal-handling thread just before it ends the
/// process (modsign on SIGINT/SIGTERM/SIGHUP): each target stays the old or the new file
/// and no `.modsign.XXXXXX` file stays behind.  Not async-signal-safe (takes a mutex);
/// call it from a normal thread (sigwait), never from a signal handler.
void remove_temporary_files_and_freeze();

}  // namespace modsign
