// modsign — strip_module_file(), extract_signature() and extract_signature_file()
// (include/modsign/sign.hpp).
#include "api/internal.hpp"
#include "common/file.hpp"
#include "module/compression.hpp"
#include "module/module_signature.hpp"

namespace modsign {

namespace api {
std::string legacy_note(const module::ModuleSignature& t) {
  const char* type = t.id_type == 0 ? " PGP" : t.id_type == 1 ? " X509" : "";
  return "note: removed a legacy trailer (id_type " + std::to_string(t.id_type) + type + ", algo " +
         std::to_string(t.algo) + ", hash " + std::to_string(t.hash) + ", signer_len " + std::to_string(t.signer_len) +
         ", key_id_len " + std::to_string(t.key_id_len) + "): the kernel refuses it (mod_check_sig)";
}
}  // namespace api

StripReport strip_module_file(const std::string& path, const StripOptions& options, const OutputRoute& route) {
  const InputLock input(path, options.expect_file);  // as sign_module_file(): held until the output is in place
  const auto sm = api::read_stored_module(input, options.max_size);
  const auto& m = sm.m;
  StripReport r;
  r.bytes_read = sm.stored.size();
  r.path = path;
  if (m.compression != module::Compression::none && !options.recompress) {
    const std::string f(module::compression_name(m.compression));
    throw SignError(SignRefusal::compressed, path + ": " + f + "-compressed module: set recompress to strip it",
                    r.bytes_read, f);
  }
  if (!module::has_marker(m.image)) return r;
  auto split = options.legacy ? module::split_any_trailer(m.image) : module::split(m.image);
  if (!split)
    throw SignError(SignRefusal::other,
                    path + ": cannot strip the signature: " + std::string(errno_name(split.error().code)) + " " +
                        split.error().message,
                    r.bytes_read);
  const auto stack = module::split_stack(m.image, options.legacy);
  const std::size_t depth = options.all ? stack.size() : 1;
  for (std::size_t i = 0; i < depth; ++i) {
    if (auto st = module::check_signature_present(stack[i]); !st) {
      if (!options.legacy)
        throw SignError(SignRefusal::other,
                        path + ": cannot strip the signature: " + std::string(errno_name(st.error().code)) + " " +
                            st.error().message + (i ? " (signature " + std::to_string(i + 1) + " of the stack)" : "") +
                            " (strip --legacy removes such a trailer)",
                        r.bytes_read);
      r.notes.push_back(
          "note: removed a trailer with an empty signature (sig_len 0): the kernel refuses it "
          "(pkcs7_parse_message: EBADMSG)");
    }
    r.cms_size += stack[i].cms.size();
    if (module::is_legacy(stack[i].trailer)) r.notes.push_back(api::legacy_note(stack[i].trailer));
  }
  if (!options.all && stack.size() > 1) {
    const std::size_t n = stack.size() - 1;
    r.notes.push_back("note: " + std::to_string(n) + (n == 1 ? " more signature" : " more signatures") +
                      " inside (strip --all removes them)");
  }
  const ByteView kept = stack[depth - 1].content;
  Bytes out(kept.begin(), kept.end());
  if (m.compression != module::Compression::none) {
    out = module::compress(out, m.compression);
    r.recompressed = std::string(module::compression_name(m.compression));
  }
  r.path = options.out.empty() ? path : options.out;
  api::refuse_input_alias(r.path, input, "strip");
  api::refuse_output_over(input.beside(r.path), {});
  std::optional<AtomicFile> f;
  api::open_output(f, r.path, &input);
  f->write(out);
  f->require_unchanged(input);
  f->commit(api::commit_route(route));
  for (auto& n : api::dropped_xattr_notes(*f)) r.notes.push_back(std::move(n));
  r.was_signed = true;
  r.signatures_removed = depth;
  r.content_size = kept.size();
  r.files_written.push_back(r.path);
  return r;
}

Bytes extract_signature(const std::string& path, std::uint64_t max_size) {
  const auto sm = api::read_stored_module(path, max_size);
  auto split = module::split(sm.m.image);
  if (!split)
    throw InputError(path + ": " + std::string(errno_name(split.error().code)) + ": " + split.error().message);
  if (auto st = module::check_signature_present(*split); !st)
    throw InputError(path + ": " + std::string(errno_name(st.error().code)) + ": " + st.error().message);
  return Bytes(split->cms.begin(), split->cms.end());
}

ExtractReport extract_signature_file(const std::string& path, const std::string& out, std::uint64_t max_size,
                                     const OutputRoute& route) {
  ExtractReport r;
  r.path = out.empty() ? path + ".p7s" : out;
  refuse_output_over(r.path, {{path, "the input"}});
  const Bytes cms_der = extract_signature(path, max_size);
  write_file_atomic(r.path, cms_der, 0644, true, api::commit_route(route));
  r.cms_size = cms_der.size();
  return r;
}

}  // namespace modsign
