"""Booting a kernel under qemu: the busybox initramfs (/init, modprobe, crypto
modules), the boot itself, and reading the results back from the serial log."""
import base64
import os
import re
import shutil
import subprocess
import time

from .common import HERE, die, log, static_helper


# --- initramfs -------------------------------------------------------------------------------
# A kernel built with gcov (tools/build-test-kernel --gcov, tools/kernel-coverage): /init copies
# every counter file out of debugfs, base64 on the serial console, after its cases and before
# MSC-DONE; boot() writes them to GCOV["dir"] (gcov_collect).  Other kernels have no
# /sys/kernel/debug/gcov and print nothing.
GCOV_DUMP = r"""if [ -d /sys/kernel/debug ] && mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null; then
  [ -d /sys/kernel/debug/gcov ] && find /sys/kernel/debug/gcov -name '*.gcda' | while read -r f; do
    n=$(wc -c < "$f") && echo "MSC-GCOV-BEGIN $f $n" && base64 "$f" && echo MSC-GCOV-END
  done
  umount /sys/kernel/debug
fi
"""
GCOV = {"dir": None, "boots": 0}

INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
# A crypto self-test that failed at boot leaves its algorithm unusable for this boot
# (crypto_alg_lookup: ELIBBAD): the harness must know, so that it does not compare.
dmesg | grep -E 'alg: .*fail' | while IFS= read -r l; do echo "MSC-ERROR crypto self-test failed: $l"; done
dmesg -c >/dev/null
echo "MSC-BOOT $(uname -r)"
grep -h '' /proc/keys 2>/dev/null | while IFS= read -r l; do echo "MSC-KEY $l"; done
IMA=/sys/kernel/security/ima
if [ -x /bin/msc-finit ]; then
  mount -t securityfs securityfs /sys/kernel/security
  cat /etc/ima-policy > $IMA/policy || echo "MSC-ERROR writing the IMA policy failed"
  if [ -f /etc/ima-policy-probe ]; then
    while IFS= read -r l; do
      echo "$l" > $IMA/policy || echo "MSC-ERROR writing the IMA policy probe failed"
    done < /etc/ima-policy-probe
  fi
  while IFS= read -r l; do echo "MSC-POLICY $l"; done < $IMA/policy
  load=/bin/msc-finit
else
  load=insmod
fi
if [ -x /bin/msc-batch ]; then
  # mutant batches: one process loads the whole list (tests/kernel/batch.c).  A load that
  # kills it (an oops, e.g. a damaged ELF loaded under a soft-failed signature) is reported
  # here and ends the boot: the kernel may hold locks the dead task took, so the harness
  # boots again for the rest of the list.
  bf=-f; [ "$load" = insmod ] && bf=
  echo "0 -" > /msc-next
  /bin/msc-batch $bf /cases/list 0
  rc=$?
  if [ $rc -ne 0 ]; then
    read -r n f < /msc-next
    echo "MSC-RESULT $f rc=$rc taint=- out=Killed"
    dmesg -c | while IFS= read -r l; do echo "MSC-LOG $f $l"; done
    [ -d $IMA ] && echo "MSC-IMA-SIZE $f $(wc -c < $IMA/binary_runtime_measurements)"
    echo "MSC-STOPPED $n"
  fi
  : > /cases/list
fi
while read -r mod f; do
  t=$(echo "$f" | tr ' \t' '__')
  case $f in
    *.ko.xz|*.ko.zst|*.ko.gz) out=$(/bin/msc-finit -c "/cases/$f" 2>&1); rc=$? ;;
    *) out=$($load "/cases/$f" 2>&1); rc=$? ;;
  esac
  taint=-
  if [ -d /sys/module/$mod ]; then taint=$(cat /sys/module/$mod/taint 2>/dev/null); [ -n "$taint" ] || taint=none; fi
  echo "MSC-RESULT $t rc=$rc taint=$taint out=$out"
  dmesg -c | while IFS= read -r l; do echo "MSC-LOG $t $l"; done
  [ -d /sys/module/$mod ] && rmmod $mod
  dmesg -c >/dev/null
  [ -d $IMA ] && echo "MSC-IMA-SIZE $t $(wc -c < $IMA/binary_runtime_measurements)"
