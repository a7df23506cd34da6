// The public IMA file-signature calls (include/modsign/ima_sign.hpp): ima_sign_file,
// write_security_ima / read_security_ima and ima_appraise_file, through the installed
// headers only.  Keys and certificates come from `openssl req`; every value is checked
// byte for byte against what this file rebuilds independently (python3's hashlib for the
// file digest and struct ima_file_id, `openssl x509` for the SKID), signatures are
// confirmed with `openssl pkeyutl -verify -rawin` / `openssl dgst -verify` and Debian's
// `evmctl ima_verify`, and evmctl-made values are appraised by modsign (issue 16 §1).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <modsign/modsign.hpp>

#include "test_support.hpp"

using namespace modsign;
using test::q;

namespace {

KernelProfile profile(const char* name) { return KernelProfile::parse(name).value(); }

/// The hex of the last 4 bytes of the certificate's SKID, read by openssl.
std::string skid_tail(const std::string& cert) {
  const auto r = test::run(test::openssl() + " x509 -noout -ext subjectKeyIdentifier -in " + q(cert) +
                           " | tail -n 1 | tr -d ' :\\n'");
  EXPECT_EQ(r.status, 0) << r.err;
  std::string h = r.out;
  for (auto& c : h) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return h.size() >= 8 ? h.substr(h.size() - 8) : h;
}

/// hash(file) computed by python3 hashlib (independent of modsign), hex.
std::string py_hash(const std::string& algo, const std::string& file) {
  const auto r = test::run(
      "python3 -c 'import hashlib,sys; print(hashlib.new(sys.argv[1], open(sys.argv[2],\"rb\").read()).hexdigest())' " +
      q(algo) + " " + q(file));
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out.substr(0, r.out.find('\n'));
}

/// struct ima_file_id's used bytes for `file` (0x03 ‖ hash_algo ‖ digest), written by python3.
void py_file_id(const std::string& algo, int hash_algo, const std::string& file, const std::string& out) {
  const auto r = test::run(
      "python3 -c 'import hashlib,sys; d=hashlib.new(sys.argv[1], open(sys.argv[2],\"rb\").read()).digest(); "
      "open(sys.argv[4],\"wb\").write(bytes([3,int(sys.argv[3])])+d)' " +
      q(algo) + " " + q(file) + " " + std::to_string(hash_algo) + " " + q(out));
  ASSERT_EQ(r.status, 0) << r.err;
}

class ApiImaSign : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const std::map<std::string, std::string> keys = {{"rsa", "rsa:2048"},
                                                     {"p256", "ec -pkeyopt ec_paramgen_curve:P-256"},
                                                     {"p384", "ec -pkeyopt ec_paramgen_curve:P-384"},
                                                     {"mldsa44", "mldsa44"},
                                                     {"mldsa65", "mldsa65"},
                                                     {"mldsa87", "mldsa87"}};
    for (const auto& [name, spec] : keys) {
      auto r = test::run(test::openssl() + " req -x509 -new -newkey " + spec + " -nodes -keyout " +
                         q(*dir_ / (name + ".pem")) + " -subj '/CN=ima " + name + "/O=modsign' -days 30 -out " +
                         q(*dir_ / (name + ".crt")));
      ASSERT_EQ(r.status, 0) << r.err;
      r = test::run(test::openssl() + " x509 -in " + q(*dir_ / (name + ".crt")) + " -outform DER -out " +
                    q(*dir_ / (name + ".der")));
      ASSERT_EQ(r.status, 0) << r.err;
    }
    test::spit(*dir_ / "file", test::pattern(10000));
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string file(const std::string& n) { return *dir_ / n; }
  static Signer signer(const std::string& n) { return Signer::load(file(n + ".pem"), file(n + ".crt")); }
  static TrustStore keyring(const std::string& n, const char* kernel = "v7.2") {
    return TrustStore::from_certificates({file(n + ".crt")}, profile(kernel));
  }
  static ImaFileAppraisal appraise(const std::string& path, const std::optional<Bytes>& value, const std::string& key,
                                   const char* kernel = "v7.2", const std::string& type = "imasig") {
    ImaAppraiseOptions o;
    o.appraise_type = type;
    return ima_appraise_file(path, value, keyring(key, kernel), profile(kernel), o);
  }
  test::TempDir d_;
  static test::TempDir* dir_;
};
test::TempDir* ApiImaSign::dir_ = nullptr;

