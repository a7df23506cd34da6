// mirrors certs/system_keyring.c verify_pkcs7_signature, verify_pkcs7_message_sig (verify_with),
// load_system_certificate_list (load_keyring_path), Linux 7.2.13
#include "cms/system_keyring.hpp"

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "common/file.hpp"

#include "cms/pkcs7_trust.hpp"
#include "cms/pkcs7_verify.hpp"
#include "cms/x509_cert_parser.hpp"
#include "cms/x509_public_key.hpp"

namespace modsign::cms {

// Keyring loading from files is modsign's own: the kernel fills .builtin_trusted_keys from
// the certificates built into it (load_certificate_list, certs/common.c).  What a
// directory entry that is not a certificate gets follows the kernel's loaders, which skip
// what they cannot parse (x509_load_certificate_list: "Problem loading in-kernel X.509
// certificate", then the next one): it is skipped with a note, or refused when strict.
namespace {

/// Why the directory entry `e` is not a certificate file ("" = it is a regular file).
std::string not_a_file(const std::filesystem::directory_entry& e) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status link = e.symlink_status(ec);
  if (ec) throw IoError(e.path().string() + ": " + ec.message());
  const bool is_link = fs::is_symlink(link);
  const fs::file_status st = e.status(ec);
  if (ec && ec == std::errc::too_many_symbolic_link_levels) return "symbolic link loop";
  if (st.type() == fs::file_type::not_found) return is_link ? "dangling symbolic link" : "no longer exists";
  if (ec) throw IoError(e.path().string() + ": " + ec.message());
  switch (st.type()) {
    case fs::file_type::regular: return "";
    case fs::file_type::directory: return "subdirectory";  // keyring directories are not searched recursively
    case fs::file_type::fifo: return "FIFO";
    case fs::file_type::socket: return "socket";
    case fs::file_type::character: return "character device";
    case fs::file_type::block: return "block device";
    default: return "not a regular file";
  }
}

/// Why the bytes of a regular file are not a certificate ("" = they claim to be one: DER,
/// whose first byte is a SEQUENCE tag, or a PEM CERTIFICATE / X509 CERTIFICATE block).
std::string not_a_certificate(ByteView in) {
  if (in.empty()) return "empty file";
  if (in[0] == 0x30) return "";
  const std::string_view text(reinterpret_cast<const char*>(in.data()), in.size());
  for (const char* armour : {"-----BEGIN CERTIFICATE-----", "-----BEGIN X509 CERTIFICATE-----"})
    if (text.find(armour) != std::string_view::npos) return "";
  return "neither DER nor a PEM CERTIFICATE block";
}

/// A certificate whose public key type the kernel cannot parse (ENOPKG: Ed25519, DSA ...):
/// x509_load_certificate_list logs "Problem loading in-kernel X.509 certificate" and goes on
/// with the next, so it is skipped with a note; with `strict` it is an error naming the file.
Status skip_unsupported(const std::string& file, const Error& e, bool strict, std::vector<std::string>* skipped) {
  const std::string why = e.message + " (a key type the kernel cannot load)";
  if (strict) return make_error(KErr::enopkg, file + ": " + why);
  if (skipped) skipped->push_back(file + ": skipped: " + why);
  return ok_status();
}

}  // namespace

Status Keyring::add_path(const std::string& path, bool strict, std::vector<std::string>* skipped) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    std::vector<std::filesystem::directory_entry> entries;
    for (const auto& e : std::filesystem::directory_iterator(path, ec)) entries.push_back(e);
    if (ec) throw IoError(path + ": " + ec.message());
    std::sort(entries.begin(), entries.end());
    auto skip = [&](const std::string& entry, const std::string& why) -> Status {
      if (strict) return make_error(KErr::ebadmsg, entry + ": " + why + " (not a certificate)");
      if (skipped) skipped->push_back(entry + ": skipped: " + why + " (not a certificate)");
      return ok_status();
    };
    for (const auto& e : entries) {
      const std::string f = e.path().string();
      if (const std::string why = not_a_file(e); !why.empty()) {
        if (auto st = skip(f, why); !st) return st;
        continue;
      }
      const Bytes bytes = read_file(f, kMaxSmallFileSize);
      if (const std::string why = not_a_certificate(bytes); !why.empty()) {
        if (auto st = skip(f, why); !st) return st;
        continue;
      }
      if (auto st = add_certificates(f, bytes, strict, skipped); !st) return st;
    }
    return ok_status();
  }
  return add_certificates(path, read_file(path, kMaxSmallFileSize), strict, skipped);
}

Status Keyring::add_certificates(const std::string& file, ByteView bytes, bool strict,
                                 std::vector<std::string>* skipped) {
  std::vector<Error> unsupported;
  auto certs = crypto::Certificate::from_bytes(bytes, &unsupported);
  if (!certs && certs.error().code == KErr::enopkg) return skip_unsupported(file, certs.error(), strict, skipped);
  if (!certs) return make_error(certs.error().code, file + ": " + certs.error().message);
  for (const Error& e : unsupported)  // one PEM block the kernel cannot load; the others are kept
    if (auto st = skip_unsupported(file, e, strict, skipped); !st) return st;
  for (auto& c : certs.value()) certificates.push_back(std::move(c));
  return ok_status();
}