done < /cases/list
if [ -d $IMA ]; then
  echo MSC-IMA-BEGIN
  base64 $IMA/binary_runtime_measurements
  echo MSC-IMA-END
fi
if [ -x /bin/msc-kexec ]; then
  dmesg -c >/dev/null
  while read -r f; do
    out=$(/bin/msc-kexec "/kexec/$f" 2>&1 | tr '\n' ' '); rc=$?
    case $out in "kexec_file_load: 0"*) rc=0 ;; *) rc=1 ;; esac
    echo "MSC-KEXEC $f rc=$rc out=$out"
    dmesg -c | while IFS= read -r l; do echo "MSC-KLOG $f $l"; done
  done < /kexec/list
fi
""" + GCOV_DUMP + """echo MSC-DONE
poweroff -f
"""


def cpio_newc(entries):
    """A newc cpio archive from (name, mode, data, rdev_major, rdev_minor) entries."""
    out = bytearray()
    for ino, (name, mode, data, maj, mnr) in enumerate(entries + [("TRAILER!!!", 0, b"", 0, 0)], 1):
        nb = name.encode() + b"\0"
        hdr = "070701" + "".join("%08x" % v for v in (
            ino, mode, 0, 0, 1, 0, len(data), 0, 0, maj, mnr, len(nb), 0))
        out += hdr.encode() + nb
        out += b"\0" * ((4 - len(out) % 4) % 4)
        out += data
        out += b"\0" * ((4 - len(out) % 4) % 4)
    return bytes(out)


MODPROBE = r"""#!/bin/busybox sh
# request_module() helper: load the modules listed for the alias in /lib/msc-modprobe.map
n=
for a in "$@"; do case $a in -*) ;; *) n=$a ;; esac; done
grep "^$n " /lib/msc-modprobe.map | while read -r _ files; do
  for f in $files; do insmod /lib/modules/$f 2>/dev/null; done
