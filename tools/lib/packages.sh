# shellcheck shell=bash
# tools/lib/packages.sh: the Debian packages the build and the tests use, sourced by
# tools/check (which installs the missing ones), tools/distro-test and tools/cross-test
# (which put them in their chroots), and debian_build_depends (tools/package-test too).
# Sourcing runs nothing.
check_packages=(cmake g++ make pkg-config perl python3 libgtest-dev libbenchmark-dev libcli11-dev
      nlohmann-json3-dev liblzma-dev libzstd-dev zlib1g-dev xz-utils zstd gzip lz4 openssl dpkg-dev time
      gawk efitools sbsigntool pesign osslsigncode binutils go-md2man ccache
      softhsm2 opensc meson ninja-build ima-evm-utils acl
      e2fsprogs xfsprogs btrfs-progs f2fs-tools)  # mkfs: ima fit tests, IMA file-system conformance
# --kernels: qemu, a static busybox for the initramfs, and what a kernel build needs; for the
# s390x and arm64 kernels (debsid-s390x, debsid-arm64, mldsa-ima-s390x) qemu-system-s390x and
# qemu-system-aarch64 and the cross compilers of their guest helpers (and of the s390x build).
check_kernel_packages=(qemu-system-x86 busybox-static flex bison bc libelf-dev libssl-dev kmod gcc make
      qemu-system-misc gcc-s390x-linux-gnu libc6-dev-s390x-cross
      qemu-system-arm gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
# clang and its runtimes (libFuzzer, ASan, UBSan) for --sanitize and --fuzz, and clang-tidy
# (tools/lint tidy, in the --sanitize tier)
check_sanitize_packages=(clang-14 libclang-rt-14-dev clang-tidy-14)
# tools/lint format, in the plain tier (not in the chroots of --distro and --cross: the source's
# layout is the same there, and Debian 13 and unstable have no clang-format-14)
check_lint_packages=(clang-format-14)
# --cross ARCH (tools/cross-test): a Debian 13 amd64 chroot with ARCH added.  Host (amd64):
# the cross compiler comes with crossbuild-essential-ARCH, qemu-user runs ARCH programs,
# and the tools the tests only call as independent programs on files of portable formats.
cross_host_packages=(cmake make ninja-build pkgconf ccache perl python3 dpkg-dev time gawk git
      xz-utils zstd gzip lz4 efitools sbsigntool pesign osslsigncode binutils go-md2man
      ima-evm-utils acl e2fsprogs xfsprogs btrfs-progs f2fs-tools qemu-user
      debian-archive-keyring ca-certificates)
# Target (each as PKG:ARCH): the libraries modsign links, and what the test process and the
# CLI load or drive in process: openssl (the CLI that loads pkcs11-provider, the same
# libcrypto as the library's), pkcs11-provider, SoftHSM2 and OpenSC (pkcs11-tool and
# pkcs11-spy load the token module: one architecture for the whole chain).
# libbz2-dev, libsqlite3-dev and libtspi-dev: Debian 13's botan-3.pc names -lbz2 -lsqlite3
# -ltspi in Libs.private, which libbotan-3-dev does not pull in, and tests/install/consumer.sh
# links `pkg-config --static --libs modsign`.
cross_target_packages=(libssl-dev libbotan-3-dev liblzma-dev libzstd-dev zlib1g-dev libgtest-dev
      libgmock-dev openssl pkcs11-provider softhsm2 opensc libbz2-dev libsqlite3-dev libtspi-dev)
# Header-only, Architecture: all.
cross_all_packages=(libcli11-dev nlohmann-json3-dev)

debian_build_depends() {
  # The Build-Depends of debian/control (run from the checkout), one per line, sorted:
  # versions and build profiles dropped, debhelper-compat as debhelper.
  awk '/^Build-Depends:/ { f=1; sub(/^Build-Depends:/, "") } f && /^[A-Za-z-]+:/ && !/^Build-Depends:/ { f=0 }
       f { print }' debian/control | tr ',' '\n' | sed 's/([^)]*)//g; s/<[^>]*>//g; s/[[:space:]]//g' |
    sed 's/^debhelper-compat$/debhelper/' | grep -v '^$' | sort -u
}
