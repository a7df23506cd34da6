// modsign — AtomicFile, commit_together(), InputLock and FileIdentity (common/file.hpp):
// every output replaces its target whole, keeps what the target was (owner, group, mode,
// extended attributes) or refuses before anything is replaced, and never overwrites a
// change that another process made meanwhile.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include "common/file.hpp"
#include "common/file_internal.hpp"

namespace modsign {

using file_detail::forget_tmp;
using file_detail::kind;
using file_detail::sys_error;
using file_detail::tmp_mu;
using file_detail::tmp_names;

namespace {
// The process's file mode creation mask, read once without changing it (/proc/self/status
// "Umask:", Linux 4.7+); where that is missing, umask() is set and restored at first use.
unsigned process_umask() {
  static const unsigned mask = [] {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
      if (line.rfind("Umask:", 0) == 0) return static_cast<unsigned>(std::strtoul(line.c_str() + 6, nullptr, 8));
    const mode_t m = ::umask(022);
    ::umask(m);
    return static_cast<unsigned>(m);
  }();
  return mask;
}

std::shared_ptr<const int> owned_fd(int fd) {
  return std::shared_ptr<const int>(new int(fd), [](const int* p) {
    ::close(*p);
    delete p;
  });
}

FileIdentity identity_of_stat(const struct stat& st) {
  FileIdentity id;
  id.exists = true;
  id.dev = st.st_dev;
  id.ino = st.st_ino;
  id.size = static_cast<std::uint64_t>(st.st_size);
  id.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  id.ctime_ns = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  return id;
}

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

std::string base_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// fstatat() of `name` in the directory `dir` (symbolic links followed, as identity_of()).
FileIdentity identity_in(int dir, const std::string& name) {
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, 0) != 0) return {};
  return identity_of_stat(st);
}

// Extended attributes that describe a file's content or its metadata as it was: a new
// content makes them false, so they are not carried over (the replaced file's are dropped).
// user.ima and user.evm are the same values where security.* cannot be set (evmctl
// --xattr-user, modsign ima sign --xattr-user).
bool describes_old_content(const std::string& name) {
  return name == "security.ima" || name == "security.evm" || name == "user.ima" || name == "user.evm";
}

constexpr auto kLockWait = std::chrono::seconds(60);
}  // namespace

FileIdentity identity_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return identity_of_stat(st);
}

FileIdentity identity_of(const FileAt& f) { return identity_in(f.dir, f.name); }

FileAt InputLock::beside(const std::string& out) const {
  if (dir_ && (out == path_ || out == path_ + ".p7s" || out == path_ + ".sig")) return {*dir_, base_of(out), out};
  return FileAt::path(out);
}

