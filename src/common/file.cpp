#include "common/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace modsign {

namespace {
std::string sys_error(const std::string& path, const char* what) {
  return path + ": " + what + ": " + std::strerror(errno);
}
}  // namespace

Bytes read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    auto m = sys_error(path, "stat");
    ::close(fd);
    throw IoError(m);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw IoError(path + ": is a directory");
  }
  Bytes out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<std::size_t>(st.st_size));
  std::uint8_t buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      auto m = sys_error(path, "read");
      ::close(fd);
      throw IoError(m);
    }
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
  }
  ::close(fd);
  return out;
}

void write_file_atomic(const std::string& path, ByteView data, unsigned mode, bool keep_mode) {
  struct stat st {};
  if (keep_mode && ::stat(path.c_str(), &st) == 0) mode = st.st_mode & 07777;
  std::string tmpl = path + ".modsign-XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) throw IoError(sys_error(path, "cannot create temporary file"));
  std::string tmp(name.data());
  auto fail = [&](const char* what) {
    auto m = sys_error(path, what);
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
  if (::fchmod(fd, mode) != 0) fail("chmod");
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    auto m = sys_error(path, "close");
    ::unlink(tmp.c_str());
    throw IoError(m);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    auto m = sys_error(path, "rename");
    ::unlink(tmp.c_str());
    throw IoError(m);
  }
}

}  // namespace modsign
