// The signing use cases of the public facade (include/modsign/sign.hpp, keygen.hpp,
// output.hpp): every form modsign signs, strip/extract, generate_key, OutputBatch, through
// the installed headers; the results are checked byte for byte and by `openssl cms -verify`.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <type_traits>

#include <modsign/modsign.hpp>

#include "test_support.hpp"

using namespace modsign;
using test::q;

namespace {

constexpr std::size_t kTrailer = 12 + 28;
constexpr char kMarker[] = "~Module signature appended~\n";
// DER ContentInfo(SignedData) sizes with these certificates (issuerAndSerialNumber).
// signedAttrs hold the messageDigest: 16 bytes more with sha384 than with sha256.
constexpr std::size_t kMlNoAttrs = 3455, kMlAttrs = 3564, kRsaNoAttrs = 404, kRsaAttrs = 481, kRsaAttrsSha384 = 497;
// An ML-DSA-65 signature (FIPS 204 Table 2): the last bytes of the SignedData.
constexpr std::size_t kMlDsa65Sig = 3309;

// Keys made by openssl itself: ML-DSA-65 and RSA-2048, each with a self-signed certificate
// of fixed 8-byte serial (the SignedData then has a fixed size), key and certificate in one
// file.
class ApiSign : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const std::string o = test::openssl();
    std::string cmd;
    for (const auto& [name, alg] :
         {std::pair{"ml", "-algorithm ML-DSA-65"}, std::pair{"rsa", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048"}}) {
      const std::string k = *dir_ / (std::string(name) + ".key"), c = *dir_ / (std::string(name) + ".crt");
      cmd += o + " genpkey " + alg + " -out " + q(k) + " && " + o + " req -x509 -new -key " + q(k) +
             " -subj '/CN=api sign/O=modsign' -days 30 -set_serial 0x0123456789abcdef -out " + q(c) + " && cat " +
             q(k) + " " + q(c) + " > " + q(*dir_ / (std::string(name) + ".pem")) + " && chmod 600 " +
             q(*dir_ / (std::string(name) + ".pem")) + " && ";
    }
    auto r = test::run(cmd + "true");
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string file(const std::string& n) { return *dir_ / n; }
  std::string module(const std::string& name = "m.ko", std::size_t n = 4096) {
    const std::string p = d_ / name;
    test::spit(p, test::pattern(n));
    return p;
  }
  /// `openssl cms -verify` of the detached `p7s` over `content` with `cert`.
  void expect_openssl_verifies(const std::string& p7s, const Bytes& content, const std::string& cert) {
    test::expect_openssl_cms_verifies(p7s, content, cert, d_ / "content.bin");
  }
  /// ML-DSA without signedAttrs, which OpenSSL 3.5's CMS does not verify: the signature (the
  /// SignedData's last 3309 bytes) checked over `content` by `openssl pkeyutl -verify`.
  void expect_openssl_verifies_pure(const Bytes& cms, const Bytes& content, const std::string& cert) {
    ASSERT_GT(cms.size(), kMlDsa65Sig);
    test::spit(d_ / "content.bin", content);
    test::spit(d_ / "sig.bin", Bytes(cms.end() - kMlDsa65Sig, cms.end()));
    auto r = test::run(test::openssl() + " x509 -in " + q(cert) + " -pubkey -noout > " + q(d_ / "pub.pem") + " && " +
                       test::openssl() + " pkeyutl -verify -pubin -inkey " + q(d_ / "pub.pem") + " -rawin -in " +
                       q(d_ / "content.bin") + " -sigfile " + q(d_ / "sig.bin"));
    EXPECT_EQ(r.status, 0) << r.err << r.out;
  }
  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

Bytes cat(const Bytes& a, const Bytes& b) {
  Bytes r = a;
  r.insert(r.end(), b.begin(), b.end());
  return r;
}
/// struct module_signature for a PKCS#7 of `n` bytes, then the marker.
Bytes trailer(std::size_t n) {
  Bytes t = from_hex("000002000000000000000000");
  for (int i = 0; i < 4; ++i) t[8 + i] = static_cast<std::uint8_t>(n >> (24 - 8 * i));
  t.insert(t.end(), kMarker, kMarker + 28);
  return t;
}

template <class E, class F>
E expect_throw(F f) {
  try {
    f();
  } catch (const E& e) { return e; }
  ADD_FAILURE() << "no exception";
  if constexpr (std::is_same_v<E, SignError>) return E(SignRefusal::other, "no exception");
  else return E("no exception");
}

}  // namespace

TEST_F(ApiSign, InMemoryImageAllSizes) {
  const auto ml = Signer::load(file("ml.pem"));
  const auto rsa = Signer::load(file("rsa.pem"));
  EXPECT_TRUE(ml.notes().empty());
  EXPECT_EQ(ml.key_path(), file("ml.pem"));
  const Bytes content = test::pattern(4096);
  struct Case {
    const Signer* s;
    bool attrs;
    std::string hash;
    std::size_t size;
  };
  for (const Case& c : {Case{&ml, false, "sha512", kMlNoAttrs}, Case{&ml, true, "sha512", kMlAttrs},
                        Case{&rsa, false, "sha256", kRsaNoAttrs}, Case{&rsa, true, "sha256", kRsaAttrs}}) {
    SignOptions o;
    o.signed_attrs = c.attrs;
    o.hash = c.hash;
    const SignedImage si = sign_module_image(*c.s, content, o);
    EXPECT_EQ(si.cms.size(), c.size) << c.s->algorithm() << " " << c.attrs;
    EXPECT_EQ(si.report.cms_size, c.size);
    EXPECT_EQ(si.report.hash, c.hash);
    EXPECT_EQ(si.report.signed_attrs, c.attrs);
    EXPECT_EQ(si.report.bytes_read, 4096u);
    EXPECT_FALSE(si.report.streamed);
    EXPECT_EQ(si.report.recompressed, "");
    EXPECT_TRUE(si.report.files_written.empty());
    EXPECT_EQ(si.module, cat(cat(content, si.cms), trailer(c.size)));
    test::spit(d_ / "x.p7s", si.cms);
    if (c.s == &ml && !c.attrs) expect_openssl_verifies_pure(si.cms, content, file("ml.crt"));
    else expect_openssl_verifies(d_ / "x.p7s", content, c.s == &ml ? file("ml.crt") : file("rsa.crt"));
  }
  // RSA PKCS#1 v1.5 is deterministic: the same bytes twice.
  EXPECT_EQ(sign_module_image(rsa, content).module, sign_module_image(rsa, content).module);
}

TEST_F(ApiSign, FileWithP7sAndP7sOnly) {
  const auto rsa = Signer::load(file("rsa.pem"));
  const std::string m = module();
  SignOptions o;
  o.hash = "sha384";
  o.signed_attrs = true;
  o.p7s = true;
  o.out = d_ / "out.ko";
  const SignReport r = sign_module_file(rsa, m, o);
  EXPECT_EQ(r.path, d_ / "out.ko");
  EXPECT_EQ(r.algorithm, "RSA");
  EXPECT_EQ(r.hash, "sha384");
  EXPECT_EQ(r.cms_size, kRsaAttrsSha384);
  EXPECT_EQ(r.files_written, (std::vector<std::string>{d_ / "out.ko", d_ / "out.ko.p7s"}));
  EXPECT_EQ(test::slurp(m), test::pattern(4096));
  const Bytes p7s = test::slurp(d_ / "out.ko.p7s");
  EXPECT_EQ(test::slurp(d_ / "out.ko"), cat(cat(test::pattern(4096), p7s), trailer(kRsaAttrsSha384)));
  expect_openssl_verifies(d_ / "out.ko.p7s", test::pattern(4096), file("rsa.crt"));
  EXPECT_EQ(extract_signature(d_ / "out.ko"), p7s);

  SignOptions only;
  only.p7s_only = true;
  const SignReport r2 = sign_module_file(rsa, m, only);
  EXPECT_EQ(r2.path, m + ".p7s");
  EXPECT_EQ(r2.files_written, std::vector<std::string>{m + ".p7s"});
  EXPECT_EQ(test::slurp(m), test::pattern(4096));  // the module stays as it was
  EXPECT_EQ(test::slurp(m + ".p7s").size(), kRsaNoAttrs);
  expect_openssl_verifies(m + ".p7s", test::pattern(4096), file("rsa.crt"));
  struct stat st {};
  ASSERT_EQ(::stat((m + ".p7s").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
}

TEST_F(ApiSign, StreamedEqualsInMemory) {
  const auto rsa = Signer::load(file("rsa.pem"));
  const auto ml = Signer::load(file("ml.pem"));
  const std::size_t n = (std::size_t{5} << 20) / 2 + 17;  // 2.5 MiB + 17: three 1 MiB pieces
  const std::string a = module("a.ko", n), b = module("b.ko", n);
  SignOptions stream;
  stream.stream_above = 1 << 20;
  const SignReport rs = sign_module_file(rsa, a, stream);
  EXPECT_TRUE(rs.streamed);
  EXPECT_FALSE(rs.external_mu);
  EXPECT_EQ(rs.bytes_read, n);
  const SignReport rm = sign_module_file(rsa, b);
  EXPECT_FALSE(rm.streamed);
  EXPECT_EQ(test::slurp(a), test::slurp(b));  // RSA: byte for byte
  // ML-DSA without signedAttrs streams by external μ: same structure, same size; the
  // hedged signature differs, everything before it is equal.
  stream.replace = true;
  SignOptions mem;
  mem.replace = true;
  const SignReport ms = sign_module_file(ml, a, stream);
  EXPECT_TRUE(ms.streamed);
  EXPECT_TRUE(ms.external_mu);
  EXPECT_EQ(ms.cms_size, kMlNoAttrs);
  sign_module_file(ml, b, mem);
  const Bytes fa = test::slurp(a), fb = test::slurp(b);
  ASSERT_EQ(fa.size(), n + kMlNoAttrs + kTrailer);
  ASSERT_EQ(fb.size(), fa.size());
  const std::size_t sig_at = n + kMlNoAttrs - kMlDsa65Sig;
  EXPECT_TRUE(std::equal(fa.begin(), fa.begin() + sig_at, fb.begin()));
  EXPECT_TRUE(std::equal(fa.end() - kTrailer, fa.end(), fb.end() - kTrailer));
  EXPECT_EQ(Bytes(fa.begin(), fa.begin() + n), test::pattern(n));
  expect_openssl_verifies_pure(extract_signature(a), test::pattern(n), file("ml.crt"));
}

TEST_F(ApiSign, CompressedRecompressedInTheSameFormat) {
  const auto rsa = Signer::load(file("rsa.pem"));
  const std::string m = module();
  ASSERT_EQ(test::run("gzip -n " + q(m)).status, 0);
  const std::string gz = m + ".gz";
  const auto e = expect_throw<SignError>([&] { sign_module_file(rsa, gz); });
  EXPECT_EQ(e.reason(), SignRefusal::compressed);
  EXPECT_EQ(e.format(), "gzip");
  EXPECT_EQ(std::string(e.what()),
            gz + ": gzip-compressed module: set recompress, or decompress it, sign the .ko, then recompress it");
  SignOptions o;
  o.recompress = true;
  o.hash = "sha256";
  const std::size_t gz_size = test::slurp(gz).size();
  const SignReport r = sign_module_file(rsa, gz, o);
  EXPECT_EQ(r.bytes_read, gz_size);
  EXPECT_EQ(r.recompressed, "gzip");
  EXPECT_EQ(r.cms_size, kRsaNoAttrs);
  const Bytes stored = test::slurp(gz);
  ASSERT_GE(stored.size(), 2u);
  EXPECT_EQ(stored[0], 0x1f);
  EXPECT_EQ(stored[1], 0x8b);
  auto d = test::run("gzip -dc " + q(gz) + " > " + q(d_ / "plain.ko"));
  ASSERT_EQ(d.status, 0) << d.err;
  EXPECT_EQ(test::slurp(d_ / "plain.ko"), sign_module_image(rsa, test::pattern(4096), o).module);
  // Stripped and recompressed again: the content alone.
  StripOptions so;
  EXPECT_EQ(expect_throw<SignError>([&] { strip_module_file(gz, so); }).what(),
            gz + ": gzip-compressed module: set recompress to strip it");
  so.recompress = true;
  const StripReport sr = strip_module_file(gz, so);
  EXPECT_TRUE(sr.was_signed);
  EXPECT_EQ(sr.cms_size, kRsaNoAttrs);
  EXPECT_EQ(sr.recompressed, "gzip");
  ASSERT_EQ(test::run("gzip -dc " + q(gz) + " > " + q(d_ / "plain.ko")).status, 0);
  EXPECT_EQ(test::slurp(d_ / "plain.ko"), test::pattern(4096));
}

TEST_F(ApiSign, StripAndExtract) {
  const auto ml = Signer::load(file("ml.pem"));
  const std::string m = module();
  StripReport sr = strip_module_file(m);
  EXPECT_FALSE(sr.was_signed);
  EXPECT_TRUE(sr.files_written.empty());
  const auto ee = expect_throw<InputError>([&] { extract_signature(m); });
  EXPECT_EQ(std::string(ee.what()).rfind(m + ": ENODATA: ", 0), 0u) << ee.what();
  sign_module_file(ml, m);
  const ExtractReport er = extract_signature_file(m);
  EXPECT_EQ(er.path, m + ".p7s");
  EXPECT_EQ(er.cms_size, kMlNoAttrs);
  StripOptions so;
  so.out = d_ / "bare.ko";
  sr = strip_module_file(m, so);
  EXPECT_TRUE(sr.was_signed);
  EXPECT_EQ(sr.path, d_ / "bare.ko");
  EXPECT_EQ(sr.cms_size, kMlNoAttrs);
  EXPECT_EQ(sr.bytes_read, 4096 + kMlNoAttrs + kTrailer);
  EXPECT_EQ(test::slurp(d_ / "bare.ko"), test::pattern(4096));
  EXPECT_EQ(cat(cat(test::pattern(4096), test::slurp(m + ".p7s")), trailer(kMlNoAttrs)), test::slurp(m));
}

TEST_F(ApiSign, Refusals) {
  const auto ml = Signer::load(file("ml.pem"));
  const std::string m = module();
  sign_module_file(ml, m);
  auto e = expect_throw<SignError>([&] { sign_module_file(ml, m); });
  EXPECT_EQ(std::string(e.what()), m + ": module is already signed");
  EXPECT_EQ(e.reason(), SignRefusal::already_signed);
  EXPECT_EQ(e.bytes_read(), 4096 + kMlNoAttrs + kTrailer);
  SignOptions o;
  o.signed_attrs = true;
  o.hash = "sha256";
  e = expect_throw<SignError>([&] { sign_module_file(ml, m, o); });
  EXPECT_EQ(std::string(e.what()),
            m + ": ML-DSA with signedAttrs needs sha512 (kernels refuse any other digest there)");
  EXPECT_EQ(e.reason(), SignRefusal::mldsa_signed_attrs_hash);
  EXPECT_EQ(e.bytes_read(), 0u);  // refused before reading
  e = expect_throw<SignError>([&] { check_sign_options(ml, o); });
  EXPECT_EQ(std::string(e.what()), "ML-DSA with signedAttrs needs sha512 (kernels refuse any other digest there)");
  o.hash = "md4";
  e = expect_throw<SignError>([&] { check_sign_options(o); });
  EXPECT_EQ(std::string(e.what()), "unknown hash 'md4'");
  EXPECT_EQ(e.reason(), SignRefusal::unknown_hash);
  o.hash = "sha512";
  o.backend = "gnutls";
  EXPECT_THROW(check_sign_options(o), UsageError);
  // raw (scripts/sign-file): a signed module is signed over, a second signature appended.
  SignOptions raw;
  raw.raw = true;
  const Bytes before = test::slurp(m);
  const SignReport r = sign_module_file(ml, m, raw);
  EXPECT_EQ(test::slurp(m).size(), before.size() + r.cms_size + kTrailer);
  EXPECT_TRUE(std::equal(before.begin(), before.end(), test::slurp(m).begin()));
}

TEST_F(ApiSign, PassphraseProviderAndNotes) {
  auto e = test::run(test::openssl() + " pkcs8 -topk8 -v2 aes-256-cbc -passout pass:s3cret -in " + q(file("rsa.key")) +
                     " -out " + q(d_ / "enc.pem") + " && chmod 644 " + q(d_ / "enc.pem"));
  ASSERT_EQ(e.status, 0) << e.err;
  ::unsetenv("KBUILD_SIGN_PIN");
  const std::string key = d_ / "enc.pem";
  try {
    Signer::load(key, file("rsa.crt"));
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& x) {
    EXPECT_EQ(std::string(x.what()).rfind(key + ": private key is encrypted and no passphrase was given", 0), 0u)
        << x.what();
  }
  std::vector<std::string> asked;
  const auto s = Signer::load(key, file("rsa.crt"), [&](const std::string& p) {
    asked.push_back(p);
    return std::optional<std::string>("s3cret");
  });
  EXPECT_EQ(asked, std::vector<std::string>{key});
  EXPECT_EQ(s.algorithm(), "RSA");
  EXPECT_EQ(s.notes(), std::vector<std::string>{"warning: permissions 0644 let group or others access this private "
                                                "key (chmod 600 " +
                                                key + ")"});
  // KBUILD_SIGN_PIN comes first: the provider is not asked.
  ::setenv("KBUILD_SIGN_PIN", "s3cret", 1);
  asked.clear();
  Signer::load(key, file("rsa.crt"), [&](const std::string& p) {
    asked.push_back(p);
    return std::optional<std::string>();
  });
  ::unsetenv("KBUILD_SIGN_PIN");
  EXPECT_TRUE(asked.empty());
}

TEST_F(ApiSign, GenerateKey) {
  KeygenOptions o;
  o.algorithm = "ecdsa-p256";
  o.subject = "CN=api keygen,O=modsign";
  o.days = 10;
  o.out = d_ / "k.pem";
  o.cert_out = d_ / "k.crt";
  const KeygenReport r = generate_key(o);
  EXPECT_EQ(r.algorithm, "ECDSA-P256");
  EXPECT_EQ(r.key_path, o.out);
  EXPECT_EQ(r.cert_path, o.cert_out);
  EXPECT_EQ(r.files_written, (std::vector<std::string>{o.cert_out, o.out}));
  EXPECT_EQ(r.serial.size(), 20u * 3 - 1);  // 20 bytes as colon hex
  struct stat st {};
  ASSERT_EQ(::stat(o.out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_EQ(::stat(o.cert_out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  const auto s = Signer::load(o.out, o.cert_out);
  EXPECT_EQ(s.algorithm(), "ECDSA-P256");
  EXPECT_TRUE(s.notes().empty());
  o.cert_out.clear();
  o.algorithm = "rsa-2048";
  EXPECT_EQ(generate_key(o).algorithm, "RSA-2048");
  EXPECT_EQ(Signer::load(o.out).certificate_path(), o.out);  // the certificate follows the key
  auto refusal = [&](KeygenOptions k) {
    try {
      generate_key(k);
    } catch (const KeygenError& e) { return std::pair{e.reason(), std::string(e.what())}; }
    return std::pair{KeygenRefusal::certificate, std::string("no error")};
  };
  KeygenOptions bad = o;
  bad.algorithm = "ml-dsa-66";
  EXPECT_EQ(refusal(bad), std::pair(KeygenRefusal::unknown_algorithm,
                                    std::string("unknown algorithm 'ml-dsa-66' (ml-dsa-44|ml-dsa-65|ml-dsa-87|rsa-2048|"
                                                "rsa-3072|rsa-4096|ecdsa-p256|ecdsa-p384)")));
  bad = o;
  bad.days = 0;
  EXPECT_EQ(refusal(bad), std::pair(KeygenRefusal::days, std::string("days must be between 1 and 3000000")));
  bad = o;
  bad.cert_out = bad.out;
  EXPECT_EQ(refusal(bad), std::pair(KeygenRefusal::same_file, std::string("out and cert_out name the same file")));
}

TEST_F(ApiSign, OutputBatchStagesAndCommits) {
  const auto rsa = Signer::load(file("rsa.pem"));
  const std::string a = module("a.ko"), b = module("b.ko"), c = module("c.ko");
  OutputBatch batch(SyncPolicy::batch, 0);  // no committers: finish() puts everything in place
  EXPECT_EQ(batch.policy(), SyncPolicy::batch);
  sign_module_file(rsa, a, {}, {&batch, 7});
  sign_module_file(rsa, b, {}, {&batch});  // OutputBatch::kNoItem
  sign_module_file(rsa, c);                // no route: in place when the call returns
  EXPECT_EQ(test::slurp(c).size(), 4096 + kRsaNoAttrs + kTrailer);
  EXPECT_EQ(test::slurp(a), test::pattern(4096));  // staged, not yet renamed
  EXPECT_EQ(test::slurp(b), test::pattern(4096));
  std::vector<std::string> msgs;
  EXPECT_FALSE(batch.settle(7, &msgs));
  EXPECT_TRUE(batch.finish().empty());
  EXPECT_TRUE(batch.settle(7, &msgs));
  EXPECT_TRUE(msgs.empty());
  EXPECT_EQ(test::slurp(a), test::slurp(c));  // PKCS#1 v1.5: the same bytes
  EXPECT_EQ(test::slurp(b), test::slurp(c));
}
