// modsign — include/modsign/ima_sign.hpp: IMA file signatures (signing, the xattr, appraisal).
#include "modsign/ima_sign.hpp"
#include "modsign/ima.hpp"

#include <sys/stat.h>
#include <sys/xattr.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "api/internal.hpp"
#include "common/file.hpp"
#include "crypto/pkcs11_store.hpp"
#include "digest/digsig_asymmetric.hpp"
#include "digest/hash_info.hpp"
#include "digest/ima_appraise.hpp"
#include "digest/ima_policy.hpp"

namespace modsign {

namespace {

constexpr const char* kHashes = "sha1, sha224, sha256, sha384, sha512, sha3-256, sha3-384, sha3-512";

crypto::HashAlgo sign_hash(const std::string& name) {
  const auto h = crypto::hash_by_name(name);
  if (!h || *h == crypto::HashAlgo::md5) throw UsageError("unknown hash '" + name + "' (" + kHashes + ")");
  return *h;
}

ImaSignatureHeader public_header(const digest::SignatureV2Hdr& h) {
  return {h.type, h.version, h.hash_algo, h.keyid, h.sig_size};
}

/// The errno names setxattr(2) documents, for messages.
std::string errno_text(int e) {
  switch (e) {
    case E2BIG: return "E2BIG";
    case ENOSPC: return "ENOSPC";
    case ERANGE: return "ERANGE";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ENOENT: return "ENOENT";
    case EROFS: return "EROFS";
    case EDQUOT: return "EDQUOT";
    case ENOTDIR: return "ENOTDIR";
    case ELOOP: return "ELOOP";
    default: return "errno " + std::to_string(e);
  }
}

/// The digests of the file `in` reads under each of `algos`, in 1 MiB pieces.
std::vector<Bytes> hash_reader(const FileReader& in, const std::vector<crypto::HashAlgo>& algos) {
  std::vector<std::unique_ptr<crypto::Hasher>> hs;
  for (auto a : algos) hs.push_back(std::make_unique<crypto::Hasher>(a));
  Bytes buf;
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  for (std::uint64_t off = 0; off < in.size(); off += kPiece) {
    in.read_at(off, static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, in.size() - off)), buf);
    for (auto& h : hs) h->update(buf);
  }
  std::vector<Bytes> out;
  for (auto& h : hs) out.push_back(h->final());
  return out;
}

/// The digests of the regular file at `path` under each of `algos`, read once in 1 MiB
/// pieces; `*size` (if given) its bytes.  Throws IoError.
std::vector<Bytes> hash_file(const std::string& path, const std::vector<crypto::HashAlgo>& algos, std::uint64_t* size) {
  const FileIdentity before = identity_of(path);
  FileReader in(path);
  auto out = hash_reader(in, algos);
  // A file written meanwhile would get a signature of bytes it never held as a whole.
  if (!(identity_of(path) == before))
    throw IoError(path + ": changed while being read (another process wrote it); not signed");
  if (size) *size = in.size();
  return out;
}

