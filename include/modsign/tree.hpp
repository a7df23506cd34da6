// modsign — walking a directory tree (`-r DIR`): every entry under a directory, without
// following symbolic links, in memory linear in the number of entries.
//
// The walk is file-descriptor relative (openat, fstatat; back up through "..", checked by
// device and inode), so it holds one directory open at a time and reaches any depth: a
// path longer than PATH_MAX does not stop it.  What it returns is used by path, though
// (every command opens its inputs by name), so an entry whose path is PATH_MAX bytes or
// longer is returned as an error (ENAMETOOLONG), never silently left out or skipped, and
// each regular entry carries the identity (FileId) that the command checks when it opens
// the entry, so that a tree changed after the walk never leads a command outside DIR.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "modsign/export.hpp"

namespace modsign {

/// Which file a name led to: st_dev and st_ino as stat(2) gives them.  A command handed a
/// walked entry passes it on (SignOptions::expect_file, StripOptions::expect_file,
/// ImaSignOptions::expect_file), so that a directory on the entry's path replaced after the
/// walk (by a symbolic link to elsewhere) makes it refuse the entry instead of handling a
/// file outside DIR.
struct FileId {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  bool operator==(const FileId&) const = default;
};

/// A regular entry as the walk of `root` found it: `root` is the DIR given to walk_tree()
/// (the entry's path is `root`, "/", the path below it) and `id` its TreeEntry::file.  A
/// command handed one (SignOptions::expect_file and the others) opens the entry beneath
/// `root` one path component at a time (openat(2) with O_NOFOLLOW; ".." refused), so that
/// no symbolic link below `root` is followed, checks it is `id` before it locks or reads
/// it, and makes its outputs beside it in the directory so opened: no file or directory
/// outside `root` is opened, whatever the tree has become since the walk.  Refused with
/// IoError "PATH: not the file found there by the walk of -r DIR (a directory on its path
/// replaced meanwhile, by a symbolic link?); not handled" (a link or ".." on the way) or
/// "PATH: changed by another process since the walk of -r DIR found it; not handled"
/// (another file there now).
/// An empty `root` is a file named on the command line: opened as named (links followed)
/// and checked to be `id`, the file stat(2) found when the command started ("PATH: changed
/// by another process since the command started (no longer the file it named then); not
/// handled"): what a batch decided about it then (a later name of the same file skipped as
/// a duplicate) holds for the file it handles.
struct WalkedFile {
  std::string root;
  FileId id;
};

/// One entry found under a directory.
struct TreeEntry {
  /// What the entry is.  Directories are walked into and never returned.
  enum class Kind {
    regular,  ///< a regular file
    symlink,  ///< a symbolic link (not followed)
    fifo,
    socket,
    device,  ///< a block or character device
    other,   ///< any other file type
    error,   ///< could not be looked at or walked: see `error`
    moved,   ///< a directory moved or replaced while it was walked: its remaining entries were not walked
  };
  std::string path;  ///< DIR as given, "/", the path below it
  Kind kind = Kind::regular;
  /// For Kind::error, the errno: ENAMETOOLONG (the path is PATH_MAX (4096) bytes or
  /// longer), or what opening, reading or stat-ing the entry or a directory failed with
  /// (EACCES, ELOOP, EMFILE, EIO ...; for an unreadable directory `path` is the directory).
  int error = 0;
  /// For Kind::regular: the file the walk found (fstatat of the name in its directory).
  FileId file;
  /// For Kind::regular: its size in bytes then (st_size).
  std::uint64_t size = 0;
};

/// Every entry under `dir` (recursively; `dir` itself is followed if it is a symbolic
/// link, nothing below it is) whose file name `want` accepts (all when `want` is empty),
/// sorted by path (byte order).  Directories are walked whatever their name and are not
/// returned; errors are returned as entries whatever the name (a directory that cannot be
/// read may hold wanted entries), except ENAMETOOLONG, returned only for wanted entries.
/// `dir` that cannot be opened as a directory is one Kind::error entry with `path` ==
/// `dir` (ENOENT, ENOTDIR, EACCES ...).  Memory: the entries returned plus, while walking,
/// the names of the directories on the current path; one directory descriptor open at a
/// time.  Never throws for file-system errors (std::bad_alloc only).
MODSIGN_API std::vector<TreeEntry> walk_tree(const std::string& dir,
                                             const std::function<bool(std::string_view name)>& want = {});

/// Why an error or moved entry could not be handled, for "modsign: PATH: <text>":
/// strerror(error), for ENAMETOOLONG "File name too long (the path is N bytes, PATH_MAX is
/// 4096): not handled"; for Kind::moved "moved or replaced while it was walked; the
/// entries under it were not walked"; "" for any other kind.
MODSIGN_API std::string tree_problem_text(const TreeEntry& entry);

/// A short description of a kind that is not processed: "symbolic link, not followed",
/// "FIFO, not a regular file", "socket, not a regular file", "device, not a regular file",
/// "not a regular file"; "" for Kind::regular, Kind::error and Kind::moved.
MODSIGN_API std::string_view tree_kind_text(TreeEntry::Kind kind) noexcept;

}  // namespace modsign
