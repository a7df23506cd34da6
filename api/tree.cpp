// The -r walk (include/modsign/tree.hpp): openat-relative, one directory descriptor at a
// time, back up through ".." checked by device and inode.
#include "modsign/tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace modsign {

namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY;

/// An owned file descriptor, closed on every path.
class Fd {
 public:
  explicit Fd(int fd = -1) noexcept : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) reset(), fd_ = std::exchange(o.fd_, -1);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const noexcept { return fd_; }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

/// One directory entry as readdir gave it.
struct Name {
  std::string name;
  unsigned char type;  ///< d_type (DT_UNKNOWN when the file system does not say)
};

/// A directory on the current path: its identity (to check ".." against), the names it
/// held, the next to look at, the length of its path, and its descriptor (kept open for
/// the first kKeepOpen levels; a deeper parent is found again through "..").
struct Frame {
  dev_t dev;
  ino_t ino;
  std::vector<Name> names;
  std::size_t next;
  std::size_t path_len;
  Fd fd;
};

constexpr std::size_t kKeepOpen = 128;

/// Reads every name of the directory open as `fd` (not "." and ".."); 0 or the errno.
int read_names(int fd, std::vector<Name>& names) {
  const int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) return errno;
  DIR* d = ::fdopendir(dup);
  if (!d) {
    const int e = errno;
    ::close(dup);
    return e;
  }
  errno = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view n(e->d_name);
    if (n != "." && n != "..") names.push_back({std::string(n), e->d_type});
    errno = 0;
  }
  const int err = errno;
  ::closedir(d);
  return err;
}

TreeEntry::Kind kind_of(mode_t m) {
  if (S_ISREG(m)) return TreeEntry::Kind::regular;
  if (S_ISLNK(m)) return TreeEntry::Kind::symlink;
  if (S_ISFIFO(m)) return TreeEntry::Kind::fifo;
  if (S_ISSOCK(m)) return TreeEntry::Kind::socket;
  if (S_ISBLK(m) || S_ISCHR(m)) return TreeEntry::Kind::device;
  return TreeEntry::Kind::other;
}

class Walk {
 public:
  Walk(const std::string& dir, const std::function<bool(std::string_view)>& want) : want_(want), path_(dir) {}

  std::vector<TreeEntry> run() {
    Fd root(::open(path_.c_str(), kDirFlags));
    if (root.get() < 0) return fail(errno), std::move(out_);
    enter(std::move(root));
    while (!stack_.empty()) {
      if (stack_.back().next == stack_.back().names.size()) {
        if (!leave()) break;
        continue;
      }
      Frame& top = stack_.back();
      const Name n = std::move(top.names[top.next++]);
      path_.resize(top.path_len);
      if (path_.empty() || path_.back() != '/') path_ += '/';
      path_ += n.name;
      visit(n);
    }
    std::sort(out_.begin(), out_.end(), [](const TreeEntry& a, const TreeEntry& b) { return a.path < b.path; });
    return std::move(out_);
  }

 private:
  void fail(int err, TreeEntry::Kind k = TreeEntry::Kind::error) { out_.push_back({path_, k, err}); }

  int cur() const { return stack_.back().fd.get(); }

  /// Makes `dir` (whose path is path_) the current directory and reads its names.  A
  /// directory that cannot be searched (opened, but "..", like its entries, cannot be
  /// looked up in it) is an error entry and is not entered.
  bool enter(Fd dir, const struct stat* expected = nullptr) {
    struct stat st {};
    if (::fstat(dir.get(), &st) != 0) return fail(errno), false;
    if (expected && (st.st_dev != expected->st_dev || st.st_ino != expected->st_ino))
      return fail(0, TreeEntry::Kind::moved), false;  // replaced between fstatat and openat
    if (!stack_.empty()) {
      const Fd up(::openat(dir.get(), "..", kDirFlags | O_NOFOLLOW));
      if (up.get() < 0) return fail(errno), false;
    }
    Frame f{st.st_dev, st.st_ino, {}, 0, path_.size(), std::move(dir)};
    if (const int e = read_names(f.fd.get(), f.names)) fail(e);  // walks what was read
    if (stack_.size() >= kKeepOpen) stack_.back().fd.reset();
    stack_.push_back(std::move(f));
    return true;
  }

