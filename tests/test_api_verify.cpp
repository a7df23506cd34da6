// The verify facade (include/modsign/{trust,module,verdict}.hpp): TrustStore::load,
// open_module_file, describe_signature, predict_module_file — through the installed
// headers only, against files made by openssl, and against the CLI's own output.
#include <gtest/gtest.h>

#include <modsign/modsign.hpp>

#include <sstream>

#include "test_support.hpp"

using namespace modsign;
using test::q;

namespace {

// Keys and certificates made by openssl (not modsign): ML-DSA-65 "mldsa", RSA-2048
// "rsa", ECDSA P-256 "ec", each self-signed with a fixed serial.
class ApiVerify : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir();
    const std::string o = test::openssl();
    auto req = [&](const std::string& name, const std::string& newkey, const std::string& serial) {
      return o + " req -x509 -new " + newkey + " -nodes -keyout " + q(*dir_ / (name + ".key")) + " -subj '/CN=" + name +
             " signer/O=modsign test' -days 30 -set_serial " + serial + " -out " + q(*dir_ / (name + ".crt"));
    };
    auto r = test::run(req("mldsa", "-newkey ML-DSA-65", "0x0102030405060708") + " && " +
                       req("rsa", "-newkey rsa:2048 -sha256", "0x1112131415161718") + " && " +
                       req("ec", "-newkey ec -pkeyopt ec_paramgen_curve:P-256", "0x2122232425262728"));
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char* n : {"mldsa", "rsa", "ec"})
      r = test::run(o + " x509 -in " + q(*dir_ / (std::string(n) + ".crt")) + " -outform DER -out " +
                    q(*dir_ / (std::string(n) + ".der")));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string file(const std::string& n) { return *dir_ / n; }
  static KernelProfile profile(const char* name) { return KernelProfile::parse(name).value(); }
  /// The "modsign: note: " lines of `modsign verify ARGS` on an unsigned module.
  std::vector<std::string> cli_notes(const std::string& args) {
    const std::string m = d_ / "cli.ko";
    test::spit(m, test::pattern(512));
    const auto r = test::run(test::modsign_cli() + " verify " + args + " " + q(m));
    std::vector<std::string> out;
    std::istringstream in(r.err);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("modsign: note: ", 0) == 0) out.push_back(line.substr(15));
    return out;
  }
  /// "tbs:<hex>" that 7.0 looks up for `crt`: SHA-256 of its TBSCertificate, cut out by
  /// openssl asn1parse (offset 4 of the Certificate SEQUENCE).
  static std::string tbs_entry(const std::string& crt) {
    const std::string o = test::openssl();
    const auto r = test::run(o + " x509 -in " + q(crt) + " -outform DER -out " + q(crt + ".der") + " && " + o +
                             " asn1parse -inform DER -in " + q(crt + ".der") + " | sed -n 2p");
    EXPECT_EQ(r.status, 0) << r.err;
    // "    4:d=1  hl=4 l= 718 cons: SEQUENCE": header length and content length.
    const auto hl = std::stoul(r.out.substr(r.out.find("hl=") + 3));
    const auto l = std::stoul(r.out.substr(r.out.find("l=", r.out.find("hl=") + 3) + 2));
    const Bytes der = test::slurp(crt + ".der");
    test::spit(crt + ".tbsfull", ByteView(der.data() + 4, hl + l));
    const auto h = test::run(o + " dgst -sha256 -r " + q(crt + ".tbsfull"));
    EXPECT_EQ(h.status, 0) << h.err;
    return "tbs:" + h.out.substr(0, 64);
  }
  static inline test::TempDir* dir_ = nullptr;
  test::TempDir d_;
};

constexpr const char* kMlDsaSigOid = "2.16.840.1.101.3.4.3.18";  // id-ml-dsa-65

