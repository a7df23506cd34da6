// modsign's own: run_batch() (batch.hpp) in its pieces: the pool of workers, the printer that
// keeps input order, the progress bar and the summary line.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <latch>
#include <mutex>
#include <system_error>
#include <thread>

#include "batch.hpp"
#include "cli_common.hpp"

namespace modsign::cli {

namespace {

/// "[#####.....] 3/10 sign" redrawn in place on stderr; nothing when off (not a terminal,
/// --quiet, one item).
class ProgressBar {
 public:
  ProgressBar(bool on, std::string verb, std::size_t n) : on_(on), verb_(std::move(verb)), n_(n) {}
  bool on() const noexcept { return on_; }
  void draw(std::size_t done) const {
    if (!on_) return;
    constexpr int kWidth = 40;
    const int fill = n_ ? static_cast<int>(kWidth * done / n_) : kWidth;
    const std::string bar = "\r\033[K[" + std::string(fill, '#') + std::string(kWidth - fill, '.') + "] " +
                            std::to_string(done) + "/" + std::to_string(n_) + " " + verb_;
    std::fwrite(bar.data(), 1, bar.size(), stderr);
    std::fflush(stderr);
  }
  void clear() const {
    if (on_) std::fputs("\r\033[K", stderr);
  }

 private:
  bool on_;
  std::string verb_;
  std::size_t n_;
};

/// The items' results, printed in input order as they finish: an item's lines once every
/// earlier item's are printed and its own outputs are settled (--sync batch: no "signed"
/// line for a module that was not replaced; an output that failed fails its item).
/// Thread-safe.
class OrderedPrinter {
 public:
  OrderedPrinter(std::size_t n, OutputBatch& batch, const BatchOptions& o, const ProgressBar& bar)
      : results_(n), finished_(n, 0), batch_(batch), o_(o), bar_(bar) {}

  /// Item `i` is done with `r`: prints whatever is ready.
  void finished(std::size_t i, ItemResult r) {
    const std::lock_guard<std::mutex> lock(mu_);
    results_[i] = std::move(r);
    finished_[i] = 1;
    ++n_done_;
    print_ready();
  }
  /// An output settled: prints whatever is ready.
  void settled() {
    const std::lock_guard<std::mutex> lock(mu_);
    print_ready();
  }
  /// Every item's result (its lines printed and cleared), once the workers are done.
  const std::vector<ItemResult>& results() const noexcept { return results_; }

 private:
  void print_ready() {  // with mu_ held
    bool cleared = false;
    while (next_ < results_.size() && finished_[next_]) {
      ItemResult& r = results_[next_];
      std::vector<std::string> failures;
      if (!batch_.settle(next_, &failures)) break;
      if (!failures.empty()) {
        r.state = ItemState::failed;
        r.exit = std::max(r.exit, kExitInput);
        r.out.clear();
        for (const auto& f : failures) r.err += "modsign: " + printable(f) + "\n";
      }
      const bool show_out = o_.always_print_out || !(o_.quiet && r.state == ItemState::done);
      if (o_.quiet && r.state == ItemState::skipped && r.exit == kExitOk) r.err.clear();  // a skip, no failure
      if (bar_.on() && !cleared && (!r.err.empty() || (show_out && !r.out.empty()))) {
        bar_.clear();
        cleared = true;
      }
      if (show_out && !r.out.empty()) {
        std::cout << r.out;
        flush_stdout();  // keeps the errno of a failed write for finish_stdout()
      }
      if (!r.err.empty()) {
        std::cerr << r.err;
        std::cerr.flush();
      }
      std::string().swap(r.out);
      std::string().swap(r.err);
      ++next_;
    }
    bar_.draw(n_done_);
  }

