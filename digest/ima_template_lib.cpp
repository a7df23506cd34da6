// mirrors security/integrity/ima/ima_template_lib.c and ima_template.c: the template fields (d-ng, d-ngv2, n-ng, sig,
// d-modsig, modsig, buf), ima_template, ima_buffer_template, Linux 7.2.13
#include "digest/ima_template_lib.hpp"

#include "digest/hash_info.hpp"
#include "digest/ima_appraise.hpp"
#include "digest/ima_fs.hpp"
#include "digest/module_digest.hpp"
#include "module/decompress.hpp"
#include "module/module_signature.hpp"

namespace modsign::digest {

std::size_t ima_digest_field_survivable(Machine machine) {
  // Measured (ima_template_lib.hpp): the saved return address lies 265 bytes into the field
  // on s390x (r14), 209 on arm64 (x30).
  switch (machine) {
    case Machine::s390x: return 265;
    case Machine::arm64: return 209;
    case Machine::x86_64: break;
  }
  return kImaDigestFieldMax;
}

namespace {

/// What a d-modsig field past the stack buffer of ima_eventdigest_init_common() does on
/// `machine`'s 7.2.13 build (ima_digest_field_survivable), as a sentence.
std::string d_modsig_overflow(const ModuleDigests& md, Machine machine) {
  const std::size_t size = md.d_modsig->size();
  std::string out = "d-modsig: " + std::to_string(size) + " bytes (\"" + md.kernel.algo + ":\" NUL and the " +
                    std::to_string(md.kernel.bytes.size()) +
                    "-byte digest pkcs7_get_digest returns, here the re-tagged signedAttrs) exceed the " +
                    std::to_string(kImaDigestFieldMax) +
                    "-byte stack buffer of ima_eventdigest_init_common (security/integrity/ima/ima_template_lib.c): "
                    "the kernel writes " +
                    std::to_string(size - kImaDigestFieldMax) + (size - kImaDigestFieldMax == 1 ? " byte" : " bytes") +
                    " past it";
  const std::string arch(machine_name(machine));
  const std::string edge = std::to_string(ima_digest_field_survivable(machine));
  if (size <= ima_digest_field_survivable(machine))
    return out + ", short of the saved return address on " + arch +
           ", and records the field whole (Linux 7.2.13 under qemu, up to " + edge + " bytes" +
           (machine == Machine::s390x
                ? ": the bytes past the buffer land in the caller's saved r7-r13; measured with a "
                  "padding attribute's 0x5a there, other values untried)"
                : ": the bytes past the buffer land in a saved frame pointer, x29)");
  if (machine == Machine::s390x)
    return out +
           ", over the saved return address on s390x: the task is killed or the kernel panics (Linux 7.2.13 "
           "under qemu), no entry is recorded";
  if (machine == Machine::arm64)
    return out +
           ", over the saved return address (x30) on arm64: the task oopses at the address written and is "
           "killed (Linux 7.2.13 under qemu), no entry is recorded";
  return out + " and oopses (x86_64; Linux 7.2.13 under qemu), no entry is recorded";
}

}  // namespace

Result<TemplateEntry> ima_template(const std::string& template_name, const std::string& path, ByteView file,
                                   const std::optional<Bytes>& security_ima, const cms::KernelModel& profile,
                                   crypto::HashAlgo ima_hash, bool side_sha256) {
  std::vector<std::string> names;
  if (template_name == "ima-ng") names = {"d-ng", "n-ng"};
  else if (template_name == "ima-sig") names = {"d-ng", "n-ng", "sig"};
  else if (template_name == "ima-modsig") names = {"d-ng", "n-ng", "sig", "d-modsig", "modsig"};
  else if (template_name == "ima-ngv2") names = {"d-ngv2", "n-ng"};
  else if (template_name == "ima-sigv2") names = {"d-ngv2", "n-ng", "sig"};
  else
    return make_error(KErr::einval,
                      "unknown template '" + template_name + "' (ima-ng, ima-sig, ima-modsig, ima-ngv2, ima-sigv2)");

  TemplateEntry e;
  e.name = template_name;
  // ima_get_hash_algo (ima_appraise.c): the file hash follows security.ima when it names
  // one this kernel takes, else ima_hash.  ima_collect_measurement() then hashes with that
  // algorithm: ima_alloc_tfm (ima_crypto.c) falls back to ima_hash only for values beyond
  // HASH_ALGO__LAST, which ima_get_hash_algo already turned away; a kernel without the
  // algorithm fails crypto_alloc_shash and records no entry ("collect_data" failed).
  const std::uint8_t algo = ima_get_hash_algo(security_ima, hash_algo_of(ima_hash), profile);
  const auto named = computable_hash(algo);
  if (!named)
    return make_error(KErr::enopkg,
                      "security.ima names hash_algo " + std::to_string(algo) + " (" +
                          std::string(hash_algo_name(algo)) +
                          "): IMA hashes the file with it, with no fallback to ima_hash (ima_alloc_tfm falls back only "
                          "beyond HASH_ALGO__LAST), and records no entry on a kernel without " +
                          std::string(hash_algo_name(algo)) + " (crypto_alloc_shash fails); modsign cannot compute it");
  const crypto::HashAlgo file_hash = *named;
  if (security_ima && security_ima->size() >= 2 && algo == hash_algo_of(ima_hash)) {
    const Bytes& x = *security_ima;
    const bool sig = (x[0] == 0x03 || x[0] == 0x06) && x.size() >= 3;  // hash_algo at 2, digest-ng's at 1
    const std::uint8_t given = sig ? x[2] : x[1];
    if ((sig || x[0] == 0x04) && given != algo)
      e.notes.push_back("security.ima (type " + std::to_string(x[0]) +
                        (sig ? ", version " + std::to_string(x[1]) : "") + ", hash_algo " + std::to_string(given) +
                        ") names no hash this kernel takes (ima_get_hash_algo: " +
                        (sig ? std::string(x[0] == 0x03 && ima_sigv3_file_signatures(profile) ? "version 2 or 3"
                                           : x[0] == 0x03 ? "version 2 only before 7.1"
                                                          : "version 3") +
                                   ", more than 9 bytes, "
                             : std::string()) +
                        "hash_algo below " + std::to_string(hash_algo_last(profile)) + "): d-ng uses ima_hash, " +
                        std::string(crypto::hash_info(ima_hash).name));
  }
  // A compressed module loaded with MODULE_INIT_COMPRESSED_FILE (7.x, kernel/module/main.c
  // init_module_from_file): the first read (READING_MODULE_COMPRESSED) collects IMA's hash
  // of the file as stored and defers everything else (ima_main.c:429-433); after
  // module_decompress() the image goes through process_measurement() again, which reads the
  // modsig from the image but keeps the hash already collected (IMA_COLLECTED,
  // ima_api.c:268-269).  So d-ng hashes `file`, d-modsig and modsig come from the image.
  ByteView seen = file;
  Bytes image;
  if (module::detect_compression(file) != module::Compression::none && ima_appraises_decompressed_image(profile)) {
    auto m = module::open_module(file);
    if (!m || !m->kernel_decompress_problem.empty())
      return make_error(KErr::einval, "module_decompress() refuses this " +
                                          std::string(module::compression_name(module::detect_compression(file))) +
                                          " stream (" + (m ? m->kernel_decompress_problem : m.error().message) +
                                          "): finit_module fails with EINVAL and IMA records nothing (the first "
                                          "read of a compressed module is not measured)");
    image = std::move(m->image);
    seen = image;
  }
  const ModuleDigests md = digest_module_image(seen, profile);
  for (const auto& n : names) {
    TemplateField f{n, {}};
    if (n == "d-ng") {
      f.data = ima_digest_field(std::string(crypto::hash_info(file_hash).name), crypto::digest(file_hash, file));
    } else if (n == "d-ngv2") {
      // ima_eventdigest_ngv2_init: "<digest type>:<algo>:" NUL digest, type "ima" (no fs-verity rules).
      f.data =
          ima_digest_field("ima:" + std::string(crypto::hash_info(file_hash).name), crypto::digest(file_hash, file));
    } else if (n == "n-ng") {
      // ima_write_template_field_data(DATA_FMT_STRING): spaces become '_', NUL added.
      f.data.assign(path.begin(), path.end());
      for (auto& c : f.data)
        if (c == ' ') c = '_';
      f.data.push_back('\0');
    } else if (n == "sig") {
      // ima_eventsig_init: an IMA signature (0x03) or fs-verity signature (0x06) xattr.
      if (security_ima && !security_ima->empty() && ((*security_ima)[0] == 0x03 || (*security_ima)[0] == 0x06))
        f.data = *security_ima;
    } else if (n == "d-modsig") {
      // Without a parsable modsig (ima_read_modsig failed) IMA has none: empty field.
      if (md.modsig_parsed) {
        if (side_sha256) {
          f.data = ima_digest_field("sha256", md.side_sha256);
        } else if (md.d_modsig) {
          if (md.d_modsig->size() > kImaDigestFieldMax) {
            auto why = d_modsig_overflow(md, profile.machine);
            if (md.d_modsig->size() > ima_digest_field_survivable(profile.machine))
              return make_error(KErr::emsgsize, std::move(why));
            e.notes.push_back(std::move(why));
          }
          f.data = *md.d_modsig;
        } else {
          return make_error(KErr::einval, "d-modsig: no digest from pkcs7_get_digest (" +
                                              std::string(errno_name(md.kernel.status)) + ": " + md.kernel.reason +
                                              "); ima_eventdigest_modsig_init fails and no entry is recorded");
        }
      }
    } else if (n == "modsig") {
      if (md.modsig_parsed) {
        auto split = module::split(seen);
        if (split) f.data.assign(split->cms.begin(), split->cms.end());
      }
    }
    put_ima_u32(e.data, static_cast<std::uint32_t>(f.data.size()), ima_list_big_endian(profile));
    e.data.insert(e.data.end(), f.data.begin(), f.data.end());
    e.fields.push_back(std::move(f));
  }
  e.sha1 = crypto::digest(crypto::HashAlgo::sha1, e.data);
  e.sha256 = crypto::digest(crypto::HashAlgo::sha256, e.data);
  return e;
}

TemplateEntry ima_buffer_template(const std::string& event_name, ByteView buf, crypto::HashAlgo ima_hash,
                                  const cms::KernelModel& profile) {
  TemplateEntry e;
  e.name = "ima-buf";
  Bytes name(event_name.begin(), event_name.end());
  name.push_back('\0');
  e.fields = {{"d-ng", ima_digest_field(std::string(crypto::hash_info(ima_hash).name), crypto::digest(ima_hash, buf))},
              {"n-ng", std::move(name)},
              {"buf", Bytes(buf.begin(), buf.end())}};
  for (const auto& f : e.fields) {
    put_ima_u32(e.data, static_cast<std::uint32_t>(f.data.size()), ima_list_big_endian(profile));
    e.data.insert(e.data.end(), f.data.begin(), f.data.end());
  }
  e.sha1 = crypto::digest(crypto::HashAlgo::sha1, e.data);
  e.sha256 = crypto::digest(crypto::HashAlgo::sha256, e.data);
  return e;
}

}  // namespace modsign::digest
