// modsign digest: the kernel's pkcs7_get_digest as IMA takes it, the side SHA-256 and
// the d-modsig field, computed in one pass and confirmed with sha256sum.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cms/signed_data.hpp"
#include "crypto/crypto.hpp"
#include "digest/module_digest.hpp"
#include "module/compression.hpp"
#include "module/module_signature.hpp"
#include "test_support.hpp"

using namespace modsign;
using cms::KernelModel;
using crypto::HashAlgo;
using crypto::KeyAlgo;
using test::q;

namespace {
struct Keys {
  crypto::PrivateKey key;
  crypto::Certificate cert;
};
const Keys& keys(KeyAlgo a) {
  static std::map<KeyAlgo, Keys> cache;
  auto it = cache.find(a);
  if (it == cache.end()) {
    auto k = crypto::PrivateKey::generate(a, 2048);
    it = cache.emplace(a, Keys{k, crypto::Certificate::self_signed(k, "CN=digest test", 30).value()}).first;
  }
  return it->second;
}
Bytes signed_module(KeyAlgo a, bool attrs, HashAlgo h, const Bytes& content) {
  cms::BuildOptions o;
  o.digest = h;
  o.signed_attrs = attrs;
  return module::append_signature(content, cms::build_detached(keys(a).key, keys(a).cert, content, o).value());
}
std::string sha256sum(const std::string& path, std::uint64_t n) {
  auto r = test::run("head -c " + std::to_string(n) + " " + q(path) + " | sha256sum");
  return r.out.substr(0, 64);
}
}  // namespace

TEST(Digest, FieldEncoding) {
  // "sha256" ':' '\0' digest — 8 + 32 bytes.
  const Bytes d(32, 0xab);
  const Bytes f = digest::ima_digest_field("sha256", d);
  EXPECT_EQ(to_hex(f), "7368613235363a00" + std::string(64, 'a').replace(0, 64, to_hex(d)));
  EXPECT_EQ(f.size(), 40u);
}

TEST(Digest, RsaNoAttrsKernelDigestIsTheContentHash) {
  test::TempDir d;
  const Bytes content = test::pattern(300000);
  test::spit(d / "m.ko", signed_module(KeyAlgo::rsa, false, HashAlgo::sha256, content));
  for (auto p : {KernelModel::v6(), KernelModel::v7_0()}) {
    auto r = digest::digest_module_file(d / "m.ko", p, 1u << 30);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->kernel.status, KErr::none);
    EXPECT_EQ(r->kernel.algo, "sha256");
    EXPECT_EQ(to_hex(r->kernel.bytes), sha256sum(d / "m.ko", content.size()));
    EXPECT_EQ(r->side_sha256, r->kernel.bytes);
    EXPECT_EQ(to_hex(*r->d_modsig), "7368613235363a00" + to_hex(r->kernel.bytes));
    EXPECT_TRUE(r->blacklist_visible);
    EXPECT_EQ(r->content_length, content.size());
  }
}

TEST(Digest, SignedAttrsKernelDigestIsTheAttributeHash) {
  test::TempDir d;
  const Bytes content = test::pattern(5000);
  const Bytes file = signed_module(KeyAlgo::rsa, true, HashAlgo::sha256, content);
  test::spit(d / "m.ko", file);
  auto r = digest::digest_module_file(d / "m.ko", KernelModel::v7_0(), 1u << 30);
  ASSERT_TRUE(r.ok());
  auto split = module::split(file);
  auto sd = cms::parse(split->cms);
  EXPECT_EQ(r->kernel.bytes, crypto::digest(HashAlgo::sha256, sd->signers[0].signed_attrs_as_set()));
  EXPECT_NE(r->kernel.bytes, r->side_sha256);
  EXPECT_EQ(to_hex(r->side_sha256), sha256sum(d / "m.ko", content.size()));
  EXPECT_FALSE(r->kernel.over_content);
}

