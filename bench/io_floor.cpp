// bench/io_floor: the I/O floor of a batch signing run (issue 18).  Reads every module
// named in a list file (one path a line) and writes one output per module with the
// durability of `modsign sign --sync batch`: each output is written to a new temporary
// file in the target's directory, closed, then fsynced and renamed into place by
// background committer threads while the readers go on; at the end every directory that
// received a rename is fsynced once.  No signing, no parsing: what any signer of the same
// tree must at least do.
//
//   io_floor --list FILE [--jobs J] [--committers C] [--out-size N] [--suffix S]
//            [--read-only] [--xattr NAME] [--read-suffix S] [--piece N]
//
// --jobs J        reader/writer threads (default 1)
// --committers C  fsync+rename threads (default 8, as CommitBatch)
// --out-size N    bytes of each output (default: the module's size, i.e. in-place signing)
// --suffix S      output = MODULE + S (default "": the module itself is replaced by a copy
//                 of its own bytes, so the tree is unchanged)
// --read-only     no outputs (the floor of `modsign verify`)
// --xattr NAME    (issue 28, `modsign ima sign --setxattr` / `ima verify`) the output is the
//                 extended attribute NAME of the file itself, --out-size bytes, set with
//                 fsetxattr on the open input; with --read-only it is read (fgetxattr)
// --read-suffix S with --read-only: also read MODULE + S whole (`ima verify --sigfile`)
// --piece N       read each file in pieces of N bytes into one reused buffer (as `modsign
//                 ima` hashes, 1 MiB) instead of whole (not with an output of the input's size)
//
// Prints one line: "io_floor: M modules, B bytes read, W bytes written, T s wall,
// U s user, S s sys, J jobs".
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "io_floor: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(3);
}

struct Staged {
  std::string tmp, path;
};

class Committers {
 public:
  explicit Committers(unsigned n) {
    for (unsigned i = 0; i < n; ++i) pool_.emplace_back([this] { run(); });
  }
  void stage(Staged s) {
    {
      std::lock_guard<std::mutex> l(mu_);
      q_.push_back(std::move(s));
    }
    cv_.notify_one();
  }
  /// Drains the queue, stops the threads; returns the directories renamed into.
  std::vector<std::string> finish() {
    {
      std::lock_guard<std::mutex> l(mu_);
      closing_ = true;
    }
    cv_.notify_all();
    for (auto& t : pool_) t.join();
    while (!q_.empty()) {  // no committer threads
      commit(q_.front());
      q_.pop_front();
    }
    std::sort(dirs_.begin(), dirs_.end());
    dirs_.erase(std::unique(dirs_.begin(), dirs_.end()), dirs_.end());
    return dirs_;
  }

 private:
  void commit(const Staged& s) {
    const int fd = ::open(s.tmp.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) die(s.tmp + ": fsync");
    ::close(fd);
    if (::rename(s.tmp.c_str(), s.path.c_str()) != 0) die(s.path + ": rename");
    const auto slash = s.path.rfind('/');
    std::lock_guard<std::mutex> l(mu_);
    dirs_.push_back(slash == std::string::npos ? "." : s.path.substr(0, slash == 0 ? 1 : slash));
  }
  void run() {
    for (;;) {
      Staged s;
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return closing_ || !q_.empty(); });
        if (q_.empty()) return;
        s = std::move(q_.front());
        q_.pop_front();
      }
      commit(s);
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Staged> q_;
  std::vector<std::string> dirs_;
  std::vector<std::thread> pool_;
  bool closing_ = false;
};

