#include "digest/module_digest.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>

#include "common/file.hpp"
#include "common/module_read.hpp"
#include "digest/ima_appraise.hpp"
#include "module/decompress.hpp"
#include "module/module_signature.hpp"

namespace modsign::digest {

namespace {
constexpr std::size_t kChunk = 1 << 20;

/// Where the pieces of a (possibly) signed module lie, from its last 40 bytes.
struct Layout {
  bool has_modsig = false;
  KErr err = KErr::enoent;
  std::string reason = "no appended signature (ima_read_modsig: ENOENT)";
  std::uint64_t content_len = 0, cms_off = 0, cms_len = 0;
};

// ima_read_modsig: at most 40 bytes or no marker -> ENOENT; then mod_check_sig.
Layout layout_of(ByteView tail40, std::uint64_t size) {
  Layout l;
  l.content_len = size;
  if (size <= module::kMarker.size() + module::kModuleSignatureSize) return l;
  auto t = module::parse_tail(tail40, size);
  if (!t) {
    if (t.error().code != KErr::enodata) {
      l.err = t.error().code;
      l.reason = t.error().message;
    }
    return l;
  }
  l.has_modsig = true;
  l.err = KErr::none;
  l.reason.clear();
  l.cms_len = t->sig_len;
  l.content_len = t->content_len;
  l.cms_off = t->content_len;
  return l;
}

/// The kernel digest from a parsed message and precomputed content digests.
void finish(ModuleDigests& out, ByteView cms, const std::vector<std::pair<std::string, Bytes>>& content_digests,
            const std::optional<ByteView>& content, const cms::KernelModel& profile) {
  auto msg = cms::pkcs7_parse_message(cms, profile);
  if (!msg) {
    out.kernel.status = msg.error().code;
    out.kernel.reason = msg.error().message;
    return;
  }
  out.modsig_parsed = true;
  // ima_collect_modsig (ima_modsig.c:100-117): pkcs7_supply_detached_data() fails with
  // EINVAL when the PKCS#7 carries its own content, and the function returns before
  // pkcs7_get_digest(): IMA has a modsig but no digest (ima_check_blacklist looks up "bin:").
  if (msg->data) {
    out.kernel.status = KErr::einval;
    out.kernel.reason = "pkcs7_supply_detached_data: Data already supplied (the PKCS#7 carries its own content)";
    return;
  }
  for (const auto& [name, d] : content_digests) msg->data_digests.emplace_back(name, d);
  if (content) (void)cms::pkcs7_supply_detached_data(*msg, *content);
  auto d = cms::pkcs7_get_digest(*msg, profile);
  if (!d) {
    out.kernel.status = d.error().code;
    out.kernel.reason = d.error().message;
    return;
  }
  out.kernel.algo = d->hash_algo;
  out.kernel.bytes = d->buf;
  out.kernel.over_content = !msg->signed_infos.front().authattrs.has_value();
  auto h = crypto::hash_by_name(d->hash_algo);
  // SM3 and Streebog-256 give 32 bytes, Streebog-512 64; "none" (the re-tagged signedAttrs
  // of 7.0's ML-DSA quirk) has no size of its own.
  const std::size_t size = h                                                        ? crypto::hash_info(*h).size
                           : d->hash_algo == "streebog512"                          ? 64
                           : d->hash_algo == "sm3" || d->hash_algo == "streebog256" ? 32
                                                                                    : 0;
  out.kernel.raw_attributes = size == 0 || d->buf.size() != size;
  // ima_eventdigest_modsig_init: the field needs a known hash_algo index and a digest.
  if (d->hash_algo_index && !d->buf.empty()) {
    out.d_modsig = ima_digest_field(d->hash_algo, d->buf);
    out.blacklist_visible = d->buf.size() <= 64;
  }
}

std::vector<std::string> signer_hashes(ByteView cms, const cms::KernelModel& profile);

/// The digests of one module: SHA-256 and the signers' hashes fed by `feed`, then the
/// kernel's view from the PKCS#7.
ModuleDigests digests_of(const Layout& l, ByteView cms, const cms::KernelModel& profile,
                         const std::function<void(MultiHash&)>& feed) {
  ModuleDigests out;
  out.signed_module = l.has_modsig;
  out.content_length = l.content_len;
  MultiHash mh;
  mh.add(crypto::HashAlgo::sha256);
  if (l.has_modsig)
    for (const auto& name : signer_hashes(cms, profile)) {
      if (auto h = crypto::hash_by_name(name)) mh.add(*h);
      else mh.add_kernel_only(name);
    }
  feed(mh);
  auto ds = mh.final();
  out.side_sha256 = ds[0];
  if (!l.has_modsig) {
    out.kernel.status = l.err;
    out.kernel.reason = l.reason;
    return out;
  }
  std::vector<std::pair<std::string, Bytes>> cd;
  for (std::size_t i = 0; i < ds.size(); ++i)
    cd.emplace_back(std::string(crypto::hash_info(mh.algos()[i]).name), ds[i]);
  cd.insert(cd.end(), mh.named().begin(), mh.named().end());
  finish(out, cms, cd, std::nullopt, profile);
  return out;
}

/// The hashes the signers name (the kernel's names), parsed leniently from the PKCS#7.
std::vector<std::string> signer_hashes(ByteView cms, const cms::KernelModel& profile) {
  std::vector<std::string> out;
  auto msg = cms::pkcs7_parse_message(cms, profile);
  if (!msg) return out;
  for (const auto& si : msg->signed_infos) out.push_back(si.hash_algo);
  return out;
}
}  // namespace

std::size_t MultiHash::add(crypto::HashAlgo a) {
  for (std::size_t i = 0; i < algos_.size(); ++i)
    if (algos_[i] == a) return i;
  algos_.push_back(a);
  hashers_.push_back(std::make_unique<crypto::Hasher>(a));
  return algos_.size() - 1;
}

void MultiHash::update(ByteView data) {
  // 64 KiB pieces stay in L2 cache while every hash reads them.
  constexpr std::size_t kPiece = 64 * 1024;
  for (std::size_t off = 0; off < data.size(); off += kPiece) {
    const ByteView piece = data.subspan(off, std::min(kPiece, data.size() - off));
    for (auto& h : hashers_) h->update(piece);
    for (auto& [name, h] : named_) h->update(piece);
  }
}

bool MultiHash::add_kernel_only(const std::string& name) {
  for (const auto& [n, h] : named_)
    if (n == name) return true;
  auto h = crypto::botan::KernelOnlyHasher::create(name);
  if (!h) return false;
  named_.emplace_back(name, std::move(h));
  return true;
}

std::vector<Bytes> MultiHash::final() {
  std::vector<Bytes> out;
  for (auto& h : hashers_) out.push_back(h->final());
  named_digests_.clear();
  for (auto& [name, h] : named_) named_digests_.emplace_back(name, h->final());
  return out;
}

Bytes ima_digest_field(const std::string& algo, ByteView digest) {
  Bytes f(algo.begin(), algo.end());
  f.push_back(':');
  f.push_back('\0');
  f.insert(f.end(), digest.begin(), digest.end());
  return f;
}

ModuleDigests digest_module_image(ByteView image, const cms::KernelModel& profile) {
  const std::size_t tail = std::min<std::size_t>(image.size(), 40);
  const Layout l = layout_of(image.last(tail), image.size());
  const ByteView cms = l.has_modsig
                           ? image.subspan(static_cast<std::size_t>(l.cms_off), static_cast<std::size_t>(l.cms_len))
                           : ByteView();
  return digests_of(l, cms, profile,
                    [&](MultiHash& mh) { mh.update(image.first(static_cast<std::size_t>(l.content_len))); });
}

Result<ModuleDigests> digest_module_file(const std::string& path, const cms::KernelModel& profile,
                                         std::uint64_t max_size) {
  FileReader in(path);
  const std::uint64_t size = in.size();
  const Bytes head = in.read_at(0, static_cast<std::size_t>(std::min<std::uint64_t>(size, 8)));
  if (module::detect_compression(head) != module::Compression::none) {
    const Bytes stored = read_module_bytes(path, max_size);
    auto img = module::open_module(stored, max_size, module::OpenFlags{});  // "<format>-compressed module: <reason>"
    if (!img) return img.error();
    ModuleDigests out = digest_module_image(img->image, profile);
    out.compressed = true;
    out.file_size = size;
    out.file_sha256 = crypto::digest(crypto::HashAlgo::sha256, stored);
    if (ima_module_read(*img, profile) == ImaModuleRead::compressed_file) {
      // IMA sees the compressed file, which has no marker (digest/ima_appraise).
      out.modsig_parsed = false;
      out.kernel = KernelDigestResult{};
      out.kernel.status = KErr::enoent;
      out.kernel.reason = std::string(kImaReadsCompressedFile);
      out.d_modsig.reset();
      out.blacklist_visible = false;
    }
    return out;
  }
  // Uncompressed: one pass in 1 MiB reads; only the trailer and the PKCS#7 are kept.
  const std::size_t tail_len = static_cast<std::size_t>(std::min<std::uint64_t>(size, 40));
  Layout l = layout_of(in.read_at(size - tail_len, tail_len), size);
  if (l.has_modsig && l.cms_len > 65535) {  // the kernel's ASN.1 decoder refuses it: do not read it
    l.has_modsig = false;
    l.err = KErr::emsgsize;
    l.reason = "PKCS#7 message of " + std::to_string(l.cms_len) + " bytes exceeds the ASN.1 decoder's 65535";
  }
  const Bytes cms = l.has_modsig ? in.read_at(l.cms_off, static_cast<std::size_t>(l.cms_len)) : Bytes{};
  // The whole file's SHA-256 (IMA's file hash) rides on the same reads; the bytes after the
  // content (PKCS#7 and trailer) are read once more only when there are any.
  crypto::Hasher whole(crypto::HashAlgo::sha256);
  Bytes buf;
  auto read_range = [&](std::uint64_t from, std::uint64_t to, MultiHash* mh) {
    for (std::uint64_t off = from; off < to;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, to - off));
      in.read_at(off, n, buf);
      if (mh) mh->update(ByteView(buf.data(), n));
      whole.update(ByteView(buf.data(), n));
      off += n;
    }
  };
  ModuleDigests out = digests_of(l, cms, profile, [&](MultiHash& mh) { read_range(0, l.content_len, &mh); });
  read_range(l.content_len, size, nullptr);
  out.file_size = size;
  out.file_sha256 = whole.final();
  return out;
}

}  // namespace modsign::digest
