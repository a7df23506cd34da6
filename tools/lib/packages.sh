# shellcheck shell=bash
# tools/lib/packages.sh: the Debian packages the build and the tests use, sourced by
# tools/check (which installs the missing ones) and tools/distro-test (which puts them in
# its chroot), and debian_build_depends (tools/package-test too).  Sourcing runs nothing.
check_packages=(cmake g++ make pkg-config perl python3 libgtest-dev libbenchmark-dev libcli11-dev
      nlohmann-json3-dev liblzma-dev libzstd-dev zlib1g-dev xz-utils zstd gzip lz4 openssl dpkg-dev time
      gawk efitools sbsigntool pesign osslsigncode binutils go-md2man ccache
      softhsm2 opensc meson ninja-build ima-evm-utils acl
      e2fsprogs xfsprogs btrfs-progs f2fs-tools)  # mkfs: ima fit tests, IMA file-system conformance
# --kernels: qemu, a static busybox for the initramfs, and what a kernel build needs; for the
# s390x kernel (debsid-s390x) qemu-system-s390x and the cross compiler of its guest helper.
check_kernel_packages=(qemu-system-x86 busybox-static flex bison bc libelf-dev libssl-dev kmod gcc make
      qemu-system-misc gcc-s390x-linux-gnu libc6-dev-s390x-cross)
# clang and its runtimes (libFuzzer, ASan, UBSan) for --sanitize and --fuzz
check_sanitize_packages=(clang-14 libclang-rt-14-dev)

debian_build_depends() {
  # The Build-Depends of debian/control (run from the checkout), one per line, sorted:
  # versions and build profiles dropped, debhelper-compat as debhelper.
  awk '/^Build-Depends:/ { f=1; sub(/^Build-Depends:/, "") } f && /^[A-Za-z-]+:/ && !/^Build-Depends:/ { f=0 }
       f { print }' debian/control | tr ',' '\n' | sed 's/([^)]*)//g; s/<[^>]*>//g; s/[[:space:]]//g' |
    sed 's/^debhelper-compat$/debhelper/' | grep -v '^$' | sort -u
}
