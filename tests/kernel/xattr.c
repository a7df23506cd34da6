/* msc-xattr: the file-signature helper of the IMA conformance initramfs (issue 16).
 *
 * Busybox has no setfattr for binary values, no keyctl and no statfs, so /init uses this
 * program, built statically by tools/kernel-conformance with the host's C compiler.
 *
 *   msc-xattr set PATH NAME HEX          setxattr(PATH, NAME, bytes of HEX); "-" HEX removes it
 *   msc-xattr apply MANIFEST             lines "PATH NAME HEX": set each (as set)
 *   msc-xattr open PATH                  open(O_RDONLY) and read PATH to the end
 *   msc-xattr exec PATH                  fork, execv(PATH); the errno of execv, else the status
 *   msc-xattr addkey DER                 add_key("asymmetric", "", DER) to the .ima keyring
 *                                        (its serial read from /proc/keys)
 *   msc-xattr max PATH NAME PREFIXHEX    the largest value NAME accepts on PATH: binary search
 *                                        over sizes 1..65536 of PREFIXHEX padded with 0x5a,
 *                                        the value removed before each try
 *   msc-xattr statfs PATH                f_bsize f_blocks f_bfree (fragment size units)
 *   msc-xattr fill DIR N SIZE SEED       N files DIR/f<i> of (i*7919 % SIZE)+1 bytes
 *   msc-xattr sign DIR N XSIZE SEED      security.ima of XSIZE bytes (03 03 04 ..., the rest
 *                                        pseudo-random per file) on DIR/f<i>
 *   msc-xattr rule RULES                 each line of RULES written alone to IMA's policy file:
 *                                        one line "OK RULE" or "ERR <errno name> RULE" per rule
 *                                        (the transaction then fails on purpose, so no rule is
 *                                        ever installed)
 *
 * Output: one line "OK ...", or "ERR <errno name> ..." (exit status 1). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static const char* ename(int e) {
  switch (e) {
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOSPC: return "ENOSPC";
    case E2BIG: return "E2BIG";
    case ERANGE: return "ERANGE";
    case EINVAL: return "EINVAL";
    case ENODATA: return "ENODATA";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case ENOENT: return "ENOENT";
    case ENOKEY: return "ENOKEY";
    case EKEYREJECTED: return "EKEYREJECTED";
    case EBADMSG: return "EBADMSG";
    case ENOMEM: return "ENOMEM";
    case EFBIG: return "EFBIG";
    case EEXIST: return "EEXIST";
    case ENOEXEC: return "ENOEXEC";
    case EIO: return "EIO";
    case EUCLEAN: return "EUCLEAN";
    default: return "E?";
  }
}

static unsigned char* unhex(const char* h, size_t* n) {
  size_t len = strlen(h) / 2;
  unsigned char* b = malloc(len + 1);
  for (size_t i = 0; i < len; ++i) {
    unsigned v;
    sscanf(h + 2 * i, "%2x", &v);
    b[i] = (unsigned char)v;
  }
  *n = len;
  return b;
}

static int fail(const char* what) {
  int e = errno;
  printf("ERR %s %s\n", ename(e), what);
  return 1;
}

static int set_one(const char* path, const char* name, const char* hex) {
  if (strcmp(hex, "-") == 0) {
    if (removexattr(path, name) != 0) return fail(path);
    printf("OK removed %s\n", path);
    return 0;
  }
  size_t n;
  unsigned char* v = unhex(hex, &n);
  int rc = setxattr(path, name, v, n, 0);
  free(v);
  if (rc != 0) return fail(path);
  printf("OK %zu %s\n", n, path);
  return 0;
}

static int ima_keyring(void) {
  FILE* f = fopen("/proc/keys", "r");
  char line[512];
  int id = -1;
  while (f && fgets(line, sizeof line, f)) {
    if (strstr(line, " keyring ") && strstr(line, " .ima:")) id = (int)strtol(line, NULL, 16);
  }
  if (f) fclose(f);
  return id;
}

/* One rule: its own open of the policy file, its write's errno, then an invalid line, so that
 * ima_release_policy() finds the transaction failed and deletes what it took. */
static int probe_rule(const char* rule) {
  int fd = open("/sys/kernel/security/ima/policy", O_WRONLY);
  if (fd < 0) return fail(rule);
  char buf[4200];
  int n = snprintf(buf, sizeof buf, "%s\n", rule);
  ssize_t w = write(fd, buf, (size_t)n);
  int e = errno;
  static const char spoil[] = "msc-probe-invalid-line\n";
  (void)!write(fd, spoil, sizeof spoil - 1);
  close(fd);
  if (w < 0) {
    errno = e;
    return fail(rule);
  }
  printf("OK %s\n", rule);
  return 0;
}