/// An EFI_SIGNATURE_LIST of one EFI_CERT_X509 entry holding `der` (UEFI 2.10 §32.4.1).
Bytes esl_x509(const Bytes& der) {
  Bytes b = {0xa1, 0x59, 0xc0, 0xa5, 0xe4, 0x94, 0xa7, 0x4a, 0x87, 0xb5, 0xab, 0x15, 0x5c, 0x2b, 0xf0, 0x72};
  auto u32 = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  const auto sig_size = static_cast<std::uint32_t>(16 + der.size());
  u32(28 + sig_size);                              // SignatureListSize
  u32(0);                                          // SignatureHeaderSize
  u32(sig_size);                                   // SignatureSize
  for (int i = 0; i < 16; ++i) b.push_back(0x11);  // SignatureOwner
  b.insert(b.end(), der.begin(), der.end());
  return b;
}

}  // namespace

TEST_F(ApiVerify, KeyringNotesAreTheCliNotes) {
  TrustSources s;
  s.keyrings = {file("mldsa.crt"), file("ec.crt")};
  const auto t6 = TrustStore::load(s, profile("v6"));
  EXPECT_EQ(t6.size(), 2u);
  const std::vector<std::string> want{file("mldsa.crt") +
                                      " certificate 1 is not loaded by a v6 kernel (ENOPKG: unsupported certificate "
                                      "signature algorithm " +
                                      kMlDsaSigOid + ")"};
  EXPECT_EQ(t6.notes(), want);
  EXPECT_EQ(t6.keyring_notes(), want);
  EXPECT_TRUE(t6.blacklist_notes().empty());
  EXPECT_EQ(t6.notes(), cli_notes("--kernel v6 --keyring " + q(file("mldsa.crt")) + " --keyring " + q(file("ec.crt"))));
  EXPECT_EQ(t6.certificates().size(), 2u);
  ASSERT_EQ(t6.supported_certificates().size(), 1u);
  EXPECT_EQ(t6.supported_certificates()[0], test::slurp(file("ec.der")));
  EXPECT_EQ(t6.profile().name(), "v6");
  const auto t7 = TrustStore::load(s, profile("v7.0"));
  EXPECT_TRUE(t7.notes().empty());
  EXPECT_EQ(t7.supported_certificates().size(), 2u);
}

TEST_F(ApiVerify, RevokedCertificatesInTheKernelsOrder) {
  // rsa.crt's tbs: key is in the hash list, which blacklist_init() loads before the
  // revocation certificates: the kernel refuses rsa.crt as a revocation key.  mldsa.crt
  // cannot be parsed by v6; ec.crt is loaded, from --revoked and again from the dbx.
  const std::string tbs = tbs_entry(file("rsa.crt"));
  const std::string list = d_ / "list.hash";
  test::spit(list, "\"" + tbs + "\"\n");
  const std::string revoked = d_ / "revoked.pem";
  ASSERT_EQ(
      test::run("cat " + q(file("rsa.crt")) + " " + q(file("mldsa.crt")) + " " + q(file("ec.crt")) + " > " + q(revoked))
          .status,
      0);
  const std::string dbx = d_ / "dbx.esl";
  test::spit(dbx, esl_x509(test::slurp(file("mldsa.der"))));
  TrustSources s;
  s.keyrings = {file("ec.crt")};
  s.blacklists = {list};
  s.revoked = {revoked};
  s.dbx = {dbx};
  const auto t = TrustStore::load(s, profile("v6"));
  const std::vector<std::string> want{
      revoked + " certificate 1 is not loaded: its " + tbs + " is listed (x509_key_preparse: EKEYREJECTED)",
      revoked + " certificate 2 is not loaded by a v6 kernel (ENOPKG: unsupported certificate signature algorithm " +
          kMlDsaSigOid + ")",
      dbx +
          " list 1 entry 1 (EFI_CERT_X509) is not loaded by a v6 kernel (ENOPKG: unsupported certificate signature "
          "algorithm " +
          kMlDsaSigOid + ")"};
  EXPECT_EQ(t.notes(), want);
  EXPECT_EQ(t.blacklist_notes(), want);
  EXPECT_TRUE(t.keyring_notes().empty());
  EXPECT_EQ(t.notes(), cli_notes("--kernel v6 --keyring " + q(file("ec.crt")) + " --blacklist " + q(list) +
                                 " --revoked " + q(revoked) + " --dbx " + q(dbx)));
  EXPECT_EQ(t.blacklist_descriptions(), std::vector<std::string>{tbs});
  ASSERT_EQ(t.origins(tbs).size(), 1u);
  EXPECT_EQ(t.origins(tbs)[0].file, list);
  EXPECT_EQ(t.origins(tbs)[0].where, "line 1");
  EXPECT_TRUE(t.origins("bin:00").empty());
  const auto rv = t.revoked_certificates();
  ASSERT_EQ(rv.size(), 1u);
  EXPECT_EQ(rv[0].der, test::slurp(file("ec.der")));
  EXPECT_EQ(rv[0].origin.file, revoked);
  EXPECT_EQ(rv[0].origin.where, "certificate 3");
}