TEST(Digest, MlDsaNoAttrsHasNoKernelDigestButASideSha256) {
  test::TempDir d;
  const Bytes content = test::pattern(70000);
  test::spit(d / "m.ko", signed_module(KeyAlgo::ml_dsa_65, false, HashAlgo::sha512, content));
  auto r = digest::digest_module_file(d / "m.ko", KernelModel::v7_0(), 1u << 30);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->kernel.status, KErr::einval);
  EXPECT_EQ(r->kernel.reason, "pkcs7_get_digest: No digest available");
  EXPECT_FALSE(r->d_modsig.has_value());
  EXPECT_FALSE(r->blacklist_visible);
  EXPECT_EQ(to_hex(r->side_sha256), sha256sum(d / "m.ko", content.size()));
  auto v6 = digest::digest_module_file(d / "m.ko", KernelModel::v6(), 1u << 30);
  EXPECT_EQ(v6->kernel.status, KErr::enopkg);
  // With signedAttrs: the raw re-tagged attributes, which no bin: entry can match.
  test::spit(d / "a.ko", signed_module(KeyAlgo::ml_dsa_65, true, HashAlgo::sha512, content));
  auto a = digest::digest_module_file(d / "a.ko", KernelModel::v7_0(), 1u << 30);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->kernel.status, KErr::none);
  EXPECT_TRUE(a->kernel.raw_attributes);
  EXPECT_EQ(a->kernel.bytes.size(), 109u);
  EXPECT_EQ(a->kernel.bytes[0], 0x31);
  EXPECT_FALSE(a->blacklist_visible);
}

TEST(Digest, UnsignedAndCompressedAndDebian) {
  test::TempDir d;
  const Bytes content = test::pattern(1000);
  test::spit(d / "u.ko", content);
  auto u = digest::digest_module_file(d / "u.ko", KernelModel::v7_0(), 1u << 30);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->kernel.status, KErr::enoent);
  EXPECT_EQ(to_hex(u->side_sha256), sha256sum(d / "u.ko", 1000));
  // Compressed: the same digests as the image.
  const Bytes img = signed_module(KeyAlgo::rsa, false, HashAlgo::sha256, test::pattern(40000));
  test::spit(d / "c.ko.zst", module::compress(img, module::Compression::zstd));
  test::spit(d / "c.ko", img);
  auto c = digest::digest_module_file(d / "c.ko.zst", KernelModel::v7_0(), 1u << 30);
  auto p = digest::digest_module_file(d / "c.ko", KernelModel::v7_0(), 1u << 30);
  ASSERT_TRUE(c.ok() && p.ok());
  EXPECT_EQ(c->kernel.bytes, p->kernel.bytes);
  EXPECT_EQ(c->side_sha256, p->side_sha256);
  // CLI JSON keys.
  auto r = test::run(test::modsign_cli() + " digest --json " + q(d / "c.ko.zst"));
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kernel"], "v7.0");
  EXPECT_EQ(j["kernel_digest"]["status"], "ok");
  EXPECT_EQ(j["kernel_digest"]["algo"], "sha256");
  EXPECT_EQ(j["kernel_digest"]["hex"], to_hex(p->kernel.bytes));
  EXPECT_EQ(j["side_sha256"], to_hex(p->side_sha256));
  EXPECT_EQ(j["d_modsig"], "7368613235363a00" + to_hex(p->kernel.bytes));
  EXPECT_EQ(j["blacklist_visible"], true);
  // A real Debian module: kernel digest = side SHA-256 = sha256sum of the signed bytes.
  auto f = test::run(q(test::source_dir() + "/tools/fetch-debian-kernel"));
  if (f.status == 77) GTEST_SKIP() << f.err;
  ASSERT_EQ(f.status, 0);
  const auto mp = f.out.find("MODULES=") + 8;
  const std::string modules = f.out.substr(mp, f.out.find('\n', mp) - mp);
  auto one = test::run("find " + q(modules) + " -name 'dm-mod.ko' -o -name 'ext4.ko' | sort | head -n 1");
  const std::string mod = one.out.substr(0, one.out.find('\n'));
  ASSERT_FALSE(mod.empty());
  auto dd = digest::digest_module_file(mod, KernelModel::v7_0(), 1u << 30);
  ASSERT_TRUE(dd.ok());
  EXPECT_EQ(dd->kernel.algo, "sha256");
  EXPECT_EQ(to_hex(dd->kernel.bytes), sha256sum(mod, dd->content_length));
  EXPECT_EQ(dd->side_sha256, dd->kernel.bytes);
}

