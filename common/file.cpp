#include "common/file.hpp"
#include "common/module_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <system_error>
#include <thread>
#include <vector>

namespace modsign {

namespace {
thread_local CommitBatch* t_batch = nullptr;
thread_local std::size_t t_item = 0;

// Every temporary file of AtomicFile / CommitBatch that exists now (see
// remove_temporary_files_and_freeze()).  Leaked on purpose: usable until the very end.
std::mutex& tmp_mu() {
  static auto* m = new std::mutex;
  return *m;
}
std::set<std::string>& tmp_names() {
  static auto* s = new std::set<std::string>;
  return *s;
}
// Forgets `tmp` (renamed into place or removed).
void forget_tmp(const std::string& tmp) {
  std::lock_guard<std::mutex> lock(tmp_mu());
  tmp_names().erase(tmp);
}
}  // namespace

void remove_temporary_files_and_freeze() {
  tmp_mu().lock();  // never unlocked: no temporary file is created after this
  for (const auto& t : tmp_names()) ::unlink(t.c_str());
  tmp_names().clear();
}

namespace {
std::string sys_error(const std::string& path, const char* what) {
  return path + ": " + what + ": " + std::strerror(errno);
}

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

const char* kind(mode_t m) {
  if (S_ISDIR(m)) return "is a directory";
  if (S_ISFIFO(m)) return "is a FIFO, not a regular file";
  if (S_ISCHR(m) || S_ISBLK(m)) return "is a device, not a regular file";
  if (S_ISSOCK(m)) return "is a socket, not a regular file";
  return "is not a regular file";
}
}  // namespace

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
Bytes read_bounded(const std::string& path, std::uint64_t max_size, const char* too_big) {
  // O_NONBLOCK so that opening a FIFO does not wait for a writer; fstat then refuses it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw IoError(open_error(path));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    auto m = sys_error(path, "stat");
    ::close(fd);
    throw IoError(m);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw IoError(path + ": " + kind(st.st_mode));
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_size) {
    ::close(fd);
    throw IoError(path + ": file is " + std::to_string(st.st_size) + " bytes, more than the " +
                  std::to_string(max_size) + too_big);
  }
  Bytes out(static_cast<std::size_t>(st.st_size));
  std::size_t off = 0;
  while (off < out.size()) {
    ssize_t n = ::read(fd, out.data() + off, out.size() - off);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      auto m = sys_error(path, "read");
      ::close(fd);
      throw IoError(m);
    }
    if (n == 0) break;  // shrank while reading
    off += static_cast<std::size_t>(n);
  }
  out.resize(off);
  ::close(fd);
  return out;
}
}  // namespace

FileReader::FileReader(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw IoError(open_error(path));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    auto m = sys_error(path, "stat");
    ::close(fd_);
    throw IoError(m);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw IoError(path + ": " + kind(st.st_mode));
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
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

// True when the regular file `path` (at most kMaxSmallFileSize bytes) has a PEM line
// "-----BEGIN <...>PRIVATE KEY-----" (PKCS#8, ENCRYPTED, RSA, EC ...).
bool holds_private_key(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) > kMaxSmallFileSize)
    return false;
  std::ifstream f(path, std::ios::binary);
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("-----BEGIN ", 0) != 0) continue;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    constexpr std::string_view tail = "PRIVATE KEY-----";
    if (line.size() >= tail.size() && line.compare(line.size() - tail.size(), tail.size(), tail) == 0) return true;
  }
  return false;
}
}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
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

void refuse_output_over(const std::string& out, const std::vector<KeptFile>& kept) {
  for (const auto& k : kept)
    if (!k.path.empty() && same_file(out, k.path))
      throw IoError(out + ": is the same file as " + k.role + " " + k.path + "; refusing to overwrite it");
  if (holds_private_key(out)) throw IoError(out + ": holds a private key; refusing to overwrite it");
}