TEST_F(ApiVerify, TrustStoreLoadErrors) {
  auto message = [&](const TrustSources& s) -> std::string {
    try {
      (void)TrustStore::load(s, profile("v7.0"));
    } catch (const InputError& e) { return e.what(); }
    return "no InputError";
  };
  // What the CLI prints for the same input: "modsign: " + the message.
  auto cli = [&](const std::string& args) {
    const auto r = test::run(test::modsign_cli() + " verify " + args + " " + q(file("ec.crt")));
    EXPECT_EQ(r.status, 3) << args;
    return r.err;
  };
  // A file without a certificate, as keyring and as revoked file.
  const std::string key = file("ec.key");
  const std::string none = key + ": no X.509 certificate found (neither DER nor PEM CERTIFICATE)";
  EXPECT_EQ(message({.keyrings = {key}}), none);
  EXPECT_EQ(cli("--keyring " + q(key)), "modsign: " + none + "\n");
  EXPECT_EQ(message({.revoked = {key}}), none);
  EXPECT_EQ(cli("--revoked " + q(key)), "modsign: " + none + "\n");
  const std::string bad_list = d_ / "bad.hash";
  test::spit(bad_list, "\"bin:ABCD\"\n");
  const std::string list_msg = bad_list +
                               ":1:6: upper-case hex digit 'A' (awk: Not a lowercase hexadecimal string (item 1)) (run "
                               "modsign blacklist lint)";
  EXPECT_EQ(message({.blacklists = {bad_list}}), list_msg);
  EXPECT_EQ(cli("--blacklist " + q(bad_list)), "modsign: " + list_msg + "\n");
  const std::string bad_dbx = d_ / "bad.esl";
  test::spit(bad_dbx, Bytes(20, 0));
  const std::string dbx_msg =
      bad_dbx + ": EBADMSG: EFI_SIGNATURE_LIST at byte offset 0: 20 bytes left, fewer than the 28-byte header";
  EXPECT_EQ(message({.dbx = {bad_dbx}}), dbx_msg);
  EXPECT_EQ(cli("--dbx " + q(bad_dbx)), "modsign: " + dbx_msg + "\n");
  EXPECT_THROW((void)TrustStore::load({.keyrings = {d_ / "missing.pem"}}, profile("v7.0")), IoError);
  EXPECT_THROW((void)TrustStore::load({.blacklists = {d_ / "missing.hash"}}, profile("v7.0")), IoError);
  // The keyring notes gathered before a failure are handed back.
  std::vector<std::string> pending{"stale"};
  EXPECT_THROW((void)TrustStore::load({.keyrings = {file("mldsa.crt"), key}}, profile("v6"), &pending), InputError);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].rfind(file("mldsa.crt") + " certificate 1 is not loaded by a v6 kernel (ENOPKG: ", 0), 0u);
  (void)TrustStore::load({.keyrings = {file("mldsa.crt")}}, profile("v6"), &pending);
  EXPECT_TRUE(pending.empty());
}

