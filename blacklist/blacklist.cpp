// mirrors certs/blacklist.c blacklist_vet_description, get_raw_hash, mark_raw_hash_blacklisted, mark_hash_blacklisted,
// is_hash_blacklisted, is_binary_blacklisted, load_revocation_certificate_list, Linux 7.2.13
#include "blacklist/blacklist.hpp"

#include "cms/x509_cert_parser.hpp"
#include "cms/x509_public_key.hpp"

namespace modsign::blacklist {

namespace {
bool lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
}  // namespace

Status vet_description(std::string_view d) {
  if (auto nul = d.find('\0'); nul != std::string_view::npos) d = d.substr(0, nul);
  // The kernel walks the characters once, counting matches against both prefixes; a
  // colon is accepted only after all three characters of one prefix matched.
  static constexpr std::string_view tbs = "tbs", bin = "bin";
  std::size_t i = 0, tbs_step = 0, bin_step = 0;
  for (;; ++i) {
    if (i == d.size()) return make_error(KErr::einval, "no ':' after a \"tbs\" or \"bin\" prefix");
    if (d[i] == ':') {
      if (tbs_step == 3 || bin_step == 3) break;
      return make_error(KErr::einval, "prefix before ':' is not \"tbs\" or \"bin\"");
    }
    if (i >= 3) return make_error(KErr::einval, "prefix before ':' is not \"tbs\" or \"bin\"");
    tbs_step += d[i] == tbs[i];
    bin_step += d[i] == bin[i];
  }
  const std::string_view hex = d.substr(i + 1);
  std::size_t n = 0;
  for (; n < hex.size() && n < kMaxHashHexLen; ++n)
    if (!lower_hex(hex[n]))
      return make_error(KErr::einval, std::string("character ") + std::to_string(n + 1) +
                                          " of the hash is not a lower-case hex digit");
  if (n < hex.size())
    return make_error(KErr::enopkg, "hash of " + std::to_string(hex.size()) + " characters is longer than " +
                                        std::to_string(kMaxHashHexLen));
  if (n == 0) return make_error(KErr::einval, "empty hash");
  if (n % 2) return make_error(KErr::einval, "odd number (" + std::to_string(n) + ") of hex digits");
  return ok_status();
}

std::string raw_hash(ByteView hash, HashType type) {
  return (type == HashType::x509_tbs ? "tbs:" : "bin:") + to_hex(hash);
}

KErr is_hash_blacklisted(const cms::Blacklist& keyring, ByteView hash, HashType type) {
  return keyring.descriptions.count(raw_hash(hash, type)) ? KErr::ekeyrejected : KErr::none;
}

KErr is_binary_blacklisted(const cms::Blacklist& keyring, ByteView hash) {
  return is_hash_blacklisted(keyring, hash, HashType::binary) == KErr::ekeyrejected ? KErr::eperm : KErr::none;
}

Result<bool> mark_raw_hash_blacklisted(Sources& sources, const std::string& description, Origin origin) {
  if (auto st = vet_description(description); !st) return st.error();
  return sources.add_description(description, std::move(origin));
}

Result<bool> mark_hash_blacklisted(Sources& sources, ByteView hash, HashType type, Origin origin) {
  return mark_raw_hash_blacklisted(sources, raw_hash(hash, type), std::move(origin));
}

Status load_revocation_certificates(Sources& sources, const std::string& file, const cms::KernelModel& profile) {
  auto certs = crypto::Certificate::load_all(file);
  if (!certs) return certs.error();
  for (std::size_t i = 0; i < certs->size(); ++i) {
    const auto& c = (*certs)[i];
    const std::string where = "certificate " + std::to_string(i + 1);
    if (auto n = cms::x509_unloadable_note(c, profile, file + " " + where)) {
      sources.notes.push_back(std::move(*n));
      continue;
    }
    if (auto h = cms::x509_tbs_blacklist_hash(c, profile)) {
      const std::string d = raw_hash(*h, HashType::x509_tbs);
      if (sources.keyring.descriptions.count(d)) {
        sources.notes.push_back(file + " " + where + " is not loaded: its " + d +
                                " is listed (x509_key_preparse: EKEYREJECTED)");
        continue;
      }
    }
    sources.add_revoked(c, Origin{file, where});
  }
  return ok_status();
}

}  // namespace modsign::blacklist