AtomicFile::AtomicFile(const std::string& path_in, unsigned mode, bool keep_mode)
    : path_in_(path_in), path_(path_in), mode_(mode), keep_mode_(keep_mode) {
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    char* real = ::realpath(path_.c_str(), nullptr);
    if (!real) throw IoError(sys_error(path_in_, "cannot resolve symbolic link"));
    path_ = real;
    std::free(real);
  }
  exists_ = ::stat(path_.c_str(), &st) == 0;
  if (exists_ && !S_ISREG(st.st_mode)) throw IoError(path_in_ + ": " + kind(st.st_mode) + "; not replacing it");
  if (exists_ && keep_mode_) {
    mode_ = st.st_mode & 07777;
    uid_ = st.st_uid;
    gid_ = st.st_gid;
  } else {
    mode_ &= ~process_umask();  // a new file, as open(O_CREAT, mode) would make it
  }
  // Temporary name independent of the target's length: <dir>/.modsign.XXXXXX
  const auto slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path_.substr(0, slash == 0 ? 1 : slash);
  std::string tmpl = dir + "/.modsign.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  {
    // Created and recorded at once, so that remove_temporary_files_and_freeze() sees it.
    std::lock_guard<std::mutex> lock(tmp_mu());
    fd_ = ::mkstemp(name.data());
    if (fd_ < 0) throw IoError(sys_error(path_in_, "cannot create temporary file"));
    tmp_ = name.data();
    try {
      tmp_names().insert(tmp_);
    } catch (...) {
      ::close(fd_);
      ::unlink(tmp_.c_str());
      throw;
    }
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) {
    ::unlink(tmp_.c_str());
    forget_tmp(tmp_);
  }
}

void AtomicFile::fail(const char* what) {
  auto m = sys_error(path_in_, what);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
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

void AtomicFile::commit() {
  if (exists_ && keep_mode_ && (uid_ != ::geteuid() || gid_ != ::getegid())) {
    // Keep the owner and group (possible as root, or for a group we belong to).
    if (::fchown(fd_, uid_, gid_) != 0 && errno != EPERM) fail("chown");
  }
  if (::fchmod(fd_, mode_) != 0) fail("chmod");
  const SyncPolicy policy = t_batch ? t_batch->policy() : SyncPolicy::each;
  if (policy == SyncPolicy::each && ::fsync(fd_) != 0) fail("fsync");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("close");
  if (policy == SyncPolicy::batch) {
    t_batch->stage({t_item, tmp_, path_, path_in_});
    tmp_.clear();  // the batch owns it now
    return;
  }
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail("rename");
  forget_tmp(tmp_);
  tmp_.clear();
}

CommitBatch::Scope::Scope(CommitBatch* batch, std::size_t item) : prev_batch_(t_batch), prev_item_(t_item) {
  t_batch = batch;
  t_item = item;
}
CommitBatch::Scope::~Scope() {
  t_batch = prev_batch_;
  t_item = prev_item_;
}

CommitBatch::~CommitBatch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = abandon_ = true;
  }
  cv_.notify_all();
  for (auto& t : pool_) t.join();
  for (const auto& s : queue_) {
    ::unlink(s.tmp.c_str());
    forget_tmp(s.tmp);
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
    } catch (const std::system_error&) {
    }
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
  const int fd = ::open(s.tmp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) error = sys_error(s.path_in, "fsync");
  if (fd >= 0) ::close(fd);
  // Replacing a file frees the old one's blocks, which on a file system mounted with
  // `discard` waits for the device (2.8 ms per rename on ext4 in a KVM guest): one more
  // reason to do this off the workers' threads, several at once.
  if (error.empty() && ::rename(s.tmp.c_str(), s.path.c_str()) != 0) error = sys_error(s.path_in, "rename");
  if (!error.empty()) ::unlink(s.tmp.c_str());
  forget_tmp(s.tmp);
  const auto slash = s.path.rfind('/');
  std::function<void(std::size_t)> notify;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error.empty()) failures_.push_back({s.item, error});
    else dirs_.push_back(slash == std::string::npos ? "." : s.path.substr(0, slash == 0 ? 1 : slash));
    auto p = pending_.find(s.item);
    if (p != pending_.end() && --p->second == 0) {
      pending_.erase(p);
      notify = on_settled_;
    }
  }
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
  } catch (const std::system_error&) {
  }
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
  std::vector<std::string> dirs;
  std::vector<Failure> failures;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dirs.swap(dirs_);
    failures.swap(failures_);
  }
  std::stable_sort(failures.begin(), failures.end(), [](const Failure& a, const Failure& b) { return a.item < b.item; });
  // The renames themselves: fsync each directory once.
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  parallel(dirs.size(), [&](std::size_t i) {
    const int fd = ::open(dirs[i].c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
      (void)::fsync(fd);
      ::close(fd);
    }
  });
  return failures;
}

void write_file_atomic(const std::string& path, ByteView data, unsigned mode, bool keep_mode) {
  AtomicFile f(path, mode, keep_mode);
  f.write(data);
  f.commit();
}

}  // namespace modsign