namespace {

/// `content` with a kernel module signature made by `openssl cms` (as scripts/sign-file
/// does: detached, binary, no certificates; -noattr unless `attrs`): SignedData ‖
/// struct module_signature {0, 0, PKEY_ID_PKCS7, 0, 0, {0}, be32 sig_len} ‖ marker.
std::string openssl_signed(const test::TempDir& d, const std::string& name, const std::string& key,
                           const std::string& crt, const std::string& md, bool attrs = false) {
  const std::string content = d / (name + ".content");
  test::spit(content, test::pattern(3000));
  const std::string sig = d / (name + ".p7s");
  const auto r = test::run(test::openssl() + " cms -sign -binary -nocerts -outform DER -md " + md +
                           (attrs ? " -nosmimecap" : " -noattr") + " -in " + q(content) + " -signer " + q(crt) +
                           " -inkey " + q(key) + " -out " + q(sig));
  EXPECT_EQ(r.status, 0) << r.err;
  Bytes m = test::slurp(content);
  const Bytes s = test::slurp(sig);
  m.insert(m.end(), s.begin(), s.end());
  const std::uint32_t n = static_cast<std::uint32_t>(s.size());
  const Bytes ms{0,
                 0,
                 2,
                 0,
                 0,
                 0,
                 0,
                 0,
                 static_cast<std::uint8_t>(n >> 24),
                 static_cast<std::uint8_t>(n >> 16),
                 static_cast<std::uint8_t>(n >> 8),
                 static_cast<std::uint8_t>(n)};
  m.insert(m.end(), ms.begin(), ms.end());
  const std::string marker = "~Module signature appended~\n";
  m.insert(m.end(), marker.begin(), marker.end());
  const std::string out = d / (name + ".ko");
  test::spit(out, m);
  return out;
}

}  // namespace

