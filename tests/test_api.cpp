// The public facade (include/modsign/): Signer, sign_module_file, TrustStore,
// predict_module_file, KernelProfile — through the installed headers only.
#include <gtest/gtest.h>

#include <modsign/modsign.hpp>

#include "test_support.hpp"

using namespace modsign;
using test::q;

namespace {

// One ML-DSA-65 key made by openssl itself (not modsign), with a self-signed certificate
// (fixed 8-byte serial, so the SignedData has a fixed size) in a file of its own and
// together with the key; and an unrelated ECDSA certificate.
class Api : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const std::string o = test::openssl();
    auto r = test::run(
        o + " genpkey -algorithm ML-DSA-65 -out " + q(*dir_ / "k.pem") + " && " + o + " req -x509 -new -key " +
        q(*dir_ / "k.pem") + " -subj '/CN=api test/O=modsign' -days 30 -set_serial 0x0123456789abcdef -out " +
        q(*dir_ / "k.crt") + " && cat " + q(*dir_ / "k.pem") + " " + q(*dir_ / "k.crt") + " > " +
        q(*dir_ / "both.pem") + " && " + o + " req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes" +
        " -keyout " + q(*dir_ / "ec.key") + " -subj /CN=other -days 30 -out " + q(*dir_ / "ec.crt"));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string file(const std::string& n) { return *dir_ / n; }
  std::string module(const std::string& name = "m.ko") {
    const std::string p = d_ / name;
    test::spit(p, test::pattern(4096));
    return p;
  }
  static KernelProfile profile(const char* name) { return KernelProfile::parse(name).value(); }
  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

// 4096 bytes ‖ SignedData ‖ struct module_signature ‖ marker.
constexpr std::size_t kTrailer = 12 + 28;
// ML-DSA-65 without signedAttrs, issuerAndSerialNumber with this certificate's issuer.
constexpr std::size_t kCmsSize = 3455;

}  // namespace

TEST_F(Api, KernelProfileNamesAndSwitches) {
  EXPECT_EQ(KernelProfile().name(), "v7.0");
  EXPECT_EQ(profile("6.1").name(), "v6.1");
  EXPECT_EQ(profile("6").name(), "v6");
  EXPECT_EQ(profile("v7").name(), "v7.0");
  EXPECT_FALSE(KernelProfile::parse("v5").has_value());
  EXPECT_FALSE(KernelProfile::parse("").has_value());
  auto p = profile("v7.0");
  EXPECT_FALSE(p.enforce() || p.lockdown() || p.waive_mldsa_authattrs());
  p.set_enforce(true);
  p.set_lockdown(true);
  p.set_waive_mldsa_authattrs(true);
  EXPECT_TRUE(p.enforce() && p.lockdown() && p.waive_mldsa_authattrs());
}

TEST_F(Api, SignsAndPredictsMlDsa65) {
  const auto signer = Signer::load(file("k.pem"), file("k.crt"));
  EXPECT_EQ(signer.algorithm(), "ML-DSA-65");
  EXPECT_EQ(signer.certificate_path(), file("k.crt"));
  const std::string m = module();
  const SignReport r = sign_module_file(signer, m);
  EXPECT_EQ(r.path, m);
  EXPECT_EQ(r.algorithm, "ML-DSA-65");
  EXPECT_EQ(r.hash, "sha512");
  EXPECT_FALSE(r.signed_attrs);
  EXPECT_EQ(r.cms_size, kCmsSize);
  const Bytes signed_file = test::slurp(m);
  ASSERT_EQ(signed_file.size(), 4096 + kCmsSize + kTrailer);
  EXPECT_EQ(Bytes(signed_file.begin(), signed_file.begin() + 4096), test::pattern(4096));
  // struct module_signature: algo 0, hash 0, id_type 2 (PKEY_ID_PKCS7), 3 x 0, sig_len BE.
  const Bytes ms(signed_file.end() - kTrailer, signed_file.end() - 28);
  EXPECT_EQ(to_hex(ms), "000002000000000000000d7f");
  EXPECT_EQ(std::string(signed_file.end() - 28, signed_file.end()), "~Module signature appended~\n");

  const auto trust = TrustStore::from_certificates({file("k.crt")}, profile("v7.0"));
  EXPECT_EQ(trust.size(), 1u);
  EXPECT_TRUE(trust.notes().empty());
  const Verdict v = predict_module_file(m, trust, profile("v7.0"));
  EXPECT_EQ(v.outcome, "loads");
  EXPECT_EQ(v.err, KErr::none);

  // Before 7.0 the kernel knows no ML-DSA: ENOPKG, a soft failure (tainted), refused with
  // EKEYREJECTED under enforcement and EPERM under lockdown (kernel/module/signing.c).
  auto v6 = profile("v6");
  const auto trust6 = TrustStore::from_certificates({file("k.crt")}, v6);
  ASSERT_EQ(trust6.notes().size(), 1u);
  EXPECT_EQ(trust6.notes()[0].rfind(file("k.crt") + " certificate 1: ENOPKG: ", 0), 0u) << trust6.notes()[0];
  Verdict w = predict_module_file(m, trust6, v6);
  EXPECT_EQ(w.outcome, "loads-tainted");
  EXPECT_EQ(w.err, KErr::enopkg);
  v6.set_enforce(true);
  w = predict_module_file(m, trust6, v6);
  EXPECT_EQ(w.outcome, "refused");
  EXPECT_EQ(w.err, KErr::ekeyrejected);
  v6.set_enforce(false);
  v6.set_lockdown(true);
  w = predict_module_file(m, trust6, v6);
  EXPECT_EQ(w.outcome, "refused");
  EXPECT_EQ(w.err, KErr::eperm);

  // A signer no trusted certificate vouches for: ENOKEY, tainted.
  const auto other = TrustStore::from_certificates({file("ec.crt")}, profile("v7.0"));
  w = predict_module_file(m, other, profile("v7.0"));
  EXPECT_EQ(w.outcome, "loads-tainted");
  EXPECT_EQ(w.err, KErr::enokey);
}

