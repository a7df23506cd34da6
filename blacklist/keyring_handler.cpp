// mirrors security/integrity/platform_certs/keyring_handler.c get_handler_for_db, get_handler_for_mok,
// get_handler_for_dbx and their handlers (uefi_blacklist_x509_tbs, uefi_blacklist_binary, uefi_revocation_list_x509),
// Linux 7.2.13
#include "blacklist/keyring_handler.hpp"

#include <stdexcept>

#include "asn1/der.hpp"
#include "cms/x509_cert_parser.hpp"

namespace modsign::blacklist::efi {

std::string_view entry_kind_name(EntryKind k) {
  switch (k) {
    case EntryKind::binary_hash: return "bin";
    case EntryKind::tbs_hash: return "tbs";
    case EntryKind::revoked_certificate: return "revoked";
    case EntryKind::platform_certificate: return "platform";
    case EntryKind::ignored: return "ignored";
  }
  return "?";
}

namespace {

// get_handler_for_db / _mok / _dbx (keyring_handler.c:50-102).
EntryKind handler_for(Variable v, const Guid& type) {
  if (v == Variable::db || v == Variable::MokListRT)
    return type == guids::cert_x509 ? EntryKind::platform_certificate : EntryKind::ignored;
  if (type == guids::cert_x509_sha256) return EntryKind::tbs_hash;
  if (type == guids::cert_sha256) return EntryKind::binary_hash;
  if (type == guids::cert_x509) return EntryKind::revoked_certificate;
  return EntryKind::ignored;
}

// blacklist_vet_description() (certs/blacklist.c:47-85) of the description get_raw_hash()
// builds from `len` bytes: "bin:"/"tbs:" + 2*len lower-case hex digits, so only the count
// can fail.  A minimal local check; the full vetting lives with the hash-list code.
KErr vet_hash_length(std::size_t len) {
  if (len == 0) return KErr::einval;       // i == 0
  if (len * 2 > 128) return KErr::enopkg;  // more than MAX_HASH_LEN hex characters
  return KErr::none;
}

std::string where(std::size_t l, std::size_t e, const Guid& type) {
  return "list " + std::to_string(l + 1) + " entry " + std::to_string(e + 1) + " (" + type_name(type) + ")";
}

}  // namespace

namespace {
// Whether a "tbs:" key of `len` bytes can equal a lookup x509_get_sig_params() makes: 7.0
// looks up the SHA-256 of the TBS (32 bytes); v6 the TBS digest in the certificate's own
// signature hash (sha1 20, sha224 28, sha256/sha3-256/sm3/streebog256 32, sha384/sha3-384
// 48, sha512/sha3-512/streebog512 64 bytes).
bool tbs_lookup_size(std::size_t len, const cms::KernelModel& p) {
  if (p.generation == cms::Generation::v7_0) return len == 32;
  return len == 20 || len == 28 || len == 32 || len == 48 || len == 64;
}

}  // namespace

Result<crypto::Certificate> parse_entry_certificate(ByteView data, std::size_t& trailing) {
  trailing = 0;
  ByteView first = data;
  try {
    asn1::Reader r(data);
    first = r.next().tlv;
  } catch (const asn1::DecodeError&) {
    first = data;  // from_der reports the problem
  }
  auto c = crypto::Certificate::from_der(first);
  if (c) trailing = data.size() - first.size();
  return c;
}

namespace {

// x509_get_sig_params (crypto/asymmetric_keys/x509_public_key.c:38-46 in 7.2): the TBS
// lookup "tbs:<hex>"; before 7.0 with the signature's own hash (none if unknown).
bool tbs_listed(const crypto::Certificate& c, const cms::KernelModel& p, const cms::Blacklist& bl) {
  if (p.generation == cms::Generation::v7_0)
    return bl.is_tbs_blacklisted(crypto::digest(crypto::HashAlgo::sha256, c.tbs()));
  auto h = c.signature_hash();
  return h && bl.is_tbs_blacklisted(crypto::digest(*h, c.tbs()));
}
}  // namespace

VariableEffects apply_handlers(const ParsedLists& lists, Variable v, const cms::KernelModel& profile,
                               const cms::Blacklist* blacklist) {
  VariableEffects out;
  out.variable = v;
  for (std::size_t li = 0; li < lists.lists.size(); ++li) {
    const SignatureList& l = lists.lists[li];
    const EntryKind kind = handler_for(v, l.type);
    for (std::size_t ei = 0; ei < l.entries.size(); ++ei) {
      const SignatureEntry& se = l.entries[ei];
      EntryEffect ef;
      ef.list = li;
      ef.entry = ei;
      ef.kind = kind;
      switch (kind) {
        case EntryKind::binary_hash:
        case EntryKind::tbs_hash: {
          ef.description = std::string(kind == EntryKind::binary_hash ? "bin:" : "tbs:") + to_hex(se.data);
          ef.key_error = vet_hash_length(se.data.size());
          ef.text = ef.description;
          if (kind == EntryKind::tbs_hash && ef.key_error == KErr::none && !tbs_lookup_size(se.data.size(), profile)) {
            ef.never_matches = true;
            ef.text += " (never matches)";
            out.notes.push_back(
                where(li, ei, l.type) + ": " + ef.description.substr(0, 20) + "... is keyed over all " +
                std::to_string(se.data.size()) + " bytes of the entry" +
                (se.data.size() == 48 ? " (32-byte TBS hash + 16-byte TimeOfRevocation)" : "") +
                (profile.generation == cms::Generation::v7_0
                     ? ", so it never equals the tbs:<64 hex> SHA-256 lookup of x509_get_sig_params() and blocks "
                       "nothing"
                     : ", so it never equals the tbs: lookup of x509_get_sig_params() (the TBS digest in the "
                       "certificate's signature hash: 20, 28, 32, 48 or 64 bytes) and blocks nothing"));
          }
          break;
        }
        case EntryKind::revoked_certificate:
        case EntryKind::platform_certificate: {
          ef.text = kind == EntryKind::revoked_certificate
                        ? "revoked certificate"
                        : (v == Variable::MokListRT ? "machine/platform keyring certificate"
                                                    : "platform keyring certificate");
          if (se.data.empty()) {
            ef.key_error = KErr::einval;  // asymmetric_key_preparse: datalen == 0
          } else {
            std::size_t trailing = 0;
            auto c = parse_entry_certificate(se.data, trailing);
            if (trailing)
              out.notes.push_back(where(li, ei, l.type) + ": the " + std::to_string(trailing) +
                                  " bytes after the certificate are ignored (the kernel's ASN.1 decoder does "
                                  "not check for trailing data)");
            Status sup = c ? cms::x509_supported(*c, profile) : ok_status();
            if (c) ef.cert = *c;
            if (c && !sup) {
              ef.key_error = sup.error().code;
              ef.key_error_reason = sup.error().message;
            } else if (c && blacklist && tbs_listed(*c, profile, *blacklist)) {
              ef.key_error = KErr::ekeyrejected;
            } else if (c) {
              (kind == EntryKind::revoked_certificate ? out.revoked_certificates : out.keyring_certificates)
                  .push_back(*c);
            } else {
              ef.key_error = c.error().code;
            }
          }
          break;
        }
        case EntryKind::ignored: ef.text = "ignored"; break;
      }
      if (ef.key_error != KErr::none) ef.text += " (not added: " + std::string(errno_name(ef.key_error)) + ")";
      out.entries.push_back(std::move(ef));
    }
  }
  return out;
}

Status add_to_sources(const ParsedLists& lists, Variable v, const std::string& file, Sources& out,
                      const cms::KernelModel& profile) {
  if (v != Variable::dbx && v != Variable::MokListXRT)
    throw std::invalid_argument("add_to_sources: only dbx and MokListXRT feed the .blacklist keyring");
  const VariableEffects fx = apply_handlers(lists, v, profile);
  for (const auto& n : fx.notes) out.notes.push_back(file + ": " + n);
  for (const EntryEffect& ef : fx.entries) {
    const SignatureList& l = lists.lists[ef.list];
    Origin o{file, where(ef.list, ef.entry, l.type)};
    if (ef.key_error != KErr::none) {
      if (!ef.key_error_reason.empty())  // worded as for a --revoked certificate the profile cannot load
        out.notes.push_back(file + " " + o.where + " is not loaded by a " + profile.name() + " kernel (" +
                            std::string(errno_name(ef.key_error)) + ": " + ef.key_error_reason + ")");
      else if (ef.kind != EntryKind::ignored)
        out.notes.push_back(file + ": " + o.where + ": not added to .blacklist (" +
                            std::string(errno_name(ef.key_error)) + ")");
      continue;
    }
    if (ef.kind == EntryKind::binary_hash || ef.kind == EntryKind::tbs_hash) {
      out.add_description(ef.description, std::move(o));
    } else if (ef.kind == EntryKind::revoked_certificate && ef.cert) {
      if (tbs_listed(*ef.cert, profile, out.keyring)) {  // x509_key_preparse: -EKEYREJECTED
        out.notes.push_back(file + ": " + o.where + ": not added to .blacklist (EKEYREJECTED: its TBS is blacklisted)");
        continue;
      }
      bool dup = false;
      for (const auto& c : out.keyring.revoked) dup = dup || c.der() == ef.cert->der();
      if (dup) {
        out.notes.push_back(file + ": " + o.where + ": revoked certificate already loaded");
        continue;
      }
      out.add_revoked(*ef.cert, std::move(o));
    }
  }
  return lists.status();
}

}  // namespace modsign::blacklist::efi
