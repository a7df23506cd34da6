"""Cases generated from the kernel's grammar (issue 25 §2): every element of a valid signature,
labelled with the production of pkcs7.asn1 / x509.asn1 / x509_akid.asn1 it fills (grammar.py),
changed one way at a time, so that a disagreement names one rule.

The changes, per element:
- encoding (every element): its length in long form of 1 to 8 octets (the kernel's
  decoder takes at most 2), indefinite length, a long-form tag number, the constructed bit
  flipped, the header alone (long-form length octets missing; a constructed one also
  indefinite with nothing after, without its EOC, or ending in a wrong EOC);
- ANY-typed elements (Data, parameters, Certificate, attribute values, name values) also:
  the whole value in indefinite form at every level, nested 12 deep (definite and
  indefinite), an end-of-contents misplaced inside it or missing, and indefinite with each
  thing asn1_find_indefinite_length refuses after its content (ANY_INSIDE);
- OPTIONAL fields: a present one removed, an absent one added (a minimal value of its type);
- OBJECT IDENTIFIERs: each other OID of the field's role (OID_ROLES: content types, digests,
  signature and key algorithms, attributes, extensions, name attributes);
- times (UTCTime, GeneralizedTime): each value of TIMES, one rule of x509_decode_time each;
- CHOICEs: each other alternative (the same content under the other tag where the grammar
  has both SET and SEQUENCE forms; a minimal value otherwise);
- SET OF / SEQUENCE OF: the first element twice, no element at all.
Case ids are "<original>:<label>.<change>"; gen_case() rebuilds one from its id."""
import copy
import os

from .der import Node, oid, parse
from .grammar import Field
from .mutate import at

EOC = b"\0\0"


class Raw(Node):
    """An element whose encoding is given whole (a long-form tag, a missing EOC, ...)."""

    def __init__(self, raw):
        super().__init__(0, val=b"")
        self.raw = raw

    def enc(self):
        return self.raw


# --- labelling -------------------------------------------------------------------------------
def _tags(g, f):
    """The identifier octets a field may start with (constructed bit cleared), None for any."""
    if f.ctx is not None:
        return {0x80 | f.ctx}
    t = f.type
    while t.kind == "ref" and t.name in g:
        f = g[t.name]
        if f.ctx is not None:
            return {0x80 | f.ctx}
        t = f.type
    if t.kind == "prim":
        return {t.tag}
    if t.kind in ("seq", "seqof"):
        return {0x10}
    if t.kind in ("set", "setof"):
        return {0x11}
    if t.kind == "choice":
        out = set()
        for a in t.fields:
            at_ = _tags(g, a)
            if at_ is None:
                return None
            out |= at_
        return out
    return None


def _fits(g, f, node):
    tags = _tags(g, f)
    return tags is None or (node.tag & ~0x20) in tags


