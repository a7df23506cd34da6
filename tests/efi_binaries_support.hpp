// Debian's EFI boot binaries for the tests (tools/fetch-efi-binaries: shim, GRUB,
// systemd-boot), and `pesign -h` as the reference Authenticode hash.  Shared by
// test_authenticode_debian.cpp and test_dbx_debian.cpp.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "test_support.hpp"

namespace modsign::test::efi_binaries {

struct Tools {
  std::string shim, grub, systemd_boot;
};

inline std::string sh(const std::string& cmd) {
  auto r = test::run(cmd);
  EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
  return r.out;
}

/// `pesign -h` (sha256 unless `digest` says sha1), read by meaning: the first hexadecimal
/// word of the digest's size, in either of pesign's formats ("hash: HEX" up to 0.112,
/// "HEX PATH" like sha256sum in 117).
inline std::string pesign_hash(const std::string& path, const std::string& digest = "sha256") {
  const std::string out = sh("pesign -h -d " + digest + " -i " + test::q(path));
  const std::size_t want = digest == "sha1" ? 40 : 64;
  for (std::size_t i = 0; i < out.size();) {
    const std::size_t b = out.find_first_of("0123456789abcdef", i);
    if (b == std::string::npos) break;
    const std::size_t e = out.find_first_not_of("0123456789abcdef", b);
    const std::size_t n = (e == std::string::npos ? out.size() : e) - b;
    if (n == want && (b == 0 || out[b - 1] == ' ' || out[b - 1] == '\n')) return out.substr(b, n);
    i = b + n;
  }
  return "(no " + digest + " hash in: " + out + ")";
}

/// pesign's version as one number: 112 for Debian 12's 0.112, 116 for Debian 13's, 117 for unstable's
/// (dpkg's record of the installed package; pesign has no --version).  Behaviour that
/// differs by version is pinned per version in the tests (test_authenticode_debian.cpp).
inline int pesign_version() {
  static const int v = [] {
    const std::string s = test::run("dpkg-query -W -f='${Version}' pesign 2>/dev/null").out;
    const std::size_t b = s.rfind("0.", 0) == 0 ? 2 : 0;
    return std::atoi(s.c_str() + b);
  }();
  return v;
}

/// An unsigned EFI image whose size is no multiple of 8, chosen by what it is rather than
/// where it came from: a copy of Debian's systemd-boot as d/unsigned-unaligned.efi, its
/// signature table removed with sbattach where the suite signs it (Debian 13 on), and 3
/// bytes appended where it is 8-byte aligned (Debian 12's 252 is not; unstable's 262 is).
inline std::string unsigned_unaligned(const std::string& systemd_boot, const test::TempDir& d) {
  const std::string f = d / "unsigned-unaligned.efi";
  sh("cp " + test::q(systemd_boot) + " " + test::q(f));
  if (test::run("sbverify --list " + test::q(f) + " 2>/dev/null | grep -q '^signature 1'").status == 0)
    sh("sbattach --remove " + test::q(f));
  EXPECT_NE(test::run("sbverify --list " + test::q(f) + " 2>&1").out.find("No signature table present"),
            std::string::npos);
  if (test::slurp(f).size() % 8 == 0) sh("printf 'end' >> " + test::q(f));
  return f;
}

/// The binaries, fetched once per test run (empty paths when apt cannot provide them).
inline const Tools& efi_binaries() {
  static const Tools t = [] {
    Tools r;
    for (const char* tool : {"pesign", "osslsigncode", "sbverify", "sbsign", "sbattach"})
      if (test::run(std::string("command -v ") + tool).status != 0)
        ADD_FAILURE() << tool
                      << " is not installed (Debian packages pesign, osslsigncode, sbsigntool; tools/check "
                         "installs them)";
    auto f = test::run(test::q(test::source_dir() + "/tools/fetch-efi-binaries"));
    if (f.status == 77) return r;
    EXPECT_EQ(f.status, 0) << f.err;
    auto field = [&f](const std::string& k) {
      const auto pos = f.out.find(k + "=");
      return pos == std::string::npos ? std::string()
                                      : f.out.substr(pos + k.size() + 1, f.out.find('\n', pos) - pos - k.size() - 1);
    };
    r.shim = field("SHIM");
    r.grub = field("GRUB");
    r.systemd_boot = field("SYSTEMD_BOOT");
    return r;
  }();
  return t;
}

}  // namespace modsign::test::efi_binaries

#define NEED_EFI_BINARIES()                                                                                         \
  const ::modsign::test::efi_binaries::Tools& efi = ::modsign::test::efi_binaries::efi_binaries();                  \
  if (efi.shim.empty() || efi.grub.empty() || efi.systemd_boot.empty()) {                                           \
    GTEST_SKIP() << "tools/fetch-efi-binaries could not download shimx64.efi, grubx64.efi and systemd-bootx64.efi"; \
  }
