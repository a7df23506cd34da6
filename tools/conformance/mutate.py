"""Mutants: a seeded, reproducible generator of damaged module signatures.

Each mutant starts from one valid signed module of a form modsign makes (originals(): every
algorithm with and without signedAttrs, issuer+serial and SKID, embedded certificates, two
signers; on the Debian kernels Debian's own signature as well) and changes it structurally:
one DER node of ContentInfo / SignedData / SignerInfo / attributes / certificates (its tag,
length octets or value; removed, duplicated, moved; an OID swapped for another one the kernel
knows; a version changed), the struct module_signature trailer (each field), the marker, the
PKCS#7 bytes as a whole (truncated, extended, a bit flipped), the module content, or two such
changes at once.  Mutant number i of seed S draws everything from random.Random("S:i") alone,
so any mutant is rebuilt byte for byte from its id "S:i" without the others.

Each mutant has a class: "<node label>.<operation>" for node edits (node labels name the
field, e.g. "signerinfo.digestAlgorithm.oid"), "module_signature.<field>.<how>",
"marker.<how>", "pkcs7.<how>", "content.<how>", and "A + B" for two changes."""
import copy
import random

from .common import MAGIC
from .cases_common import ALGS, embed_certs, split_module
from .der import P7, Node, integer, oid


# --- OIDs the kernel's OID registry knows (include/linux/oid_registry.h), by role -----------
OIDS = {
    "digest": ["1.2.840.113549.2.5", "1.3.14.3.2.26", "2.16.840.1.101.3.4.2.4", "2.16.840.1.101.3.4.2.1",
               "2.16.840.1.101.3.4.2.2", "2.16.840.1.101.3.4.2.3", "2.16.840.1.101.3.4.2.8",
               "2.16.840.1.101.3.4.2.9", "2.16.840.1.101.3.4.2.10", "2.16.840.1.101.3.4.2.12",
               "1.2.156.10197.1.401", "1.2.643.7.1.1.2.2", "1.2.643.7.1.1.2.3"],
    "signature": ["1.2.840.113549.1.1.1", "1.2.840.113549.1.1.5", "1.2.840.113549.1.1.11",
                  "1.2.840.113549.1.1.12", "1.2.840.113549.1.1.13", "1.2.840.113549.1.1.14",
                  "1.2.840.113549.1.1.10", "1.2.840.10045.2.1", "1.2.840.10045.4.1", "1.2.840.10045.4.3.1",
                  "1.2.840.10045.4.3.2", "1.2.840.10045.4.3.3", "1.2.840.10045.4.3.4",
                  "2.16.840.1.101.3.4.3.10", "2.16.840.1.101.3.4.3.14", "2.16.840.1.101.3.4.3.16",
                  "2.16.840.1.101.3.4.3.17", "2.16.840.1.101.3.4.3.18", "2.16.840.1.101.3.4.3.19",
                  "1.2.156.10197.1.501", "1.2.643.7.1.1.1.1", "1.2.643.7.1.1.3.2", "1.3.101.112"],
    "content": ["1.2.840.113549.1.7.1", "1.2.840.113549.1.7.2", "1.2.840.113549.1.7.3",
                "1.3.6.1.4.1.311.2.1.4", "1.2.840.113549.1.9.16.1.4"],
    "attribute": ["1.2.840.113549.1.9.3", "1.2.840.113549.1.9.4", "1.2.840.113549.1.9.5",
                  "1.2.840.113549.1.9.15", "1.3.6.1.4.1.311.2.1.11", "1.3.6.1.4.1.311.2.1.12",
                  "1.2.3.4"],
}
ATTR_NAMES = {oid(o).val: n for o, n in [
    ("1.2.840.113549.1.9.3", "contentType"), ("1.2.840.113549.1.9.4", "messageDigest"),
    ("1.2.840.113549.1.9.5", "signingTime"), ("1.2.840.113549.1.9.15", "sMIMECapabilities")]}
OID_ROLE = {oid(o).val: role for role, lst in OIDS.items() for o in lst}
TBS_FIELDS = ["version", "serialNumber", "signature", "issuer", "validity", "subject",
              "subjectPublicKeyInfo", "extensions"]