class Labeller:
    """Walks a DER tree along the grammar: elements [(path, label, kind, field)] with kind
    "element", "absent" (an OPTIONAL field not there: path of the parent, the field's position
    as the last index) or "choice"; and "any" for ANY-typed elements."""

    def __init__(self, grammars):
        self.g = grammars
        self.out = []

    def field(self, mod, f, node, path, label):
        g = self.g[mod]
        self.out.append((path, label, "any" if self._is_any(g, f) else "element", f, mod))
        if f.ctx is not None and not f.implicit:  # EXPLICIT: the inner element is the type's
            if node.kids:
                inner = Field(f.name, f.type)
                self.out.append((path + (0,), label + ".inner", "any" if self._is_any(g, f) else "element", inner, mod))
                self.type_(mod, f.type, node.kids[0], path + (0,), label + ".inner")
            return
        self.type_(mod, f.type, node, path, label)

    def _is_any(self, g, f):
        t = f.type
        while t.kind == "ref" and t.name in g:
            t = g[t.name].type
        return t.kind == "any"

    def type_(self, mod, t, node, path, label):
        g = self.g[mod]
        if t.kind == "ref":
            if t.name not in g:
                return
            ref = g[t.name]
            if ref.action == "pkcs7_extract_cert":  # Certificate ::= ANY: an X.509 certificate
                self.type_("x509", self.g["x509"]["Certificate"].type, node, path, "x509:Certificate")
                return
            if ref.type.kind in ("seq", "set"):  # a production: labels start again from its name
                label = "%s:%s" % (mod, t.name)
            if ref.ctx is not None:
                self.field(mod, ref, node, path, label)
                return
            self.type_(mod, ref.type, node, path, label)
            return
        kids = node.kids or []
        if t.kind in ("seq", "set"):
            i = 0
            for pos, f in enumerate(t.fields):
                lab = "%s.%s" % (label, f.name)
                if i < len(kids) and _fits(g, f, kids[i]):
                    self.field(mod, f, kids[i], path + (i,), lab)
                    if mod == "x509" and f.name == "extnValue" and self._akid(kids, i):
                        self.akid(kids[i], path + (i,), lab)
                    i += 1
                elif f.optional:
                    self.out.append((path + (i,), lab, "absent", f, mod))
                else:
                    return
        elif t.kind in ("seqof", "setof"):
            self.out.append((path, label, "list", t, mod))
            for i, k in enumerate(kids):
                self.field(mod, t.of, k, path + (i,), label + "[]")
        elif t.kind == "choice":
            for a in t.fields:
                if _fits(g, a, node):
                    self.out.append((path, label, "choice", (t, a), mod))
                    self.field(mod, a, node, path, "%s/%s" % (label, a.name))
                    return

    @staticmethod
    def _akid(kids, i):
        return i >= 1 and kids[0].tag == 0x06 and kids[0].val == bytes([0x55, 0x1d, 0x23])

    def akid(self, node, path, label):
        """The AuthorityKeyIdentifier inside its extension's OCTET STRING (x509_akid.asn1):
        the OCTET STRING's content is parsed into kids so that changes re-encode it."""
        try:
            node.kids = parse(node.val)
        except (IndexError, ValueError):
            return
        if len(node.kids) == 1:
            self.type_("x509_akid", self.g["x509_akid"]["AuthorityKeyIdentifier"].type, node.kids[0],
                       path + (0,), "x509_akid:AuthorityKeyIdentifier")


# --- minimal values ----------------------------------------------------------------------------
PRIM_MIN = {1: b"\xff", 2: b"\x00", 3: b"\x00", 4: b"", 5: b"", 6: bytes([0x2a, 0x03, 0x04]), 10: b"\x00",
            23: b"250101000000Z", 24: b"20250101000000Z"}


def minimal(g, f):
    """A minimal element for field f of grammar g (its tag applied)."""
    n = _minimal_type(g, f.type)
    if f.ctx is None:
        return n
    if f.implicit:
        n.tag = 0x80 | f.ctx | (n.tag & 0x20)
        return n
    return Node(0xa0 | f.ctx, kids=[n])


def _resolve(g, t):
    while t.kind == "ref" and t.name in g and g[t.name].ctx is None:
        t = g[t.name].type
    return t


def absent_values(g, f):
    """[(change name, element)] an absent OPTIONAL field is added as: each alternative of a
    CHOICE, a list empty and with one minimal element, else a minimal value."""
    t = _resolve(g, f.type)
    if t.kind == "choice" and f.ctx is None:
        return [("add-" + a.name + n[3:], v) for a in t.fields for n, v in absent_values(g, a)]
    if t.kind in ("seqof", "setof"):
        empty = minimal(g, f)
        one = copy.deepcopy(empty)
        inner = one.kids[0] if f.ctx is not None and not f.implicit else one
        inner.kids.append(minimal(g, t.of))
        return [("add-empty", empty), ("add-one", one)]
    return [("add", minimal(g, f))]


def _minimal_type(g, t):
    if t.kind == "ref":
        return minimal(g, g[t.name]) if t.name in g else Node(0x05, val=b"")
    if t.kind == "prim":
        return Node(t.tag, val=PRIM_MIN.get(t.tag, b"a"))
    if t.kind == "any":
        return Node(0x05, val=b"")
    if t.kind in ("seq", "set"):
        return Node(0x30 if t.kind == "seq" else 0x31, kids=[minimal(g, f) for f in t.fields if not f.optional])
    if t.kind in ("seqof", "setof"):
        return Node(0x30 if t.kind == "seqof" else 0x31, kids=[])
    return minimal(g, t.fields[0])  # choice