TEST_F(ApiImaSign, RsaV2HeaderBytesAndKeyIdFromTheSkid) {
  const ImaSignature s = ima_sign_file(signer("rsa"), file("file"));
  ASSERT_EQ(s.value.size(), 9u + 256u);
  // type 3, version 2, hash_algo 4 (sha256), keyid = SKID tail, sig_size 0x0100.
  EXPECT_EQ(to_hex(ByteView(s.value).first(9)), "030204" + skid_tail(file("rsa.crt")) + "0100");
  EXPECT_EQ(s.header.version, 2);
  EXPECT_EQ(s.hash, "sha256");
  EXPECT_EQ(to_hex(s.file_digest), py_hash("sha256", file("file")));
  EXPECT_EQ(to_hex(s.file_sha256), py_hash("sha256", file("file")));
  EXPECT_EQ(s.file_size, 10000u);
  // PKCS#1 v1.5 over the file digest: openssl pkeyutl -verify with the digest as input.
  test::spit(d_ / "sig", ByteView(s.value).subspan(9));
  test::spit(d_ / "digest", from_hex(py_hash("sha256", file("file"))));
  const auto r = test::run(test::openssl() + " pkeyutl -verify -certin -inkey " + q(file("rsa.crt")) +
                           " -pkeyopt digest:sha256 -in " + q(d_ / "digest") + " -sigfile " + q(d_ / "sig"));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  const auto v = appraise(file("file"), s.value, "rsa");
  EXPECT_EQ(v.status, "pass") << v.reason;
  EXPECT_EQ(v.open_err, KErr::none);
  EXPECT_EQ(v.algorithm.value_or(""), "rsa");
  EXPECT_EQ(v.hash_algo, "sha256");
}

TEST_F(ApiImaSign, MlDsaV3SizesAndOpensslVerifiesOverTheFileId) {
  const std::map<std::string, std::size_t> sizes = {{"mldsa44", 2429}, {"mldsa65", 3318}, {"mldsa87", 4636}};
  for (const auto& [k, total] : sizes) {
    for (const auto& [hash, algo] : std::map<std::string, int>{{"sha256", 4}, {"sha384", 5}, {"sha512", 6}}) {
      ImaSignOptions o;
      o.hash = hash;
      const ImaSignature s = ima_sign_file(signer(k), file("file"), o);
      ASSERT_EQ(s.value.size(), total) << k;
      EXPECT_EQ(s.value[0], 3);
      EXPECT_EQ(s.value[1], 3) << "ML-DSA signs version 3 only";
      EXPECT_EQ(s.value[2], algo);
      EXPECT_EQ(to_hex(ByteView(s.value).subspan(3, 4)), skid_tail(file(k + ".crt")));
      EXPECT_EQ((s.value[7] << 8) | s.value[8], static_cast<int>(total - 9));
      // pure ML-DSA, empty context, over 0x03 ‖ hash_algo ‖ digest built by python3 (34/50/66 bytes).
      py_file_id(hash, algo, file("file"), d_ / "id");
      EXPECT_EQ(test::slurp(d_ / "id").size(), 2 + (algo == 4 ? 32u : algo == 5 ? 48u : 64u));
      test::spit(d_ / "sig", ByteView(s.value).subspan(9));
      const auto r = test::run(test::openssl() + " pkeyutl -verify -rawin -certin -inkey " + q(file(k + ".crt")) +
                               " -in " + q(d_ / "id") + " -sigfile " + q(d_ / "sig"));
      EXPECT_EQ(r.status, 0) << k << " " << hash << ": " << r.out << r.err;
      const auto v = appraise(file("file"), s.value, k, "v7.2", "sigv3");
      EXPECT_EQ(v.status, "pass") << k << " " << v.reason;
      EXPECT_EQ(v.header->version, 3);
    }
  }
}

