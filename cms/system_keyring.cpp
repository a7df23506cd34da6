// mirrors certs/system_keyring.c verify_pkcs7_signature, verify_pkcs7_message_sig (verify_with), load_system_certificate_list (load_keyring_path), Linux 7.2.13
#include "cms/system_keyring.hpp"

#include <algorithm>
#include <filesystem>

#include "cms/pkcs7_trust.hpp"
#include "cms/pkcs7_verify.hpp"
#include "cms/x509_cert_parser.hpp"
#include "cms/x509_public_key.hpp"

namespace modsign::kernel {

// Keyring loading from files is modsign's own: the kernel fills .builtin_trusted_keys from
// the certificates built into it (load_certificate_list, certs/common.c).
Status Keyring::add_path(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(path, ec))
      if (e.is_regular_file()) files.push_back(e.path().string());
    if (ec) throw IoError(path + ": " + ec.message());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      auto st = add_path(f);
      if (!st) return st;
    }
    return ok_status();
  }
  auto certs = crypto::Certificate::load_all(path);
  if (!certs) return make_error(certs.error().code, path + ": " + certs.error().message);
  for (auto& c : certs.value()) certificates.push_back(std::move(c));
  return ok_status();
}

Status load_keyring_path(Keyring& out, const std::string& path, const KernelProfile& profile,
                         std::vector<std::string>& notes) {
  const std::size_t first = out.certificates.size();
  if (auto st = out.add_path(path); !st) return st;
  for (std::size_t i = first; i < out.certificates.size(); ++i)
    if (auto n = x509_unloadable_note(out.certificates[i], profile, path + " certificate " + std::to_string(i - first + 1)))
      notes.push_back(std::move(*n));
  return ok_status();
}

VerifyReport verify_with(ByteView pkcs7, const Keyring& keyring, Usage usage, const KernelProfile& profile,
                         crypto::Backend backend, const std::function<Status(Pkcs7Message&)>& supply) {
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
    return std::all_of(certs.begin(), certs.end(), [&](const crypto::Certificate& c) { return x509_supported(c, profile).ok(); });
  };
  const bool filter = !keyring.blacklist.descriptions.empty() || !loadable(keyring.certificates) ||
                      !loadable(keyring.blacklist.revoked);
  if (!keyring.blacklist.revoked.empty()) {
    auto revoked = filter ? pkcs7_validate_trust(*msg, admitted(keyring.blacklist.revoked), profile)
                          : pkcs7_validate_trust(*msg, keyring.blacklist.revoked, profile);
    if (revoked) return done(make_error(KErr::ekeyrejected, "Key is on the revocation list"));
  }
  msg->trusted_by.clear();
  st = filter ? pkcs7_validate_trust(*msg, admitted(keyring.certificates), profile)
              : pkcs7_validate_trust(*msg, keyring.certificates, profile);
  if (!st) return done(st.error());
  rep.trusted_by = msg->trusted_by;
  return rep;
}

VerifyReport verify_pkcs7_signature(ByteView data, ByteView pkcs7, const Keyring& keyring, Usage usage,
                                    const KernelProfile& profile, crypto::Backend backend) {
  return verify_with(pkcs7, keyring, usage, profile, backend,
                     [&](Pkcs7Message& m) { return pkcs7_supply_detached_data(m, data); });
}

VerifyReport verify_pkcs7_signature_prehashed(const std::vector<std::pair<std::string, Bytes>>& digests,
                                              const std::vector<std::pair<Bytes, Bytes>>& mus, ByteView pkcs7,
                                              const Keyring& keyring, Usage usage, const KernelProfile& profile) {
  return verify_with(pkcs7, keyring, usage, profile, crypto::Backend::openssl, [&](Pkcs7Message& m) -> Status {
    if (m.data) return make_error(KErr::einval, "Data already supplied");
    m.data_digests = digests;
    m.data_mu = mus;
    m.data_prehashed = true;
    return ok_status();
  });
}

}  // namespace modsign::kernel
