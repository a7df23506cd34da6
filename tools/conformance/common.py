"""Shared by the conformance modules: repository and cache paths, the module
signature marker, logging and running commands."""
import os
import subprocess
import sys


HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
CACHE = os.environ.get("MODSIGN_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "modsign")
KEYS = os.path.join(HERE, "tests", "kernel", "keys")
MAGIC = b"~Module signature appended~\n"


def log(msg):
    print("kernel-conformance: " + msg, file=sys.stderr, flush=True)


def die(msg, status=1):
    log("error: " + msg)
    sys.exit(status)


def run(cmd, **kw):
    """Runs cmd (a list); returns stdout bytes; raises with stderr on failure."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode,
                                                   p.stderr.decode(errors="replace")[-2000:]))
    return p.stdout


def find_module(moddir, filename):
    """The path of the module `filename` (nls_iso8859-1.ko, .ko.xz) under a kernel package's
    modules directory."""
    for root, _, files in os.walk(moddir):
        if filename in files:
            return os.path.join(root, filename)
    die("no %s in %s" % (filename, moddir))


# The C cross compiler of each guest architecture other than the host's (Debian's
# gcc-<triplet> packages).
CROSS_CC = {"s390x": "s390x-linux-gnu-gcc", "arm64": "aarch64-linux-gnu-gcc"}


def static_helper(work, name, source, arch=None):
    """The bytes of a guest helper: tests/kernel/<source> built statically into work/<name>
    with the host's C compiler, or for `arch` (a CROSS_CC key) with Debian's cross compiler."""
    import shutil
    cc = shutil.which(CROSS_CC[arch]) if arch else shutil.which("cc") or shutil.which("gcc")
    if not cc:
        die("no C compiler for tests/kernel/%s%s" % (source, " (%s)" % CROSS_CC[arch] if arch else ""), 77)
    exe = os.path.join(work, name)
    run([cc, "-static", "-Os", "-Wall", "-o", exe, os.path.join(HERE, "tests", "kernel", source)])
    with open(exe, "rb") as f:
        return f.read()