# --- the changes -------------------------------------------------------------------------------
def _long_len(k):
    return lambda n: bytes([0x80 | k]) + n.to_bytes(k, "big")


def _all_indef(n):
    if n.kids is not None and n.tag & 0x20:
        n.lenform = "indef"
        for k in n.kids:
            _all_indef(k)


def _set(tree, path, node):
    """Puts node at path (the root when path is empty); returns the tree."""
    if not path:
        return node
    at(tree, path[:-1]).kids[path[-1]] = node
    return tree


def _nest(node, depth, indef):
    for _ in range(depth):
        node = Node(0x30, kids=[node])
        node.lenform = "indef" if indef else None
    return node


def element_changes(node, is_any):
    """[(name, function(node) -> replacement node)] of the encoding changes of one element."""
    out = []
    clen = len(node.content())
    for k in range(1, 9):
        if clen < 256 ** k:
            out.append(("len%d" % k, lambda n, k=k: _with(n, lenform=_long_len(k))))
    out.append(("indefinite", lambda n: _with(n, lenform="indef")))
    out.append(("long-tag", lambda n: Raw(bytes([(n.tag & 0xe0) | 0x1f, n.tag & 0x1f]) + n.enc()[1:])))
    out.append(("constructed-bit", lambda n: _with(n, tag=n.tag ^ 0x20)))
    # Headers cut short: the length octets missing, the content and EOC of an indefinite
    # element missing, a wrong EOC (lib/asn1_decoder.c's data overrun and EOC errors).
    out.append(("header-only-long", lambda n: Raw(bytes([n.tag, 0x82]))))
    if node.tag & 0x20:
        out.append(("header-only-indefinite", lambda n: Raw(bytes([n.tag, 0x80]))))
        out.append(("indefinite-eoc-missing", lambda n: Raw(bytes([n.tag, 0x80]) + n.content())))
        out.append(("indefinite-eoc-invalid", lambda n: Raw(bytes([n.tag, 0x80]) + n.content() + b"\0\x01")))
    if is_any:
        # An indefinite ANY is measured by asn1_find_indefinite_length: inside it, each of the
        # things that walk refuses (after a valid first element, where there is one).
        for name, bad in ANY_INSIDE:
            out.append(("any-indefinite-" + name,
                        lambda n, bad=bad: Raw(bytes([n.tag | 0x20, 0x80]) + n.content() + bad)))
        if node.kids is not None and node.tag & 0x20:
            out.append(("any-indefinite-all", lambda n: _tap(n, _all_indef)))
            out.append(("any-eoc-missing", lambda n: Raw(bytes([n.tag, 0x80]) + n.content())))
            out.append(("any-eoc-early", lambda n: Raw(bytes([n.tag, 0x80]) + EOC + n.content() + EOC)))
            if len(node.kids) >= 2:
                out.append(("any-eoc-inside", lambda n: Raw(bytes([n.tag, 0x80]) + n.kids[0].enc() + EOC
                                                            + b"".join(k.enc() for k in n.kids[1:]) + EOC)))
        out.append(("any-nested12", lambda n: _nest(n, 12, False)))
        out.append(("any-nested12-indefinite", lambda n: _nest(n, 12, True)))
    return out


ANY_INSIDE = [("eoc-invalid", b"\0\x01"), ("long-tag-inside", b"\x1f\x81\x01\x00" + EOC),
              ("long-tag-cut", b"\x1f\x81"), ("indefinite-primitive-inside", b"\x04\x80\x00\x00" + EOC),
              ("length-9-octets-inside", b"\x04\x89" + b"\0" * 9 + EOC),
              ("length-4-octets-inside", b"\x04\x84\x00\x00\x00\x01\x00" + EOC),
              ("length-7-octets-inside", b"\x04\x87" + b"\0" * 6 + b"\x01\x00" + EOC), ("length-overrun-inside", b"\x04\x84\xff\xff\xff\xff"),
              ("length-octets-cut", b"\x04\x84\x00"), ("one-byte-left", b"\x04"), ("nested-indefinite", b"\x30\x80\x05\x00" + EOC + EOC)]


