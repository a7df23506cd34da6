#include "common/file.hpp"
#include "common/file_internal.hpp"
#include "common/module_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <system_error>
#include <thread>
#include <vector>

namespace modsign {

namespace {
/// The name of a temporary file in its directory (CommitPart::dir).
std::string tmp_base(const std::string& tmp) {
  const auto slash = tmp.rfind('/');
  return slash == std::string::npos ? tmp : tmp.substr(slash + 1);
}
}  // namespace

namespace file_detail {
// Leaked on purpose: usable until the very end.
std::mutex& tmp_mu() {
  static auto* m = new std::mutex;
  return *m;
}
std::set<std::string>& tmp_names() {
  static auto* s = new std::set<std::string>;
  return *s;
}
void forget_tmp(const std::string& tmp) {
  std::lock_guard<std::mutex> lock(tmp_mu());
  tmp_names().erase(tmp);
}

std::string sys_error(const std::string& path, const char* what) {
  return path + ": " + what + ": " + std::strerror(errno);
}

const char* kind(mode_t m) {
  if (S_ISDIR(m)) return "is a directory";
  if (S_ISFIFO(m)) return "is a FIFO, not a regular file";
  if (S_ISCHR(m) || S_ISBLK(m)) return "is a device, not a regular file";
  if (S_ISSOCK(m)) return "is a socket, not a regular file";
  return "is not a regular file";
}
}  // namespace file_detail

using file_detail::forget_tmp;
using file_detail::kind;
using file_detail::sys_error;
using file_detail::tmp_mu;
using file_detail::tmp_names;

void remove_temporary_files_and_freeze() {
  tmp_mu().lock();  // never unlocked: no temporary file is created after this
  for (const auto& t : tmp_names()) ::unlink(t.c_str());
  tmp_names().clear();
}

namespace file_detail {
// open() failed: strerror, and for a missing "tbs:<hex>" / "bin:<hex>" a hint that a hash
// entry was given where a file name is expected.
std::string open_error(const std::string& path) {
  const int e = errno;
  std::string m = path + ": " + std::strerror(e);
  if (e == ENOENT && (path.starts_with("tbs:") || path.starts_with("bin:")))
    m += " (this looks like a blacklist hash entry, not a file name: put it in a hash-list file, one \"" +
         path.substr(0, 4) + "<hex>\" a line)";
  return m;
}
}  // namespace file_detail

namespace {
Bytes read_bounded(const std::string& path, std::uint64_t max_size, const char* too_big);
}  // namespace

Bytes read_file(const std::string& path, std::uint64_t max_size) {
  return read_bounded(path, max_size, " bytes modsign accepts here");
}

Bytes read_module_bytes(const std::string& path, std::uint64_t max_size) {
  return read_bounded(path, std::max<std::uint64_t>(max_size, kMaxModuleSize),
                      " bytes modsign reads into memory (raise --max-size)");
}

namespace {
/// The whole regular file open as `fd` (not closed here), read with pread from offset 0;
/// `path` names it in messages.
Bytes read_bounded_fd(const std::string& path, int fd, std::uint64_t max_size, const char* too_big) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw IoError(sys_error(path, "stat"));
  if (!S_ISREG(st.st_mode)) throw IoError(path + ": " + kind(st.st_mode));
  if (static_cast<std::uint64_t>(st.st_size) > max_size)
    throw IoError(path + ": file is " + std::to_string(st.st_size) + " bytes, more than the " +
                  std::to_string(max_size) + too_big);
  Bytes out(static_cast<std::size_t>(st.st_size));
  // The file may be a key or a PIN: what was read is wiped when the read fails (a returned
  // buffer is the caller's to own, e.g. as a crypto::SecretBytes).
  struct WipeUnlessReturned {
    Bytes& b;
    bool returned = false;
    ~WipeUnlessReturned() {
      if (!returned) ::explicit_bzero(b.data(), b.size());
    }
  } wipe{out};
  std::size_t off = 0;
  while (off < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + off, out.size() - off, static_cast<off_t>(off));
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw IoError(sys_error(path, "read"));
    }
    if (n == 0)
      throw IoError(path + ": changed while being read (it shrank from " + std::to_string(out.size()) + " to " +
                    std::to_string(off) + " bytes)");
    off += static_cast<std::size_t>(n);
  }
  std::uint8_t more = 0;
  ssize_t extra;
  while ((extra = ::pread(fd, &more, 1, static_cast<off_t>(off))) < 0 && (errno == EINTR || errno == EAGAIN)) {}
  if (extra > 0)
    throw IoError(path + ": changed while being read (it grew beyond " + std::to_string(out.size()) + " bytes)");
  wipe.returned = true;
  return out;
}