TEST_F(ApiVerify, PredictsEachAlgorithmOnEachKernel) {
  const std::string rsa = openssl_signed(d_, "rsa", file("rsa.key"), file("rsa.crt"), "sha256");
  const std::string ec = openssl_signed(d_, "ec", file("ec.key"), file("ec.crt"), "sha256");
  // openssl cms signs ML-DSA only with signedAttrs (RFC 9882 allows both).
  const std::string ml = openssl_signed(d_, "ml", file("mldsa.key"), file("mldsa.crt"), "sha512", true);
  TrustSources s{.keyrings = {file("rsa.crt"), file("ec.crt"), file("mldsa.crt")}};
  struct Want {
    std::string module, kernel, outcome;
    KErr err;
  };
  for (const auto& w : std::vector<Want>{{rsa, "v7.0", "loads", KErr::none},
                                         {ec, "v7.0", "loads", KErr::none},
                                         {ml, "v7.0+waiver", "loads", KErr::none},
                                         {ml, "v7.0", "refused", KErr::ekeyrejected},
                                         {rsa, "v6", "loads", KErr::none},
                                         {ec, "v6.1", "loads", KErr::none},
                                         {ml, "v6", "loads-tainted", KErr::enopkg},
                                         {ml, "v6.1", "loads-tainted", KErr::enopkg}}) {
    auto p = profile(w.kernel.substr(0, w.kernel.find('+')).c_str());
    p.set_waive_mldsa_authattrs(w.kernel.find('+') != std::string::npos);
    const auto trust = TrustStore::load(s, p);
    const Verdict v = predict_module_file(w.module, trust, p, PredictOptions{});
    EXPECT_EQ(v.outcome, w.outcome) << w.module << " " << w.kernel << ": " << v.reason;
    EXPECT_EQ(v.err, w.err) << w.module << " " << w.kernel;
    EXPECT_FALSE(v.compression.has_value());
    // v6 cannot parse an ML-DSA SignerInfo (pkcs7_parse_message: ENOPKG): no summary.
    ASSERT_EQ(v.signers.size(), w.err == KErr::enopkg ? 0u : 1u) << w.module << " " << w.kernel;
    if (w.outcome == "loads") {
      EXPECT_EQ(v.load_errno, KErr::none);
      EXPECT_EQ(v.sig_errno, KErr::none);
      ASSERT_EQ(v.trusted_by.size(), 1u);
      EXPECT_EQ(v.reason.rfind("signature verified: ", 0), 0u) << v.reason;
    } else if (w.outcome == "refused") {  // 7.0 without the waiver: signedAttrs on ML-DSA
      EXPECT_EQ(v.sig_errno, KErr::ekeyrejected);
      EXPECT_EQ(v.load_errno, KErr::ekeyrejected);
      EXPECT_TRUE(v.signers[0].signed_attrs);
    } else {
      EXPECT_EQ(v.sig_errno, KErr::enopkg);
      EXPECT_EQ(v.reason.rfind("module with unsupported crypto: ", 0), 0u) << v.reason;
    }
  }
  EXPECT_EQ(predict_module_file(rsa, TrustStore::load(s, profile("v7.0")), profile("v7.0"), {}).trusted_by,
            std::vector<std::string>{"rsa signer"});
  // enforce and lockdown turn the soft ENOPKG into a refusal.
  auto enforced = profile("v6");
  enforced.set_enforce(true);
  Verdict v = predict_module_file(ml, TrustStore::load(s, enforced), enforced, {});
  EXPECT_EQ(v.outcome, LoadOutcome::refused);
  EXPECT_EQ(v.err, KErr::ekeyrejected);
  EXPECT_EQ(v.load_errno, KErr::ekeyrejected);
  EXPECT_EQ(v.sig_errno, KErr::enopkg);
  EXPECT_EQ(v.reason.rfind("Loading of module with unsupported crypto is rejected (", 0), 0u) << v.reason;
  auto locked = profile("v6");
  locked.set_lockdown(true);
  v = predict_module_file(ml, TrustStore::load(s, locked), locked, {});
  EXPECT_EQ(v.outcome, "refused");
  EXPECT_EQ(v.err, KErr::eperm);
  EXPECT_EQ(v.reason.rfind("Lockdown: unsigned module loading is restricted: module with unsupported crypto (", 0), 0u);
  // An untrusted signer: ENOKEY, tainted.
  v = predict_module_file(rsa, TrustStore::load({.keyrings = {file("ec.crt")}}, profile("v7.0")), profile("v7.0"), {});
  EXPECT_EQ(v.outcome, "loads-tainted");
  EXPECT_EQ(v.err, KErr::enokey);
}

// An empty module file: finit_module's kernel_read_file() refuses it with EINVAL before
// anything else, enforcement or not (issue 25 §3; fs/kernel_read_file.c i_size <= 0).
TEST_F(ApiVerify, AnEmptyModuleFileIsEinvalBeforeTheSignatureCheck) {
  test::spit(d_ / "empty.ko", Bytes{});
  const TrustSources s{.keyrings = {file("rsa.crt")}};
  for (const bool enforce : {false, true}) {
    auto p = profile("v7.0");
    p.set_enforce(enforce);
    const Verdict v = predict_module_file(d_ / "empty.ko", TrustStore::load(s, p), p, {});
    EXPECT_EQ(v.outcome, LoadOutcome::refused) << enforce;
    EXPECT_EQ(v.err, KErr::einval);
    EXPECT_EQ(v.load_errno, KErr::einval);
    EXPECT_EQ(v.sig_errno, KErr::einval);
    EXPECT_EQ(v.reason,
              "the module file is empty (kernel_read_file: EINVAL before IMA's appraisal and the signature check)");
  }
  // One byte is no empty file: the signature check runs (no marker: ENODATA, tainted).
  test::spit(d_ / "one.ko", Bytes{0});
  const Verdict one = predict_module_file(d_ / "one.ko", TrustStore::load(s, profile("v7.0")), profile("v7.0"), {});
  EXPECT_EQ(one.outcome, LoadOutcome::loads_tainted);
  EXPECT_EQ(one.err, KErr::enodata);
}

