// modsign — runs a fuzz target's LLVMFuzzerTestOneInput once on each file given (or each
// file in each directory given), for builds without libFuzzer: the corpora and the
// reproducers of past findings replay as ordinary tests.  Exit status 0 after all inputs;
// a crash or sanitizer report ends the process as it would under libFuzzer.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

static void run_one(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> buf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // A copy of exactly the file's size, so that reads past the end are caught by ASan.
  std::vector<std::uint8_t> data(buf.begin(), buf.end());
  LLVMFuzzerTestOneInput(data.data(), data.size());
}

int main(int argc, char** argv) {
  std::size_t n = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    if (fs::is_directory(arg)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(arg))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) run_one(f), ++n;
    } else {
      run_one(arg), ++n;
    }
  }
  std::printf("replayed %zu inputs\n", n);
  return n > 0 ? 0 : 1;
}