  std::vector<ItemResult> results_;
  std::vector<char> finished_;
  OutputBatch& batch_;
  const BatchOptions& o_;
  const ProgressBar& bar_;
  std::mutex mu_;
  std::size_t next_ = 0, n_done_ = 0;
};

/// Runs `worker` on `jobs` threads, or on as many as can be created (EAGAIN: a thread or
/// memory limit, e.g. a huge --jobs), or on the calling thread when none can; returns how
/// many ran it.  The threads start only once the pool is complete: otherwise the committer
/// threads that the first staged output spawns raced the pool for the same limit, and the
/// number of workers varied from run to run (down to 1).
unsigned run_pool(unsigned jobs, const std::function<void()>& worker) {
  if (jobs <= 1) {
    worker();
    return 1;
  }
  std::vector<std::thread> pool;
  std::latch start(1);
  try {
    for (unsigned t = 0; t < jobs; ++t)
      pool.emplace_back([&] {
        start.wait();
        worker();
      });
  } catch (const std::system_error&) {}
  start.count_down();
  if (pool.empty()) worker();
  for (auto& t : pool) t.join();
  return static_cast<unsigned>(std::max<std::size_t>(pool.size(), 1));
}

/// Item `i`'s result from `work`, given the route of its outputs to `batch` as item `i`; what
/// it throws fails the item, reported as run_guarded() says.
ItemResult run_item(const BatchWork& work, OutputBatch& batch, std::size_t i,
                    const std::function<std::string(std::size_t)>& name) {
  ItemResult r;
  bool returned = false;
  std::string err;
  const CaptureComplaints capture(err);
  const int exit = run_guarded(
      [&] {
        r = work(i, OutputRoute{&batch, i});
        returned = true;
        return r.exit;
      },
      nullptr, name ? name(i) : "");
  if (returned) {
    r.err.insert(0, err);  // anything said outside the work's own capture, in its place in the order
    return r;
  }
  ItemResult failed;
  failed.state = ItemState::failed;
  failed.exit = exit;
  failed.err = std::move(err);
  return failed;
}

/// What the summary line counts, and the batch's exit status.
struct Tally {
  int worst = kExitOk;
  std::size_t done = 0, failed = 0, skipped = 0;
  std::uint64_t bytes = 0;
};

/// The tally of `results`; an output that failed after its item's line was printed
/// (`unclaimed`, said here) fails that item.  With `verdicts`, an item that failed with a
/// negative verdict (exit 1) counts as done (checked).
Tally tally(const std::vector<ItemResult>& results, const std::vector<OutputBatch::Failure>& unclaimed, bool verdicts) {
  Tally t;
  std::vector<char> late_failure(results.size(), 0);
  for (const auto& f : unclaimed) {
    complain("", f.message);
    if (f.item < results.size()) late_failure[f.item] = 1;
    t.worst = std::max(t.worst, kExitInput);
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    const ItemResult& r = results[i];
    t.worst = std::max(t.worst, r.exit);
    t.bytes += r.bytes;
    ItemState s = late_failure[i] ? ItemState::failed : r.state;
    if (verdicts && s == ItemState::failed && r.exit == kExitVerdict) s = ItemState::done;
    t.done += s == ItemState::done;
    t.failed += s == ItemState::failed;
    t.skipped += s == ItemState::skipped;
  }
  return t;
}

/// "modsign: <verb>: D done, F failed, S skipped[, N not handled], B bytes, T s, J jobs"
/// ("D checked, E errors" with `verdicts`).
void print_summary(const std::string& verb, const Tally& t, std::size_t not_handled, double secs, unsigned jobs,
                   bool verdicts) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f", secs);
  const char* done = verdicts ? " checked, " : " done, ";
  const char* failed = !verdicts ? " failed, " : t.failed == 1 ? " error, " : " errors, ";
  std::cerr << "modsign: " << verb << ": " << t.done << done << t.failed << failed << t.skipped << " skipped, "
            << (not_handled ? std::to_string(not_handled) + " not handled, " : "") << t.bytes << " bytes, " << seconds
            << " s, " << jobs << (jobs == 1 ? " job" : " jobs") << "\n";
}

SyncPolicy sync_policy(const std::string& sync) {
  return sync == "each" ? SyncPolicy::each : sync == "none" ? SyncPolicy::none : SyncPolicy::batch;
}

}  // namespace

int run_batch(const std::string& verb, std::size_t n, const BatchWork& work, const BatchOptions& o, bool summary,
              const std::function<std::string(std::size_t)>& name) {
  const auto t0 = std::chrono::steady_clock::now();
  const CleanupOnSignal cleanup;  // before any thread starts: they inherit the blocked signals
  unsigned jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, std::max<std::size_t>(n, 1)));
  OutputBatch batch(sync_policy(o.sync));
  const ProgressBar bar(!o.quiet && n > 1 && ::isatty(STDERR_FILENO), verb, n);
  OrderedPrinter printer(n, batch, o, bar);
  std::atomic<std::size_t> next_item{0};
  batch.on_settled([&](std::size_t) { printer.settled(); });
  jobs = run_pool(jobs, [&] {
    for (std::size_t i; (i = next_item.fetch_add(1)) < n;) printer.finished(i, run_item(work, batch, i, name));
  });
  // Put the staged outputs in place (the items still waiting for theirs are printed as
  // they settle); a failure not yet claimed by an item's line fails its item in the tally.
  const auto unclaimed = batch.finish();
  printer.settled();
  batch.on_settled({});
  bar.clear();
  const Tally t = tally(printer.results(), unclaimed, o.verdicts);
  if (summary && !o.quiet)
    print_summary(verb, t, o.not_handled, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                  jobs, o.verdicts);
  return t.worst;
}

}  // namespace modsign::cli
