// Secrets leave no copy behind (issue 30): after Signer::load fails, on each of its paths, no
// readable and writable page of this process holds the PIN or passphrase it was given.
// The search reads the process's own memory through /proc/self/mem; the secret is random
// per case, and this file keeps only a masked copy of it (never the plain bytes) while it
// searches.
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "crypto/crypto.hpp"
#include "modsign/result.hpp"
#include "modsign/sign.hpp"
#include "test_support.hpp"

using namespace modsign;  // NOLINT(google-build-using-namespace): test file
using test::q;

namespace {

constexpr std::uint8_t kMask = 0xA5;
constexpr std::size_t kSecretLength = 40;  // beyond std::string's in-place buffer: a heap copy
// What is searched for: the secret's last 24 bytes (96 random bits).  free() writes its own
// pointers over the first 16 bytes of a freed chunk (glibc's tcache), so a copy that was
// freed without being wiped keeps only its tail.
constexpr std::size_t kFrom = 16, kTail = kSecretLength - kFrom;

/// A random secret of 40 characters [0-9a-f], written to `path` (with a line end) and kept
/// here only masked (each byte XOR 0xA5).
struct MaskedSecret {
  std::array<std::uint8_t, kSecretLength> masked{};

  explicit MaskedSecret(const std::string& path) {
    std::array<unsigned char, kSecretLength / 2> raw{};
    EXPECT_EQ(::getrandom(raw.data(), raw.size(), 0), static_cast<ssize_t>(raw.size()));
    std::array<char, kSecretLength + 1> plain{};
    for (std::size_t i = 0; i < raw.size(); ++i) {
      plain[2 * i] = "0123456789abcdef"[raw[i] >> 4];
      plain[2 * i + 1] = "0123456789abcdef"[raw[i] & 15];
    }
    for (std::size_t i = 0; i < kSecretLength; ++i) masked[i] = static_cast<std::uint8_t>(plain[i]) ^ kMask;
    plain[kSecretLength] = '\n';
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::write(fd, plain.data(), plain.size()), static_cast<ssize_t>(plain.size()));
    ::close(fd);
    crypto::cleanse(plain.data(), plain.size());
    crypto::cleanse(raw.data(), raw.size());
  }

  /// The plain secret as a std::string, for an API that takes one (the caller's copy is its own).
  std::string unmasked() const {
    std::string s(kSecretLength, '\0');
    for (std::size_t i = 0; i < kSecretLength; ++i) s[i] = static_cast<char>(masked[i] ^ kMask);
    return s;
  }

  /// How many times the secret (its last 24 bytes) occurs in the process's readable, writable
  /// mappings (heap, stacks, anonymous and file-backed data), read through /proc/self/mem;
  /// the search's own buffer is left out (it holds what it last read).
  std::size_t occurrences() const {
    std::ifstream maps("/proc/self/maps");
    const int mem = ::open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
    EXPECT_GE(mem, 0);
    std::vector<std::uint8_t> buf(1 << 20);
    const auto own = reinterpret_cast<std::uintptr_t>(buf.data());
    std::size_t found = 0;
    std::string line;
    while (std::getline(maps, line)) {
      std::uintptr_t start = 0, end = 0;
      char perms[5] = {};
      if (std::sscanf(line.c_str(), "%lx-%lx %4s", &start, &end, perms) != 3) continue;
      if (perms[0] != 'r' || perms[1] != 'w') continue;
      if (line.find("[vvar") != std::string::npos || line.find("[vsyscall]") != std::string::npos) continue;
      if (own + buf.size() <= start || own >= end) {
        found += search(mem, start, end, buf);
      } else {
        if (start < own) found += search(mem, start, own, buf);
        if (own + buf.size() < end) found += search(mem, own + buf.size(), end, buf);
      }
    }
    ::close(mem);
    return found;
  }

 private:
  /// Occurrences in [start, end), read in overlapping chunks (a match across a boundary is seen).
  std::size_t search(int mem, std::uintptr_t start, std::uintptr_t end, std::vector<std::uint8_t>& buf) const {
    std::size_t found = 0;
    for (std::uintptr_t at = start; at < end;) {
      const std::size_t want = std::min<std::uintptr_t>(buf.size(), end - at);
      const ssize_t n = ::pread(mem, buf.data(), want, static_cast<off_t>(at));
      if (n <= 0) break;
      found += count_in(buf.data(), static_cast<std::size_t>(n));
      crypto::cleanse(buf.data(), static_cast<std::size_t>(n));
      if (static_cast<std::size_t>(n) < want || at + static_cast<std::uintptr_t>(n) >= end) break;
      at += static_cast<std::uintptr_t>(n) - (kTail - 1);
    }
    return found;
  }