  /// Back to the parent of the current directory; false at the end of the walk, or (with
  /// a Kind::moved entry for the directory left) when a parent beyond kKeepOpen levels is
  /// no longer what ".." leads to.
  bool leave() {
    Fd child = std::move(stack_.back().fd);
    const std::size_t child_len = stack_.back().path_len;
    stack_.pop_back();
    if (stack_.empty()) return false;
    Frame& parent = stack_.back();
    if (parent.fd.get() < 0) {
      Fd up(::openat(child.get(), "..", kDirFlags | O_NOFOLLOW));
      struct stat st {};
      if (up.get() < 0 || ::fstat(up.get(), &st) != 0 || st.st_dev != parent.dev || st.st_ino != parent.ino) {
        path_.resize(child_len);
        return fail(0, TreeEntry::Kind::moved), false;
      }
      parent.fd = std::move(up);
    }
    path_.resize(parent.path_len);
    return true;
  }

  void visit(const Name& n) {
    const bool wanted = !want_ || want_(n.name);
    // A name that is surely neither a directory nor wanted needs no system call.
    if (!wanted && n.type != DT_DIR && n.type != DT_UNKNOWN) return;
    struct stat st {};
    if (::fstatat(cur(), n.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) fail(errno);  // ENOENT: removed since it was read; gone
      return;
    }
    if (S_ISDIR(st.st_mode)) {
      Fd child(::openat(cur(), n.name.c_str(), kDirFlags | O_NOFOLLOW));
      if (child.get() < 0) return errno == ENOENT ? void() : fail(errno);
      enter(std::move(child), &st);
      return;
    }
    if (!wanted) return;
    if (path_.size() >= PATH_MAX) return fail(ENAMETOOLONG);
    TreeEntry e{path_, kind_of(st.st_mode), 0};
    if (e.kind == TreeEntry::Kind::regular) {
      e.file = {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
      e.size = static_cast<std::uint64_t>(st.st_size);
    }
    out_.push_back(std::move(e));
  }

  const std::function<bool(std::string_view)>& want_;
  std::string path_;
  std::vector<Frame> stack_;
  std::vector<TreeEntry> out_;
};

}  // namespace

std::vector<TreeEntry> walk_tree(const std::string& dir, const std::function<bool(std::string_view)>& want) {
  return Walk(dir, want).run();
}

std::string tree_problem_text(const TreeEntry& e) {
  if (e.kind == TreeEntry::Kind::moved)
    return "moved or replaced while it was walked; the entries under it were not walked";
  if (e.kind != TreeEntry::Kind::error) return "";
  std::string t = std::strerror(e.error);
  if (e.error == ENAMETOOLONG)
    t += " (the path is " + std::to_string(e.path.size()) + " bytes, PATH_MAX is " + std::to_string(PATH_MAX) +
         "): not handled";
  return t;
}

std::string_view tree_kind_text(TreeEntry::Kind kind) noexcept {
  switch (kind) {
    case TreeEntry::Kind::symlink: return "symbolic link, not followed";
    case TreeEntry::Kind::fifo: return "FIFO, not a regular file";
    case TreeEntry::Kind::socket: return "socket, not a regular file";
    case TreeEntry::Kind::device: return "device, not a regular file";
    case TreeEntry::Kind::other: return "not a regular file";
    case TreeEntry::Kind::regular:
    case TreeEntry::Kind::error:
    case TreeEntry::Kind::moved: return "";
  }
  return "";
}

}  // namespace modsign