def _with(n, **kw):
    for k, v in kw.items():
        setattr(n, k, v)
    return n


def _tap(n, f):
    f(n)
    return n


# The OIDs an OBJECT IDENTIFIER field takes, by the production it fills: each action's
# domain (mutate.OIDS, the kernel's oid_registry.h by role), the X.509 extensions
# x509_process_extension reads and the name attributes x509_extract_name_segment keeps.
OID_ROLES = {"pkcs7:PKCS7ContentInfo.contentType": "content", "pkcs7:ContentInfo.contentType": "content",
             "pkcs7:DigestAlgorithmIdentifier.algorithm": "digest",
             "pkcs7:DigestEncryptionAlgorithmIdentifier.algorithm": "signature",
             "pkcs7:AuthenticatedAttribute.type": "attribute", "x509:AlgorithmIdentifier.algorithm": "signature",
             "x509:Extension.extnid": "extension", "x509:AttributeValueAssertion.attributeType": "name",
             "pkcs7:AttributeValueAssertion.attributeType": "name"}
MORE_OIDS = {"extension": ["2.5.29.14", "2.5.29.15", "2.5.29.19", "2.5.29.35", "2.5.29.37", "1.2.3.4"],
             "name": ["2.5.4.3", "2.5.4.10", "1.2.840.113549.1.9.1", "2.5.4.6"],
             # x509_note_sig_algo's SHA3 signatures the mutator's list lacks: ECDSA with
             # SHA3-224/384/512, RSA with SHA3-224/384.
             "signature": ["2.16.840.1.101.3.4.3.9", "2.16.840.1.101.3.4.3.11", "2.16.840.1.101.3.4.3.12",
                           "2.16.840.1.101.3.4.3.13", "2.16.840.1.101.3.4.3.15"]}
# x509_decode_time's rules, one value each (a UTCTime or GeneralizedTime element gets every
# value of its own type): a short form, no Z, a fraction, each field out of range, 29
# February in a leap and a common year, and the century rules.
TIMES = {0x17: ["2601010000Z", "260101000000", "260101000000+0100", "261301000000Z", "260001000000Z",
                "260100000000Z", "260132000000Z", "260229000000Z", "240229000000Z", "260101240000Z",
                "260101236000Z", "260101235960Z", "500101000000Z", "491231235959Z"],
         0x18: ["20260101000000", "20260101000000.5Z", "202601010000Z", "21000229000000Z", "20000229000000Z",
                "19500101000000Z", "20491231235959Z", "99991231235959Z", "00000101000000Z", "20261301000000Z"]}


def oid_changes(label, node):
    """[(name, function(node) -> node)]: the OID of a labelled OBJECT IDENTIFIER swapped for
    each other one of its role."""
    from .mutate import OIDS
    role = OID_ROLES.get(label)
    if role is None or node.tag != 0x06:
        return []
    out = []
    for o in OIDS.get(role, []) + MORE_OIDS.get(role, []):
        v = oid(o).val
        if v != node.val:
            out.append(("oid-" + o, lambda n, v=v: _with(n, val=v)))
    return out


