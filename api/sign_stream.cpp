// modsign — sign_module_file() for a large uncompressed module in one streaming pass, and
// streamable_module_file() (include/modsign/sign.hpp).
#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include "api/internal.hpp"
#include "cms/signed_data.hpp"
#include "common/file.hpp"
#include "crypto/algorithms.hpp"
#include "module/compression.hpp"

namespace modsign {

bool streamable_module_file(const std::string& path, std::uint64_t threshold) {
  return module::streamable_file(path, threshold);
}

namespace api {

/// One pass in 1 MiB chunks feeds the digest (or the ML-DSA μ) and the temporary output
/// file; the SignedData is then built from the digests (external μ) and appended.  Peak
/// memory stays constant.
std::uint64_t streamed_content_length(const FileReader& in, const std::string& path, const SignOptions& o) {
  const std::uint64_t size = in.size();
  const std::size_t tail_len = static_cast<std::size_t>(std::min<std::uint64_t>(size, 40));
  const Bytes tail = in.read_at(size - tail_len, tail_len);
  auto t = module::parse_tail(tail, size);
  if (t) {
    if (!o.replace) throw SignError(SignRefusal::already_signed, path + ": module is already signed", size);
    std::uint64_t content_len = t->content_len;
    // Stacked signatures (module/module_signature split_stack): every one goes.
    for (;;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(content_len, 40));
      auto inner = module::parse_tail(in.read_at(content_len - n, n), content_len);
      if (!inner) break;
      content_len = inner->content_len;
    }
    return content_len;
  }
  if (t.error().code != KErr::enodata)
    throw SignError(SignRefusal::other,
                    path + ": cannot strip the existing signature: " + std::string(errno_name(t.error().code)) + " " +
                        t.error().message,
                    size);
  return size;
}

void finish_streamed(std::optional<AtomicFile>& out, std::optional<AtomicFile>& p7s_file, ByteView cms,
                     const std::string& out_path, const std::string& p7s, const SignOptions& o, SignReport& r,
                     const InputLock* input, const CommitRoute& route) {
  if (out) {
    out->write(cms);
    out->write(module::encode_module_signature(static_cast<std::uint32_t>(cms.size())));
    out->write(ByteView(reinterpret_cast<const std::uint8_t*>(module::kMarker.data()), module::kMarker.size()));
  }
  if (p7s_file) p7s_file->write(cms);
  commit_outputs(out, p7s_file, input, r, route);
  r.path = o.p7s_only ? p7s : out_path;
  r.cms_size = cms.size();
  r.streamed = true;
}

SignReport sign_streaming(const Signer& signer, const std::string& path, const SignOptions& o, const InputLock* input,
                          const CommitRoute& route) {
  const auto& s = impl_of(signer);
  const auto opt = build_options(signer, o, path + ": ");
  FileReader in = input ? FileReader(*input) : FileReader(path);
  const std::uint64_t size = in.size();
  const std::uint64_t content_len = streamed_content_length(in, path, o);
  const bool use_mu = crypto::is_ml_dsa(s.key.algo()) && !opt.signed_attrs;
  std::optional<crypto::Hasher> h;
  std::optional<crypto::MlDsaMu> mu;
  if (use_mu) mu.emplace(s.key.public_key().raw());
  else h.emplace(opt.digest);
  const std::string out_path = o.out.empty() ? path : o.out;
  const std::string p7s = o.p7s_out.empty() ? out_path + ".p7s" : o.p7s_out;
  std::optional<AtomicFile> out, p7s_file;  // both opened (checked) before either is replaced
  if (!o.p7s_only) open_output(out, out_path, input);
  if (o.p7s || o.p7s_only) open_output(p7s_file, p7s, input);
  Bytes buf;
  for (std::uint64_t off = 0; off < content_len;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(std::size_t{1} << 20, content_len - off));
    in.read_at(off, n, buf);
    const ByteView chunk(buf.data(), n);
    if (mu) mu->update(chunk);
    if (h) h->update(chunk);
    if (out) out->write(chunk);
    off += n;
  }
  cms::ContentDigests cd;
  if (mu) cd.mu = mu->final();
  if (h) cd.digest = h->final();
  auto cms_der = cms::build_detached_prehashed(s.key, s.cert, cd, opt);
  if (!cms_der) throw SignError(SignRefusal::other, path + ": " + cms_der.error().message, size);
  SignReport r;
  finish_streamed(out, p7s_file, *cms_der, out_path, p7s, o, r, input, route);
  r.algorithm = signer.algorithm();
  r.hash = std::string(crypto::hash_info(opt.digest).name);
  r.signed_attrs = o.signed_attrs;
  r.external_mu = use_mu;
  r.bytes_read = size;
  return r;
}

}  // namespace api
}  // namespace modsign