done
exit 0
"""


def crypto_modules(moddir):
    """initramfs entries that let request_module() load the crypto modules of a kernel tree:
    the modules under kernel/crypto, kernel/arch/x86/crypto and kernel/lib, a map from each
    alias and name to the module files in load order (dependencies first), and /sbin/modprobe."""
    info = {}
    for sub in ("kernel/crypto", "kernel/arch/x86/crypto", "kernel/lib"):
        for root, _, files in os.walk(os.path.join(moddir, sub)):
            for f in files:
                if not f.endswith(".ko"):
                    continue
                path = os.path.join(root, f)
                with open(path, "rb") as fh:
                    data = fh.read()
                fields = {}
                for m in re.finditer(rb"\0(name|alias|depends)=([^\0]*)", data):
                    fields.setdefault(m.group(1).decode(), []).append(m.group(2).decode())
                name = (fields.get("name") or [f[:-3].replace("-", "_")])[0]
                deps = [d for d in ",".join(fields.get("depends", [])).split(",") if d]
                info[name] = (os.path.relpath(path, moddir), deps, fields.get("alias", []), data)
    def order(name, seen):
        if name in seen or name not in info:
            return []
        seen.add(name)
        out = []
        for d in info[name][1]:
            out += order(d, seen)
        return out + [info[name][0]]
    lines, aliases = [], {}
    for name, (_, _, al, _) in sorted(info.items()):
        for a in [name] + al:
            aliases.setdefault(a, []).append(name)
    for a, names in sorted(aliases.items()):
        seen, files = set(), []
        for n in names:
            files += order(n, seen)
        lines.append("%s %s" % (a, " ".join(files)))
    entries = [("sbin", 0o40755, b"", 0, 0), ("sbin/modprobe", 0o100755, MODPROBE.encode(), 0, 0),
               ("lib", 0o40755, b"", 0, 0), ("lib/msc-modprobe.map", 0o100644, ("\n".join(lines) + "\n").encode(), 0, 0),
               ("lib/modules", 0o40755, b"", 0, 0)]
    dirs = set()
    for rel, _, _, data in info.values():
        parts = rel.split("/")
        for i in range(1, len(parts)):
            d = "/".join(parts[:i])
            if d not in dirs:
                dirs.add(d)
                entries.append(("lib/modules/" + d, 0o40755, b"", 0, 0))
        entries.append(("lib/modules/" + rel, 0o100644, data, 0, 0))
    return entries


def finit_entry(work, arch=None):
    """The initramfs entry /bin/msc-finit (tests/kernel/finit.c, built statically with the host
    compiler, or the cross compiler of `arch`): finit_module(2) alone, with -c
    MODULE_INIT_COMPRESSED_FILE (compressed cases)."""
    return ("bin/msc-finit", 0o100755, static_helper(work, "msc-finit", "finit.c", arch), 0, 0)


def batch_entry(work, arch=None):
    """The initramfs entry /bin/msc-batch (tests/kernel/batch.c, built statically with the host
    compiler, or the cross compiler of `arch`): loads every module of /cases/list in one
    process (the mutant batches)."""
    return ("bin/msc-batch", 0o100755, static_helper(work, "msc-batch", "batch.c", arch), 0, 0)


def make_initramfs(path, cases, modname, extra=(), busybox=None):
    """busybox: the static busybox to put in (another architecture's); default the host's."""
    busybox = busybox or shutil.which("busybox") or "/bin/busybox"
    with open(busybox, "rb") as f:
        bb = f.read()
    entries = [("bin", 0o40755, b"", 0, 0), ("dev", 0o40755, b"", 0, 0),
               ("dev/console", 0o20600, b"", 5, 1), ("proc", 0o40755, b"", 0, 0),
               ("sys", 0o40755, b"", 0, 0), ("cases", 0o40755, b"", 0, 0),
               ("bin/busybox", 0o100755, bb, 0, 0), ("init", 0o100755, INIT.encode(), 0, 0)]
    entries += list(extra)
    lst = ""
    for name, data in cases:
        entries.append(("cases/" + name, 0o100644, data, 0, 0))
        lst += "%s %s\n" % (modname, name)
    entries.append(("cases/list", 0o100644, lst.encode(), 0, 0))
    with open(path, "wb") as f:
        f.write(cpio_newc(entries))


ERRNOS = {
    "Required key not available": "ENOKEY", "Key was rejected by service": "EKEYREJECTED",
    "Bad message": "EBADMSG", "Package not installed": "ENOPKG", "Invalid argument": "EINVAL",
    "No data available": "ENODATA", "Operation not permitted": "EPERM",
    "Message too long": "EMSGSIZE", "No such file or directory": "ENOENT",
    "Cannot allocate memory": "ENOMEM", "File exists": "EEXIST", "Exec format error": "ENOEXEC",
    "Invalid module format": "ENOEXEC", "Bad address": "EFAULT", "Key has been revoked": "EKEYREVOKED",
    "Key has expired": "EKEYEXPIRED", "Unknown symbol in module": "ENOENT",
    "Not supported": "EOPNOTSUPP", "Operation not supported": "EOPNOTSUPP",
    "Permission denied": "EACCES",
}


# Per guest architecture: the qemu-system program, its machine arguments and the kernel's
# console (s390x: the SCLP console qemu connects to -serial; arm64: the virt machine's PL011).
# arm64's "max" CPU with pauth-impdef: pointer authentication by qemu's own cheap function
# instead of QARMA, which dominates TCG's time otherwise.
QEMU_ARCH = {
    "x86_64": ("qemu-system-x86_64", [], "ttyS0", "max"),
    "s390x": ("qemu-system-s390x", ["-machine", "s390-ccw-virtio"], "ttysclp0", "max"),
    "arm64": ("qemu-system-aarch64", ["-machine", "virt"], "ttyAMA0", "max,pauth-impdef=on"),
}


def boot(kernel, initrd, serial_log, timeout, cmdline="", drives=(), stall=None, arch="x86_64"):
    """Boots kernel with initrd under qemu (TCG, the `arch` machine of QEMU_ARCH) until /init
    powers off (or prints MSC-DONE), for at most `timeout` seconds, or `stall` seconds without
    new serial output; drives: raw disk images attached as virtio disks (/dev/vda, /dev/vdb,
    ... in order).  Returns the time."""
    program, machine, console, cpu = QEMU_ARCH[arch]
    qemu = shutil.which(program)
    if not qemu:
        die("no %s (Debian's qemu-system-%s)" % (program, "x86" if arch == "x86_64" else "misc" if arch == "s390x" else "arm"), 77)
    # Memory: 768 MB, or more for a large initramfs, which is unpacked into RAM while its
    # image is still held (the arm64 kexec cases: nine 48 MB Images).
    mem = max(768, 2 * (os.path.getsize(initrd) >> 20) + 512)
    cmd = [qemu] + machine + ["-accel", "tcg", "-cpu", cpu, "-m", str(mem), "-smp", "1", "-display", "none",
                              "-monitor", "none", "-serial", "file:" + serial_log, "-no-reboot",
                              "-kernel", kernel, "-initrd", initrd,
                              "-append", ("console=%s loglevel=1 panic=-1 rdinit=/init %s" % (console, cmdline)).strip()]
    for d in drives:
        cmd += ["-drive", "file=%s,if=virtio,format=raw" % d]
    t0 = time.time()
    if os.path.exists(serial_log):
        os.unlink(serial_log)
    # /init powers off with `poweroff -f`; a kernel without ACPI (the tiny test kernels) halts
    # instead, so qemu is also stopped once /init has printed MSC-DONE.
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    done_at = None
    size, grew = -1, time.time()
    while p.poll() is None:
        time.sleep(0.5)
        if done_at is None:
            try:
                with open(serial_log, "rb") as f:
                    data = f.read()
                if b"MSC-DONE" in data:
                    done_at = time.time()
                if len(data) != size:
                    size, grew = len(data), time.time()
            except FileNotFoundError:
                pass
        stalled = stall is not None and done_at is None and time.time() - grew > stall
        if (done_at is not None and time.time() - done_at > 2) or time.time() - t0 > timeout or stalled:
            if done_at is None:
                log("qemu %s after %d s (see %s)" % ("stalled" if stalled else "timed out", time.time() - t0, serial_log))
            p.kill()
            p.wait()
    gcov_collect(serial_log, kernel)
    return time.time() - t0


GCOV_PREFIX = "/sys/kernel/debug/gcov/"


def gcov_collect(serial_log, kernel):
    """With GCOV["dir"] set (tools/kernel-coverage): the counter files of GCOV_DUMP in a boot's
    serial log, written to <dir>/<kernel build directory's name>/boot-<n>/<debugfs path>, where
    <debugfs path> is the .gcda file's absolute path in the kernel's object tree."""
    if not GCOV["dir"] or not os.path.exists(serial_log):
        return
    GCOV["boots"] += 1
    out = os.path.join(GCOV["dir"], os.path.basename(os.path.dirname(os.path.abspath(kernel))),
                       "boot-%d" % GCOV["boots"])
    with open(serial_log, "rb") as f:
        text = f.read().decode(errors="replace").replace("\r", "")
    n, bad = 0, []
    for m in re.finditer(r"^MSC-GCOV-BEGIN (\S+) (\d+)\n(.*?)^MSC-GCOV-END$", text, re.M | re.S):
        path, size = m.group(1), int(m.group(2))
        if not path.startswith(GCOV_PREFIX) or ".." in path:
            continue
        # Lines that are not base64 (a kernel message on the console) are dropped; a file
        # whose size or gcov magic ("gcda", little-endian) does not come out right is not kept.
        body = "".join(line for line in m.group(3).split("\n") if re.fullmatch(r"[A-Za-z0-9+/=]+", line))
        try:
            data = base64.b64decode(body)
        except ValueError:
            data = b""
        if len(data) != size or data[:4] != b"adcg":
            bad.append(os.path.basename(path))
            continue
        dest = os.path.join(out, path[len(GCOV_PREFIX):])
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(data)
        n += 1
    if bad:
        log("gcov: %d counter files of %s unreadable, left out: %s" % (len(bad), serial_log, " ".join(bad)))
    if n == 0:
        log("gcov: no counters in %s" % serial_log)


def tag(fname):
    """The name /init prints for a case file: blanks and tabs turned into '_' (one word)."""
    return fname.replace(" ", "_").replace("\t", "_")


def serial_lines(path):
    """(lines, list) of a serial log: its lines (carriage returns dropped) outside the
    MSC-IMA-BEGIN ... MSC-IMA-END block and the MSC-GCOV-BEGIN ... MSC-GCOV-END blocks, and the measurement list that block carries in
    base64 (bytes; the last block's; None without one)."""
    with open(path, "rb") as f:
        text = f.read().decode(errors="replace").replace("\r", "")
    lines, b64, blob, gcov = [], None, None, False
    for line in text.split("\n"):
        if gcov or line.startswith("MSC-GCOV-BEGIN "):  # gcov_collect's, not the cases'
            gcov = not line.startswith("MSC-GCOV-END")
        elif b64 is not None:
            if line.startswith("MSC-IMA-END"):
                blob = base64.b64decode("".join(b64))
                b64 = None
            else:
                b64.append(line.strip())
        elif line.startswith("MSC-IMA-BEGIN"):
            b64 = []
        else:
            lines.append(line)
    return lines, blob


def parse_serial(path):
    """(results, logs, keys, release, done, ima) from a serial log; ima has the IMA policy
    lines, the measurement list (bytes) and each case's end offset in it."""
    results, logs, keys, boot_release, done = {}, {}, [], None, False
    ima = {"policy": [], "sizes": [], "list": None, "errors": []}
    lines, ima["list"] = serial_lines(path)
    for line in lines:
        if line.startswith("MSC-IMA-SIZE "):
            _, name, size = line.split()
            ima["sizes"].append((name, int(size)))
        elif line.startswith("MSC-POLICY "):
            ima["policy"].append(line[11:])
        elif line.startswith("MSC-ERROR "):
            ima["errors"].append(line[10:])
        elif line.startswith("MSC-BOOT "):
            boot_release = line[9:].strip()
        elif line.startswith("MSC-KEY "):
            keys.append(line[8:])
        elif line.startswith("MSC-RESULT "):
            m = re.match(r"MSC-RESULT (\S+) rc=(\d+) taint=(\S*) out=(.*)$", line)
            name, rc, taint, out = m.group(1), int(m.group(2)), m.group(3), m.group(4)
            if rc == 0:
                res = "loads" + ("-tainted" if "E" in taint else "")
            else:
                err = None
                for text_, e in ERRNOS.items():
                    if out.rstrip().endswith(text_):
                        err = e
                res = "refused " + (err or "?(%s)" % out.strip())
            results[name] = {"result": res, "taint": taint, "insmod": out.strip()}
        elif line.startswith("MSC-LOG "):
            _, name, rest = line.split(" ", 2)
            rest = re.sub(r"^<\d+>", "", rest)
            if not re.match(r"^(\[\s*[\d.]+\]\s*)?(tsc|clocksource|sched_clock|random|clk):", rest):
                logs.setdefault(name, []).append(rest)
        elif line.startswith("MSC-DONE"):
            done = True
    return results, logs, keys, boot_release, done, ima