def grammar_changes(g, item, tree):
    """[(name, function(tree) -> tree)] of the grammar changes of one labelled item."""
    path, label, kind, f, mod = item
    gm = g[mod]
    out = []
    if kind == "element":
        for name, fn in oid_changes(label, at(tree, path)):
            out.append((name, lambda t, fn=fn: _set(t, path, fn(at(t, path)))))
    if kind == "element" and at(tree, path).tag in TIMES:
        for v in TIMES[at(tree, path).tag]:
            out.append(("time-" + v, lambda t, v=v: _set(t, path, _with(at(t, path), val=v.encode()))))
    if kind in ("element", "any") and f.optional:
        out.append(("drop", lambda t: _drop(t, path)))
    if kind == "absent":
        for name, node in absent_values(gm, f):
            out.append((name, lambda t, node=node: _insert(t, path, copy.deepcopy(node))))
    if kind == "list":
        n = at(tree, path)
        if n.kids:
            out.append(("dup-first", lambda t: _tap(t, lambda t: at(t, path).kids.insert(0, copy.deepcopy(at(t, path).kids[0])))))
        if len(n.kids or []) >= 2:  # every position: the last element first, the order reversed
            out.append(("last-first", lambda t: _tap(t, lambda t: at(t, path).kids.insert(0, at(t, path).kids.pop()))))
            if len(n.kids) >= 3:
                out.append(("reversed", lambda t: _tap(t, lambda t: at(t, path).kids.reverse())))
        out.append(("empty", lambda t: _tap(t, lambda t: setattr(at(t, path), "kids", []))))
    if kind == "choice":
        ch, alt = f
        for other in ch.fields:
            if other is alt:
                continue
            out.append(("to-" + other.name, lambda t, o=other: _set(t, path, _switch(gm, at(t, path), alt, o))))
    return out


def _drop(t, path):
    del at(t, path[:-1]).kids[path[-1]]
    return t


def _insert(t, path, node):
    at(t, path[:-1]).kids.insert(path[-1], node)
    return t


def _shape(g, f):
    """The element type of a SET OF / SEQUENCE OF field (through refs), else None."""
    t = f.type
    while t.kind == "ref" and t.name in g:
        t = g[t.name].type
    return (t.of.type.name or t.of.type.kind) if t.kind in ("seqof", "setof") else None


def _switch(g, node, alt, other):
    """node (alternative alt of a CHOICE) as alternative other: the same content under other's
    tag where both are lists of the same element (SET OF / SEQUENCE OF forms), else a minimal
    value of other."""
    if _shape(g, alt) is not None and _shape(g, alt) == _shape(g, other):
        inner = node.kids[0] if alt.ctx is not None and not alt.implicit else node
        kids = inner.kids
        t = other.type
        while t.kind == "ref" and t.name in g:
            t = g[t.name].type
        n = Node(0x30 if t.kind == "seqof" else 0x31, kids=kids)
        if other.ctx is None:
            return n
        if other.implicit:
            return Node(0xa0 | other.ctx, kids=kids)
        return Node(0xa0 | other.ctx, kids=[n])
    return minimal(g, other)


# --- the cases ---------------------------------------------------------------------------------
def labels(grammars, p7):
    """(tree, items) of a PKCS#7 DER: its Node tree and the Labeller's items."""
    tree = parse(p7)[0]
    lab = Labeller(grammars)
    lab.type_("pkcs7", grammars["pkcs7"]["PKCS7ContentInfo"].type, tree, (), "pkcs7:PKCS7ContentInfo")
    return tree, lab.out


def changes(grammars, tree, items):
    """[(class, function(tree) -> tree)]: every change of every item; an element labelled more
    than once (an EXPLICIT wrapper's referenced type, a CHOICE's alternative) gets its encoding
    changes once, under its first label."""
    out, seen = [], set()
    anys = {item[0] for item in items if item[2] == "any"}  # ANY under any of its labels
    for item in items:
        path, label, kind = item[:3]
        if kind in ("element", "any") and path not in seen:
            seen.add(path)
            for name, fn in element_changes(at(tree, path), path in anys):
                out.append(("%s.%s" % (label, name), lambda t, p=path, fn=fn: _set(t, p, fn(at(t, p)))))
        for name, fn in grammar_changes(grammars, item, tree):
            out.append(("%s.%s" % (label, name), fn))
    return out


def generate(grammars, origs):
    """[(id, class, original, module bytes)] for every original (name, signed module) and
    every change; the id is "<original>:<class>", unique (a repeated class gets #n)."""
    from .cases_common import assemble, split_module
    out = []
    for oname, module in origs:
        content, p7, ms = split_module(module)
        tree, items = labels(grammars, p7)
        used = {}
        for cls, fn in changes(grammars, tree, items):
            used[cls] = used.get(cls, 0) + 1
            cid = "%s:%s" % (oname, cls) + ("#%d" % used[cls] if used[cls] > 1 else "")
            new = fn(copy.deepcopy(tree))
            out.append((cid, cls, oname, assemble(content, new.enc(), algo=ms[0], hash_=ms[1], id_type=ms[2])))
    return out


