#include "cms/signed_data.hpp"

#include <algorithm>

#include "asn1/der.hpp"

namespace modsign::cms {

using asn1::Reader;
using asn1::Writer;
using crypto::HashAlgo;
using crypto::KeyAlgo;

namespace {
bool same(ByteView a, ByteView b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
Bytes copy(ByteView b) { return Bytes(b.begin(), b.end()); }

// Attribute ::= SEQUENCE { attrType OID, attrValues SET OF AttributeValue }
Bytes attribute(ByteView type, ByteView value_tlv) {
  Writer w;
  w.add(asn1::kSequence, [&](Writer& a) {
    a.oid(type);
    a.tlv(asn1::kSet, value_tlv);
  });
  return w.take();
}
}  // namespace

Bytes SignerInfo::kernel_key_id() const {
  if (version == 3) return skid;
  Bytes id = serial;
  try {
    Reader r(issuer);
    auto name = r.next();
    id.insert(id.end(), name.content.begin(), name.content.end());
  } catch (const asn1::DecodeError&) {}
  return id;
}

Bytes SignerInfo::signed_attrs_as_set() const {
  if (!signed_attrs || signed_attrs->empty()) return {};
  Bytes b = *signed_attrs;
  b[0] = asn1::kSet;
  return b;
}

// ------------------------------------------------------------------------------ builder

namespace {
Status check_sid(const crypto::Certificate& cert, const BuildOptions& opt) {
  if (opt.sid == SignerIdType::subject_key_id && !cert.skid())
    return make_error(KErr::enokey, "certificate has no subjectKeyIdentifier (needed for --keyid)");
  return ok_status();
}

Status check_signer(const crypto::PrivateKey& key, const crypto::Certificate& cert, const BuildOptions& opt) {
  if (!(key.public_key() == cert.public_key()))
    return make_error(KErr::ekeyrejected, "private key does not match the certificate's public key");
  return check_sid(cert, opt);
}

/// DER SET OF {contentType id-data, messageDigest} in DER order, as signed.
Bytes signed_attrs_set(ByteView content_digest) {
  Writer ct, md;
  ct.oid(crypto::oid::data);
  md.octet_string(content_digest);
  Writer set;
  set.set_of({attribute(crypto::oid::content_type, ct.bytes()), attribute(crypto::oid::message_digest, md.bytes())});
  return set.take();
}

/// ContentInfo(SignedData) around one SignerInfo with the given attributes and signature.
Bytes assemble(KeyAlgo key_algo, const crypto::Certificate& cert, const BuildOptions& opt,
               const std::optional<Bytes>& attrs_set, ByteView sig) {
  const auto& hi = crypto::hash_info(opt.digest);
  const int version = opt.sid == SignerIdType::subject_key_id ? 3 : 1;
  auto digest_alg = [&](Writer& w) { w.add(asn1::kSequence, [&](Writer& a) { a.oid(hi.oid); }); };
  Writer out;
  out.add(asn1::kSequence, [&](Writer& ci) {
    ci.oid(crypto::oid::signed_data);
    ci.add(asn1::context_cons(0), [&](Writer& x) {
      x.add(asn1::kSequence, [&](Writer& sd) {
        sd.integer(static_cast<std::uint64_t>(version));
        sd.add(asn1::kSet, digest_alg);
        sd.add(asn1::kSequence, [&](Writer& eci) { eci.oid(crypto::oid::data); });
        sd.add(asn1::kSet, [&](Writer& sis) {
          sis.add(asn1::kSequence, [&](Writer& si) {
            si.integer(static_cast<std::uint64_t>(version));
            if (opt.sid == SignerIdType::subject_key_id) {
              si.tlv(asn1::context_prim(0), *cert.skid());
            } else {
              si.add(asn1::kSequence, [&](Writer& ias) {
                ias.raw(cert.issuer());
                ias.tlv(asn1::kInteger, cert.serial());
              });
            }
            digest_alg(si);
            if (attrs_set) {
              Reader r(*attrs_set);
              si.tlv(asn1::context_cons(0), r.next().content);
            }
            si.add(asn1::kSequence, [&](Writer& a) {
              a.oid(crypto::signature_oid(key_algo, opt.digest));
              if (crypto::signature_oid_has_null_params(key_algo)) a.null();
            });
            si.octet_string(sig);
          });
        });
      });
    });
  });
  return out.take();
}
}  // namespace

Result<Bytes> build_detached(const crypto::PrivateKey& key, const crypto::Certificate& cert, ByteView content,
                             const BuildOptions& opt) {
  if (auto st = check_signer(key, cert, opt); !st) return st.error();
  std::optional<Bytes> attrs_set;
  if (opt.signed_attrs) attrs_set = signed_attrs_set(crypto::digest(opt.digest, content));
  auto sig =
      crypto::sign_message(key, opt.digest, attrs_set ? ByteView(*attrs_set) : content, opt.backend, opt.deterministic);
  if (!sig) return sig.error();
  return assemble(key.algo(), cert, opt, attrs_set, *sig);
}

Result<SigningInput> signing_input(const crypto::PublicKey& key, const ContentDigests& cd, const BuildOptions& opt) {
  SigningInput in;
  const bool ml_dsa = crypto::is_ml_dsa(key.algo());
  if (opt.signed_attrs) {
    if (!cd.digest) return make_error(KErr::einval, "missing content digest");
    in.attrs_set = signed_attrs_set(*cd.digest);
  } else if (ml_dsa && !cd.mu) {
    return make_error(KErr::einval, "missing ML-DSA μ");
  } else if (!ml_dsa && !cd.digest) {
    return make_error(KErr::einval, "missing content digest");
  }
  if (ml_dsa) {
    in.kind = in.attrs_set ? SigningInput::Kind::signed_attrs : SigningInput::Kind::mu;
    if (in.attrs_set) {
      in.to_sign = *in.attrs_set;
      crypto::MlDsaMu mu(key.raw());
      mu.update(*in.attrs_set);
      in.mu = mu.final();
    } else {
      in.to_sign = in.mu = *cd.mu;
    }
    return in;
  }
  in.kind = SigningInput::Kind::digest;
  in.to_sign = in.attrs_set ? crypto::digest(opt.digest, *in.attrs_set) : *cd.digest;
  if (key.algo() == KeyAlgo::rsa) {
    Writer w;
    w.add(asn1::kSequence, [&](Writer& di) {
      di.add(asn1::kSequence, [&](Writer& a) {
        a.oid(crypto::hash_info(opt.digest).oid);
        a.null();
      });
      di.octet_string(in.to_sign);
    });
    in.digest_info = w.take();
  }
  return in;
}

Status check_signature(const crypto::PublicKey& key, const SigningInput& in, HashAlgo hash, ByteView signature) {
  switch (in.kind) {
    case SigningInput::Kind::mu: return crypto::ml_dsa_verify_mu(key, in.to_sign, signature);
    case SigningInput::Kind::signed_attrs: return crypto::verify_message(key, hash, in.to_sign, signature);
    case SigningInput::Kind::digest: return crypto::verify_digest(key, hash, in.to_sign, signature);
  }
  return make_error(KErr::einval, "unknown signing input");
}

Result<Bytes> build_detached_with_signature(const crypto::Certificate& cert, const SigningInput& in, ByteView signature,
                                            const BuildOptions& opt) {
  if (auto st = check_sid(cert, opt); !st) return st.error();
  if (auto st = check_signature(cert.public_key(), in, opt.digest, signature); !st) return st.error();
  return assemble(cert.public_key().algo(), cert, opt, in.attrs_set, signature);
}

Result<Bytes> build_detached_prehashed(const crypto::PrivateKey& key, const crypto::Certificate& cert,
                                       const ContentDigests& cd, const BuildOptions& opt) {
  if (auto st = check_signer(key, cert, opt); !st) return st.error();
  auto in = signing_input(key.public_key(), cd, opt);
  if (!in) return in.error();
  Result<Bytes> sig = in->kind == SigningInput::Kind::mu ? crypto::ml_dsa_sign_mu(key, in->to_sign, opt.deterministic)
                      : in->kind == SigningInput::Kind::signed_attrs
                          ? crypto::sign_message(key, opt.digest, in->to_sign, opt.backend, opt.deterministic)
                          : crypto::sign_digest(key, opt.digest, in->to_sign, opt.deterministic);
  if (!sig) return sig.error();
  return assemble(key.algo(), cert, opt, in->attrs_set, *sig);
}

// ------------------------------------------------------------------------------- parser

namespace {
void parse_signed_attrs(SignerInfo& si, const asn1::Element& el, const Reader& parent) {
  si.signed_attrs = copy(el.tlv);
  Reader attrs = parent.inside(el);
  while (!attrs.empty()) {
    Reader attr = attrs.enter(asn1::kSequence, "signedAttrs Attribute");
    auto type = attr.expect(asn1::kOid, "attribute type");
    Reader values = attr.enter(asn1::kSet, "attribute values");
    attr.finish("Attribute");
    if (same(type.content, crypto::oid::content_type)) {
      auto v = values.expect(asn1::kOid, "contentType value");
      si.content_type_attr = copy(v.content);
    } else if (same(type.content, crypto::oid::message_digest)) {
      auto v = values.expect(asn1::kOctetString, "messageDigest value");
      si.message_digest_attr = copy(v.content);
    } else if (same(type.content, crypto::oid::signing_time)) {
      si.has_signing_time = true;
    } else if (same(type.content, crypto::oid::smime_capabilities)) {
      si.has_smime_capabilities = true;
    }
  }
}

SignerInfo parse_signer_info(Reader& sis) {
  SignerInfo si;
  Reader r = sis.enter(asn1::kSequence, "SignerInfo");
  const auto v = r.read_small_uint("SignerInfo version");
  if (v != 1 && v != 3) throw std::invalid_argument("Unsupported SignerInfo version " + std::to_string(v));
  si.version = static_cast<int>(v);
  asn1::Element e;
  if (r.maybe(asn1::context_prim(0), e)) {
    si.sid_type = SignerIdType::subject_key_id;
    si.skid = copy(e.content);
  } else {
    Reader ias = r.enter(asn1::kSequence, "issuerAndSerialNumber");
    si.issuer = copy(ias.expect(asn1::kSequence, "issuer Name").tlv);
    si.serial = copy(ias.expect(asn1::kInteger, "serialNumber").content);
    ias.finish("issuerAndSerialNumber");
  }
  Reader da = r.enter(asn1::kSequence, "digestAlgorithm");
  si.digest_algorithm_oid = copy(da.expect(asn1::kOid, "digestAlgorithm OID").content);
  si.digest_algorithm = crypto::hash_by_oid(si.digest_algorithm_oid);
  if (r.maybe(asn1::context_cons(0), e)) parse_signed_attrs(si, e, r);
  Reader sa = r.enter(asn1::kSequence, "signatureAlgorithm");
  si.signature_algorithm_oid = copy(sa.expect(asn1::kOid, "signatureAlgorithm OID").content);
  if (sa.maybe(asn1::kNull, e)) si.signature_algorithm_params_null = true;
  si.signature_key_algo = crypto::key_algo_by_signature_oid(si.signature_algorithm_oid);
  si.signature = copy(r.expect(asn1::kOctetString, "signature").content);
  r.maybe(asn1::context_cons(1), e);  // unsignedAttrs
  r.finish("SignerInfo");
  return si;
}
}  // namespace

Result<SignedData> parse(ByteView der, asn1::Rules rules) {
  SignedData sd;
  try {
    Reader top(der, rules);
    Reader ci = top.enter(asn1::kSequence, "ContentInfo");
    // The kernel's decoder ends at the ContentInfo's end and looks no further
    // (ASN1_OP_COMPLETE in lib/asn1_decoder.c checks only its stacks).
    if (!top.empty() && rules == asn1::Rules::der) return make_error(KErr::ebadmsg, "trailing data after ContentInfo");
    auto type = ci.expect(asn1::kOid, "contentType");
    if (!same(type.content, crypto::oid::signed_data))
      return make_error(KErr::einval, "Only support pkcs7_signedData type (content type is " +
                                          asn1::oid_to_string(type.content) + ")");
    Reader explicit0 = ci.enter(asn1::context_cons(0), "content [0]");
    Reader s = explicit0.enter(asn1::kSequence, "SignedData");
    const auto v = s.read_small_uint("SignedData version");
    if (v != 1 && v != 3) return make_error(KErr::einval, "Unsupported SignedData version " + std::to_string(v));
    sd.version = static_cast<int>(v);
    Reader algs = s.peek(asn1::kSequence) ? s.enter(asn1::kSequence, "digestAlgorithms")
                                          : s.enter(asn1::kSet, "digestAlgorithms");
    while (!algs.empty()) {
      Reader a = algs.enter(asn1::kSequence, "digestAlgorithm");
      sd.digest_algorithm_oids.push_back(copy(a.expect(asn1::kOid, "digestAlgorithm OID").content));
    }
    Reader eci = s.enter(asn1::kSequence, "encapContentInfo");
    sd.econtent_type = copy(eci.expect(asn1::kOid, "eContentType").content);
    asn1::Element e;
    if (eci.maybe(asn1::context_cons(0), e)) {
      Reader ec = eci.inside(e);
      sd.econtent = copy(ec.expect(asn1::kOctetString, "eContent").content);
    }
    if (s.maybe(asn1::context_cons(0), e)) {
      Reader certs = s.inside(e);
      while (!certs.empty()) sd.certificates.push_back(copy(certs.expect(asn1::kSequence, "certificate").tlv));
    }
    if (s.maybe(asn1::context_cons(1), e)) sd.has_crls = true;
    Reader sis = s.peek(asn1::kSequence) ? s.enter(asn1::kSequence, "signerInfos") : s.enter(asn1::kSet, "signerInfos");
    s.finish("SignedData");
    while (!sis.empty()) sd.signers.push_back(parse_signer_info(sis));
    for (const auto& si : sd.signers) {
      if (si.version == 1 && sd.version != 1)
        return make_error(KErr::ebadmsg, "SignerInfo version 1 in SignedData version " + std::to_string(sd.version));
      if (si.version == 3 && sd.version == 1)
        return make_error(KErr::ebadmsg, "SignerInfo version 3 in SignedData version 1");
    }
  } catch (const asn1::DecodeError& ex) {
    return make_error(KErr::ebadmsg, std::string("malformed PKCS#7: ") + ex.what());
  } catch (const std::invalid_argument& ex) { return make_error(KErr::einval, ex.what()); }
  return sd;
}

// ------------------------------------------------------------------------------ verifier

Result<Verified> verify(const SignedData& sd, std::optional<ByteView> detached,
                        const std::vector<crypto::Certificate>& candidates, crypto::Backend backend) {
  if (sd.signers.empty()) return make_error(KErr::ebadmsg, "PKCS#7 message has no SignerInfo");
  if (detached && sd.econtent) return make_error(KErr::ebadmsg, "PKCS#7 signature with non-detached data");
  if (!detached && !sd.econtent) return make_error(KErr::ebadmsg, "detached PKCS#7 signature but no content given");
  const ByteView content = detached ? *detached : ByteView(*sd.econtent);
  const SignerInfo& si = sd.signers.front();

  // Only the caller's certificates are candidates: a certificate carried in the message
  // proves nothing by itself (the kernel too trusts only its keyrings).
  const crypto::Certificate* signer = nullptr;
  std::size_t index = 0;
  const Bytes want = si.kernel_key_id();
  for (std::size_t i = 0; i < candidates.size() && !signer; ++i) {
    const auto& c = candidates[i];
    if (si.version == 3 ? (c.skid() && *c.skid() == si.skid) : c.kernel_id() == want) {
      signer = &c;
      index = i;
    }
  }
  if (!signer) {
    std::string who =
        si.version == 3 ? "subjectKeyIdentifier " + to_colon_hex(si.skid) : "serial " + to_colon_hex(si.serial);
    return make_error(KErr::enokey, "no certificate matches the signer (" + who + ")");
  }
  if (!si.digest_algorithm)
    return make_error(KErr::enopkg, "Unsupported digest algo " + asn1::oid_to_string(si.digest_algorithm_oid));
  bool ecdsa = false;
  auto sig_key = crypto::key_algo_by_signature_oid(si.signature_algorithm_oid, &ecdsa);
  if (!sig_key)
    return make_error(KErr::enopkg,
                      "Unsupported signature algorithm " + asn1::oid_to_string(si.signature_algorithm_oid));
  const KeyAlgo key_algo = signer->public_key().algo();
  const bool key_is_ecdsa = crypto::is_ecdsa(key_algo);
  if (ecdsa ? !key_is_ecdsa : *sig_key != key_algo)
    return make_error(KErr::ekeyrejected, "signature algorithm " + asn1::oid_to_string(si.signature_algorithm_oid) +
                                              " does not match the " + std::string(crypto::key_algo_name(key_algo)) +
                                              " key");
  const HashAlgo h = *si.digest_algorithm;

  Bytes attrs;
  ByteView message = content;
  if (si.signed_attrs) {
    if (!si.content_type_attr || !si.message_digest_attr)
      return make_error(KErr::ebadmsg, "signedAttrs lack contentType or messageDigest");
    if (!same(*si.content_type_attr, sd.econtent_type))
      return make_error(KErr::ebadmsg, "contentType attribute does not match eContentType");
    const Bytes d = crypto::digest(h, content);
    if (si.message_digest_attr->size() != d.size())
      return make_error(KErr::ebadmsg, "Invalid digest size (" + std::to_string(si.message_digest_attr->size()) +
                                           " bytes for " + std::string(crypto::hash_info(h).name) + ")");
    if (*si.message_digest_attr != d) return make_error(KErr::ekeyrejected, "Message digest doesn't match");
    if (crypto::is_ml_dsa(key_algo) && h != HashAlgo::sha512)
      return make_error(KErr::ekeyrejected, "ML-DSA with signedAttrs needs digest sha512 (kernel public_key.c), not " +
                                                std::string(crypto::hash_info(h).name));
    attrs = si.signed_attrs_as_set();
    message = attrs;
  }
  auto st = crypto::verify_message(signer->public_key(), h, message, si.signature, backend);
  if (!st) return st.error();
  return Verified{index, key_algo};
}

}  // namespace modsign::cms
