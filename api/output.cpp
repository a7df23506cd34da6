// modsign — OutputBatch and CleanupOnSignal (include/modsign/output.hpp) over
// common/file.hpp's CommitBatch and remove_temporary_files_and_freeze().
#include "modsign/output.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>
#include <thread>

#include "api/internal.hpp"
#include "common/file.hpp"
#include "crypto/crypto.hpp"

namespace modsign {

namespace {
// same_file() of `out` (in its directory) and the path `b`.
bool same_file_at(const FileAt& out, const std::string& b) {
  if (out.dir == AT_FDCWD) return same_file(out.name, b);
  const FileIdentity i = identity_of(out), j = identity_of(b);
  if (i.exists && j.exists) return i.dev == j.dev && i.ino == j.ino;
  // A name not there in a checked directory is no existing file; two missing ones are the
  // same only when spelled the same.
  return !i.exists && !j.exists &&
         std::filesystem::absolute(out.shown).lexically_normal() == std::filesystem::absolute(b).lexically_normal();
}
}  // namespace

void refuse_output_over(const std::string& out, const std::vector<KeptFile>& kept) {
  api::refuse_output_over(FileAt::path(out), kept);
}

void api::refuse_output_over(const FileAt& out, const std::vector<KeptFile>& kept) {
  for (const auto& k : kept)
    if (!k.path.empty() && same_file_at(out, k.path))
      throw IoError(out.shown + ": is the same file as " + k.role + " " + k.path + "; refusing to overwrite it");
  struct stat st {};
  if (::fstatat(out.dir, out.name.c_str(), &st, 0) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::uint64_t>(st.st_size) > kMaxSmallFileSize)
    return;
  Bytes content;
  try {
    // An ELF image or a compressed one (the usual output) holds neither: not read further.
    const FileReader f(out);
    const Bytes magic = f.read_at(0, static_cast<std::size_t>(std::min<std::uint64_t>(f.size(), 4)));
    static constexpr std::uint8_t kElf[] = {0x7f, 'E', 'L', 'F'}, kXz[] = {0xfd, '7', 'z', 'X'},
                                  kZstd[] = {0x28, 0xb5, 0x2f, 0xfd};
    for (const auto* m : {kElf, kXz, kZstd})
      if (magic.size() == 4 && std::equal(magic.begin(), magic.end(), m)) return;
    if (magic.size() >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) return;  // gzip
    if (f.size() > kMaxSmallFileSize) return;                               // grew meanwhile: no key file
    content = f.read_at(0, static_cast<std::size_t>(f.size()));
  } catch (const IoError&) {
    return;  // unreadable: AtomicFile's own checks decide
  }
  if (const auto what = crypto::key_material_kind(content))
    throw IoError(out.shown + ": holds " + *what + "; refusing to overwrite it");
}

bool api::is_input(const FileAt& out, const InputLock& input) {
  const FileIdentity i = identity_of(out);
  return i.exists && i.dev == input.identity().dev && i.ino == input.identity().ino;
}

struct OutputBatch::Impl {
  Impl(SyncPolicy p, unsigned committers) : batch(p, committers) {}
  CommitBatch batch;
};

OutputBatch::OutputBatch(SyncPolicy policy, unsigned committers) : impl_(std::make_unique<Impl>(policy, committers)) {}
OutputBatch::~OutputBatch() = default;
SyncPolicy OutputBatch::policy() const noexcept { return impl_->batch.policy(); }

CommitRoute api::commit_route(const OutputRoute& route) {
  return {route.batch ? &impl_of(*route.batch).batch : nullptr, route.item};
}

std::vector<OutputBatch::Failure> OutputBatch::finish() { return impl_->batch.finish(); }
bool OutputBatch::settle(std::size_t item, std::vector<std::string>* messages) {
  return impl_->batch.settle(item, messages);
}
void OutputBatch::on_settled(std::function<void(std::size_t)> f) { impl_->batch.on_settled(std::move(f)); }

// ------------------------------------------------------------------------ CleanupOnSignal

namespace {
// The signals after which the temporary files are removed before the process ends:
// SIGINT, SIGTERM and SIGHUP, except those ignored (nohup, a background job of a
// non-interactive shell) or blocked when the first CleanupOnSignal was made: those must
// stay without effect (a blocked signal is not discarded, and sigwait would take it).
const sigset_t& cleanup_signals() {
  static const sigset_t set = [] {
    sigset_t s, blocked;
    sigemptyset(&s);
    pthread_sigmask(SIG_BLOCK, nullptr, &blocked);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction sa {};
      if (::sigaction(sig, nullptr, &sa) == 0 && sa.sa_handler != SIG_IGN && !sigismember(&blocked, sig))
        sigaddset(&s, sig);
    }
    return s;
  }();
  return set;
}
}  // namespace

struct CleanupOnSignal::Impl {
  sigset_t old;
};

CleanupOnSignal::CleanupOnSignal() : impl_(std::make_unique<Impl>()) {
  const sigset_t& set = cleanup_signals();
  pthread_sigmask(SIG_BLOCK, &set, &impl_->old);
  static const bool started = [] {
    try {
      std::thread([] {
        const sigset_t& s = cleanup_signals();
        int sig = 0;
        while (sigwait(&s, &sig) != 0) {}
        remove_temporary_files_and_freeze();
        // End the process as the signal would have: default action, raised on this thread.
        ::signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
        ::raise(sig);
        ::_exit(128 + sig);
      }).detach();
      return true;
    } catch (const std::system_error&) { return false; }
  }();
  if (!started) pthread_sigmask(SIG_SETMASK, &impl_->old, nullptr);  // nobody would take them
}
CleanupOnSignal::~CleanupOnSignal() { pthread_sigmask(SIG_SETMASK, &impl_->old, nullptr); }

}  // namespace modsign