void write_all(int fd, const unsigned char* p, std::size_t n, const std::string& name) {
  while (n) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) die(name + ": write");
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string list, suffix, xattr, read_suffix;
  unsigned jobs = 1, committers = 8;
  long long out_size = -1;
  std::size_t piece = 0;
  bool read_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "io_floor: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--list") list = val();
    else if (a == "--jobs") jobs = static_cast<unsigned>(std::stoul(val()));
    else if (a == "--committers") committers = static_cast<unsigned>(std::stoul(val()));
    else if (a == "--out-size") out_size = std::stoll(val());
    else if (a == "--suffix") suffix = val();
    else if (a == "--read-only") read_only = true;
    else if (a == "--xattr") xattr = val();
    else if (a == "--read-suffix") read_suffix = val();
    else if (a == "--piece") piece = static_cast<std::size_t>(std::stoul(val()));
    else {
      std::fprintf(stderr,
                   "usage: io_floor --list FILE [--jobs J] [--committers C] [--out-size N] [--suffix S] [--read-only] "
                   "[--xattr NAME] [--read-suffix S] [--piece N]\n");
      return 2;
    }
  }
  std::vector<std::string> paths;
  {
    std::ifstream in(list);
    if (!in) die(list);
    for (std::string l; std::getline(in, l);)
      if (!l.empty()) paths.push_back(l);
  }
  const auto t0 = std::chrono::steady_clock::now();
  Committers commit(read_only || !xattr.empty() ? 0 : committers);
  std::atomic<std::size_t> next{0};
  std::atomic<unsigned long long> bytes_in{0}, bytes_out{0};
  auto worker = [&] {
    std::vector<unsigned char> buf;
    for (std::size_t i; (i = next.fetch_add(1)) < paths.size();) {
      const std::string& p = paths[i];
      const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
      struct stat st {};
      if (fd < 0 || ::fstat(fd, &st) != 0) die(p);
      const std::size_t size = static_cast<std::size_t>(st.st_size);
      const bool pieces = piece > 0 && (read_only || !xattr.empty() || out_size >= 0);
      if (buf.size() < (pieces ? std::min(piece, size) : size)) buf.resize(pieces ? std::min(piece, size) : size);
      std::size_t got = 0;
      while (got < size) {
        const std::size_t want = pieces ? std::min(piece, size - got) : size - got;
        const ssize_t r = ::pread(fd, buf.data() + (pieces ? 0 : got), want, static_cast<off_t>(got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) die(p + ": read");
        got += static_cast<std::size_t>(r);
      }
      bytes_in += got;
      if (!xattr.empty()) {
        if (read_only) {
          std::vector<unsigned char> v(65536);
          const ssize_t n = ::fgetxattr(fd, xattr.c_str(), v.data(), v.size());
          if (n < 0) die(p + ": fgetxattr " + xattr);
          bytes_in += static_cast<unsigned long long>(n);
        } else {
          const std::size_t n = out_size < 0 ? 64 : static_cast<std::size_t>(out_size);
          if (n > buf.size()) buf.resize(n);
          if (::fsetxattr(fd, xattr.c_str(), buf.data(), n, 0) != 0) die(p + ": fsetxattr " + xattr);
          bytes_out += n;
        }
        ::close(fd);
        continue;
      }
      ::close(fd);
      if (read_only && !read_suffix.empty()) {
        const std::string q = p + read_suffix;
        const int sfd = ::open(q.c_str(), O_RDONLY | O_CLOEXEC);
        struct stat sst {};
        if (sfd < 0 || ::fstat(sfd, &sst) != 0) die(q);
        std::vector<unsigned char> v(static_cast<std::size_t>(sst.st_size));
        if (::pread(sfd, v.data(), v.size(), 0) != static_cast<ssize_t>(v.size())) die(q + ": read");
        ::close(sfd);
        bytes_in += v.size();
      }
      if (read_only) continue;
      const std::string target = p + suffix;
      const auto slash = target.rfind('/');
      std::string tmpl = (slash == std::string::npos ? std::string(".") : target.substr(0, slash)) + "/.iofloor.XXXXXX";
      const int out = ::mkstemp(tmpl.data());
      if (out < 0) die(target + ": mkstemp");
      const std::size_t n = out_size < 0 ? got : static_cast<std::size_t>(out_size);
      if (n > buf.size()) buf.resize(n);
      write_all(out, buf.data(), n, tmpl);
      if (::fchmod(out, st.st_mode & 07777) != 0) die(tmpl + ": fchmod");
      if (::close(out) != 0) die(tmpl + ": close");
      bytes_out += n;
      commit.stage({tmpl, target});
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < jobs; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (const auto& d : commit.finish()) {
    const int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) die(d + ": fsync");
    ::close(fd);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
  std::printf(
      "io_floor: %zu modules, %llu bytes read, %llu bytes written, %.4f s wall, %.4f s user, %.4f s sys, %u jobs\n",
      paths.size(), static_cast<unsigned long long>(bytes_in), static_cast<unsigned long long>(bytes_out), wall,
      secs(ru.ru_utime), secs(ru.ru_stime), jobs);
  return 0;
}