def sample(cases, n):
    """n of the cases spread evenly over the list (all of them when n >= len or n < 0)."""
    if n < 0 or n >= len(cases):
        return list(cases)
    return [cases[i * len(cases) // n] for i in range(n)]


# --- the originals -------------------------------------------------------------------------------
AKID_OID = "2.5.29.35"


def with_akid(cert):
    """A copy of a certificate Node with an authorityKeyIdentifier extension holding all three
    fields (keyIdentifier, authorityCertIssuer as a directoryName, authorityCertSerialNumber),
    naming an issuer that is not the certificate itself: x509_akid.asn1's productions, in a
    certificate the kernel parses without checking its (now stale) signature."""
    cert = copy.deepcopy(cert)
    name = Node(0x30, kids=[Node(0x31, kids=[Node(0x30, kids=[oid("2.5.4.3"), Node(0x0c, val=b"modsign grammar CA")])])])
    akid = Node(0x30, kids=[Node(0x80, val=b"\x11" * 20), Node(0xa1, kids=[Node(0xa4, kids=[name])]),
                            Node(0x82, val=b"\x42")])
    ext = Node(0x30, kids=[oid(AKID_OID), Node(0x04, val=akid.enc())])
    tbs = cert.kids[0]
    exts = next((k for k in tbs.kids if k.tag == 0xa3), None)
    if exts is None:
        exts = Node(0xa3, kids=[Node(0x30, kids=[])])
        tbs.kids.append(exts)
    exts.kids[0].kids.append(ext)
    return cert


def originals(c, debian_original=None):
    """[(name, signed module)] the generated cases change: on a Debian kernel its own signature
    (the only one it trusts); elsewhere RSA without signedAttrs (issuer and serial), RSA with
    signedAttrs (subjectKeyIdentifier), RSA with the signer's certificate embedded, an
    authorityKeyIdentifier added to it (with_akid), ECDSA with signedAttrs and ML-DSA-65
    without (every built kernel loads each of them)."""
    from .cases_common import embed_certs, split_module
    from .der import P7
    if debian_original is not None:
        return [("debian", debian_original)]
    s = lambda **kw: c.sign("rsa", deterministic=True, **kw)  # noqa: E731
    p = P7(split_module(s())[1])
    embed_certs(p, [with_akid(c.cert_node("rsa"))])
    return [("rsa", s()), ("rsa-signedattrs-keyid", s(attrs=True, keyid=True)), ("rsa-embedded-akid", c.mod(p)),
            ("ecdsa-signedattrs", c.sign("ecdsa", deterministic=True, attrs=True)),
            ("mldsa65", c.sign("mldsa65", deterministic=True))]


_GRAMMARS = {}


def kernel_grammars():
    """The grammars of linux-source-7.2 (tools/build-test-kernel --source-only), read once."""
    if "g" not in _GRAMMARS:
        import subprocess
        from .common import HERE, die
        p = subprocess.run([os.path.join(HERE, "tools", "build-test-kernel"), "--source-only"], stdout=subprocess.PIPE)
        src = dict(line.split("=", 1) for line in p.stdout.decode().splitlines() if "=" in line).get("SRC")
        if p.returncode != 0 or not src:
            die("build-test-kernel --source-only failed: no kernel grammar to generate from", 77 if p.returncode == 77 else 1)
        from .grammar import load
        _GRAMMARS["g"] = load(src)
    return _GRAMMARS["g"]


def generated(c, n, debian_original=None):
    """run_mutants' `generated`: n of the generated cases (all when n < 0) for this kernel."""
    origs = originals(c, debian_original)
    every = generate(kernel_grammars(), origs)
    return {"originals": [o for o, _ in origs], "cases": sample(every, n), "total": len(every)}