TEST_F(ApiImaSign, RsaAndEcdsaV3SignTheHashOfTheFileId) {
  for (const std::string k : {"rsa", "p256", "p384"}) {
    ImaSignOptions o;
    o.v3 = true;
    o.hash = "sha384";
    const ImaSignature s = ima_sign_file(signer(k), file("file"), o);
    EXPECT_EQ(s.value[1], 3);
    EXPECT_EQ(s.value[2], 5);
    py_file_id("sha384", 5, file("file"), d_ / "id");
    test::spit(d_ / "sig", ByteView(s.value).subspan(9));
    const auto r = test::run(test::openssl() + " x509 -in " + q(file(k + ".crt")) + " -pubkey -noout > " +
                             q(d_ / "pub") + " && " + test::openssl() + " dgst -sha384 -verify " + q(d_ / "pub") +
                             " -signature " + q(d_ / "sig") + " " + q(d_ / "id"));
    EXPECT_EQ(r.status, 0) << k << ": " << r.out << r.err;
    EXPECT_EQ(appraise(file("file"), s.value, k, "v7.1", "sigv3").status, "pass") << k;
    EXPECT_EQ(appraise(file("file"), s.value, k, "v7.2", "imasig").status, "pass") << k;
    // Before 7.1 a version 3 value is refused as such, and a sigv3 rule is not accepted.
    const auto old = appraise(file("file"), s.value, k, "v7.0");
    EXPECT_EQ(old.cause, "invalid-signature-version") << k;
    EXPECT_EQ(old.open_err, KErr::eacces);
    const auto rule = appraise(file("file"), s.value, k, "v6", "sigv3");
    EXPECT_EQ(rule.status, "policy-refused");
    EXPECT_EQ(rule.policy_err, KErr::einval);
  }
}

TEST_F(ApiImaSign, MlDsaBefore72IsEnopkgAndV2IsNotMade) {
  const ImaSignature s = ima_sign_file(signer("mldsa65"), file("file"));
  EXPECT_EQ(s.value[1], 3);
  const auto v = appraise(file("file"), s.value, "mldsa65", "v7.1", "sigv3");
  EXPECT_EQ(v.cause, "invalid-signature");
  EXPECT_EQ(v.digsig_err, KErr::enopkg);
  EXPECT_EQ(v.algorithm.value_or(""), "ml-dsa-65");
  // A version 2 header over an ML-DSA key: asymmetric_verify_common has no encoding for it.
  Bytes v2 = s.value;
  v2[1] = 2;
  EXPECT_EQ(appraise(file("file"), v2, "mldsa65").digsig_err, KErr::enopkg);
}

TEST_F(ApiImaSign, WrongKeyTamperedFileAndMalformedValuesGetTheKernelsCauses) {
  const ImaSignature s = ima_sign_file(signer("p256"), file("file"));
  // Another key in the keyring: its id does not match.
  auto v = appraise(file("file"), s.value, "p384");
  EXPECT_EQ(v.cause, "invalid-signature");
  EXPECT_EQ(v.digsig_err, KErr::enokey);
  EXPECT_EQ(v.open_err, KErr::eacces);
  // The header names the other key's id: found, but the signature does not verify.
  ImaSignOptions o;
  o.keyid = static_cast<std::uint32_t>(std::stoul(skid_tail(file("p384.crt")), nullptr, 16));
  const ImaSignature forged = ima_sign_file(signer("p256"), file("file"), o);
  v = appraise(file("file"), forged.value, "p384");
  EXPECT_EQ(v.digsig_err, KErr::ekeyrejected) << v.reason;
  // Tampered content.
  Bytes content = test::pattern(10000);
  content[5000] ^= 1;
  test::spit(d_ / "tampered", content);
  EXPECT_EQ(appraise(d_ / "tampered", s.value, "p256").digsig_err, KErr::ekeyrejected);
  // Truncated by one byte: sig_size no longer matches.
  Bytes cut(s.value.begin(), s.value.end() - 1);
  v = appraise(file("file"), cut, "p256");
  EXPECT_EQ(v.cause, "invalid-signature");
  EXPECT_EQ(v.digsig_err, KErr::ebadmsg);
  // Header only.
  EXPECT_EQ(appraise(file("file"), Bytes(s.value.begin(), s.value.begin() + 9), "p256").digsig_err, KErr::ebadmsg);
  // Version 4, version 0, unknown type, a digest, nothing.
  Bytes x = s.value;
  x[1] = 4;
  EXPECT_EQ(appraise(file("file"), x, "p256").cause, "invalid-signature-version");
  x[1] = 0;
  v = appraise(file("file"), x, "p256");
  EXPECT_EQ(v.cause, "unknown");
  EXPECT_EQ(v.digsig_err, KErr::eopnotsupp);
  EXPECT_EQ(v.open_err, KErr::eacces);
  EXPECT_EQ(appraise(file("file"), Bytes{0x07, 0x02}, "p256").cause, "unknown-ima-data");
  Bytes ng{0x04, 0x04};
  const Bytes d = from_hex(py_hash("sha256", file("file")));
  ng.insert(ng.end(), d.begin(), d.end());
  EXPECT_EQ(appraise(file("file"), ng, "p256").cause, "IMA-signature-required");
  EXPECT_EQ(appraise(file("file"), std::nullopt, "p256").cause, "IMA-signature-required");
  // A version 2 value under a sigv3 rule.
  EXPECT_EQ(appraise(file("file"), s.value, "p256", "v7.2", "sigv3").cause, "IMA-sigv3-required");
}

