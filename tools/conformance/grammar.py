"""The kernel's ASN.1 modules as data (issue 25 §2): a reader of the .asn1 files the kernel
compiles with scripts/asn1_compiler (crypto/asymmetric_keys/pkcs7.asn1, x509.asn1,
x509_akid.asn1, mscode.asn1), read from the kernel source tree, and a matcher that labels each
element of a DER tree with the production it fills (gen_grammar.py changes them one at a time).

The subset those modules use: type assignments `Name ::= Type ({ action })`; SEQUENCE and SET
with fields, SEQUENCE OF and SET OF, CHOICE; the universal types; ANY; context tags
`[n]` (EXPLICIT unless IMPLICIT, as the compiler reads them); OPTIONAL and DEFAULT (both make a
field skippable); actions `({ fn })`.  Comments run from `--` to the end of the line."""
import os
import re

UNIVERSAL = {"BOOLEAN": 1, "INTEGER": 2, "BIT STRING": 3, "OCTET STRING": 4, "NULL": 5,
             "OBJECT IDENTIFIER": 6, "ENUMERATED": 10, "UTF8String": 12, "PrintableString": 19,
             "T61String": 20, "TeletexString": 20, "IA5String": 22, "UTCTime": 23,
             "GeneralizedTime": 24, "UniversalString": 28, "BMPString": 30}
CONSTRUCTED = {"SEQUENCE": 0x30, "SET": 0x31}


class Type:
    """kind: "prim" (tag: the universal tag number), "any", "seq", "set", "seqof", "setof",
    "choice" or "ref" (name); fields: [Field] of seq/set/choice; of: the Type of seqof/setof."""

    def __init__(self, kind, name=None, tag=None, fields=None, of=None):
        self.kind, self.name, self.tag, self.fields, self.of = kind, name, tag, fields or [], of


class Field:
    """A field, a CHOICE alternative or a type assignment: name, type, ctx (the context tag
    number or None), implicit, optional (OPTIONAL or DEFAULT), action."""

    def __init__(self, name, type_, ctx=None, implicit=False, optional=False, action=None):
        self.name, self.type, self.ctx, self.implicit = name, type_, ctx, implicit
        self.optional, self.action = optional, action


def tokens(text):
    text = re.sub(r"--.*", "", text)
    return re.findall(r"::=|\(\{|\}\)|[{}\[\],]|\d+|[A-Za-z][A-Za-z0-9_-]*", text)


class Reader:
    def __init__(self, toks):
        self.t, self.i = toks, 0

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else None

    def take(self, want=None):
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise ValueError("asn1: expected %s, found %s (token %d)" % (want, tok, self.i))
        self.i += 1
        return tok

    def element(self, name):
        """[n] [IMPLICIT|EXPLICIT] Type [OPTIONAL|DEFAULT] [({ action })], in either order at the end."""
        ctx, implicit = None, False
        if self.peek() == "[":
            self.take("[")
            ctx = int(self.take())
            self.take("]")
        if self.peek() in ("IMPLICIT", "EXPLICIT"):
            implicit = self.take() == "IMPLICIT"
        f = Field(name, self.type_(), ctx, implicit)
        while self.peek() in ("OPTIONAL", "DEFAULT", "({"):
            if self.take() == "({":
                f.action = self.take()
                self.take("})")
            else:
                f.optional = True
        return f

    def type_(self):
        tok = self.take()
        two = tok + " " + (self.peek() or "")
        if two in UNIVERSAL:
            self.take()
            return Type("prim", two, UNIVERSAL[two])
        if tok in UNIVERSAL:
            return Type("prim", tok, UNIVERSAL[tok])
        if tok == "ANY":
            return Type("any")
        if tok in CONSTRUCTED:
            if self.peek() == "OF":
                self.take()
                return Type("seqof" if tok == "SEQUENCE" else "setof", of=self.element(""))
            return Type("seq" if tok == "SEQUENCE" else "set", fields=self.fields())
        if tok == "CHOICE":
            return Type("choice", fields=self.fields())
        return Type("ref", tok)

    def fields(self):
        self.take("{")
        out = []
        while self.peek() != "}":
            out.append(self.element(self.take()))
            if self.peek() == ",":
                self.take(",")
        self.take("}")
        return out


def parse_module(text):
    """{type name: Field} of one .asn1 file, in the order of the file."""
    r = Reader(tokens(text))
    out = {}
    while r.peek() is not None:
        name = r.take()
        r.take("::=")
        out[name] = r.element(name)
    return out


MODULES = ("pkcs7", "x509", "x509_akid", "mscode")


def load(src):
    """{module: {type name: Field}} of the kernel tree src's crypto/asymmetric_keys/*.asn1."""
    out = {}
    for m in MODULES:
        with open(os.path.join(src, "crypto", "asymmetric_keys", m + ".asn1")) as f:
            out[m] = parse_module(f.read())
    return out
