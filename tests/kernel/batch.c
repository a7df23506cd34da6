/* msc-batch: load a list of kernel modules one after the other, without a fork per module.
 *
 * Usage (inside the conformance initramfs): msc-batch [-f] LIST FIRST
 * LIST holds lines "MODNAME FILE" (files under /cases); loading starts at line FIRST (0-based).
 * Per line, the same as the shell loop of /init does with busybox insmod: finit_module(2) on
 * the file and, when that fails and -f is not given, init_module(2) on its bytes (busybox's
 * bb_init_module); the errno of the last call is the result.  With -f only finit_module is
 * used (the IMA kernel, see finit.c).  Then it prints, on stdout:
 *   MSC-RESULT FILE rc=0|1 taint=-|none|FLAGS out=insmod: <strerror>
 *   MSC-LOG FILE <kernel log line>           (each line the load added to the kernel log)
 *   MSC-IMA-SIZE FILE <bytes>                (when the IMA measurement list exists)
 * unloads MODNAME if it loaded (delete_module, O_NONBLOCK) and clears the kernel log.  Before
 * each load it writes the line number to /msc-next, so that /init can report a load that
 * killed this process (an oops) and resume after it.  The IMA list is read incrementally
 * through one open descriptor (its seq_file continues where the last read stopped), so its
 * size costs no re-read of the whole list per module.  Built statically by
 * tools/kernel-conformance with the host's C compiler. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static char logbuf[1 << 20];

static void print_log(const char* file) {
  int n = klogctl(4 /* SYSLOG_ACTION_READ_CLEAR */, logbuf, sizeof logbuf - 1);
  if (n <= 0) return;
  logbuf[n] = 0;
  char* save = NULL;
  for (char* l = strtok_r(logbuf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
    printf("MSC-LOG %s %s\n", file, l);
}

static int load(const char* path, int finit_only) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  if (syscall(SYS_finit_module, fd, "", 0) == 0) {
    close(fd);
    return 0;
  }
  int e = errno;
  if (finit_only) {
    close(fd);
    return e;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return errno;
  }
  char* buf = malloc(st.st_size ? st.st_size : 1);
  ssize_t got = 0;
  while (buf && got < st.st_size) {
    ssize_t r = read(fd, buf + got, st.st_size - got);
    if (r <= 0) break;
    got += r;
  }
  close(fd);
  errno = 0;
  syscall(SYS_init_module, buf, (unsigned long)got, "");
  e = errno;
  free(buf);
  return e;
}

int main(int argc, char** argv) {
  int finit_only = 0;
  if (argc > 1 && strcmp(argv[1], "-f") == 0) {
    finit_only = 1;
    ++argv;
    --argc;
  }
  if (argc != 3) {
    fprintf(stderr, "usage: msc-batch [-f] LIST FIRST\n");
    return 2;
  }
  FILE* list = fopen(argv[1], "r");
  if (!list) {
    perror(argv[1]);
    return 1;
  }
  long first = atol(argv[2]);
  int ima = open("/sys/kernel/security/ima/binary_runtime_measurements", O_RDONLY | O_CLOEXEC);
  long long ima_size = 0;
  static char chunk[1 << 16];
  if (ima >= 0)
    for (ssize_t r; (r = read(ima, chunk, sizeof chunk)) > 0;) ima_size += r;
  char line[4096], mod[256], file[2048], path[2100], sys[512];
  setvbuf(stdout, NULL, _IOFBF, 1 << 16);
  for (long i = 0; fgets(line, sizeof line, list); ++i) {
    if (i < first || sscanf(line, "%255s %2047s", mod, file) != 2) continue;
    FILE* next = fopen("/msc-next", "w");
    if (next) {
      fprintf(next, "%ld %s\n", i + 1, file);
      fclose(next);
    }
    fflush(stdout);
    snprintf(path, sizeof path, "/cases/%s", file);
    int e = load(path, finit_only);
    char taint[64] = "-";
    snprintf(sys, sizeof sys, "/sys/module/%s", mod);
    struct stat st;
    int loaded = stat(sys, &st) == 0;
    if (loaded) {
      strcpy(taint, "none");
      snprintf(sys, sizeof sys, "/sys/module/%s/taint", mod);
      FILE* t = fopen(sys, "r");
      if (t) {
        if (fgets(taint, sizeof taint, t) && taint[0] && taint[0] != '\n')
          taint[strcspn(taint, "\n")] = 0;
        else
          strcpy(taint, "none");
        fclose(t);
      }
    }
    if (e == 0)
      printf("MSC-RESULT %s rc=0 taint=%s out=\n", file, taint);
    else
      printf("MSC-RESULT %s rc=1 taint=%s out=insmod: %s\n", file, taint, strerror(e));
    print_log(file);
    if (loaded) syscall(SYS_delete_module, mod, O_NONBLOCK);
    klogctl(5 /* SYSLOG_ACTION_CLEAR */, NULL, 0);
    if (ima >= 0) {
      for (ssize_t r; (r = read(ima, chunk, sizeof chunk)) > 0;) ima_size += r;
      printf("MSC-IMA-SIZE %s %lld\n", file, ima_size);
    }
  }
  fflush(stdout);
  return 0;
}
