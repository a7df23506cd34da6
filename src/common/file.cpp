#include "common/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace modsign {

namespace {
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
}  // namespace

Bytes read_file(const std::string& path, std::uint64_t max_size) {
  // O_NONBLOCK so that opening a FIFO does not wait for a writer; fstat then refuses it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw IoError(path + ": " + std::strerror(errno));
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
                  std::to_string(max_size) + " bytes modsign accepts here");
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

FileReader::FileReader(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw IoError(path + ": " + std::strerror(errno));
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
  }
  // Temporary name independent of the target's length: <dir>/.modsign.XXXXXX
  const auto slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path_.substr(0, slash == 0 ? 1 : slash);
  std::string tmpl = dir + "/.modsign.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0) throw IoError(sys_error(path_in_, "cannot create temporary file"));
  tmp_ = name.data();
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void AtomicFile::fail(const char* what) {
  auto m = sys_error(path_in_, what);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
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
  if (::fsync(fd_) != 0) fail("fsync");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("close");
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail("rename");
  tmp_.clear();
}

void write_file_atomic(const std::string& path, ByteView data, unsigned mode, bool keep_mode) {
  AtomicFile f(path, mode, keep_mode);
  f.write(data);
  f.commit();
}

}  // namespace modsign
