// mirrors kernel/module/signing.c module_sig_check, mod_verify_sig; kernel/module/main.c load_module (module_decompress
// before module_sig_check) and init_module_from_file (kernel_read_file first), Linux 7.2.13
#include "module/signing.hpp"

#include "module/kernel_read_file.hpp"
#include "module/module_signature.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "common/file.hpp"

namespace modsign::module {

/// The load decision for mod_verify_sig's result `err` (kernel/module/signing.c).
/// Verdict::err: what `modsign verify` shows for the outcome.
LoadVerdict shown(LoadVerdict v) {
  v.err = v.outcome == LoadOutcome::loads ? KErr::none : v.outcome == LoadOutcome::refused ? v.load_errno : v.sig_errno;
  return v;
}

LoadVerdict decide(LoadVerdict v, KErr err, const std::string& detail, const cms::KernelModel& profile) {
  v.sig_errno = err;
  if (err == KErr::none) {
    v.outcome = LoadOutcome::loads;
    v.reason = "signature verified: " + detail;
    return shown(std::move(v));
  }
  const char* soft = err == KErr::enodata  ? "unsigned module"
                     : err == KErr::enopkg ? "module with unsupported crypto"
                     : err == KErr::enokey ? "module with unavailable key"
                                           : nullptr;
  if (!soft) {
    // All other errors are fatal, even when signatures are not required.
    v.outcome = LoadOutcome::refused;
    v.load_errno = err;
    v.reason = detail;
    return shown(std::move(v));
  }
  if (profile.enforce) {
    v.outcome = LoadOutcome::refused;
    v.load_errno = KErr::ekeyrejected;
    v.reason = std::string("Loading of ") + soft + " is rejected (" + detail + ")";
    return shown(std::move(v));
  }
  if (profile.lockdown) {
    v.outcome = LoadOutcome::refused;
    v.load_errno = KErr::eperm;
    v.reason = std::string("Lockdown: unsigned module loading is restricted: ") + soft + " (" + detail + ")";
    return shown(std::move(v));
  }
  v.outcome = LoadOutcome::loads_tainted;
  v.reason = std::string(soft) + ": " + detail +
             "; module verification failed: signature and/or required key missing - tainting kernel";
  return shown(std::move(v));
}

namespace {

/// What a successful verification says about the signer.
std::string verified_detail(const LoadVerdict& v, const cms::VerifyReport& rep) {
  if (v.signers.empty()) return "";
  std::string d = v.signers.front().sig_algo + " signature";
  if (v.signers.front().signed_attrs) d += " with signedAttrs";
  if (!rep.trusted_keys.empty()) d += ", " + trusted_key_text(rep.trusted_keys.front());
  return d;
}
}  // namespace

std::string trusted_key_text(const TrustedKey& k) {
  return "trusted key \"" + k.cn + "\" (" + (k.skid.empty() ? std::string("no skid") : "skid " + k.skid) + ", serial " +
         k.serial + ")";
}

LoadVerdict module_sig_check(ByteView file, const cms::Keyring& keyring, const cms::KernelModel& profile, bool mangled,
                             crypto::Backend backend) {
  LoadVerdict v;
  KErr err = KErr::enodata;
  std::string detail =
      mangled ? "signature ignored: module loaded with version information removed" : "no signature marker";
  if (!mangled && has_marker(file)) {
    auto split = module::split(file);
    if (!split) {
      err = split.error().code;
      detail = split.error().message;
    } else {
      auto rep = cms::verify_pkcs7_signature(split->content, split->cms, keyring, cms::Usage::module, profile, backend);
      v.signers = std::move(rep.signers);
      v.log = std::move(rep.log);
      v.trusted_by = rep.trusted_by;
      v.trusted_keys = rep.trusted_keys;
      err = rep.err;
      detail = err == KErr::none ? verified_detail(v, rep) : rep.reason;
    }
  }
  return decide(std::move(v), err, detail, profile);
}

LoadVerdict module_sig_check_file(const std::string& path, const cms::Keyring& keyring,
                                  const cms::KernelModel& profile) {
  return module_sig_check_file(FileReader(path), keyring, profile);
}

LoadVerdict module_sig_check_file(const FileReader& in, const cms::Keyring& keyring, const cms::KernelModel& profile) {
  const std::uint64_t size = in.size();
  LoadVerdict v;
  const Bytes tail =
      in.read_at(size - std::min<std::uint64_t>(size, 40), static_cast<std::size_t>(std::min<std::uint64_t>(size, 40)));
  auto t = parse_tail(tail, size);
  if (!t)
    return decide(std::move(v), t.error().code,
                  t.error().code == KErr::enodata ? "no signature marker" : t.error().message, profile);
  // lib/asn1_decoder.c refuses 64 KiB or more: no need to read a larger claimed PKCS#7.
  if (t->sig_len > 65535)
    return decide(std::move(v), KErr::emsgsize,
                  "PKCS#7 message of " + std::to_string(t->sig_len) + " bytes exceeds the ASN.1 decoder's 65535",
                  profile);
  const Bytes cms = in.read_at(t->content_len, t->sig_len);
  // Which digests the signers need (each once), and which ML-DSA keys could check the
  // data itself: those whose id or SKID is a signer's key id (keyring or message).
  std::vector<crypto::HashAlgo> hashes;
  std::vector<std::string> kernel_only;  // SM3, Streebog: hashed with Botan
  std::vector<Bytes> mldsa_keys;
  auto add_key = [&](const crypto::PublicKey& k) {
    if (crypto::is_ml_dsa(k.algo()) && std::find(mldsa_keys.begin(), mldsa_keys.end(), k.raw()) == mldsa_keys.end())
      mldsa_keys.push_back(k.raw());
  };
  if (auto msg = cms::pkcs7_parse_message(cms, profile)) {
    for (const auto& si : msg->signed_infos) {
      if (auto h = crypto::hash_by_name(si.hash_algo); h && std::find(hashes.begin(), hashes.end(), *h) == hashes.end())
        hashes.push_back(*h);
      else if (!h && std::find(kernel_only.begin(), kernel_only.end(), si.hash_algo) == kernel_only.end())
        kernel_only.push_back(si.hash_algo);
      if (!(si.algo_takes_data && !si.authattrs)) continue;
      for (const auto& c : keyring.certificates)
        if (c.kernel_id() == si.auth_id || (c.skid() && *c.skid() == si.auth_id)) add_key(c.public_key());
      for (const auto& c : msg->certs)
        if (c.id == si.auth_id) add_key(c.cert.public_key());
    }
  }
  std::vector<std::unique_ptr<crypto::Hasher>> hashers;
  std::vector<std::unique_ptr<crypto::MlDsaMu>> mus;
  for (auto h : hashes) hashers.push_back(std::make_unique<crypto::Hasher>(h));
  std::vector<std::pair<std::string, std::unique_ptr<crypto::botan::KernelOnlyHasher>>> named;
  for (const auto& name : kernel_only)
    if (auto h = crypto::botan::KernelOnlyHasher::create(name)) named.emplace_back(name, std::move(h));
  for (const auto& pk : mldsa_keys) mus.push_back(std::make_unique<crypto::MlDsaMu>(pk));
  Bytes buf;
  for (std::uint64_t off = 0; off < t->content_len;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(std::size_t{1} << 20, t->content_len - off));
    in.read_at(off, n, buf);
    for (auto& h : hashers) h->update(ByteView(buf.data(), n));
    for (auto& [name, h] : named) h->update(ByteView(buf.data(), n));
    for (auto& m : mus) m->update(ByteView(buf.data(), n));
    off += n;
  }
  std::vector<std::pair<std::string, Bytes>> digests;
  for (std::size_t i = 0; i < hashes.size(); ++i)
    digests.emplace_back(std::string(crypto::hash_info(hashes[i]).name), hashers[i]->final());
  for (auto& [name, h] : named) digests.emplace_back(name, h->final());
  std::vector<std::pair<Bytes, Bytes>> mu_values;
  for (std::size_t i = 0; i < mldsa_keys.size(); ++i) mu_values.emplace_back(mldsa_keys[i], mus[i]->final());
  auto rep = cms::verify_pkcs7_signature_prehashed(digests, mu_values, cms, keyring, cms::Usage::module, profile);
  v.signers = std::move(rep.signers);
  v.log = std::move(rep.log);
  v.trusted_by = rep.trusted_by;
  v.trusted_keys = rep.trusted_keys;
  // The detail is built before `v` is moved into decide(): the order in which function
  // arguments are evaluated is unspecified (clang moved first and lost the signer text).
  const std::string detail = rep.err == KErr::none ? verified_detail(v, rep) : rep.reason;
  return decide(std::move(v), rep.err, detail, profile);
}