Bytes read_bounded(const std::string& path, std::uint64_t max_size, const char* too_big) {
  // O_NONBLOCK so that opening a FIFO does not wait for a writer; fstat then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw IoError(file_detail::open_error(path));
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close_fd{fd};
  return read_bounded_fd(path, fd, max_size, too_big);
}
}  // namespace

Bytes read_module_bytes(const InputLock& lock, std::uint64_t max_size) {
  // pread on the lock's own descriptor: no file offset is shared or moved.
  return read_bounded_fd(lock.path(), lock.fd(), std::max<std::uint64_t>(max_size, kMaxModuleSize),
                         " bytes modsign reads into memory (raise --max-size)");
}

FileAt FileAt::path(const std::string& path) { return {AT_FDCWD, path, path}; }

FileReader::FileReader(const std::string& path) : FileReader(FileAt::path(path)) {}

FileReader::FileReader(const FileAt& f) : path_(f.shown) {
  fd_ = ::openat(f.dir, f.name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw IoError(file_detail::open_error(path_));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    auto m = sys_error(path_, "stat");
    ::close(fd_);
    throw IoError(m);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw IoError(path_ + ": " + kind(st.st_mode));
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

FileReader::FileReader(const InputLock& lock) : path_(lock.path()), size_(lock.identity().size) {
  fd_ = ::fcntl(lock.fd(), F_DUPFD_CLOEXEC, 0);
  if (fd_ < 0) throw IoError(sys_error(path_, "dup"));
}

FileReader::~FileReader() { ::close(fd_); }

void FileReader::read_at(std::uint64_t off, std::size_t len, Bytes& out) const {
  out.resize(len);
  std::size_t got = 0;
  while (got < len) {
    ssize_t n = ::pread(fd_, out.data() + got, len - got, static_cast<off_t>(off + got));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) throw IoError(sys_error(path_, "read"));
    if (n == 0) throw IoError(path_ + ": file shrank while being read");
    got += static_cast<std::size_t>(n);
  }
}

Bytes FileReader::read_to_end(std::uint64_t max_size) const {
  Bytes out;
  constexpr std::size_t kPiece = std::size_t{1} << 16;
  for (;;) {
    const std::size_t at = out.size();
    out.resize(at + kPiece);
    const ssize_t n = ::pread(fd_, out.data() + at, kPiece, static_cast<off_t>(at));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
      out.resize(at);
      continue;
    }
    if (n < 0) throw IoError(sys_error(path_, "read"));
    out.resize(at + static_cast<std::size_t>(n));
    if (n == 0) return out;
    if (out.size() > max_size)
      throw IoError(path_ + ": more than " + std::to_string(max_size) + " bytes (read to its end: its size shows " +
                    std::to_string(size_) + ")");
  }
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  const bool ea = ::stat(a.c_str(), &sa) == 0;
  const int errno_a = errno;
  const bool eb = ::stat(b.c_str(), &sb) == 0;
  const int errno_b = errno;
  if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  // One exists and the other does not (ENOENT) and has no ".." (which weakly_canonical
  // resolves lexically, also through a directory that does not exist): the missing one's
  // canonical path ends in a name that does not exist, so it cannot be the existing one's.
  // This spares the canonical paths (a readlink and a stat per path component, twice:
  // about 100 system calls per output of a batch).
  const auto missing = [](bool exists, int err, const std::string& p) {
    return !exists && err == ENOENT && p.find("..") == std::string::npos;
  };
  if ((ea && missing(eb, errno_b, b)) || (eb && missing(ea, errno_a, a))) return false;
  std::error_code e1, e2;
  const auto ca = std::filesystem::weakly_canonical(std::filesystem::absolute(a), e1).lexically_normal();
  const auto cb = std::filesystem::weakly_canonical(std::filesystem::absolute(b), e2).lexically_normal();
  return !e1 && !e2 && ca == cb;
}

CommitBatch::~CommitBatch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = abandon_ = true;
  }
  cv_.notify_all();
  for (auto& t : pool_) t.join();
  for (const auto& s : queue_)
    for (const auto& p : s.parts) {
      ::unlinkat(*p.dir, tmp_base(p.tmp).c_str(), 0);
      forget_tmp(p.tmp);
    }
}