TEST_F(ApiImaSign, BlacklistedFileHashIsRefusedFirst) {
  const ImaSignature s = ima_sign_file(signer("rsa"), file("file"));
  test::spit(d_ / "bl", "\"bin:" + py_hash("sha256", file("file")) + "\"\n");
  TrustSources src;
  src.keyrings = {file("rsa.crt")};
  src.blacklists = {d_ / "bl"};
  const auto v = ima_appraise_file(file("file"), s.value, TrustStore::load(src, profile("v7.2")), profile("v7.2"));
  EXPECT_EQ(v.cause, "blacklisted");
  EXPECT_EQ(v.digsig_err, KErr::eperm);
  EXPECT_EQ(v.blacklist_entry.value_or(""), "bin:" + py_hash("sha256", file("file")));
}

TEST_F(ApiImaSign, XattrRoundTripAndEvmctlVerifiesModsignV2) {
  for (const std::string k : {"rsa", "p256", "p384"}) {
    const std::string f = d_ / ("f-" + k);
    test::spit(f, test::pattern(4096));
    const ImaSignature s = ima_sign_file(signer(k), f);
    write_security_ima(f, s.value);
    EXPECT_EQ(read_security_ima(f).value(), s.value);
    // evmctl reads security.ima itself and checks it against the DER certificate.
    const auto r = test::run("evmctl ima_verify --key " + q(file(k + ".der")) + " " + q(f));
    EXPECT_EQ(r.status, 0) << k << ": " << r.out << r.err;
    // The tampered file is refused by evmctl too.
    Bytes t = test::pattern(4096);
    t[0] ^= 0xff;
    test::spit(d_ / "t", t);
    write_security_ima(d_ / "t", s.value);
    EXPECT_NE(test::run("evmctl ima_verify --key " + q(file(k + ".der")) + " " + q(d_ / "t")).status, 0) << k;
  }
  EXPECT_THROW(read_security_ima(d_ / "no-such-file"), IoError);
  test::spit(d_ / "bare", "x");
  EXPECT_FALSE(read_security_ima(d_ / "bare").has_value());
}

TEST_F(ApiImaSign, EvmctlMadeV2PassesInModsign) {
  for (const std::string k : {"rsa", "p256", "p384"}) {
    for (const std::string hash : {"sha256", "sha512"}) {
      const std::string f = d_ / ("e-" + k + hash);
      test::spit(f, test::pattern(777));
      const auto r = test::run("evmctl ima_sign -a " + hash + " --key " + q(file(k + ".pem")) + " --sigfile " + q(f));
      ASSERT_EQ(r.status, 0) << r.out << r.err;
      const Bytes value = test::slurp(f + ".sig");
      const auto v = appraise(f, value, k);
      EXPECT_EQ(v.status, "pass") << k << " " << hash << ": " << v.reason;
      EXPECT_EQ(v.hash_algo, hash);
      // The same key id as modsign derives.
      EXPECT_EQ(to_hex(ByteView(value).subspan(3, 4)), skid_tail(file(k + ".crt")));
    }
  }
}

TEST_F(ApiImaSign, SetxattrRefusalNamesTheFileAndReason) {
  try {
    write_security_ima("/proc/version", Bytes{3, 2});
    ADD_FAILURE() << "setxattr on /proc succeeded";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              "/proc/version: setxattr security.ima: the file system does not support security.* extended attributes "
              "(EOPNOTSUPP)");
  }
}

TEST_F(ApiImaSign, UnknownHashIsAUsageError) {
  ImaSignOptions o;
  o.hash = "md5";
  EXPECT_THROW(ima_sign_file(signer("rsa"), file("file"), o), UsageError);
}

}  // namespace