# --- the originals ------------------------------------------------------------------------------
def originals(c, debian_original=None):
    """[(name, signed module bytes)]: the valid signed forms every mutant starts from, signed
    deterministically (modsign sign --deterministic) so that a seed names the same mutants on
    every run.  debian_original: a Debian kernel's own signed module (then first in the list)."""
    out = []
    if debian_original is not None:
        out.append(("debian", debian_original))

    def s(a, **kw):
        return c.sign(a, deterministic=True, **kw)
    for a in ALGS:
        out += [(a, s(a)), (a + "-keyid", s(a, keyid=True)), (a + "-signedattrs", s(a, attrs=True)),
                (a + "-signedattrs-keyid", s(a, attrs=True, keyid=True))]
        p = P7(split_module(s(a))[1])
        embed_certs(p, [c.cert_node(a)])
        out.append((a + "-embedded-cert", c.mod(p)))
    p = P7(split_module(s("mldsa65", attrs=True))[1])
    embed_certs(p, [c.cert_node("mldsa65"), c.cert_node("rsa")])
    out.append(("mldsa65-signedattrs-two-certs", c.mod(p)))
    for a, b, attrs in [("rsa", "mldsa65", False), ("mldsa44", "mldsa87", True)]:
        pa, pb = P7(split_module(s(a, attrs=attrs))[1]), P7(split_module(s(b, attrs=attrs))[1])
        pa.sinfos.kids.append(pb.si())
        out.append(("two-signers-%s-%s" % (a, b), c.mod(pa)))
    return out


# --- node labels -----------------------------------------------------------------------------
def _alg_kids(label, node):
    return [(label + (".oid" if k.tag == 0x06 else ".params"), k) for k in node.kids or []]


def _kids(label, node):
    """[(label, kid)] for the children of a node with the given label."""
    kids = node.kids or []
    if label == "contentinfo":
        return [("contentinfo.contentType" if i == 0 else "contentinfo.content", k) for i, k in enumerate(kids)]
    if label == "contentinfo.content":
        return [("signeddata", k) for k in kids]
    if label == "signeddata":
        out = []
        for i, k in enumerate(kids):
            if i == 0:
                out.append(("signeddata.version", k))
            elif i == len(kids) - 1 and k.tag == 0x31:
                out.append(("signeddata.signerInfos", k))
            elif k.tag == 0x31:
                out.append(("signeddata.digestAlgorithms", k))
            elif k.tag == 0x30:
                out.append(("signeddata.encapContentInfo", k))
            elif k.tag == 0xa0:
                out.append(("signeddata.certificates", k))
            elif k.tag == 0xa1:
                out.append(("signeddata.crls", k))
            else:
                out.append(("signeddata.other", k))
        return out
    if label == "signeddata.digestAlgorithms":
        return [("signeddata.digestAlgorithms.alg", k) for k in kids]
    if label.endswith(".alg") or label.endswith("Algorithm") or label.endswith("tbs.signature"):
        return _alg_kids(label, node)
    if label == "signeddata.encapContentInfo":
        return [("signeddata.encapContentInfo." + ("eContentType" if k.tag == 0x06 else "eContent"), k) for k in kids]
    if label == "signeddata.certificates":
        return [("certificate", k) for k in kids]
    if label == "certificate":
        return [("certificate." + n, k) for n, k in zip(["tbs", "signatureAlgorithm", "signatureValue"] +
                                                         ["extra"] * len(kids), kids)]
    if label == "certificate.tbs":
        names = TBS_FIELDS if kids and kids[0].tag == 0xa0 else TBS_FIELDS[1:]
        return [("certificate.tbs." + n, k) for n, k in zip(names + ["extra"] * len(kids), kids)]
    if label.startswith("certificate.tbs.") or label.startswith("certificate.signatureAlgorithm"):
        base = label if label.endswith(".inner") else label + ".inner"
        return [(base, k) for k in kids]
    if label == "signeddata.signerInfos":
        return [("signerinfo", k) for k in kids]
    if label == "signerinfo":
        out, after_sid = [], False
        for i, k in enumerate(kids):
            if i == 0:
                n = "version"
            elif i == 1:
                n = "sid.subjectKeyIdentifier" if k.tag == 0x80 else "sid.issuerAndSerialNumber"
            elif k.tag == 0xa0:
                n = "signedAttrs"
            elif k.tag == 0xa1:
                n = "unsignedAttrs"
            elif k.tag == 0x04:
                n = "signature"
            elif k.tag == 0x30 and not after_sid:
                n, after_sid = "digestAlgorithm", True
            elif k.tag == 0x30:
                n = "signatureAlgorithm"
            else:
                n = "other"
            out.append(("signerinfo." + n, k))
        return out
    if label == "signerinfo.sid.issuerAndSerialNumber":
        return [("signerinfo.sid." + ("issuer" if i == 0 else "serialNumber"), k) for i, k in enumerate(kids)]
    if label in ("signerinfo.sid.issuer", "signerinfo.sid.issuer.inner"):
        return [("signerinfo.sid.issuer.inner", k) for k in kids]
    if label in ("signerinfo.signedAttrs", "signerinfo.unsignedAttrs"):
        pre = label.split(".")[1]
        return [(pre + "." + ATTR_NAMES.get(k.kids[0].val if k.kids and k.kids[0].tag == 0x06 else b"", "other"), k)
                for k in kids]
    if label.split(".")[0] in ("signedAttrs", "unsignedAttrs") and label.count(".") == 1:
        return [(label + (".type" if k.tag == 0x06 else ".values"), k) for k in kids]
    if label.endswith(".values"):
        return [(label[:-len("values")] + "value", k) for k in kids]
    return [(label + ".inner" if not label.endswith(".inner") else label, k) for k in kids]


