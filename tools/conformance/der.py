"""A small DER reader/writer and PKCS#7 SignedData editing (the case builders
change signatures field by field)."""


# --- DER --------------------------------------------------------------------------------------
class Node:
    """A DER element: tag (the identifier octet), and either val (primitive content) or kids.

    Constructed elements (tag bit 0x20) are parsed into kids, primitive ones keep their bytes.
    enc() re-encodes with minimal definite lengths unless the node overrides the header:
    `lenform` "long3" (3 length octets), "indef" (BER indefinite length with EOC), or a function
    from the content length to the length octets (any encoding, right or wrong)."""

    def __init__(self, tag, val=None, kids=None):
        self.tag, self.val, self.kids, self.lenform = tag, val, kids, None

    def content(self):
        return b"".join(k.enc() for k in self.kids) if self.kids is not None else self.val

    def enc(self):
        c = self.content()
        if self.lenform == "indef":
            return bytes([self.tag, 0x80]) + c + b"\0\0"
        if callable(self.lenform):  # the length octets a function of the content length make
            return bytes([self.tag]) + self.lenform(len(c)) + c
        if self.lenform == "long3":
            return bytes([self.tag, 0x83]) + len(c).to_bytes(3, "big") + c
        return bytes([self.tag]) + enc_len(len(c)) + c


def enc_len(n):
    if n < 0x80:
        return bytes([n])
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(b)]) + b


def parse(data):
    """Parses a DER byte string into a list of Nodes (definite lengths only)."""
    out, pos = [], 0
    while pos < len(data):
        tag, n = data[pos], data[pos + 1]
        pos += 2
        if n & 0x80:
            k = n & 0x7f
            n = int.from_bytes(data[pos:pos + k], "big")
            pos += k
        c = data[pos:pos + n]
        pos += n
        out.append(Node(tag, kids=parse(c)) if tag & 0x20 else Node(tag, val=c))
    return out


def oid(dotted):
    """An OBJECT IDENTIFIER node for a dotted OID string."""
    arcs = [int(a) for a in dotted.split(".")]
    body = bytearray([40 * arcs[0] + arcs[1]])
    for a in arcs[2:]:
        enc = [a & 0x7f]
        a >>= 7
        while a:
            enc.append(0x80 | (a & 0x7f))
            a >>= 7
        body += bytes(reversed(enc))
    return Node(0x06, val=bytes(body))


def integer(v):
    return Node(0x02, val=v.to_bytes(max(1, (v.bit_length() + 8) // 8), "big"))


OID_DATA = "1.2.840.113549.1.7.1"
OID_SIGNED = "1.2.840.113549.1.7.2"
OID_ENVELOPED = "1.2.840.113549.1.7.3"
OID_CT = "1.2.840.113549.1.9.3"
OID_MD = "1.2.840.113549.1.9.4"
OID_SIGNING_TIME = "1.2.840.113549.1.9.5"
OID_SMIMECAP = "1.2.840.113549.1.9.15"
OID_MS_INDIRECT = "1.3.6.1.4.1.311.2.1.4"
OID_MD5 = "1.2.840.113549.2.5"
OID_SHA256 = "2.16.840.1.101.3.4.2.1"
OID_SHA256_RSA = "1.2.840.113549.1.1.11"


class P7:
    """A module's PKCS#7 ContentInfo as a Node tree with accessors for the parts tests edit."""

    def __init__(self, der):
        nodes = parse(der)
        self.ci = nodes[0]

    @property
    def sd(self):
        return self.ci.kids[1].kids[0]

    @property
    def sinfos(self):
        return self.sd.kids[-1]

    def si(self, i=0):
        return self.sinfos.kids[i]

    def attrs(self, i=0):
        for k in self.si(i).kids:
            if k.tag == 0xa0:
                return k
        return None

    def attr(self, o, i=0):
        want = oid(o).val
        for a in self.attrs(i).kids:
            if a.kids[0].val == want:
                return a
        return None

    def sig(self, i=0):
        return [k for k in self.si(i).kids if k.tag == 0x04][0]

    def der(self):
        return self.ci.enc()