void CommitBatch::stage(Staged s) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(std::move(s));
  ++pending_[queue_.back().item];
  if (committers_ == 0) return;  // finish() does it
  if (!spawned_) {
    spawned_ = true;
    // A thread that cannot be created (EAGAIN: thread or memory limit) is not fatal: the
    // ones that exist do the work, and with none finish() does it.
    try {
      for (unsigned i = 0; i < committers_; ++i) pool_.emplace_back([this] { committer(); });
    } catch (const std::system_error&) {}
  }
  cv_.notify_one();
}

void CommitBatch::on_settled(std::function<void(std::size_t)> f) {
  std::lock_guard<std::mutex> lock(mu_);
  on_settled_ = std::move(f);
}

bool CommitBatch::settle(std::size_t item, std::vector<std::string>* messages) {
  std::lock_guard<std::mutex> lock(mu_);
  if (pending_.count(item)) return false;
  for (auto it = failures_.begin(); it != failures_.end();) {
    if (it->item == item) {
      messages->push_back(std::move(it->message));
      it = failures_.erase(it);
    } else {
      ++it;
    }
  }
  return true;
}

void CommitBatch::commit_one(const Staged& s) {
  std::string error;
  for (const auto& p : s.parts) {
    const int fd = ::openat(*p.dir, tmp_base(p.tmp).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) error = sys_error(p.path_in, "fsync");
    if (fd >= 0) ::close(fd);
    if (!error.empty()) break;
  }
  // Replacing a file frees the old one's blocks, which on a file system mounted with
  // `discard` waits for the device (2.8 ms per rename on ext4 in a KVM guest): one more
  // reason to do this off the workers' threads, several at once.
  if (error.empty()) {
    error = file_detail::rename_group(s.parts);
  } else {
    for (const auto& p : s.parts) {
      ::unlinkat(*p.dir, tmp_base(p.tmp).c_str(), 0);
      forget_tmp(p.tmp);
    }
  }
  std::function<void(std::size_t)> notify;
  decltype(dirs_) full;  // fsynced here, outside the lock, when kMaxDirs are held
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error.empty()) {
      failures_.push_back({s.item, error});
    } else {
      for (const auto& p : s.parts) {
        struct stat st {};
        if (p.dir && ::fstat(*p.dir, &st) == 0)
          dirs_.emplace(std::make_pair(static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)),
                        p.dir);
      }
      if (dirs_.size() >= kMaxDirs) full.swap(dirs_);
    }
    auto p = pending_.find(s.item);
    if (p != pending_.end() && --p->second == 0) {
      pending_.erase(p);
      notify = on_settled_;
    }
  }
  for (const auto& [id, dir] : full) (void)::fsync(*dir);
  if (notify) notify(s.item);
}

void CommitBatch::committer() {
  for (;;) {
    Staged s;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
      if (abandon_ || queue_.empty()) return;
      s = std::move(queue_.front());
      queue_.pop_front();
    }
    commit_one(s);
  }
}

namespace {
// f(i) for i in [0, n) on up to 32 threads (fewer if no more can be created; the calling
// thread takes part).
void parallel(std::size_t n, const std::function<void(std::size_t)>& f) {
  const std::size_t threads = std::min<std::size_t>(n, 32);
  std::atomic<std::size_t> next{0};
  auto run = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) f(i);
  };
  std::vector<std::thread> pool;
  try {
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(run);
  } catch (const std::system_error&) {}
  run();
  for (auto& t : pool) t.join();
}
}  // namespace

std::vector<CommitBatch::Failure> CommitBatch::finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  for (auto& t : pool_) t.join();  // the committers drain the queue, then stop
  pool_.clear();
  spawned_ = false;
  std::vector<Staged> rest;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = false;
    rest.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
    queue_.clear();
  }
  parallel(rest.size(), [&](std::size_t i) { commit_one(rest[i]); });  // committers_ == 0
  decltype(dirs_) dirs;
  std::vector<Failure> failures;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dirs.swap(dirs_);
    failures.swap(failures_);
  }
  std::stable_sort(failures.begin(), failures.end(),
                   [](const Failure& a, const Failure& b) { return a.item < b.item; });
  // The renames themselves: fsync each directory once, through the descriptor it was
  // renamed in.
  const std::vector<std::shared_ptr<const int>> each = [&dirs] {
    std::vector<std::shared_ptr<const int>> v;
    for (const auto& [id, dir] : dirs) v.push_back(dir);
    return v;
  }();
  parallel(each.size(), [&](std::size_t i) { (void)::fsync(*each[i]); });
  return failures;
}

}  // namespace modsign