namespace {
// `rel`, a path below the directory `dir`, opened with `flags` one component at a time, no
// symbolic link followed (O_NOFOLLOW: ELOOP) and no ".." taken (EXDEV): what openat2's
// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS does, on every kernel and under any seccomp
// filter.  Each step is relative to a directory already opened below `dir`.
int open_components(int dir, const std::string& rel, int flags) {
  int cur = ::fcntl(dir, F_DUPFD_CLOEXEC, 0);
  std::size_t at = 0;
  while (cur >= 0) {
    const std::size_t slash = rel.find('/', at);
    const std::string name = rel.substr(at, slash == std::string::npos ? std::string::npos : slash - at);
    const bool last = slash == std::string::npos;
    int next = -1;
    if (name == "..") errno = EXDEV;
    else if (name.empty() || name == ".")
      next = last ? ::openat(cur, ".", flags | O_CLOEXEC) : ::fcntl(cur, F_DUPFD_CLOEXEC, 0);
    else next = ::openat(cur, name.c_str(), (last ? flags : O_PATH | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);
    const int e = errno;
    ::close(cur);
    errno = e;
    if (last) return next;
    cur = next;
    at = slash + 1;
  }
  return -1;
}

// `path` (`root`, "/", a path below it, as walk_tree() makes them) opened with `flags`
// beneath `root`, no symbolic link below it followed: -1 and errno (ELOOP or EXDEV for a
// link or ".." on the way).  `root` itself is followed, as the walk followed it.
int open_beneath(const std::string& root, const std::string& path, int flags) {
  std::string top = root;  // "DIR/" as given: its paths are "DIR/NAME", its own "DIR"
  while (top.size() > 1 && top.back() == '/') top.pop_back();
  if (path.compare(0, top.size(), top) != 0 || (top != "/" && path.size() > top.size() && path[top.size()] != '/')) {
    errno = EXDEV;
    return -1;
  }
  std::string rel = path.substr(top.size());
  while (!rel.empty() && rel.front() == '/') rel.erase(0, 1);
  if (rel.empty()) rel = ".";
  const int r = ::open(top.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (r < 0) return -1;
  const int fd = open_components(r, rel, flags);
  const int e = errno;
  ::close(r);
  errno = e;
  return fd;
}
}  // namespace

InputLock::InputLock(const std::string& path, const std::optional<WalkedFile>& walked, LockMode mode) : path_(path) {
  const int how = mode == LockMode::shared ? LOCK_SH : LOCK_EX;
  const auto deadline = std::chrono::steady_clock::now() + kLockWait;
  const bool beneath = walked && !walked->root.empty();  // else a file named: identity only
  const auto replaced = [&path] {
    return IoError(path +
                   ": not the file found there by the walk of -r DIR (a directory on its path replaced "
                   "meanwhile, by a symbolic link?); not handled");
  };
  const auto changed = [&path, beneath] {
    return IoError(path + (beneath ? ": changed by another process since the walk of -r DIR found it; not handled"
                                   : ": changed by another process since the command started (no longer the file "
                                     "it named then); not handled"));
  };
  for (;;) {
    // A walked entry is opened in its directory, which is opened beneath its DIR: no
    // symbolic link below DIR is followed (the file itself O_NOFOLLOW), and the directory
    // is walked once (it is also where outputs beside the file are made).
    std::shared_ptr<const int> dir;
    int fd = -1;
    if (beneath) {
      const int d = open_beneath(walked->root, dir_of(path), O_RDONLY | O_DIRECTORY);
      if (d < 0 && (errno == ELOOP || errno == EXDEV || errno == ENOTDIR)) throw replaced();
      if (d < 0) throw IoError(file_detail::open_error(path));
      dir = owned_fd(d);
      fd = ::openat(d, base_of(path).c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 && errno == ELOOP) throw replaced();
    } else {
      fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    }
    if (fd < 0) throw IoError(file_detail::open_error(path));  // as FileReader says it
    auto owned = owned_fd(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw IoError(sys_error(path, "stat"));
    // Checked before it is locked or read: another file is never touched.
    if (walked && !(FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)} == walked->id))
      throw changed();
    if (!S_ISREG(st.st_mode)) throw IoError(path + ": " + kind(st.st_mode));
    while (::flock(fd, how | LOCK_NB) != 0) {
      if (errno == EINTR) continue;
      if (errno == ENOLCK || errno == EINVAL || errno == EOPNOTSUPP) break;  // no locks here: identities still checked
      if (errno != EWOULDBLOCK) throw IoError(sys_error(path, "flock"));
      if (std::chrono::steady_clock::now() > deadline)
        throw IoError(path + ": locked by another process (another modsign writing it?) for 60 s; " +
                      (mode == LockMode::shared ? "not read" : "nothing written"));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // Replaced while we waited (another writer's rename): lock what the name is now.  Its
    // directory, checked to hold it, is where outputs beside it are made (dir()).
    if (::fstat(fd, &st) != 0) throw IoError(sys_error(path, "stat"));
    if (!dir) {
      const int d = ::open(dir_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (d >= 0) dir = owned_fd(d);
    }
    struct stat in_dir {};
    const bool there = dir && ::fstatat(*dir, base_of(path).c_str(), &in_dir, AT_SYMLINK_NOFOLLOW) == 0 &&
                       in_dir.st_dev == st.st_dev && in_dir.st_ino == st.st_ino;
    if (beneath && !there) throw replaced();
    const FileIdentity now = there ? identity_of_stat(in_dir) : identity_of(path);
    if (now.exists && now.dev == st.st_dev && now.ino == st.st_ino) {
      if (there) dir_ = std::move(dir);  // else a symbolic link named by the caller: its outputs are made by path
      fd_ = std::move(owned);
      identity_ = identity_of_stat(st);
      return;
    }
    if (std::chrono::steady_clock::now() > deadline)
      throw IoError(path + ": replaced again and again by another process for 60 s; nothing written");
  }
}

namespace {
/// A new file ".modsign.XXXXXX" (six random letters) in the directory `dir`, created
/// there (openat, O_EXCL): never in a directory put at the path since.  -1 and errno.
int create_temporary(int dir, std::string& base) {
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}() ^ static_cast<std::uint64_t>(::getpid())};
  for (int attempt = 0; attempt < 100; ++attempt) {
    base = ".modsign.";
    for (int i = 0; i < 6; ++i) base += kLetters[rng() % (sizeof kLetters - 1)];
    const int fd = ::openat(dir, base.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}
}  // namespace

AtomicFile::AtomicFile(const std::string& path_in, unsigned mode, bool keep_mode)
    : AtomicFile(path_in, nullptr, mode, keep_mode) {}

AtomicFile::AtomicFile(const std::string& path_in, std::shared_ptr<const int> dir, unsigned mode, bool keep_mode)
    : path_in_(path_in), path_(path_in), dir_(std::move(dir)), mode_(mode), keep_mode_(keep_mode) {
  struct stat st {};
  if (!dir_) {
    if (::lstat(path_.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      char* real = ::realpath(path_.c_str(), nullptr);
      if (!real) throw IoError(sys_error(path_in_, "cannot resolve symbolic link"));
      path_ = real;
      std::free(real);
    }
    const int d = ::open(dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0) throw IoError(sys_error(path_in_, "cannot create temporary file"));  // as mkstemp would say
    dir_ = owned_fd(d);
  }
  // Everything about the target is read in dir_: what is replaced is what was checked.
  exists_ = ::fstatat(*dir_, base_of(path_).c_str(), &st, 0) == 0;
  check_target(st);
  if (exists_) unchanged_.push_back({path_, identity_of_stat(st), dir_});
  if (!(exists_ && keep_mode_)) mode_ &= ~process_umask();  // a new file, as open(O_CREAT, mode) would make it
  {
    // Created and recorded at once, so that remove_temporary_files_and_freeze() sees it.
    std::lock_guard<std::mutex> lock(tmp_mu());
    std::string base;
    fd_ = create_temporary(*dir_, base);
    if (fd_ < 0) throw IoError(sys_error(path_in_, "cannot create temporary file"));
    tmp_ = dir_of(path_) + "/" + base;  // the name the signal cleanup removes
    try {
      tmp_names().insert(tmp_);
    } catch (...) {
      ::close(fd_);
      ::unlinkat(*dir_, base.c_str(), 0);
      throw;
    }
  }
  if (exists_ && keep_mode_) keep_metadata(st);
}

// The target, opened in dir_ (a regular file only: opening a device may act on it); -1
// when it cannot be opened.
int AtomicFile::open_target() const {
  return ::openat(*dir_, base_of(path_).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
}

// What would make the rename fail, or replace what the user could not write, is found
// here, before any output of the operation is written.
void AtomicFile::check_target(const struct stat& st) {
  const std::string base = base_of(path_);
  const long name_max = ::fpathconf(*dir_, _PC_NAME_MAX);
  if (name_max > 0 && base.size() > static_cast<std::size_t>(name_max)) {
    errno = ENAMETOOLONG;
    throw IoError(sys_error(path_in_, "name longer than the file system takes"));
  }
  if (!exists_) return;
  if (!S_ISREG(st.st_mode)) throw IoError(path_in_ + ": " + kind(st.st_mode) + "; not replacing it");
  const int fd = open_target();
  if (fd >= 0) {
    int flags = 0;
    const bool got = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
    ::close(fd);
    if (got && (flags & FS_IMMUTABLE_FL)) throw IoError(path_in_ + ": immutable (chattr +i); not replacing it");
    if (got && (flags & FS_APPEND_FL)) throw IoError(path_in_ + ": append-only (chattr +a); not replacing it");
  }
  // sign-file opens the module for writing: a file this user may not write is refused
  // (root's CAP_DAC_OVERRIDE counts, as it does for that open).
  if (keep_mode_ && ::faccessat(*dir_, base.c_str(), W_OK, AT_EACCESS) != 0 && errno == EACCES)
    throw IoError(sys_error(path_in_, "not writable by this user; not replacing it"));
  const uid_t me = ::geteuid();
  struct stat ds {};
  if (me != 0 && ::fstat(*dir_, &ds) == 0 && (ds.st_mode & S_ISVTX) && st.st_uid != me && ds.st_uid != me) {
    errno = EPERM;
    throw IoError(sys_error(path_in_, "another user's file in a sticky directory; not replacing it"));
  }
}

// The new file gets the old one's owner, group and extended attributes now (an empty
// temporary file), or the operation is refused before anything is replaced.
void AtomicFile::keep_metadata(const struct stat& st) {
  mode_ = st.st_mode & 07777;
  const auto refuse = [this](int e, const std::string& what) {
    const std::string m = what + " on the new file; not replacing it";
    errno = e;
    fail(m.c_str());
  };
  if ((st.st_uid != ::geteuid() || st.st_gid != ::getegid()) && ::fchown(fd_, st.st_uid, st.st_gid) != 0)
    refuse(errno, "cannot keep owner " + std::to_string(st.st_uid) + " and group " + std::to_string(st.st_gid));
  const int target = open_target();
  if (target < 0) refuse(errno, "cannot read the extended attributes to keep");
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close_target{target};
  const ssize_t n = ::flistxattr(target, nullptr, 0);
  if (n <= 0) return;  // none, or a file system without them (ENOTSUP)
  std::vector<char> names(static_cast<std::size_t>(n));
  const ssize_t got = ::flistxattr(target, names.data(), names.size());
  if (got < 0) refuse(errno, "cannot list the extended attributes to keep");
  for (std::size_t off = 0; off < static_cast<std::size_t>(got);) {
    const std::string name(names.data() + off);
    off += name.size() + 1;
    if (describes_old_content(name)) {
      dropped_.push_back(name);
      continue;
    }
    const ssize_t len = ::fgetxattr(target, name.c_str(), nullptr, 0);
    std::vector<char> value(len > 0 ? static_cast<std::size_t>(len) : 0);
    const ssize_t vlen = len > 0 ? ::fgetxattr(target, name.c_str(), value.data(), value.size()) : len;
    if (vlen < 0 || ::fsetxattr(fd_, name.c_str(), value.data(), static_cast<std::size_t>(vlen), 0) != 0)
      refuse(errno, "cannot keep extended attribute " + name);
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) {
    ::unlinkat(*dir_, base_of(tmp_).c_str(), 0);
    forget_tmp(tmp_);
  }
}

void AtomicFile::fail(const char* what) {
  auto m = sys_error(path_in_, what);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlinkat(*dir_, base_of(tmp_).c_str(), 0);
  forget_tmp(tmp_);
  tmp_.clear();
  throw IoError(m);
}

void AtomicFile::write(ByteView data) {
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd_, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    off += static_cast<std::size_t>(n);
  }
}

void AtomicFile::require_unchanged(const InputLock& input) {
  unchanged_.push_back({input.path(), input.identity(), input.dir()});
  holds_.push_back(input.hold());
}

// Mode, fsync (SyncPolicy::each), close: the part that commit_together() renames.
CommitPart AtomicFile::close_for_commit(SyncPolicy policy) {
  if (::fchmod(fd_, mode_) != 0) fail("chmod");
  if (policy == SyncPolicy::each && ::fsync(fd_) != 0) fail("fsync");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("close");
  return CommitPart{tmp_, path_, path_in_, dir_, exists_, unchanged_, holds_};
}

void AtomicFile::commit(const CommitRoute& route) { commit_together({this}, route); }

void commit_together(const std::vector<AtomicFile*>& files, const CommitRoute& route) {
  CommitBatch* batch = route.batch;
  const SyncPolicy policy = batch ? batch->policy() : SyncPolicy::each;
  std::vector<CommitPart> parts;
  for (AtomicFile* f : files)
    if (f) parts.push_back(f->close_for_commit(policy));
  if (parts.empty()) return;
  if (policy == SyncPolicy::batch) {
    batch->stage({route.item, std::move(parts)});
    for (AtomicFile* f : files)
      if (f) f->tmp_.clear();  // the batch owns them now
    return;
  }
  const std::string error = file_detail::rename_group(parts);
  for (AtomicFile* f : files)
    if (f) f->tmp_.clear();  // renamed, or removed by rename_group
  if (!error.empty()) throw IoError(error);
}

void check_output_file(const std::string& path, unsigned mode, bool keep_mode) {
  const AtomicFile probe(path, mode, keep_mode);  // its destructor removes the temporary
}

void write_file_atomic(const std::string& path, ByteView data, unsigned mode, bool keep_mode,
                       const CommitRoute& route) {
  AtomicFile f(path, mode, keep_mode);
  f.write(data);
  f.commit(route);
}

namespace file_detail {

namespace {
// A hard link to the target `p` under a new name in its directory ("" when it cannot be made).
std::string keep_original(const CommitPart& p) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string base;
    const int fd = create_temporary(*p.dir, base);  // a free name, taken by the link below
    if (fd < 0) return "";
    ::close(fd);
    ::unlinkat(*p.dir, base.c_str(), 0);
    if (::linkat(*p.dir, base_of(p.path).c_str(), *p.dir, base.c_str(), 0) == 0) {
      std::string kept = dir_of(p.path) + "/" + base;
      tmp_names().insert(kept);  // removed on a signal like any temporary file
      return kept;
    }
    if (errno != EEXIST) return "";
  }
  return "";
}

// The identity `u` has now, looked up in its directory (else by path).
FileIdentity identity_now(const UnchangedFile& u) {
  return u.dir ? identity_in(*u.dir, base_of(u.path)) : identity_of(u.path);
}
// The identity of the target of `p` now, in its directory.
FileIdentity target_now(const CommitPart& p) { return identity_now({p.path, {}, p.dir}); }

std::string changed_message(const CommitPart& p, const std::string& path) {
  return (path == p.path ? p.path_in : path) +
         ": changed by another process while modsign worked on it; not replacing " + p.path_in;
}
}  // namespace

std::string rename_group(const std::vector<CommitPart>& parts) {
  // A group holds tmp_mu() from its checks to its last rename, so that a signal's cleanup
  // finds it all done or not begun; one file needs no such lock (the batch committers
  // rename several files at once).
  const bool group = parts.size() > 1;
  std::unique_lock<std::mutex> lock(tmp_mu(), std::defer_lock);
  if (group) lock.lock();
  const auto forget = [&lock](const std::string& name) {
    if (name.empty()) return;
    if (lock.owns_lock()) tmp_names().erase(name);
    else forget_tmp(name);
  };
  std::string error;
  for (const auto& p : parts)
    for (const auto& u : p.unchanged)
      if (error.empty() && !(identity_now(u) == u.identity)) error = changed_message(p, u.path);
  // Also a target that did not exist and does now (another process made it).
  for (const auto& p : parts)
    if (error.empty() && !p.target_existed && target_now(p).exists)
      error = p.path_in + ": created by another process while modsign worked on it; not replacing it";
  struct Done {
    const CommitPart* part;
    std::string original;  // hard link to the replaced target, or "" (there was none)
  };
  std::vector<Done> done;
  for (const auto& p : parts) {
    if (!error.empty()) break;
    std::string original;
    if (group && target_now(p).exists) {
      original = keep_original(p);
      if (original.empty()) {
        error = sys_error(p.path_in, "cannot keep the original while the other outputs are put in place");
        break;
      }
    }
    if (::renameat(*p.dir, base_of(p.tmp).c_str(), *p.dir, base_of(p.path).c_str()) != 0) {
      error = sys_error(p.path_in, "rename");
      if (!original.empty()) ::unlinkat(*p.dir, base_of(original).c_str(), 0);
      forget(original);
      break;
    }
    forget(p.tmp);
    done.push_back({&p, original});
  }
  if (!error.empty()) {
    // Put back what was replaced, newest first; remove what is left.
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      const int dir = *it->part->dir;
      const std::string target = base_of(it->part->path);
      if (it->original.empty()) ::unlinkat(dir, target.c_str(), 0);
      else ::renameat(dir, base_of(it->original).c_str(), dir, target.c_str());
      forget(it->original);
    }
    for (const auto& p : parts) {
      if (std::none_of(done.begin(), done.end(), [&p](const Done& d) { return d.part == &p; }))
        ::unlinkat(*p.dir, base_of(p.tmp).c_str(), 0);
      forget(p.tmp);
    }
    return error;
  }
  for (const auto& d : done) {
    if (!d.original.empty()) ::unlinkat(*d.part->dir, base_of(d.original).c_str(), 0);
    forget(d.original);
  }
  return "";
}

}  // namespace file_detail
}  // namespace modsign