  std::size_t count_in(const std::uint8_t* p, std::size_t n) const {
    std::size_t found = 0;
    const std::uint8_t first = masked[kFrom] ^ kMask;
    for (std::size_t i = 0; i + kTail <= n; ++i) {
      const void* hit = std::memchr(p + i, first, n - kTail + 1 - i);
      if (!hit) break;
      i = static_cast<std::size_t>(static_cast<const std::uint8_t*>(hit) - p);
      std::size_t k = 1;
      while (k < kTail && (p[i + k] ^ kMask) == masked[kFrom + k]) ++k;
      if (k == kTail) ++found;
    }
    return found;
  }
};

class ApiSignSecrets : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const std::string o = test::openssl();
    const std::string k = *dir_ / "rsa.key", c = *dir_ / "rsa.crt";
    auto r = test::run(o + " genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out " + q(k) + " && " + o +
                       " req -x509 -new -key " + q(k) + " -subj '/CN=secrets' -days 30 -out " + q(c) + " && " + o +
                       " pkcs8 -topk8 -v2 aes-256-cbc -passout pass:other -in " + q(k) + " -out " +
                       q(*dir_ / "enc.pem") + " && chmod 600 " + q(*dir_ / "enc.pem") + " " + q(k) + " && " + o +
                       " req -x509 -newkey rsa:2048 -nodes -keyout /dev/null -subj '/CN=other' -days 30 -out " +
                       q(*dir_ / "other.crt"));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override {
    // A sanitizer maps terabytes of shadow memory read-write and moves stack frames to its
    // fake stacks: a search of the whole address space is neither feasible nor meaningful.
    if (!test::sanitize_build().empty())
      GTEST_SKIP() << "the " << test::sanitize_build() << " build: no whole-memory search";
    ::unsetenv("KBUILD_SIGN_PIN");
  }

  /// Signer::load with the PIN file of `secret` must throw an InputError or IoError whose
  /// message starts with `message`; afterwards the secret is nowhere in memory.
  void expect_load_fails_clean(const std::string& key, const std::string& cert, const std::string& message) {
    const MaskedSecret secret(d_ / "pin");
    KeyOptions ko;
    ko.pin_file = d_ / "pin";
    try {
      Signer::load(key, cert, nullptr, ko);
      ADD_FAILURE() << key << ": loaded";
    } catch (const std::runtime_error& e) { EXPECT_EQ(std::string(e.what()).rfind(message, 0), 0u) << e.what(); }
    EXPECT_EQ(secret.occurrences(), 0u) << key << ": the PIN is still in memory";
  }
  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

// The search finds a secret that is there: a std::string holding it (what every case below
// would leave behind before the fix), and no longer once a SecretString wiped it.
TEST_F(ApiSignSecrets, TheSearchFindsALiveCopy) {
  const MaskedSecret secret(d_ / "pin");
  EXPECT_EQ(secret.occurrences(), 0u);
  {
    std::string plain = secret.unmasked();
    EXPECT_EQ(secret.occurrences(), 1u);
    crypto::SecretString owned(std::move(plain));  // copies, then wipes `plain`
    EXPECT_EQ(owned.value().size(), kSecretLength);
    EXPECT_EQ(secret.occurrences(), 1u);
  }
  EXPECT_EQ(secret.occurrences(), 0u);
}

// The key file cannot be read: PrivateKey::load throws before it returns.
TEST_F(ApiSignSecrets, KeyFileMissing) {
  expect_load_fails_clean(d_ / "missing.pem", *dir_ / "rsa.crt", d_ / "missing.pem: ");
}

// An encrypted key and the wrong passphrase: OpenSSL's decoder is given it and fails.
TEST_F(ApiSignSecrets, WrongPassphrase) {
  expect_load_fails_clean(*dir_ / "enc.pem", *dir_ / "rsa.crt", *dir_ / "enc.pem: cannot decrypt private key");
}

// The key loads (unencrypted; the PIN is not needed) but no certificate matches it.
TEST_F(ApiSignSecrets, NoMatchingCertificate) {
  expect_load_fails_clean(*dir_ / "rsa.key", *dir_ / "other.crt",
                          *dir_ / "other.crt: no certificate matches the private key " + *dir_ / "rsa.key");
}

// A token URI whose PKCS#11 module is not there: refused before the provider is loaded.
TEST_F(ApiSignSecrets, TokenModuleMissing) {
  expect_load_fails_clean("pkcs11:token=none?module-path=" + d_ / "none.so", "",
                          "pkcs11:token=none?module-path=" + d_ / "none.so" + ": PKCS#11 module ");
}

// A passphrase typed at the prompt (PassphraseProvider) that does not decrypt the key.
TEST_F(ApiSignSecrets, WrongPassphraseTyped) {
  const MaskedSecret secret(d_ / "typed");
  try {
    Signer::load(*dir_ / "enc.pem", *dir_ / "rsa.crt",
                 [&](const std::string&) { return std::optional<std::string>(secret.unmasked()); });
    ADD_FAILURE() << "loaded";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), *dir_ / "enc.pem" + ": cannot decrypt private key (wrong passphrase?)");
  }
  EXPECT_EQ(secret.occurrences(), 0u) << "the typed passphrase is still in memory";
}

}  // namespace
