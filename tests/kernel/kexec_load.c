/* msc-kexec: load one kernel image with kexec_file_load(2), then unload it; never reboots.
 *
 * Usage (inside the conformance initramfs): msc-kexec FILE
 * Calls kexec_file_load(fd, -1, "console=ttyS0", KEXEC_FILE_NO_INITRAMFS).  On success it
 * prints "kexec_file_load: 0", unloads the image again (KEXEC_FILE_UNLOAD) and exits 0;
 * otherwise it prints "kexec_file_load: errno=<number> (<strerror>)" and exits 1.  The
 * number is printed because the PE checks can return the kernel-internal ENOTSUPP (524),
 * which has no C library name.  Built statically by tools/kernel-conformance with the
 * host's C compiler. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef KEXEC_FILE_UNLOAD
#define KEXEC_FILE_UNLOAD 0x00000001
#endif
#ifndef KEXEC_FILE_NO_INITRAMFS
#define KEXEC_FILE_NO_INITRAMFS 0x00000004
#endif

int main(int argc, char** argv) {
  static const char cmdline[] = "console=ttyS0";
  if (argc != 2) {
    fprintf(stderr, "usage: msc-kexec FILE\n");
    return 2;
  }
  int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, "open %s: %s\n", argv[1], strerror(errno));
    return 2;
  }
  if (syscall(SYS_kexec_file_load, fd, -1, sizeof cmdline, cmdline, KEXEC_FILE_NO_INITRAMFS) != 0) {
    int e = errno;
    printf("kexec_file_load: errno=%d (%s)\n", e, strerror(e));
    return 1;
  }
  printf("kexec_file_load: 0\n");
  if (syscall(SYS_kexec_file_load, -1, -1, 0UL, NULL, KEXEC_FILE_UNLOAD) != 0)
    printf("unload: errno=%d (%s)\n", errno, strerror(errno));
  close(fd);
  return 0;
}