TEST_F(ApiVerify, RevokedSignerAndCorruptXz) {
  const std::string rsa = openssl_signed(d_, "rsa", file("rsa.key"), file("rsa.crt"), "sha256");
  const auto p = profile("v7.0");
  const auto trust = TrustStore::load({.keyrings = {file("rsa.crt")}, .revoked = {file("rsa.crt")}}, p);
  Verdict v = predict_module_file(rsa, trust, p, {});
  EXPECT_EQ(v.outcome, "refused");
  EXPECT_EQ(v.err, KErr::ekeyrejected);
  EXPECT_EQ(v.reason, "Key is on the revocation list");
  // A .ko.xz whose stream is cut: module_decompress() fails, EINVAL, nothing checked.
  ASSERT_EQ(test::run("xz --check=crc32 -k -c " + q(rsa) + " > " + q(d_ / "rsa.ko.xz")).status, 0);
  const Bytes xz = test::slurp(d_ / "rsa.ko.xz");
  test::spit(d_ / "cut.ko.xz", ByteView(xz.data(), xz.size() / 2));
  PredictOptions keep;
  keep.keep_bad_stream = true;
  v = predict_module_file(d_ / "cut.ko.xz", trust, p, keep);
  EXPECT_EQ(v.outcome, "refused");
  EXPECT_EQ(v.err, KErr::einval);
  EXPECT_EQ(v.load_errno, KErr::einval);
  EXPECT_EQ(v.sig_errno, KErr::einval);
  EXPECT_EQ(v.reason.rfind("xz-compressed module: ", 0), 0u) << v.reason;
  ASSERT_TRUE(v.compression.has_value());
  EXPECT_EQ(v.compression->compression, Compression::xz);
  EXPECT_EQ(v.compression->stored_size, xz.size() / 2);
  EXPECT_EQ(v.compression->kernel_decompress_problem, v.reason);
  EXPECT_TRUE(v.signers.empty());
  try {
    (void)predict_module_file(d_ / "cut.ko.xz", trust, p, {});
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) { EXPECT_EQ(std::string(e.what()), d_ / "cut.ko.xz" + ": " + v.reason); }
  // The whole .ko.xz decompresses: the verdict of the image, with its storage.
  v = predict_module_file(d_ / "rsa.ko.xz", TrustStore::load({.keyrings = {file("rsa.crt")}}, p), p, {});
  EXPECT_EQ(v.outcome, "loads");
  ASSERT_TRUE(v.compression.has_value());
  EXPECT_EQ(v.compression->xz_check, XzCheck::crc32);
  EXPECT_TRUE(v.compression->kernel_decompress_problem.empty());
  EXPECT_TRUE(v.compression->image.empty());
}

TEST_F(ApiVerify, StreamingAndInMemoryGiveTheSameVerdict) {
  const auto p = profile("v7.0");
  const auto trust = TrustStore::load({.keyrings = {file("rsa.crt"), file("mldsa.crt")}}, p);
  for (const auto& m : {openssl_signed(d_, "rsa", file("rsa.key"), file("rsa.crt"), "sha256"),
                        openssl_signed(d_, "ml", file("mldsa.key"), file("mldsa.crt"), "sha512", true),
                        openssl_signed(d_, "ec", file("ec.key"), file("ec.crt"), "sha256", true)}) {
    PredictOptions stream, memory;
    stream.stream_above = 0;
    const Verdict a = predict_module_file(m, trust, p, stream);
    const Verdict b = predict_module_file(m, trust, p, memory);
    const ModuleFile f = open_module_file(m, p);
    const Verdict c = predict_module_image(f.m, trust, p);
    for (const Verdict* v : {&b, &c}) {
      EXPECT_EQ(a.outcome, v->outcome) << m;
      EXPECT_EQ(a.err, v->err) << m;
      EXPECT_EQ(a.sig_errno, v->sig_errno);
      EXPECT_EQ(a.load_errno, v->load_errno);
      EXPECT_EQ(a.reason, v->reason);
      EXPECT_EQ(a.log, v->log);
      EXPECT_EQ(a.trusted_by, v->trusted_by);
      ASSERT_EQ(a.signers.size(), v->signers.size());
      EXPECT_EQ(a.signers[0].sid, v->signers[0].sid);
      EXPECT_EQ(a.signers[0].digest_algo, v->signers[0].digest_algo);
      EXPECT_EQ(a.signers[0].sig_algo, v->signers[0].sig_algo);
      EXPECT_EQ(a.signers[0].signed_attrs, v->signers[0].signed_attrs);
    }
  }
}

