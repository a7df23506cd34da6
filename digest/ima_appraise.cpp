// mirrors security/integrity/ima/ima_appraise.c ima_check_blacklist, ima_appraise_measurement (the modsig path), with the MODULE_CHECK reads of kernel/module/main.c init_module_from_file and ima_main.c process_measurement, Linux 7.2.13
#include "digest/ima_appraise.hpp"

#include "cms/pkcs7_parser.hpp"
#include "common/file.hpp"
#include "common/module_read.hpp"
#include "digest/ima_modsig.hpp"
#include "digest/ima_template_lib.hpp"
#include "module/module_signature.hpp"

namespace modsign::digest {

namespace {
/// Ends every no-modsig reason: nothing else can pass the rule either.
constexpr const char* kNoXattr = "; no security.ima either (IMA-signature-required)";
}  // namespace

bool ima_appraises_decompressed_image(const kernel::KernelProfile& profile) {
  return profile.generation == kernel::Generation::v7_0;
}

ImaModuleRead ima_module_read(const module::ModuleImage& m, const kernel::KernelProfile& profile) {
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
  const bool own_bound = img.error().message.starts_with("decompressed size exceeds") ||
                         img.error().message.starts_with("zstd window needs");
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

modsign::Appraisal ima_appraise_modsig(const ModuleFile& f, const kernel::Keyring& keyring,
                                       const kernel::KernelProfile& profile, crypto::HashAlgo ima_hash,
                                       const std::function<std::optional<ImaBlacklistHit>()>& check_blacklist) {
  modsign::Appraisal a;
  const ImaModuleRead read = ima_module_read(f.m, profile);
  auto refuse = [&](std::string cause, KErr check_err, std::string reason) {
    a.cause = std::move(cause);
    a.err = a.cause == "decompress" ? KErr::einval : KErr::eacces;
    a.check_err = check_err;
    a.reason = std::move(reason);
    return a;
  };
  // 0. 7.x: the READING_MODULE_COMPRESSED read only collects and defers; module_decompress()
  //    then fails with EINVAL before the image is ever appraised.
  if (read == ImaModuleRead::decompress_refused)
    return refuse("decompress", KErr::einval,
                  "module_decompress: " + f.m.kernel_decompress_problem + "; IMA never appraises the image");
  // 1. ima_check_blacklist(): a hit is EPERM, turned into EACCES; the rule's measurement
  //    adds a "blacklisted-hash" ima-buf record of the modsig digest.
  if (auto hit = check_blacklist()) {
    a.blacklist_entry = hit->entry;
    a.ima_record = ima_buffer_template("blacklisted-hash", hit->ima_buffer, ima_hash);
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
    if (!kernel::pkcs7_parse_message(split->cms, profile, &keyring.blacklist))
      return refuse("no-modsig", rep.err, "ima_read_modsig: pkcs7_parse_message: " + rep.reason + kNoXattr);
    return refuse("invalid-signature", rep.err, "ima_modsig_verify: " + rep.reason);
  }
  a.trusted_by = rep.trusted_by;
  return a;
}

}  // namespace modsign::digest
