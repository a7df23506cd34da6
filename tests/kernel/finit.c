/* msc-finit: load one kernel module with finit_module(2) and nothing else.
 *
 * Usage (inside the conformance initramfs): msc-finit [-c] FILE
 * -c passes MODULE_INIT_COMPRESSED_FILE (include/uapi/linux/module.h): the kernel
 * decompresses the file itself (module_decompress, kernel/module/decompress.c; needs
 * CONFIG_MODULE_DECOMPRESS) and checks the signature of the decompressed image.
 * Exit status 0 when finit_module returned 0; otherwise 1, after printing
 * "finit_module: <strerror(errno)>" to stderr.
 *
 * busybox insmod falls back to init_module(2) when finit_module fails, and on an IMA kernel
 * that enforces appraisal of MODULE_CHECK the buffer path is refused with EACCES whatever
 * the module while module signatures are not enforced (ima_load_data,
 * security/integrity/ima/ima_main.c), which would hide the errno of the file path.  IMA measures and appraises modules only on the finit_module path, so the IMA
 * conformance kernel loads its cases with this program.  Built statically by
 * tools/kernel-conformance with the host's C compiler. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MSC_MODULE_INIT_COMPRESSED_FILE 4

int main(int argc, char** argv) {
  int flags = 0;
  if (argc == 3 && strcmp(argv[1], "-c") == 0) {
    flags = MSC_MODULE_INIT_COMPRESSED_FILE;
    ++argv;
    --argc;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: msc-finit [-c] FILE\n");
    return 2;
  }
  int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, "open %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  if (syscall(SYS_finit_module, fd, "", flags) != 0) {
    int e = errno;
    fprintf(stderr, "finit_module: %s\n", strerror(e));
    return 1;
  }
  close(fd);
  return 0;
}
