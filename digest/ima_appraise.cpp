// mirrors security/integrity/ima/ima_appraise.c ima_get_hash_algo, xattr_verify, ima_check_blacklist,
// ima_appraise_measurement (the security.ima and modsig paths), with the MODULE_CHECK reads of kernel/module/main.c
// init_module_from_file and ima_main.c process_measurement, Linux 7.2.13
#include "digest/ima_appraise.hpp"

#include <algorithm>
#include <cctype>

#include "cms/pkcs7_parser.hpp"
#include "common/file.hpp"
#include "common/module_read.hpp"
#include "digest/digsig.hpp"
#include "digest/hash_info.hpp"
#include "digest/ima_modsig.hpp"
#include "digest/ima_template_lib.hpp"
#include "module/kernel_read_file.hpp"
#include "module/module_signature.hpp"

namespace modsign::digest {

namespace {
/// Ends every no-modsig reason: nothing else can pass the rule either.
constexpr const char* kNoXattr = "; no security.ima either (IMA-signature-required)";
}  // namespace

bool ima_appraises_decompressed_image(const cms::KernelModel& profile) {
  return profile.generation == cms::Generation::v7_0;
}

ImaModuleRead ima_module_read(const module::ModuleImage& m, const cms::KernelModel& profile) {
  if (m.compression == module::Compression::none) return ImaModuleRead::file;
  if (!ima_appraises_decompressed_image(profile)) return ImaModuleRead::compressed_file;
  return m.kernel_decompress_problem.empty() ? ImaModuleRead::image : ImaModuleRead::decompress_refused;
}

ModuleFile read_module_file(const std::string& path, std::uint64_t max_size) {
  ModuleFile f;
  f.stored = read_module_bytes(path, max_size);
  auto img = module::open_module(f.stored, max_size);
  if (img) {
    f.m = std::move(img.value());
    return f;
  }
  const auto c = module::detect_compression(f.stored);
  const std::string msg = std::string(module::compression_name(c)) + "-compressed module: " + img.error().message;
  // modsign's own bounds are not the kernel's: those are input errors.
  const bool own_bound = img.error().reason == Error::Reason::over_own_bound;
  if (c == module::Compression::none || own_bound) throw InputError(path + ": " + msg);
  f.m.compression = c;
  f.m.stored_size = f.stored.size();
  f.m.kernel_decompress_problem = msg;
  return f;
}

ImaBlacklistKey ima_blacklist_key(const ModuleDigests& d, ByteView file_hash) {
  ImaBlacklistKey k;
  if (d.blacklist_visible) {
    k.source = DigestView::BinSource::d_modsig;
    k.entry = "bin:" + to_hex(d.kernel.bytes);
  } else if (!d.modsig_parsed) {
    // No modsig IMA can use: ima_check_blacklist() falls back to IMA's own file hash.
    k.source = DigestView::BinSource::ima_hash;
    k.entry = "bin:" + to_hex(file_hash);
  }
  return k;
}

modsign::Appraisal ima_appraise_modsig(const ModuleFile& f, const cms::Keyring& keyring,
                                       const cms::KernelModel& profile, crypto::HashAlgo ima_hash,
                                       const std::function<std::optional<ImaBlacklistHit>()>& check_blacklist) {
  modsign::Appraisal a;
  const ImaModuleRead read = ima_module_read(f.m, profile);
  auto refuse = [&](std::string cause, KErr check_err, std::string reason) {
    a.cause = std::move(cause);
    a.err = a.cause == "empty" || a.cause == "decompress" ? KErr::einval : KErr::eacces;
    a.check_err = check_err;
    a.reason = std::move(reason);
    return a;
  };
  // -1. kernel_read_file() refuses an empty file before security_kernel_read_file() (IMA).
  if (auto empty = module::kernel_read_file_refusal(f.stored.size()))
    return refuse("empty", KErr::einval, empty->message + "; IMA never appraises it");
  // 0. 7.x: the READING_MODULE_COMPRESSED read only collects and defers; module_decompress()
  //    then fails with EINVAL before the image is ever appraised.
  if (read == ImaModuleRead::decompress_refused)
    return refuse("decompress", KErr::einval,
                  "module_decompress: " + f.m.kernel_decompress_problem + "; IMA never appraises the image");
  // 1. ima_check_blacklist(): a hit is EPERM, turned into EACCES; the rule's measurement
  //    adds a "blacklisted-hash" ima-buf record of the modsig digest.
  if (auto hit = check_blacklist()) {
    a.blacklist_entry = hit->entry;
    a.ima_record = ima_buffer_template("blacklisted-hash", hit->ima_buffer, ima_hash, profile);
    return refuse("blacklisted", hit->err, "ima_check_blacklist: " + hit->entry + " is listed");
  }
  // 2. ima_appraise_measurement(): without security.ima only the modsig can pass.
  const ByteView seen = read == ImaModuleRead::compressed_file ? ByteView(f.stored) : ByteView(f.m.image);
  // ima_read_modsig(): 40 bytes or fewer, or no marker: ENOENT; then mod_check_sig.
  if (seen.size() <= module::kMarker.size() + module::kModuleSignatureSize || !module::has_marker(seen))
    return refuse("no-modsig", KErr::enoent, std::string("ima_read_modsig: no appended signature") + kNoXattr);
  auto split = module::split(seen);
  if (!split) return refuse("no-modsig", split.error().code, "ima_read_modsig: " + split.error().message + kNoXattr);
  const auto rep = ima_modsig_verify(split->content, split->cms, keyring, profile);
  a.log = rep.log;
  if (rep.err != KErr::none) {
    // A message ima_read_modsig() cannot parse leaves IMA without a modsig; one it parses
    // but cannot verify is an invalid signature.  Both are refused.
    if (!cms::pkcs7_parse_message(split->cms, profile, &keyring.blacklist))
      return refuse("no-modsig", rep.err, "ima_read_modsig: pkcs7_parse_message: " + rep.reason + kNoXattr);
    return refuse("invalid-signature", rep.err, "ima_modsig_verify: " + rep.reason);
  }
  a.trusted_by = rep.trusted_by;
  return a;
}

// ---- security.ima ------------------------------------------------------------------------

std::uint8_t ima_get_hash_algo(const std::optional<Bytes>& xattr, std::uint8_t ima_hash_algo,
                               std::uint8_t hash_algo_last, bool sigv3_files) {
  if (!xattr || xattr->size() < 2) return ima_hash_algo;
  const Bytes& x = *xattr;
  switch (static_cast<XattrType>(x[0])) {
    case XattrType::ima_verity_digsig:
      if (x[1] != 3 || x.size() <= kSignatureV2HdrSize || x[2] >= hash_algo_last) return ima_hash_algo;
      return x[2];
    case XattrType::evm_ima_xattr_digsig:
      // Before 7.1 (no sigv3 file signatures) only version 2 names the hash here.
      if ((x[1] != 2 && !(x[1] == 3 && sigv3_files)) || x.size() <= kSignatureV2HdrSize || x[2] >= hash_algo_last)
        return ima_hash_algo;
      return x[2];
    case XattrType::ima_xattr_digest_ng: return x[1] < hash_algo_last ? x[1] : ima_hash_algo;
    case XattrType::ima_xattr_digest:  // the old form: md5 in 16 or 20 bytes, sha1 in 20
      if (x.size() == 21) return std::all_of(x.begin() + 17, x.end(), [](std::uint8_t b) { return b == 0; }) ? 1 : 2;
      return x.size() == 17 ? 1 : ima_hash_algo;
    default: return ima_hash_algo;
  }
}

std::uint8_t ima_get_hash_algo(const std::optional<Bytes>& xattr, std::uint8_t ima_hash_algo,
                               const cms::KernelModel& profile) {
  return ima_get_hash_algo(xattr, ima_hash_algo, hash_algo_last(profile), ima_sigv3_file_signatures(profile));
}

namespace {
modsign::ImaFileAppraisal base_verdict(std::string_view func, const ImaRuleFlags& f) {
  modsign::ImaFileAppraisal v;
  v.func = std::string(func);
  v.appraise_type = f.modsig_allowed ? "imasig|modsig" : f.sigv3_required ? "sigv3" : "imasig";
  return v;
}
}  // namespace

modsign::ImaFileAppraisal ima_rule_refused(std::string_view func, std::string_view type, const Error& e) {
  modsign::ImaFileAppraisal v;
  v.func = std::string(func);
  v.appraise_type = std::string(type);
  v.status = "policy-refused";
  v.policy_err = e.code;
  v.reason = "ima_parse_rule: " + e.message;
  return v;
}

modsign::ImaFileAppraisal ima_appraise_xattr(const std::optional<Bytes>& xattr, ByteView file_digest, std::uint8_t algo,
                                             const ImaRuleFlags& flags, const cms::Keyring& keyring,
                                             const cms::KernelModel& profile, crypto::Backend backend) {
  modsign::ImaFileAppraisal v = base_verdict("", flags);
  v.hash_algo = std::string(hash_algo_name(algo));
  v.file_digest.assign(file_digest.begin(), file_digest.end());
  if (xattr && !xattr->empty() && (*xattr)[0] == static_cast<std::uint8_t>(XattrType::evm_ima_xattr_digsig))
    if (auto h = parse_signature_v2_hdr(*xattr))
      v.header = modsign::ImaSignatureHeader{h->type, h->version, h->hash_algo, h->keyid, h->sig_size};
  auto fail = [&](std::string cause, std::string reason) {
    v.status = "fail";
    v.open_err = KErr::eacces;
    v.cause = std::move(cause);
    v.reason = std::move(reason);
    return v;
  };
  // 1. ima_check_blacklist(): without a modsig, the file hash IMA collected.
  if (flags.check_blacklist && flags.digsig_required) {
    const std::string entry = "bin:" + to_hex(file_digest);
    if (keyring.blacklist.descriptions.count(entry)) {
      v.blacklist_entry = entry;
      v.digsig_err = KErr::eperm;
      return fail("blacklisted", "ima_check_blacklist: " + entry + " is listed (is_binary_blacklisted: EPERM)");
    }
  }
  // 2. ima_appraise_measurement(): no value (ENODATA) or an empty one.
  const char* required = flags.verity_required ? "verity-signature-required" : "IMA-signature-required";
  if (!xattr || xattr->empty())
    return fail(flags.digsig_required ? required : "missing-hash",
                "ima_appraise_measurement: the file has no security.ima");
  const Bytes& x = *xattr;
  // 3. xattr_verify().
  switch (static_cast<XattrType>(x[0])) {
    case XattrType::ima_xattr_digest:
    case XattrType::ima_xattr_digest_ng:
      return fail(required,
                  "xattr_verify: security.ima holds a digest (type " + std::to_string(x[0]) + "), not a signature");
    case XattrType::evm_ima_xattr_digsig: {
      if (flags.digsig_required && flags.verity_required)
        return fail("verity-signature-required", "xattr_verify: the rule requires an fs-verity signature");
      // sig->version is read without a length check; a 1-byte value has none (taken as 0).
      const std::uint8_t version = x.size() >= 2 ? x[1] : 0;
      const std::uint8_t newest = ima_sigv3_file_signatures(profile) ? 3 : 2;
      if (version > newest)
        return fail("invalid-signature-version",
                    "xattr_verify: signature version " + std::to_string(version) +
                        (version == 3 ? " (this kernel appraises sigv3 only from 7.1)" : ""));
      if (flags.sigv3_required && version != 3)
        return fail("IMA-sigv3-required", "xattr_verify: the rule requires a version 3 signature, this is version " +
                                              std::to_string(version));
      const auto keys = ima_keyring_keys(keyring, profile);
      const DigsigCheck c = integrity_digsig_verify(keys, x, file_digest, algo, profile, backend);
      v.digsig_called = true;
      v.digsig_err = c.err;
      if (c.key) {
        v.algorithm = std::string(crypto::key_algo_name(c.key->public_key().algo()));
        for (auto& ch : *v.algorithm) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        v.key = c.key->subject_text() + (c.key->skid() ? ", SKID " + to_hex(*c.key->skid()) : std::string());
      }
      if (c.err == KErr::eopnotsupp) return fail("unknown", "integrity_digsig_verify: " + c.reason);
      if (c.err != KErr::none) return fail("invalid-signature", "integrity_digsig_verify: " + c.reason);
      v.status = "pass";
      return v;
    }
    case XattrType::ima_verity_digsig:
      return fail("IMA-signature-required",
                  "xattr_verify: an fs-verity signature (type 6) under a rule without digest_type=verity");
    default:
      return fail("unknown-ima-data", "xattr_verify: security.ima type " + std::to_string(x[0]) + " is not known");
  }
}

}  // namespace modsign::digest