TEST(Streaming, SignAndVerifyInOnePassMatchInMemory) {
  // --stream-above 1000 forces the streaming paths on a 300 kB module.
  test::TempDir d;
  const Bytes content = test::pattern(300000);
  const std::string M = test::modsign_cli();
  for (const char* algo : {"rsa-2048", "ecdsa-p384", "ml-dsa-44", "ml-dsa-65", "ml-dsa-87"}) {
    const std::string key = d / (std::string(algo) + ".pem");
    ASSERT_EQ(test::run(M + " keygen --algo " + algo + " --out " + q(key)).status, 0);
    for (bool attrs : {false, true}) {
      const std::string a = attrs ? " --signed-attrs" : "";
      test::spit(d / "s.ko", content);
      test::spit(d / "m.ko", content);
      auto r = test::run(M + " sign --stream-above 1000 --key " + q(key) + a + " " + q(d / "s.ko"));
      ASSERT_EQ(r.status, 0) << r.err;
      EXPECT_NE(r.out.find(", streamed"), std::string::npos) << r.out;
      ASSERT_EQ(test::run(M + " sign --key " + q(key) + a + " " + q(d / "m.ko")).status, 0);
      const Bytes streamed = test::slurp(d / "s.ko"), in_memory = test::slurp(d / "m.ko");
      if (std::string(algo) == "rsa-2048") {
        EXPECT_EQ(streamed, in_memory);  // deterministic
      }
      // ECDSA signatures vary in DER length; the others are fixed-size.
      if (std::string(algo) != "ecdsa-p384") { EXPECT_EQ(streamed.size(), in_memory.size()) << algo; }
      // The streamed ML-DSA signature (external μ) is a pure ML-DSA signature: one-shot
      // verification with OpenSSL and Botan accepts it.
      auto split = module::split(streamed);
      ASSERT_TRUE(split.ok());
      EXPECT_EQ(Bytes(split->content.begin(), split->content.end()), content);
      auto sd = cms::parse(split->cms);
      ASSERT_TRUE(sd.ok());
      auto certs = crypto::Certificate::load_all(key);
      for (auto b : {crypto::Backend::openssl, crypto::Backend::botan})
        EXPECT_TRUE(cms::verify(*sd, split->content, *certs, b).ok()) << algo << " attrs=" << attrs;
      // Streaming and in-memory verification agree, and a one-byte change is refused.
      const std::string v = M + " verify" + (attrs ? " --waive-mldsa-authattrs" : "") + " --cert " + q(key) + " ";
      auto s1 = test::run(v + "--stream-above 1000 " + q(d / "s.ko"));
      auto s2 = test::run(v + q(d / "s.ko"));
      EXPECT_EQ(s1.out, s2.out);
      EXPECT_EQ(s1.status, attrs && std::string(algo).rfind("ml-dsa", 0) != 0 ? 1 : 0) << s1.out;
      Bytes bad = streamed;
      bad[150000] ^= 0x04;
      test::spit(d / "s.ko", bad);
      s1 = test::run(v + "--stream-above 1000 " + q(d / "s.ko"));
      s2 = test::run(v + q(d / "s.ko"));
      EXPECT_EQ(s1.out, s2.out);
      EXPECT_EQ(s1.status, 1);
      EXPECT_NE(s1.out.find("refused (EKEYREJECTED)"), std::string::npos) << s1.out;
    }
  }
}