/// Size and modification time of the open file `fd`: what a write changes (setxattr
/// changes only the ctime).
std::pair<std::uint64_t, std::int64_t> content_stamp(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw IoError(path + ": stat: " + std::strerror(errno));
  return {static_cast<std::uint64_t>(st.st_size),
          static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

[[noreturn]] void throw_setxattr(const std::string& path, const std::string& name, std::size_t size, int e) {
  const std::string what = path + ": setxattr " + name + ": ";
  const std::string ns = name.substr(0, name.find('.') + 1);
  switch (e) {
    case EOPNOTSUPP:
      throw IoError(what + "the file system does not support " + ns + "* extended attributes (EOPNOTSUPP)");
    case E2BIG:
    case ENOSPC:
    case ERANGE:
      throw IoError(what + "a value of " + std::to_string(size) + " bytes does not fit (" + errno_text(e) + ")");
    default: throw IoError(what + std::strerror(e) + " (" + errno_text(e) + ")");
  }
}

/// The value of `name` on the open file `fd` (nullopt: none).
std::optional<Bytes> fd_xattr(int fd, const std::string& name) {
  for (;;) {
    const ssize_t n = ::fgetxattr(fd, name.c_str(), nullptr, 0);
    if (n < 0) return std::nullopt;
    Bytes v(static_cast<std::size_t>(n));
    const ssize_t m = ::fgetxattr(fd, name.c_str(), v.data(), v.size());
    if (m < 0 && errno == ERANGE) continue;
    if (m < 0) return std::nullopt;
    v.resize(static_cast<std::size_t>(m));
    return v;
  }
}

}  // namespace

std::uint32_t ima_keyid(const Signer& signer) { return digest::ima_keyid(impl_of(signer).cert); }

void check_ima_sign_options(const Signer& signer, const ImaSignOptions& o) {
  sign_hash(o.hash);
  if (api::backend_named(o.backend) == crypto::Backend::botan && crypto::is_ml_dsa(impl_of(signer).key.algo()) &&
      !impl_of(signer).key.has_ml_dsa_seed())
    throw SignError(
        SignRefusal::backend_needs_seed,
        signer.key_path() + ": the botan backend needs an ML-DSA key with its seed (RFC 9881 seed or both form)");
  if (o.deterministic && crypto::is_ecdsa(impl_of(signer).key.algo()) && crypto::pkcs11::is_uri(signer.key_path()))
    throw InputError(signer.key_path() +
                     ": deterministic ECDSA (RFC 6979) is not available for a key on a PKCS#11 token: its signer "
                     "chooses the nonce");
}

ImaSignature ima_sign_digest(const Signer& signer, ByteView digest, const ImaSignOptions& o) {
  check_ima_sign_options(signer, o);
  const crypto::HashAlgo h = sign_hash(o.hash);
  const auto& hi = crypto::hash_info(h);
  if (digest.size() != hi.size)
    throw InputError("digest of " + std::to_string(digest.size()) + " bytes, " + std::string(hi.name) + " has " +
                     std::to_string(hi.size));
  const auto& s = impl_of(signer);
  const crypto::KeyAlgo ka = s.key.algo();
  const int version = crypto::is_ml_dsa(ka) || o.v3 ? 3 : 2;
  const auto data = digest::ima_signed_data(version, ka, h, digest);
  auto sig = data.message ? crypto::sign_message(s.key, h, data.data, api::backend_named(o.backend), o.deterministic)
                          : crypto::sign_digest(s.key, h, data.data, o.deterministic);
  if (!sig) throw InputError(s.key_path + ": " + sig.error().message);
  digest::SignatureV2Hdr hdr;
  hdr.type = static_cast<std::uint8_t>(digest::XattrType::evm_ima_xattr_digsig);
  hdr.version = static_cast<std::uint8_t>(version);
  hdr.hash_algo = digest::hash_algo_of(h);
  hdr.keyid = o.keyid ? *o.keyid : digest::ima_keyid(s.cert);
  hdr.sig_size = static_cast<std::uint16_t>(sig->size());
  ImaSignature r;
  r.value = digest::signature_v2_value(hdr, *sig);
  r.header = public_header(hdr);
  r.algorithm = signer.algorithm();
  r.hash = std::string(hi.name);
  r.file_digest.assign(digest.begin(), digest.end());
  return r;
}

namespace {
/// The signature of the file `lock` holds (its content unchanged from before the hash to
/// after it, else IoError), with its SHA-256 and size for manifests.
ImaSignature sign_locked(const Signer& signer, const InputLock& lock, const ImaSignOptions& o,
                         const std::pair<std::uint64_t, std::int64_t>& stamp) {
  const crypto::HashAlgo h = sign_hash(o.hash);
  std::vector<crypto::HashAlgo> algos{h};
  if (h != crypto::HashAlgo::sha256) algos.push_back(crypto::HashAlgo::sha256);  // for manifests
  const FileReader in(lock);
  const auto d = hash_reader(in, algos);
  if (content_stamp(lock.fd(), lock.path()) != stamp)
    throw IoError(lock.path() + ": changed while being read (another process wrote it); not signed");
  ImaSignature r = ima_sign_digest(signer, d[0], o);
  r.file_sha256 = d.back();
  r.file_size = in.size();
  return r;
}
}  // namespace

ImaSignature ima_sign_file(const Signer& signer, const std::string& path, const ImaSignOptions& o) {
  check_ima_sign_options(signer, o);
  const InputLock lock(path, o.expect_file, LockMode::shared);
  return sign_locked(signer, lock, o, content_stamp(lock.fd(), path));
}

void write_security_ima(const std::string& path, ByteView value, const std::string& name) {
  if (::setxattr(path.c_str(), name.c_str(), value.data(), value.size(), 0) == 0) return;
  throw_setxattr(path, name, value.size(), errno);
}

ImaSignature ima_sign_file_xattr(const Signer& signer, const std::string& path, const std::string& name,
                                 const ImaSignOptions& o) {
  check_ima_sign_options(signer, o);
  // One open file from the hash to the xattr: no path is looked up again.
  const InputLock lock(path, o.expect_file);
  const int fd = lock.fd();
  const auto stamp = content_stamp(fd, path);
  ImaSignature r = sign_locked(signer, lock, o, stamp);
  const auto old = fd_xattr(fd, name);
  if (::fsetxattr(fd, name.c_str(), r.value.data(), r.value.size(), 0) != 0)
    throw_setxattr(path, name, r.value.size(), errno);
  if (content_stamp(fd, path) != stamp) {
    // Written between the hash and the xattr: the value set describes bytes gone.
    if (old) ::fsetxattr(fd, name.c_str(), old->data(), old->size(), 0);
    else ::fremovexattr(fd, name.c_str());
    throw IoError(path + ": changed while being signed (another process wrote it); " + name +
                  (old ? " put back as it was" : " not set"));
  }
  return r;
}

ImaSignature ima_sign_file_sigfile(const Signer& signer, const std::string& path, const ImaSignOptions& o,
                                   const OutputRoute& route) {
  check_ima_sign_options(signer, o);
  const InputLock lock(path, o.expect_file);
  // FILE.sig is checked and made beside the file that was read (in its directory).
  const FileAt at = lock.beside(path + ".sig");
  if (api::is_input(at, lock))
    throw IoError(at.shown + ": is the same file as the input " + path + "; refusing to overwrite it");
  api::refuse_output_over(at, api::signer_files(signer));
  ImaSignature r = sign_locked(signer, lock, o, content_stamp(lock.fd(), path));
  std::optional<AtomicFile> out;
  api::open_output(out, at.shown, &lock);
  out->write(r.value);
  out->commit(api::commit_route(route));
  return r;
}

std::optional<Bytes> read_security_ima(const std::string& path, const std::string& name) {
  for (;;) {
    const ssize_t n = ::getxattr(path.c_str(), name.c_str(), nullptr, 0);
    if (n < 0) {
      if (errno == ENODATA || errno == EOPNOTSUPP) return std::nullopt;
      throw IoError(path + ": getxattr " + name + ": " + std::strerror(errno));
    }
    Bytes v(static_cast<std::size_t>(n));
    const ssize_t m = ::getxattr(path.c_str(), name.c_str(), v.data(), v.size());
    if (m < 0 && errno == ERANGE) continue;  // grew in between
    if (m < 0) {
      if (errno == ENODATA) return std::nullopt;
      throw IoError(path + ": getxattr " + name + ": " + std::strerror(errno));
    }
    v.resize(static_cast<std::size_t>(m));
    return v;
  }
}

std::optional<ImaSignatureHeader> ima_signature_header(ByteView value) {
  if (value.empty() || value[0] != static_cast<std::uint8_t>(digest::XattrType::evm_ima_xattr_digsig))
    return std::nullopt;
  const auto h = digest::parse_signature_v2_hdr(value);
  if (!h) return std::nullopt;
  return public_header(*h);
}

void check_ima_appraise_type(const std::string& appraise_type) {
  if (!digest::ima_appraise_type_known(appraise_type))
    throw UsageError("unknown appraise_type '" + appraise_type + "' (" + digest::kImaAppraiseTypes + ")");
}

void check_ima_func(const std::string& func) {
  if (!digest::ima_func_known(func)) throw UsageError("unknown func '" + func + "' (" + digest::kImaFuncs + ")");
}

ImaFileAppraisal ima_appraise_file(const std::string& path, const std::optional<Bytes>& security_ima,
                                   const TrustStore& ima, const KernelProfile& profile, const ImaAppraiseOptions& o) {
  const cms::KernelModel kp = api::to_model(profile);
  // ima_hash= as hash_setup() takes it (UsageError for names that kernel refuses, SHA-3 under v6.1)
  const auto def = crypto::hash_by_name(ima_hash_setup(o.ima_hash, profile));
  if (!def || *def == crypto::HashAlgo::md5) throw UsageError("unknown IMA hash '" + o.ima_hash + "'");
  auto rule = digest::ima_parse_appraise_rule(o.func, o.appraise_type, kp);
  if (!rule) return digest::ima_rule_refused(o.func, o.appraise_type, rule.error());
  const std::uint8_t algo = digest::ima_get_hash_algo(security_ima, digest::hash_algo_of(*def), kp);
  const auto h = digest::computable_hash(algo);
  if (!h)
    throw InputError(path + ": security.ima names hash_algo " + std::to_string(algo) + " (" +
                     std::string(digest::hash_algo_name(algo)) + "), which modsign cannot compute");
  Bytes d;
  if (o.expect_file) {
    const InputLock lock(path, o.expect_file, LockMode::shared);
    d = hash_reader(FileReader(lock), {*h})[0];
  } else {
    d = hash_file(path, {*h}, nullptr)[0];
  }
  ImaFileAppraisal v =
      digest::ima_appraise_xattr(security_ima, d, algo, *rule, impl_of(ima).keyring, kp, api::backend_named(o.backend));
  v.func = o.func;
  return v;
}

}  // namespace modsign