Status load_keyring_path(Keyring& out, const std::string& path, const KernelModel& profile,
                         std::vector<std::string>& notes, bool strict) {
  const std::size_t first = out.certificates.size();
  if (auto st = out.add_path(path, strict, &notes); !st) return st;
  for (std::size_t i = first; i < out.certificates.size(); ++i)
    if (auto n =
            x509_unloadable_note(out.certificates[i], profile, path + " certificate " + std::to_string(i - first + 1)))
      notes.push_back(std::move(*n));
  return ok_status();
}

VerifyReport verify_with(ByteView pkcs7, const Keyring& keyring, Usage usage, const KernelModel& profile,
                         crypto::Backend backend, const std::function<Status(Pkcs7Message&)>& supply,
                         const std::function<Status(Pkcs7Message&)>& view_content) {
  VerifyReport rep;
  auto done = [&](const Error& e) {
    rep.err = e.code;
    rep.reason = e.message;
    return rep;
  };
  auto msg = pkcs7_parse_message(pkcs7, profile, &keyring.blacklist);
  if (!msg) return done(msg.error());
  msg->backend = backend;
  for (const auto& si : msg->signed_infos) {
    SignerSummary s;
    s.sid = si.expect_skid ? "skid " + to_hex(si.auth_id) : "issuer+serial " + to_hex(si.auth_id);
    s.digest_algo = si.hash_algo;
    s.sig_algo = si.pkey_algo;
    s.signed_attrs = si.authattrs.has_value();
    rep.signers.push_back(s);
  }
  if (!supply(*msg)) return done(make_error(KErr::ebadmsg, "PKCS#7 signature with non-detached data"));
  auto st = pkcs7_verify(*msg, usage, profile, &rep.log);
  if (!st) return done(st.error());
  // x509_key_preparse refuses blacklisted certificates, and x509_cert_parse those whose
  // algorithms the kernel lacks (x509_supported: ML-DSA before 7.0, SHA-3 before 6.7): they
  // are in no keyring.
  auto admitted = [&](const std::vector<crypto::Certificate>& certs) {
    std::vector<crypto::Certificate> out;
    for (const auto& c : certs)
      if (!tbs_blacklisted(c, profile, &keyring.blacklist) && x509_supported(c, profile)) out.push_back(c);
    return out;
  };
  const auto loadable = [&](const std::vector<crypto::Certificate>& certs) {
    return std::all_of(certs.begin(), certs.end(),
                       [&](const crypto::Certificate& c) { return x509_supported(c, profile).ok(); });
  };
  const bool filter = !keyring.blacklist.descriptions.empty() || !loadable(keyring.certificates) ||
                      !loadable(keyring.blacklist.revoked);
  if (!keyring.blacklist.revoked.empty()) {
    auto revoked = filter ? pkcs7_validate_trust(*msg, admitted(keyring.blacklist.revoked), profile)
                          : pkcs7_validate_trust(*msg, keyring.blacklist.revoked, profile);
    if (revoked) return done(make_error(KErr::ekeyrejected, "Key is on the revocation list"));
  }
  msg->trusted_by.clear();
  msg->trusted_keys.clear();
  st = filter ? pkcs7_validate_trust(*msg, admitted(keyring.certificates), profile)
              : pkcs7_validate_trust(*msg, keyring.certificates, profile);
  if (!st && st.error().code == KErr::enokey) {
    // Name the tbs: entry that kept the signer's certificate out of the keyring
    // (x509_key_preparse refused it at load), when that certificate would have vouched.
    for (const auto& c : keyring.certificates) {
      if (!tbs_blacklisted(c, profile, &keyring.blacklist) || !x509_supported(c, profile)) continue;
      if (!pkcs7_validate_trust(*msg, {c}, profile)) continue;
      msg->trusted_by.clear();
      msg->trusted_keys.clear();
      const auto h = x509_tbs_blacklist_hash(c, profile);
      return done(make_error(KErr::enokey, st.error().message + "; the signer's certificate \"" + c.subject_cn() +
                                               "\" is kept out of the keyring by blacklist entry tbs:" + to_hex(*h)));
    }
  }
  if (!st) return done(st.error());
  rep.trusted_by = msg->trusted_by;
  rep.trusted_keys = msg->trusted_keys;
  if (view_content)
    if (auto v = view_content(*msg); !v) return done(v.error());
  return rep;
}

VerifyReport verify_pkcs7_signature(ByteView data, ByteView pkcs7, const Keyring& keyring, Usage usage,
                                    const KernelModel& profile, crypto::Backend backend) {
  return verify_with(pkcs7, keyring, usage, profile, backend,
                     [&](Pkcs7Message& m) { return pkcs7_supply_detached_data(m, data); });
}

VerifyReport verify_pkcs7_signature_prehashed(const std::vector<std::pair<std::string, Bytes>>& digests,
                                              const std::vector<std::pair<Bytes, Bytes>>& mus, ByteView pkcs7,
                                              const Keyring& keyring, Usage usage, const KernelModel& profile) {
  return verify_with(pkcs7, keyring, usage, profile, crypto::Backend::automatic, [&](Pkcs7Message& m) -> Status {
    if (m.data) return make_error(KErr::einval, "Data already supplied");
    m.data_digests = digests;
    m.data_mu = mus;
    m.data_prehashed = true;
    return ok_status();
  });
}

}  // namespace modsign::cms