// The kernels whose module check takes the form a signer makes, judged by the mirrors:
// signedAttrs only under the ML-DSA waiver, ML-DSA only from 7.0 (a trial signed RSA with
// signedAttrs, which no kernel loads, and nothing said so).
TEST_F(Api, KernelsAcceptingTheFormASignerMakes) {
  const auto mldsa = Signer::load(file("both.pem"));
  const auto ec = Signer::load(file("ec.key"), file("ec.crt"));
  SignOptions plain, attrs;
  attrs.signed_attrs = true;
  using Names = std::vector<std::string>;
  EXPECT_EQ(kernels_accepting_form(mldsa, plain), (Names{"v7.0", "v7.0+waiver"}));
  EXPECT_EQ(kernels_accepting_form(mldsa, attrs), (Names{"v7.0+waiver"}));
  EXPECT_EQ(kernels_accepting_form(ec, plain), (Names{"v6.1", "v6", "v7.0", "v7.0+waiver"}));
  EXPECT_EQ(kernels_accepting_form(ec, attrs), Names{});
  attrs.hash = "sha256";  // ML-DSA with signedAttrs and another digest: refused before signing
  try {
    (void)kernels_accepting_form(mldsa, attrs);
    ADD_FAILURE() << "no SignError";
  } catch (const SignError& e) { EXPECT_EQ(e.reason(), SignRefusal::mldsa_signed_attrs_hash); }
}

TEST_F(Api, SignedAttrsSkidReplaceAndOut) {
  const auto signer = Signer::load(file("both.pem"));
  EXPECT_EQ(signer.certificate_path(), file("both.pem"));
  const std::string m = module();
  const std::string out = d_ / "out.ko";
  SignOptions o;
  o.signed_attrs = true;
  o.skid = true;
  o.out = out;
  const SignReport r = sign_module_file(signer, m, o);
  EXPECT_EQ(r.path, out);
  EXPECT_TRUE(r.signed_attrs);
  EXPECT_EQ(test::slurp(m), test::pattern(4096));  // input untouched
  EXPECT_EQ(test::slurp(out).size(), 4096 + r.cms_size + kTrailer);
  const auto trust = TrustStore::from_certificates({file("both.pem")}, profile("v7.0"));
  // ML-DSA with signedAttrs: refused by 7.0 (EKEYREJECTED) unless the waiver is built in.
  Verdict v = predict_module_file(out, trust, profile("v7.0"));
  EXPECT_EQ(v.outcome, "refused");
  EXPECT_EQ(v.err, KErr::ekeyrejected);
  auto waived = profile("v7.0");
  waived.set_waive_mldsa_authattrs(true);
  v = predict_module_file(out, trust, waived);
  EXPECT_EQ(v.outcome, "loads");
  EXPECT_EQ(v.err, KErr::none);

  // Signing a signed module again needs replace; the result is the same as signing once.
  try {
    sign_module_file(signer, out);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) { EXPECT_EQ(std::string(e.what()), out + ": module is already signed"); }
  SignOptions again;
  again.replace = true;
  const SignReport r2 = sign_module_file(signer, out, again);
  EXPECT_EQ(r2.cms_size, kCmsSize);
  EXPECT_EQ(test::slurp(out).size(), 4096 + kCmsSize + kTrailer);
  EXPECT_EQ(predict_module_file(out, trust, profile("v7.0")).outcome, "loads");
}

TEST_F(Api, Errors) {
  const std::string missing = d_ / "missing.pem";
  EXPECT_THROW(Signer::load(missing), IoError);
  try {
    Signer::load(file("k.pem"), file("ec.crt"));
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), file("ec.crt") + ": no certificate matches the private key " + file("k.pem") +
                                         " (the key is ML-DSA-65, the certificate ECDSA-P256)");
  }
  try {
    Signer::load(file("k.pem"));  // a key file without a certificate
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) { EXPECT_EQ(std::string(e.what()).rfind(file("k.pem") + ": ", 0), 0u) << e.what(); }
  const auto signer = Signer::load(file("both.pem"));
  const std::string m = module();
  SignOptions o;
  o.hash = "md4";
  try {
    sign_module_file(signer, m, o);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) { EXPECT_EQ(std::string(e.what()), m + ": unknown hash 'md4'"); }
  o.hash = "sha256";
  o.signed_attrs = true;
  EXPECT_THROW(sign_module_file(signer, m, o), InputError);
  EXPECT_EQ(test::slurp(m), test::pattern(4096));
  // A compressed module is refused by both calls (magic FD 37 7A 58 5A 00: xz).
  const std::string xz = d_ / "m.ko.xz";
  test::spit(xz, Bytes{0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04});
  EXPECT_THROW(sign_module_file(signer, xz), InputError);
  const auto trust = TrustStore::from_certificates({file("both.pem")}, profile("v7.0"));
  EXPECT_THROW(predict_module_file(xz, trust, profile("v7.0")), InputError);
  // An unsigned module: no marker, ENODATA (tainted; refused under enforce).
  Verdict v = predict_module_file(m, trust, profile("v7.0"));
  EXPECT_EQ(v.outcome, "loads-tainted");
  EXPECT_EQ(v.err, KErr::enodata);
  EXPECT_THROW(predict_module_file(d_ / "none.ko", trust, profile("v7.0")), IoError);
  EXPECT_THROW(TrustStore::from_certificates({file("k.pem")}, profile("v7.0")), InputError);
}