static unsigned long long rnd(unsigned long long* s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: msc-xattr set|apply|open|exec|addkey|max|statfs|fill|sign|rule ...\n");
    return 2;
  }
  const char* cmd = argv[1];
  if (strcmp(cmd, "set") == 0 && argc == 5) return set_one(argv[2], argv[3], argv[4]);
  if (strcmp(cmd, "apply") == 0) {
    FILE* f = fopen(argv[2], "r");
    if (!f) return fail(argv[2]);
    static char line[200000];
    int bad = 0;
    while (fgets(line, sizeof line, f)) {
      char* p = strtok(line, " \n");
      char* nm = strtok(NULL, " \n");
      char* hx = strtok(NULL, " \n");
      if (p && nm && hx) bad |= set_one(p, nm, hx);
    }
    fclose(f);
    return bad;
  }
  if (strcmp(cmd, "open") == 0) {
    int fd = open(argv[2], O_RDONLY);
    if (fd < 0) return fail(argv[2]);
    char buf[65536];
    ssize_t r;
    long long total = 0;
    while ((r = read(fd, buf, sizeof buf)) > 0) total += r;
    if (r < 0) return fail(argv[2]);
    close(fd);
    printf("OK %lld %s\n", total, argv[2]);
    return 0;
  }
  if (strcmp(cmd, "exec") == 0) {
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) return fail("pipe");
    pid_t pid = fork();
    if (pid == 0) {
      char* av[] = {argv[2], NULL};
      execv(argv[2], av);
      int e = errno;
      (void)!write(pfd[1], &e, sizeof e);
      _exit(127);
    }
    close(pfd[1]);
    int e = 0, st = 0;
    ssize_t got = read(pfd[0], &e, sizeof e);
    waitpid(pid, &st, 0);
    if (got == (ssize_t)sizeof e) {
      errno = e;
      return fail(argv[2]);
    }
    printf("OK status=%d %s\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1, argv[2]);
    return 0;
  }
  if (strcmp(cmd, "addkey") == 0) {
    int ring = ima_keyring();
    if (ring < 0) {
      errno = ENOENT;
      return fail("no .ima keyring in /proc/keys");
    }
    FILE* f = fopen(argv[2], "rb");
    if (!f) return fail(argv[2]);
    static unsigned char der[65536];
    size_t n = fread(der, 1, sizeof der, f);
    fclose(f);
    long k = syscall(SYS_add_key, "asymmetric", NULL, der, n, ring);
    if (k < 0) return fail(argv[2]);
    printf("OK key %lx on %x %s\n", k, ring, argv[2]);
    return 0;
  }
  if (strcmp(cmd, "max") == 0 && argc == 5) {
    size_t pn;
    unsigned char* prefix = unhex(argv[4], &pn);
    static unsigned char v[65537];
    memset(v, 0x5a, sizeof v);
    memcpy(v, prefix, pn);
    size_t lo = 0, hi = 65537; /* lo accepted (0: nothing yet), hi refused */
    int last = 0;
    while (hi - lo > 1) {
      size_t mid = lo + (hi - lo) / 2;
      if (mid < pn) mid = pn;
      removexattr(argv[2], argv[3]);
      if (setxattr(argv[2], argv[3], v, mid, 0) == 0) {
        lo = mid;
      } else {
        last = errno;
        hi = mid;
        if (mid == pn) break;
      }
    }
    removexattr(argv[2], argv[3]);
    if (!last && hi == 65537) { /* never refused below: the VFS limit, ask for its errno */
      if (setxattr(argv[2], argv[3], v, hi, 0) != 0) last = errno;
      removexattr(argv[2], argv[3]);
    }
    /* confirm both ends once more on a clean file */
    int ok_lo = lo == 0 || setxattr(argv[2], argv[3], v, lo, 0) == 0;
    removexattr(argv[2], argv[3]);
    int ok_hi = setxattr(argv[2], argv[3], v, hi, 0) == 0;
    if (ok_hi) removexattr(argv[2], argv[3]);
    printf("OK max=%zu refused=%zu errno=%s confirmed=%d\n", lo, hi, last ? ename(last) : "-", ok_lo && !ok_hi);
    return 0;
  }
  if (strcmp(cmd, "rule") == 0) {
    FILE* f = fopen(argv[2], "r");
    if (!f) return fail(argv[2]);
    static char line[4096];
    while (fgets(line, sizeof line, f)) {
      line[strcspn(line, "\n")] = 0;
      if (*line) probe_rule(line);
    }
    fclose(f);
    return 0;
  }
  if (strcmp(cmd, "statfs") == 0) {
    struct statfs s;
    if (statfs(argv[2], &s) != 0) return fail(argv[2]);
    sync();
    if (statfs(argv[2], &s) != 0) return fail(argv[2]);
    printf("OK bsize=%ld frsize=%ld blocks=%llu bfree=%llu files=%llu ffree=%llu\n", (long)s.f_bsize,
           (long)s.f_frsize, (unsigned long long)s.f_blocks, (unsigned long long)s.f_bfree,
           (unsigned long long)s.f_files, (unsigned long long)s.f_ffree);
    return 0;
  }
  if ((strcmp(cmd, "fill") == 0 || strcmp(cmd, "sign") == 0) && argc == 6) {
    int n = atoi(argv[3]);
    long size = atol(argv[4]);
    unsigned long long seed = strtoull(argv[5], NULL, 0) | 1;
    static unsigned char buf[70000];
    char path[4096];
    int bad = 0;
    for (int i = 0; i < n; ++i) {
      snprintf(path, sizeof path, "%s/f%d", argv[2], i);
      if (cmd[0] == 'f') {
        long len = (long)((unsigned long long)i * 7919 % (unsigned long long)size) + 1;
        for (long j = 0; j < len; ++j) buf[j] = (unsigned char)rnd(&seed);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, buf, (size_t)len) != len) bad = errno ? errno : EIO;
        if (fd >= 0) close(fd);
      } else {
        buf[0] = 3;
        buf[1] = 3;
        buf[2] = 4;
        for (long j = 3; j < size; ++j) buf[j] = (unsigned char)rnd(&seed);
        if (setxattr(path, "security.ima", buf, (size_t)size, 0) != 0) bad = errno;
      }
      if (bad) break;
    }
    sync();
    if (bad) {
      errno = bad;
      return fail(path);
    }
    printf("OK %s %d\n", cmd, n);
    return 0;
  }
  fprintf(stderr, "msc-xattr: bad arguments\n");
  return 2;
}
