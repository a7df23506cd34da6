// modsign — bin:/tbs: entries and blacklist verdicts (include/modsign/blacklist.hpp) over
// blacklist/check; the hash-list calls are defined in blacklist/hash_list.cpp.
#include "modsign/blacklist.hpp"

#include <algorithm>

#include "api/internal.hpp"
#include "blacklist/check.hpp"
#include "common/file.hpp"
#include "common/module_read.hpp"
#include "crypto/algorithms.hpp"
#include "module/decompress.hpp"

namespace modsign {

namespace {

crypto::HashAlgo ima_algo(const std::string& name) {
  const auto h = crypto::hash_by_name(name);
  if (!h) throw std::invalid_argument("unsupported ima_hash '" + name + "'");
  return *h;
}

/// A module as the kernel checks it: the stored bytes and the (decompressed) image.
struct Module {
  Bytes stored;
  module::ModuleImage m;
};

/// Decompress `stored`; InputError "<name>: <format>-compressed module: <what>" when it does not.
Module open(Bytes stored, std::uint64_t max_size, const std::string& name) {
  auto img = module::open_module(stored, max_size);
  if (!img)
    throw InputError(name + ": " + std::string(module::compression_name(module::detect_compression(stored))) +
                     "-compressed module: " + img.error().message);
  return Module{std::move(stored), std::move(img).value()};
}

/// Read as x509_cert_parse() reads it (BER; the key decoded only when used), so that a
/// certificate whose key OpenSSL refuses still has its tbs: entry, as in the kernel.
crypto::Certificate one_certificate(ByteView der, const std::string& name) {
  auto c = crypto::Certificate::from_der(der, asn1::Rules::ber);
  if (!c) throw InputError(name + ": " + c.error().message);
  return std::move(c).value();
}

/// One item of a file: a module or a certificate.
struct Item {
  std::string label;
  std::optional<Module> module;
  std::optional<crypto::Certificate> cert;
};

/// The items of `path` (the detection rule of blacklist_entries_for_file()).
std::vector<Item> read_items(const std::string& path, std::uint64_t max_size) {
  Bytes head = read_module_bytes(path, max_size);
  const bool elf = head.size() >= 4 && head[0] == 0x7f && head[1] == 'E' && head[2] == 'L' && head[3] == 'F';
  static constexpr std::string_view kPem = "-----BEGIN";
  // Certificate files are small: a larger non-ELF file is a module whatever it contains.
  const bool pem =
      head.size() <= kMaxSmallFileSize && std::search(head.begin(), head.end(), kPem.begin(), kPem.end()) != head.end();
  const bool der = head.size() >= 2 && head[0] == 0x30 && (head[1] == 0x82 || head[1] == 0x81);
  std::vector<Item> out;
  if (!elf && module::detect_compression(head) == module::Compression::none && (pem || der)) {
    auto certs = crypto::Certificate::from_bytes(head, nullptr, asn1::Rules::ber);
    if (!certs) throw InputError(path + ": " + certs.error().message);
    for (std::size_t i = 0; i < certs->size(); ++i)
      out.push_back(Item{certs->size() > 1 ? path + "#" + std::to_string(i + 1) : path, std::nullopt, (*certs)[i]});
    return out;
  }
  out.push_back(Item{path, open(std::move(head), max_size, path), std::nullopt});
  return out;
}

/// The keyring certificates the kernel of `trust`'s profile can load (the others never
/// reach a keyring; TrustStore::supported_certificates()).
std::vector<crypto::Certificate> trusted_of(const TrustStore& trust) {
  const cms::KernelModel kp = api::to_model(trust.profile());
  std::vector<crypto::Certificate> out;
  std::copy_if(impl_of(trust).keyring.certificates.begin(), impl_of(trust).keyring.certificates.end(),
               std::back_inserter(out), [&](const crypto::Certificate& c) { return cms::x509_supported(c, kp).ok(); });
  return out;
}

}  // namespace

ModuleBlacklistEntry blacklist_entry_for_module(ByteView stored, const KernelProfile& profile,
                                                const std::string& ima_hash, std::uint64_t max_size,
                                                const std::string& name) {
  const crypto::HashAlgo h = ima_algo(ima_hash);
  const Module md = open(Bytes(stored.begin(), stored.end()), max_size, name);
  return blacklist::module_entry(md.stored, md.m, api::to_model(profile), h);
}

CertificateBlacklistEntry blacklist_entry_for_certificate(ByteView der, const KernelProfile& profile,
                                                          const std::string& name) {
  return blacklist::certificate_blacklist_entry(one_certificate(der, name), api::to_model(profile));
}

std::vector<BlacklistEntry> blacklist_entries_for_file(const std::string& path, const KernelProfile& profile,
                                                       const std::string& ima_hash, std::uint64_t max_size) {
  const crypto::HashAlgo h = ima_algo(ima_hash);
  const cms::KernelModel kp = api::to_model(profile);
  std::vector<BlacklistEntry> out;
  for (const Item& it : read_items(path, max_size)) {
    BlacklistEntry e{it.label, std::nullopt, std::nullopt};
    if (it.cert) e.certificate = blacklist::certificate_blacklist_entry(*it.cert, kp);
    else e.module = blacklist::module_entry(it.module->stored, it.module->m, kp, h);
    out.push_back(std::move(e));
  }
  return out;
}

BlacklistVerdict check_module_blacklist(ByteView stored, const TrustStore& trust, const KernelProfile& profile,
                                        const std::string& ima_hash, std::uint64_t max_size, const std::string& name) {
  const crypto::HashAlgo h = ima_algo(ima_hash);
  const Module md = open(Bytes(stored.begin(), stored.end()), max_size, name);
  return blacklist::check_module(md.stored, md.m, impl_of(trust).sources, trusted_of(trust), api::to_model(profile), h);
}

BlacklistVerdict check_certificate_blacklist(ByteView der, const TrustStore& trust, const KernelProfile& profile,
                                             const std::string& name) {
  return blacklist::check_certificate(one_certificate(der, name), impl_of(trust).sources, api::to_model(profile));
}

std::vector<BlacklistItemVerdict> check_blacklist_file(const std::string& path, const TrustStore& trust,
                                                       const KernelProfile& profile, const std::string& ima_hash,
                                                       std::uint64_t max_size) {
  const crypto::HashAlgo h = ima_algo(ima_hash);
  const cms::KernelModel kp = api::to_model(profile);
  const std::vector<Item> items = read_items(path, max_size);
  const std::vector<crypto::Certificate> trusted = trusted_of(trust);
  std::vector<BlacklistItemVerdict> out;
  for (const Item& it : items)
    out.push_back({it.label, it.cert ? blacklist::check_certificate(*it.cert, impl_of(trust).sources, kp)
                                     : blacklist::check_module(it.module->stored, it.module->m, impl_of(trust).sources,
                                                               trusted, kp, h)});
  return out;
}

}  // namespace modsign