TEST_F(ApiVerify, DescribesAnOpensslSignedModule) {
  const std::string m = openssl_signed(d_, "rsa", file("rsa.key"), file("rsa.crt"), "sha256");
  const ModuleFile f = open_module_file(m, profile("v7.0"));
  EXPECT_EQ(f.m.compression, Compression::none);
  EXPECT_EQ(f.stored, test::slurp(m));
  const SignatureInfo si = describe_signature(f);
  EXPECT_TRUE(si.is_signed);
  EXPECT_EQ(si.sig_id, "PKCS#7");
  EXPECT_EQ(si.signer, "rsa signer");
  EXPECT_EQ(si.sig_key, "11:12:13:14:15:16:17:18");
  EXPECT_EQ(si.sig_hashalgo, "sha256");
  EXPECT_EQ(si.signer_id_type, "issuerAndSerialNumber");
  EXPECT_EQ(si.signature_algorithm, "RSA");
  EXPECT_FALSE(si.signed_attrs);
  EXPECT_EQ(si.signer_infos, 1u);
  EXPECT_EQ(si.certificates, 0u);
  EXPECT_EQ(si.content_length, 3000u);
  EXPECT_EQ(si.cms_length, test::slurp(d_ / "rsa.p7s").size());
  EXPECT_EQ(si.signature_length, 256u);
  EXPECT_EQ(si.signature.size(), 256u * 3 - 1);
  // Every profile, 6.1 included (Debian 12's kernel loads RSA/SHA-256 modules).
  EXPECT_EQ(si.accepted_by, (std::vector<std::string>{"v6.1", "v6", "v7.0", "v7.0+waiver"}));
  EXPECT_EQ(si.image_size, test::slurp(m).size());
  // SHA3-256: 6.1's pkcs7_sig_note_digest_algo does not know it; later kernels do.
  const std::string s3 = openssl_signed(d_, "s3", file("rsa.key"), file("rsa.crt"), "sha3-256");
  EXPECT_EQ(describe_signature(open_module_file(s3, profile("v7.0"))).accepted_by,
            (std::vector<std::string>{"v6", "v7.0", "v7.0+waiver"}));
  // ML-DSA with signedAttrs: 7.0 refuses it unless waived; v6 has no ML-DSA.
  const std::string ml = openssl_signed(d_, "ml", file("mldsa.key"), file("mldsa.crt"), "sha512", true);
  const SignatureInfo mi = describe_signature(open_module_file(ml, profile("v7.0")));
  EXPECT_EQ(mi.signature_algorithm, "ML-DSA-65");
  EXPECT_EQ(mi.sig_hashalgo, "sha512");
  EXPECT_TRUE(mi.signed_attrs);
  EXPECT_EQ(mi.signature_length, 3309u);
  EXPECT_EQ(mi.accepted_by, std::vector<std::string>{"v7.0+waiver"});
  // Unsigned; malformed trailer.
  const std::string u = d_ / "u.ko";
  test::spit(u, test::pattern(100));
  const SignatureInfo ui = describe_signature(open_module_file(u, profile("v7.0")));
  EXPECT_FALSE(ui.is_signed);
  EXPECT_EQ(ui.content_length, 100u);
  Bytes bad = test::pattern(100);
  const std::string marker = "~Module signature appended~\n";
  bad.insert(bad.end(), marker.begin(), marker.end());
  test::spit(d_ / "bad.ko", bad);
  try {
    (void)describe_signature(open_module_file(d_ / "bad.ko", profile("v7.0")));
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(d_ / "bad.ko" + ": EBADMSG: ", 0), 0u) << e.what();
  }
}