LoadVerdict module_sig_check_image(const ModuleImage& m, const cms::Keyring& keyring, const cms::KernelModel& profile,
                                   crypto::Backend backend) {
  LoadVerdict v;
  // init_module_from_file(): kernel_read_file() fails before anything else is looked at.  (An
  // image given in memory has no stored size: a non-empty one is no empty file.)
  if (auto empty = kernel_read_file_refusal(m.image.empty() ? m.stored_size : m.image.size())) {
    v.outcome = LoadOutcome::refused;
    v.err = v.load_errno = v.sig_errno = empty->code;
    v.reason = empty->message;
  } else if (auto refusal = module_decompress_refusal(m.compression, profile.module_decompress)) {
    // init_module_from_file(): module_decompress() fails before load_module() is reached.
    v.outcome = LoadOutcome::refused;
    v.err = v.load_errno = v.sig_errno = refusal->code;
    v.reason = refusal->message;
  } else if (!m.kernel_decompress_problem.empty()) {
    // load_module(): module_decompress() fails before module_sig_check() is reached.
    v.outcome = LoadOutcome::refused;
    v.err = v.load_errno = v.sig_errno = KErr::einval;
    v.reason = m.kernel_decompress_problem;
  } else {
    v = module_sig_check(m.image, keyring, profile, false, backend);
  }
  if (m.compression != Compression::none) {
    v.compression = ModuleImage{{},
                                m.compression,
                                m.stored_size,
                                m.xz_check,
                                m.kernel_decompress_problem,
                                m.bytes_after_stream,
                                m.signature_after_stream};
  }
  return v;
}

}  // namespace modsign::module

// The public name (include/modsign/verdict.hpp).
namespace modsign {
std::string_view outcome_name(LoadOutcome o) {
  switch (o) {
    case LoadOutcome::loads: return "loads";
    case LoadOutcome::loads_tainted: return "loads-tainted";
    case LoadOutcome::refused: return "refused";
  }
  return "?";
}
}  // namespace modsign