def nodes(ci):
    """[(path, label, node)] of every node under the ContentInfo (path: child indexes)."""
    out = []

    def walk(path, label, n):
        out.append((path, label, n))
        if n.kids is not None:
            for i, (lab, k) in enumerate(_kids(label, n)):
                walk(path + (i,), lab, k)
    walk((), "contentinfo", ci)
    return out


def at(ci, path):
    n = ci
    for i in path:
        n = n.kids[i]
    return n


# --- node operations ---------------------------------------------------------------------------
def _long_form(r):
    extra = r.choice([0, 1, 2])  # 0: long form where short would do; more: leading zero octets

    def f(n):
        b = n.to_bytes(max(1, (n.bit_length() + 7) // 8), "big")
        b = b"\0" * extra + b
        return bytes([0x80 | len(b)]) + b
    return f


def _off_by(d):
    def f(n):
        m = max(0, n + d)
        return bytes([m]) if m < 0x80 else bytes([0x80 | ((m.bit_length() + 7) // 8)]) + m.to_bytes((m.bit_length() + 7) // 8, "big")
    return f


def node_ops(r, label, n, parent):
    """[(operation name, function(node, parent) editing the tree)] that apply to node n."""
    ops = []

    def set_tag(t):
        def f(x, p):
            x.tag = t
        return f
    ops.append(("tag", set_tag(r.choice([n.tag ^ 0x20, n.tag ^ 0x80, n.tag ^ 0xa0, (n.tag & 0x1f) | 0x80,
                                          0x02, 0x03, 0x04, 0x05, 0x06, 0x0c, 0x17, 0x30, 0x31, 0xa0, 0xa1,
                                          0x1f, r.randrange(256)]))))
    ops.append(("length.long-form", lambda x, p, f=_long_form(r): setattr(x, "lenform", f)))
    ops.append(("length.plus-one", lambda x, p: setattr(x, "lenform", _off_by(1))))
    ops.append(("length.minus-one", lambda x, p: setattr(x, "lenform", _off_by(-1))))
    ops.append(("length.huge", lambda x, p, b=r.choice([b"\x84\xff\xff\xff\xff", b"\x84\x7f\xff\xff\xff",
                                                       b"\x89" + b"\1" * 9, b"\xff"]): setattr(x, "lenform", lambda m: b)))
    ops.append(("length.indefinite", lambda x, p: setattr(x, "lenform", "indef")))
    if parent is not None:
        ops.append(("remove", lambda x, p: p.kids.remove(x)))
        ops.append(("duplicate", lambda x, p: p.kids.insert(p.kids.index(x) + 1, copy.deepcopy(x))))
        if len(parent.kids) > 1:
            def move(x, p, to=r.random()):
                p.kids.remove(x)
                p.kids.insert(int(to * (len(p.kids) + 1)), x)
            ops.append(("reorder", move))
    if n.kids is not None:
        ops.append(("value.empty", lambda x, p: setattr(x, "kids", [])))
        if n.kids:
            ops.append(("value.drop-last", lambda x, p: x.kids.pop()))
            ops.append(("value.append-null", lambda x, p: x.kids.append(Node(0x05, val=b""))))
            # The same contents under the primitive identifier (the constructed bit cleared;
            # until 2026-12-06 the bit stayed and the bytes did not change).
            ops.append(("value.as-primitive", lambda x, p: (setattr(x, "val", x.content()), setattr(x, "kids", None),
                                                            setattr(x, "tag", x.tag & ~0x20))))
        return ops
    v = n.val
    pos = r.randrange(max(1, len(v)))
    bit = 1 << r.randrange(8)
    if v:
        ops.append(("value.bitflip", lambda x, p: setattr(x, "val", v[:pos] + bytes([v[pos] ^ bit]) + v[pos + 1:])))
        ops.append(("value.truncate", lambda x, p, k=r.randrange(len(v)): setattr(x, "val", v[:k])))
        ops.append(("value.random", lambda x, p, b=bytes(r.randrange(256) for _ in v): setattr(x, "val", b)))
    ops.append(("value.empty", lambda x, p: setattr(x, "val", b"")))
    ops.append(("value.append", lambda x, p, b=r.randrange(256): setattr(x, "val", v + bytes([b]))))
    ops.append(("value.leading-zero", lambda x, p: setattr(x, "val", b"\0" + v)))
    if n.tag == 0x02 and label.endswith("version"):
        ops.append(("version", lambda x, p, i=r.choice([0, 1, 2, 3, 4, 5, 255, 256, -1]): setattr(
            x, "val", integer(i).val if i >= 0 else b"\xff")))
    if n.tag == 0x06:
        role = OID_ROLE.get(v) or ("digest" if "digest" in label.lower() else "signature" if "ignature" in label
                                   else "attribute" if "Attrs" in label else "content")
        same = [o for o in OIDS[role] if oid(o).val != v]
        anyo = [o for lst in OIDS.values() for o in lst if oid(o).val != v]
        ops.append(("oid-swap", lambda x, p, o=r.choice(same if r.random() < 0.8 else anyo): setattr(x, "val", oid(o).val)))
        ops.append(("oid-swap", lambda x, p, o=r.choice(same): setattr(x, "val", oid(o).val)))
    return ops


def tree_mutation(r, ci):
    """Edits the ContentInfo tree ci in place with one node operation; returns its class."""
    ns = nodes(ci)
    path, label, n = r.choice(ns)
    parent = at(ci, path[:-1]) if path else None
    name, fn = r.choice(node_ops(r, label, n, parent))
    fn(n, parent)
    return "%s.%s" % (label, name)


# --- byte-level operations (PKCS#7 bytes, trailer, marker, content) ----------------------------
def byte_mutation(r, content, p7, content_ok=True):
    """(class, content, p7, trailer, marker): one change outside the DER tree.  The module
    content is changed only where content_ok: under a signature the kernel checks and
    trusts, so that the kernel refuses it at the signature; a damaged ELF that a soft-failed
    signature let through would test the kernel's ELF loader (and can oops it), not the
    signature check modsign predicts."""
    ms = bytearray([0, 0, 2, 0, 0, 0, 0, 0]) + len(p7).to_bytes(4, "big")
    marker = MAGIC
    kind = r.choice(["pkcs7", "module_signature", "module_signature", "marker"] + (["content"] if content_ok else []))
    if kind == "pkcs7":
        how = r.choice(["truncate", "extend", "bitflip", "zeroes"])
        if how == "truncate":
            p7 = p7[:r.randrange(len(p7))]
        elif how == "extend":
            p7 = p7 + bytes(r.randrange(256) for _ in range(r.choice([1, 2, 4, 16, 100])))
        elif how == "bitflip":
            i = r.randrange(len(p7))
            p7 = p7[:i] + bytes([p7[i] ^ (1 << r.randrange(8))]) + p7[i + 1:]
        else:
            i = r.randrange(len(p7))
            n = min(len(p7) - i, r.choice([1, 4, 32]))
            p7 = p7[:i] + b"\0" * n + p7[i + n:]
        ms[8:12] = len(p7).to_bytes(4, "big")
        return "pkcs7." + how, content, p7, bytes(ms), marker
    if kind == "module_signature":
        field = r.choice(["algo", "hash", "id_type", "signer_len", "key_id_len", "pad", "sig_len"])
        if field == "sig_len":
            how, n = r.choice([("zero", 0), ("minus-one", len(p7) - 1), ("plus-one", len(p7) + 1),
                               ("module-size", len(content) + len(p7)), ("beyond", len(content) + len(p7) + 1),
                               ("max", 0xffffffff), ("random", r.randrange(1 << 32))])
            ms[8:12] = n.to_bytes(4, "big")
        else:
            idx = {"algo": [0], "hash": [1], "id_type": [2], "signer_len": [3], "key_id_len": [4],
                   "pad": [5, 6, 7]}[field]
            how = "value"
            v = r.choice([1, 2, 3, 0xff, r.randrange(256)]) if field != "id_type" else r.choice([0, 1, 3, 0xff])
            ms[r.choice(idx)] = v
        return "module_signature.%s.%s" % (field, how), content, p7, bytes(ms), marker
    if kind == "marker":
        how = r.choice(["bitflip", "truncate", "missing", "doubled", "trailing-byte", "no-newline"])
        if how == "bitflip":
            i = r.randrange(len(MAGIC))
            marker = MAGIC[:i] + bytes([MAGIC[i] ^ (1 << r.randrange(8))]) + MAGIC[i + 1:]
        elif how == "truncate":
            marker = MAGIC[:r.randrange(len(MAGIC))]
        elif how == "missing":
            marker = b""
        elif how == "doubled":
            marker = MAGIC + MAGIC
        elif how == "trailing-byte":
            marker = MAGIC + bytes([r.randrange(256)])
        else:
            marker = MAGIC[:-1]
        return "marker." + how, content, p7, bytes(ms), marker
    how = r.choice(["bitflip", "truncate", "append", "empty"])
    if how == "bitflip":
        i = r.randrange(len(content))
        content = content[:i] + bytes([content[i] ^ (1 << r.randrange(8))]) + content[i + 1:]
    elif how == "truncate":
        content = content[:r.randrange(len(content))]
    elif how == "append":
        content = content + bytes(r.randrange(256) for _ in range(r.choice([1, 8, 4096])))
    else:
        content = b""
    return "content." + how, content, p7, bytes(ms), marker


# --- mutants -----------------------------------------------------------------------------------
def mutant(seed, i, origs, trusted=None):
    """Mutant i of seed: (id "seed:i", class, original's name, module bytes).  trusted: the
    names of the originals whose signer the kernel trusts (default: all); only their single
    mutants may change the module content (byte_mutation)."""
    r = random.Random("%d:%d" % (seed, i))
    oname, data = origs[r.randrange(len(origs))]
    content, p7der, _ = split_module(data)
    steps = 2 if r.random() < 0.15 else 1
    classes, tree, byte = [], P7(p7der), None
    for _ in range(steps):
        if r.random() < 0.8:
            classes.append(tree_mutation(r, tree.ci))
        elif byte is None:
            byte = r.random()  # the byte-level change is drawn after the tree is encoded
            classes.append(None)
        else:
            classes.append(tree_mutation(r, tree.ci))
    p7 = tree.ci.enc()
    ms, marker = None, MAGIC
    if byte is not None:
        content_ok = steps == 1 and (trusted is None or oname in trusted)
        cls, content, p7, ms, marker = byte_mutation(random.Random("%d:%d:bytes" % (seed, i)), content, p7, content_ok)
        classes[classes.index(None)] = cls
    if ms is None:
        ms = bytes([0, 0, 2, 0, 0, 0, 0, 0]) + len(p7).to_bytes(4, "big")
    return "%d:%d" % (seed, i), " + ".join(classes), oname, content + p7 + ms + marker


def mutants(seed, count, origs, first=0, trusted=None):
    """Mutants first .. first+count-1 of seed (generator); trusted as for mutant()."""
    for i in range(first, first + count):
        yield mutant(seed, i, origs, trusted)
