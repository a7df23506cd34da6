// Debian's EFI boot binaries for the tests (tools/fetch-efi-binaries: shim, GRUB,
// systemd-boot), and `pesign -h` as the reference Authenticode hash.  Shared by
// test_authenticode_debian.cpp and test_dbx_debian.cpp.
#pragma once

#include <gtest/gtest.h>

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

/// `pesign -h` (sha256 unless `digest` says sha1).
inline std::string pesign_hash(const std::string& path, const std::string& digest = "sha256") {
  const std::string out = sh("pesign -h -d " + digest + " -i " + test::q(path));
  const auto pos = out.find("hash: ");
  return pos == std::string::npos ? "(no hash in: " + out + ")" : out.substr(pos + 6, out.find('\n', pos) - pos - 6);
}

/// The binaries, fetched once per test run (empty paths when apt cannot provide them).
inline const Tools& efi_binaries() {
  static const Tools t = [] {
    Tools r;
    for (const char* tool : {"pesign", "osslsigncode", "sbverify", "sbsign", "sbattach"})
      if (test::run(std::string("command -v ") + tool).status != 0)
        ADD_FAILURE() << tool << " is not installed (Debian packages pesign, osslsigncode, sbsigntool; tools/check "
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

#define NEED_EFI_BINARIES()                                                                               \
  const ::modsign::test::efi_binaries::Tools& efi = ::modsign::test::efi_binaries::efi_binaries();        \
  if (efi.shim.empty() || efi.grub.empty() || efi.systemd_boot.empty()) {                                  \
    GTEST_SKIP() << "tools/fetch-efi-binaries could not download shimx64.efi, grubx64.efi and systemd-bootx64.efi"; \
  }
