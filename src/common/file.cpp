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

void write_file_atomic(const std::string& path_in, ByteView data, unsigned mode, bool keep_mode) {
  std::string path = path_in;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    char* real = ::realpath(path.c_str(), nullptr);
    if (!real) throw IoError(sys_error(path, "cannot resolve symbolic link"));
    path = real;
    std::free(real);
  }
  bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) throw IoError(path_in + ": " + kind(st.st_mode) + "; not replacing it");
  if (exists && keep_mode) mode = st.st_mode & 07777;

  // Temporary name independent of the target's length: <dir>/.modsign.XXXXXX
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  std::string tmpl = dir + "/.modsign.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) throw IoError(sys_error(path_in, "cannot create temporary file"));
  std::string tmp(name.data());
  auto fail = [&](const char* what) {
    auto m = sys_error(path_in, what);
    ::close(fd);
    ::unlink(tmp.c_str());
    throw IoError(m);
  };
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    off += static_cast<std::size_t>(n);
  }
  if (exists && keep_mode && (st.st_uid != ::geteuid() || st.st_gid != ::getegid())) {
    // Keep the owner and group (possible as root, or for a group we belong to).
    if (::fchown(fd, st.st_uid, st.st_gid) != 0 && errno != EPERM) fail("chown");
  }
  if (::fchmod(fd, mode) != 0) fail("chmod");
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    auto m = sys_error(path_in, "close");
    ::unlink(tmp.c_str());
    throw IoError(m);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    auto m = sys_error(path_in, "rename");
    ::unlink(tmp.c_str());
    throw IoError(m);
  }
}

}  // namespace modsign
