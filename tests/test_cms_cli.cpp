// `modsign cms dump` and `modsign cms verify` on the public vectors (RFC 9882 examples,
// OpenSSL 3.5.7-generated SignedData) and on SignedData made now by `openssl cms -sign`
// with each option that changes the structure; every verdict is compared with
// `openssl cms -verify` (issue 17 §4).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace modsign::test {
namespace {

using nlohmann::json;

std::string M() { return modsign_cli(); }
std::string V(const std::string& rel) { return vector_path(rel); }

json dump_json(const std::string& file) {
  const auto r = run(M() + " cms dump --json " + q(file));
  EXPECT_EQ(r.status, 0) << r.err;
  return json::parse(r.out);
}

/// `openssl cms -verify` with `cert` as the only signer certificate, trusted as given
/// (-noverify: no chain), the verdict modsign's must equal.
int openssl_verify(const std::string& file, const std::string& inform, const std::string& cert,
                   const std::string& content = "") {
  const auto r =
      run(openssl() + " cms -verify -binary -inform " + inform + " -in " + q(file) + " -nointern -certfile " + q(cert) +
          " -noverify -out /dev/null" + (content.empty() ? "" : " -content " + q(content)));
  return r.status;
}

int modsign_verify(const std::string& file, const std::string& cert, const std::string& content = "",
                   std::string* out = nullptr) {
  const auto r =
      run(M() + " cms verify --cert " + q(cert) + (content.empty() ? "" : " --content " + q(content)) + " " + q(file));
  if (out) *out = r.out + r.err;
  return r.status;
}

TEST(CmsCli, Rfc9882ExamplesDumpExactFields) {
  const json j = dump_json(V("rfc9882-cms-ml-dsa/mldsa44-signed-attrs.pem"));
  EXPECT_EQ(j["format"], "PEM");
  EXPECT_EQ(j["der_size"], 2740);
  EXPECT_EQ(j["content_type"]["oid"], "1.2.840.113549.1.7.2");
  EXPECT_EQ(j["content_type"]["name"], "signedData");
  EXPECT_EQ(j["signed_data"]["version"], 1);
  EXPECT_EQ(j["signed_data"]["offset"], 19);
  EXPECT_EQ(j["signed_data"]["length"], 2721);
  ASSERT_EQ(j["digest_algorithms"].size(), 1u);
  EXPECT_EQ(j["digest_algorithms"][0]["name"], "sha512");
  EXPECT_EQ(j["digest_algorithms"][0]["oid"], "2.16.840.1.101.3.4.2.3");
  EXPECT_EQ(j["digest_algorithms"][0]["parameters"], "absent");
  EXPECT_EQ(j["digest_algorithms"][0]["offset"], 28);
  EXPECT_EQ(j["econtent_type"]["name"], "data");
  EXPECT_EQ(j["econtent"]["length"], 52);
  EXPECT_EQ(j["econtent"]["offset"], 56);
  EXPECT_EQ(j["certificates"].size(), 0u);
  EXPECT_EQ(j["crls"], 0);
  ASSERT_EQ(j["signer_infos"].size(), 1u);
  const json& s = j["signer_infos"][0];
  EXPECT_EQ(s["version"], 1);
  EXPECT_EQ(s["offset"], 114);
  EXPECT_EQ(s["length"], 2626);
  EXPECT_EQ(s["sid"]["type"], "issuerAndSerialNumber");
  EXPECT_EQ(s["sid"]["issuer"], "O=IETF, CN=LAMPS WG");
  EXPECT_EQ(s["sid"]["serial"], "159ffe6f22fd5cc42c524df6fd5e28d0de38f34e");
  EXPECT_EQ(s["sid"]["offset"], 121);
  EXPECT_EQ(s["digest_algorithm"]["offset"], 181);
  EXPECT_EQ(s["signed_attrs_at"]["offset"], 194);
  EXPECT_EQ(s["signed_attrs_at"]["length"], 109);
  ASSERT_EQ(s["signed_attrs"].size(), 2u);
  EXPECT_EQ(s["signed_attrs"][0]["name"], "contentType");
  EXPECT_EQ(s["signed_attrs"][0]["oid"], "1.2.840.113549.1.9.3");
  EXPECT_EQ(s["signed_attrs"][0]["values"][0], "data (1.2.840.113549.1.7.1)");
  EXPECT_EQ(s["signed_attrs"][1]["name"], "messageDigest");
  EXPECT_EQ(s["signed_attrs"][1]["offset"], 222);
  EXPECT_EQ(
      s["message_digest"],
      "0bbf93681247c4dce90c456e2b297c3dee17452e2bed43f3955383dcfc3adf5a6dddecf3a9231350e160b0c860d358ac22756c1c1d9f44"
      "dc24f44f08f6808fd4");
  EXPECT_EQ(s["signature_algorithm"]["name"], "id-ml-dsa-44");
  EXPECT_EQ(s["signature_algorithm"]["oid"], "2.16.840.1.101.3.4.3.17");
  EXPECT_EQ(s["signature_algorithm"]["offset"], 303);
  EXPECT_EQ(s["signature_length"], 2420);
  EXPECT_EQ(s["signature_at"]["offset"], 316);
  EXPECT_EQ(s["signature_at"]["length"], 2424);
  EXPECT_EQ(s["unsigned_attrs"].size(), 0u);

  // The text form carries the same offsets.
  const auto r = run(M() + " cms dump " + q(V("rfc9882-cms-ml-dsa/mldsa44-signed-attrs.pem")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("    signatureAlgorithm: id-ml-dsa-44 (2.16.840.1.101.3.4.3.17) [303+13]\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    signature: 2420 bytes [316+2424]\n"), std::string::npos) << r.out;
}

TEST(CmsCli, Rfc9882ExamplesVerifyAsOpenssl) {
  const std::size_t sig_size[] = {2420, 3309, 4627};
  int i = 0;
  for (const char* level : {"44", "65", "87"}) {
    const std::string cert = V(std::string("rfc9881-dilithium-certificates/ML-DSA-") + level + ".crt");
    for (const bool attrs : {false, true}) {
      const std::string f =
          V(std::string("rfc9882-cms-ml-dsa/mldsa") + level + (attrs ? "-signed-attrs.pem" : "-no-signed-attrs.pem"));
      const json j = dump_json(f);
      const json& s = j["signer_infos"][0];
      EXPECT_EQ(s["signature_algorithm"]["name"], std::string("id-ml-dsa-") + level) << f;
      EXPECT_EQ(s["signature_length"], sig_size[i]) << f;
      EXPECT_EQ(s["signed_attrs"].is_null(), !attrs) << f;
      EXPECT_EQ(j["econtent"].is_null(), false) << f;
      std::string out;
      EXPECT_EQ(modsign_verify(f, cert, "", &out), 0) << out;
      const std::string other =
          V(std::string("rfc9881-dilithium-certificates/ML-DSA-") + (i == 0 ? "65" : "44") + ".crt");
      EXPECT_EQ(modsign_verify(f, other), 1) << f;  // the wrong level's certificate
      if (attrs) {
        EXPECT_EQ(openssl_verify(f, "PEM", cert), 0) << f;
        EXPECT_NE(openssl_verify(f, "PEM", other), 0) << f;
      } else {
        // OpenSSL 3.5.7 verifies ML-DSA SignerInfos only with signedAttrs, 4.0.3 only the
        // detached ones (test::openssl_mldsa_noattr_refusal); Botan confirms these
        // (test_api_cms.cpp).
        const auto r = run(openssl() + " cms -verify -binary -inform PEM -in " + q(f) + " -nointern -certfile " +
                           q(cert) + " -noverify -out /dev/null");
        EXPECT_NE(r.status, 0) << f;
        EXPECT_NE(r.err.find(test::openssl_mldsa_noattr_refusal(true)), std::string::npos)
            << "openssl " << test::openssl_major()
            << " now verifies attached ML-DSA without signedAttrs: compare its verdict: " << r.err;
      }
    }
    ++i;
  }
}

TEST(CmsCli, Rfc9882KernelVerdict) {
  const std::string cert = V("rfc9881-dilithium-certificates/ML-DSA-65.crt");
  // 7.0 takes ML-DSA without signedAttrs; with them it refuses (EKEYREJECTED) unless waived.
  auto r = run(M() + " cms verify --cert " + q(cert) + " --kernel v7.0 --json " +
               q(V("rfc9882-cms-ml-dsa/mldsa65-no-signed-attrs.pem")));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(json::parse(r.out)["kernel"]["errno"], "OK");
  r = run(M() + " cms verify --cert " + q(cert) + " --kernel v7.0 --json " +
          q(V("rfc9882-cms-ml-dsa/mldsa65-signed-attrs.pem")));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(json::parse(r.out)["verified"], true);
  EXPECT_EQ(json::parse(r.out)["kernel"]["errno"], "EKEYREJECTED");
  r = run(M() + " cms verify --cert " + q(cert) + " --kernel v7.0 --waive-mldsa-authattrs " +
          q(V("rfc9882-cms-ml-dsa/mldsa65-signed-attrs.pem")));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  // v6 knows no ML-DSA.
  r = run(M() + " cms verify --cert " + q(cert) + " --kernel v6 --json " +
          q(V("rfc9882-cms-ml-dsa/mldsa65-no-signed-attrs.pem")));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(json::parse(r.out)["kernel"]["errno"], "ENOPKG");
}

TEST(CmsCli, OpensslGeneratedVectors) {
  const std::string dir = "openssl-3.5.7-generated/";
  const json j = dump_json(V(dir + "mldsa65.attached.default-attrs.with-cert.p7s"));
  EXPECT_EQ(j["format"], "DER");
  EXPECT_EQ(j["econtent"]["length"], 4096);
  EXPECT_EQ(j["econtent"]["offset"], 60);
  EXPECT_EQ(j["econtent"]["tlv_length"], 4100);
  ASSERT_EQ(j["certificates"].size(), 1u);
  EXPECT_EQ(j["certificates"][0]["offset"], 4164);
  EXPECT_EQ(j["certificates"][0]["subject"], "CN=Test module signing key");
  EXPECT_EQ(j["certificates"][0]["issuer"], "CN=Test module signing key");
  EXPECT_EQ(j["certificates"][0]["serial"], "1001");
  EXPECT_EQ(j["certificates"][0]["skid"], "ef48cd51a3e32b02fd676589f261b512ae3abcb8");
  EXPECT_EQ(j["certificates"][0]["public_key_algorithm"]["name"], "id-ml-dsa-65");
  const json& s = j["signer_infos"][0];
  EXPECT_EQ(s["offset"], 9667);
  EXPECT_EQ(s["signed_attrs_at"]["offset"], 9729);
  EXPECT_EQ(s["signed_attrs_at"]["length"], 264);
  EXPECT_EQ(s["signing_time"], "2026-11-29T20:20:54Z");
  EXPECT_EQ(s["signed_attrs"][1]["name"], "signingTime");
  EXPECT_EQ(s["signed_attrs"][3]["name"], "smimeCapabilities");
  EXPECT_EQ(s["signed_attrs"][3]["values"][0], "aes256-CBC (2.16.840.1.101.3.4.1.42)");

  const json skid = dump_json(V(dir + "mldsa44.detached.min-attrs.skid.p7s"));
  EXPECT_EQ(skid["signed_data"]["version"], 3);
  EXPECT_EQ(skid["signer_infos"][0]["version"], 3);
  EXPECT_EQ(skid["signer_infos"][0]["sid"]["type"], "subjectKeyIdentifier");
  EXPECT_TRUE(skid["econtent"].is_null());
  const json shake = dump_json(V(dir + "mldsa65.detached.min-attrs.shake256.p7s"));
  EXPECT_EQ(shake["signer_infos"][0]["digest_algorithm"]["name"], "shake256");
  EXPECT_EQ(shake["signer_infos"][0]["digest_algorithm"]["oid"], "2.16.840.1.101.3.4.2.12");
  EXPECT_EQ(shake["signer_infos"][0]["message_digest"].get<std::string>().size(), 128u);

  int checked = 0;
  for (const char* level : {"44", "65", "87"}) {
    const std::string cert = V(dir + "mldsa" + level + ".cert.der");
    std::vector<std::string> files = {"attached.default-attrs.with-cert", "detached.min-attrs.issuer-serial",
                                      "detached.min-attrs.skid"};
    if (std::string(level) == "65") files.push_back("detached.min-attrs.shake256");
    for (const auto& f : files) {
      const std::string p = V(dir + "mldsa" + level + "." + f + ".p7s");
      const std::string content = f.rfind("detached", 0) == 0 ? V(dir + "content.bin") : "";
      std::string out;
      const int ours = modsign_verify(p, cert, content, &out);
      EXPECT_EQ(ours, 0) << p << "\n" << out;
      EXPECT_EQ(ours == 0, openssl_verify(p, "DER", cert, content) == 0) << p;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 10);
}

TEST(CmsCli, UsageAndMalformed) {
  const std::string dir = "openssl-3.5.7-generated/";
  const std::string cert = V(dir + "mldsa44.cert.der");
  auto r = run(M() + " cms verify --cert " + q(cert) + " " + q(V(dir + "mldsa44.detached.min-attrs.skid.p7s")));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("detached SignedData: give the signed content with --content"), std::string::npos) << r.err;
  r = run(M() + " cms verify --cert " + q(cert) + " --content " + q(V(dir + "content.bin")) + " " +
          q(V(dir + "mldsa44.attached.default-attrs.with-cert.p7s")));
  EXPECT_EQ(r.status, 2) << r.err;
  r = run(M() + " cms dump " + q(V(dir + "content.bin")));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find(V(dir + "content.bin") + ": "), std::string::npos) << r.err;
  r = run(M() + " cms dump " + q(cert));  // a certificate, not a ContentInfo(SignedData)
  EXPECT_EQ(r.status, 3) << r.err;
  r = run(M() + " cms dump /nonexistent/x.p7s");
  EXPECT_EQ(r.status, 3) << r.err;
  // A --keyring directory: its README is skipped with a note, the certificate is used.
  TempDir k;
  spit(k / "README", std::string("trusted keys\n"));
  spit(k / "signer.der", slurp(cert));
  r = run(M() + " cms verify --keyring " + q(k.path()) + " --content " + q(V(dir + "content.bin")) + " " +
          q(V(dir + "mldsa44.detached.min-attrs.skid.p7s")));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.err.find(k / "README" + ": skipped: "), std::string::npos) << r.err;
  EXPECT_NE(r.out.find(": SignerInfo 1: verified (ML-DSA-44, CN=Test module signing key)\n"), std::string::npos)
      << r.out;
  // Without --cert, the embedded certificate is used, with a note.
  r = run(M() + " cms verify " + q(V(dir + "mldsa87.attached.default-attrs.with-cert.p7s")));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("proves integrity, not who signed"), std::string::npos) << r.err;
}

// A signed module given to cms dump/verify: its appended SignedData is read, and verified
// over the module's content, as `openssl cms -verify` does on the extracted .p7s; an unsigned
// ELF, a compressed module and other PEM are named for what they are (a new user's trial:
// "ContentInfo: expected tag 0x30, found 0x7f").
TEST(CmsCli, SignedModuleIsReadForItsSignature) {
  TempDir d;
  ASSERT_EQ(run(M() + " keygen --algo rsa-2048 -o " + q(d / "k.pem")).status, 0);
  const std::string m = d / "m.ko";
  spit(m, pattern(5000));
  const std::string unsigned_m = d / "u.ko";
  spit(unsigned_m, Bytes{0x7f, 'E', 'L', 'F', 2, 1, 1, 0});
  ASSERT_EQ(run(M() + " sign --key " + q(d / "k.pem") + " " + q(m)).status, 0);
  ASSERT_EQ(run(M() + " extract " + q(m)).status, 0);  // m.ko.p7s
  json jm = dump_json(m), jp = dump_json(m + ".p7s");
  EXPECT_EQ(jm["module_signature"], true);
  EXPECT_EQ(jp["module_signature"], false);
  EXPECT_EQ(jm["der_size"], slurp(m + ".p7s").size());
  for (auto* j : {&jm, &jp}) {
    j->erase("path");
    j->erase("module_signature");
  }
  EXPECT_EQ(jm, jp);
  auto r = run(M() + " cms dump " + q(m));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            m + ": module signature, DER, " + std::to_string(slurp(m + ".p7s").size()) + " bytes");
  std::string out;
  EXPECT_EQ(modsign_verify(m, d / "k.pem", "", &out), 0) << out;
  EXPECT_NE(out.find(m + ": SignerInfo 1: verified (RSA, CN=modsign module signing key)\n"), std::string::npos) << out;
  spit(d / "content", pattern(5000));
  EXPECT_EQ(openssl_verify(m + ".p7s", "DER", d / "k.pem", d / "content"), 0);
  spit(d / "other", pattern(4999));  // --content still names the content
  EXPECT_EQ(modsign_verify(m, d / "k.pem", d / "other", &out), 1) << out;
  EXPECT_NE(openssl_verify(m + ".p7s", "DER", d / "k.pem", d / "other"), 0);

  // The signature is the appended one, whatever the content holds: a PEM block of a
  // SignedData the keyring trusts (the hostile review: "verified" for a module whose own
  // signature is untrusted), or a first byte 0x30.
  ASSERT_EQ(run(M() + " keygen --algo ecdsa-p256 -o " + q(d / "ec.pem")).status, 0);
  const auto pem = run(openssl() + " cms -cmsout -inform DER -in " + q(m + ".p7s") + " -outform PEM");
  ASSERT_EQ(pem.status, 0) << pem.err;
  for (const std::string& head : {std::string("\x30\x82\x01\x00"), std::string("text\n") + pem.out}) {
    const std::string e = d / "e.ko";
    spit(e, head + std::string(300, 'x'));
    ASSERT_EQ(run(M() + " sign --key " + q(d / "ec.pem") + " " + q(e)).status, 0);
    EXPECT_EQ(modsign_verify(e, d / "k.pem", "", &out), 1) << out;
    EXPECT_NE(out.find(e + ": not verified (RFC 5652)\n"), std::string::npos) << out;
    EXPECT_EQ(modsign_verify(e, d / "ec.pem", "", &out), 0) << out;
    EXPECT_EQ(dump_json(e)["module_signature"], true);
  }

  r = run(M() + " cms dump " + q(unsigned_m));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err,
            "modsign: " + unsigned_m + ": an ELF file without an appended module signature: no SignedData to read\n");
  ASSERT_EQ(run("xz -k " + q(m)).status, 0);
  r = run(M() + " cms verify --cert " + q(d / "k.pem") + " " + q(m + ".xz"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + m +
                       ".xz: xz-compressed file, not a SignedData: for a compressed module, `modsign extract` writes "
                       "its signature as a .p7s file\n");
  r = run(M() + " cms dump " + q(d / "k.pem"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err,
            "modsign: " + d / "k.pem" + ": PEM without a PKCS7 or CMS block (it begins -----BEGIN PRIVATE KEY-----)\n");
}

// Two messages of the one-shape issue (30): a signer whose certificate has an empty subject
// is "verified (ML-DSA-44)", not "verified (ML-DSA-44, )"; a digestAlgorithm OID without a
// name is shown as the OID alone, not "digestAlgorithm  (OID)".
TEST(CmsCli, EmptySubjectAndUnnamedDigestAlgorithm) {
  TempDir d;
  const std::string o = openssl();
  spit(d / "content", std::string("hi\n"));
  auto r = run("cd " + q(d.path()) + " && " + o +
               " req -x509 -newkey ml-dsa-44 -nodes -keyout k.pem -out c.pem -subj / -days 3 2>/dev/null && " + o +
               " cms -sign -binary -md sha512 -in content -signer c.pem -inkey k.pem -outform DER -nodetach -out "
               "s.p7s && " +
               o +
               " req -x509 -newkey rsa:2048 -nodes -keyout r.pem -out r.crt -subj /CN=r -days 3 "
               "2>/dev/null && " +
               o +
               " cms -sign -binary -md sha256 -in content -signer r.crt -inkey r.pem "
               "-outform DER -nodetach -out r.p7s");
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(M() + " cms verify --cert " + q(d / "c.pem") + " " + q(d / "s.p7s"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(": SignerInfo 1: verified (ML-DSA-44)\n"), std::string::npos) << r.out;
  // sha256 (2.16.840.1.101.3.4.2.1) made 2.16.840.1.101.3.4.2.127 wherever it is named.
  Bytes p7s = slurp(d / "r.p7s");
  const Bytes sha256 = from_hex("0609608648016503040201");
  int patched = 0;
  for (auto at = std::search(p7s.begin(), p7s.end(), sha256.begin(), sha256.end()); at != p7s.end();
       at = std::search(at + 1, p7s.end(), sha256.begin(), sha256.end()), ++patched)
    *(at + 10) = 0x7f;
  ASSERT_EQ(patched, 2);
  spit(d / "r2.p7s", p7s);
  r = run(M() + " cms verify --cert " + q(d / "r.crt") + " " + q(d / "r2.p7s"));
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find(": SignerInfo 1: not verified: unsupported digestAlgorithm 2.16.840.1.101.3.4.2.127 for RSA\n"),
            std::string::npos)
      << r.out;
}

/// `der` (one TLV) with every constructed element re-encoded with an indefinite length (30 80
/// ... 00 00), but for the certificates ([0] directly inside SignedData, depth 3), which keep
/// their DER so their signatures still hold, and an AlgorithmIdentifier without parameters
/// (a SEQUENCE holding one OID), where the kernel's grammar would take the end-of-contents
/// octets for the parameters (tests/test_kernel_mutants.cpp).
Bytes all_indefinite(ByteView der, int depth = 0) {
  std::size_t at = 2, len = der[1];
  if (len & 0x80) {
    const std::size_t k = len & 0x7f;
    len = 0;
    for (std::size_t i = 0; i < k; ++i) len = len << 8 | der[2 + i];
    at = 2 + k;
  }
  const Bytes whole(der.begin(), der.begin() + static_cast<std::ptrdiff_t>(at + len));
  const bool lone_oid = der[0] == 0x30 && len >= 2 && der[at] == 0x06 && 2 + std::size_t{der[at + 1]} == len;
  if (!(der[0] & 0x20) || (depth == 3 && der[0] == 0xa0) || lone_oid) return whole;
  Bytes out{der[0], 0x80};
  for (std::size_t p = at; p < at + len;) {
    const Bytes child = all_indefinite(der.subspan(p), depth + 1);
    std::size_t clen = der[p + 1], chead = 2;
    if (clen & 0x80) {
      const std::size_t k = clen & 0x7f;
      clen = 0;
      for (std::size_t i = 0; i < k; ++i) clen = clen << 8 | der[p + 2 + i];
      chead = 2 + k;
    }
    out.insert(out.end(), child.begin(), child.end());
    p += chead + clen;
  }
  out.push_back(0x00);
  out.push_back(0x00);
  return out;
}

/// A module: `content`, then `p7`, module_signature (id_type 2, sig_len big-endian), marker.
Bytes with_signature(Bytes content, const Bytes& p7) {
  content.insert(content.end(), p7.begin(), p7.end());
  const std::uint32_t len = static_cast<std::uint32_t>(p7.size());
  content.insert(content.end(), {0, 0, 2, 0, 0, 0, 0, 0, std::uint8_t(len >> 24), std::uint8_t(len >> 16),
                                 std::uint8_t(len >> 8), std::uint8_t(len)});
  const std::string marker = "~Module signature appended~\n";
  content.insert(content.end(), marker.begin(), marker.end());
  return content;
}

// A BER message (indefinite outer lengths, as openssl cms -stream writes) is dumped with
// BER rules and labelled BER; the same message inside a module is described by info, which
// reads it as the kernel does.
TEST(CmsCli, BerSignatureIsLabelledAndInfoReadsIt) {
  TempDir d;
  ASSERT_EQ(run(M() + " keygen --out " + q(d / "k.pem") + " --cert-out " + q(d / "c.pem")).status, 0);
  spit(d / "m.ko", Bytes(4096, 0x5a));
  ASSERT_EQ(run(M() + " sign -q --p7s-only --key " + q(d / "k.pem") + " --cert " + q(d / "c.pem") + " " + q(d / "m.ko"))
                .status,
            0);
  const Bytes der = slurp(d / "m.ko.p7s");
  ASSERT_GE(der.size(), 4u);
  ASSERT_EQ(der[0], 0x30);
  ASSERT_EQ(der[1], 0x82);
  const std::size_t n = std::size_t{der[2]} << 8 | der[3];
  ASSERT_EQ(n + 4, der.size());
  // The ContentInfo with an indefinite length (30 80) and its end-of-contents (00 00).
  Bytes ber(n + 4, 0x00);
  ber[0] = 0x30;
  ber[1] = 0x80;
  std::copy(der.begin() + 4, der.end(), ber.begin() + 2);
  spit(d / "ber.p7s", ber);
  auto r = run(M() + " cms dump " + q(d / "ber.p7s"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), d / "ber.p7s" + ": BER, " + std::to_string(ber.size()) + " bytes");
  const json j = dump_json(d / "ber.p7s");
  EXPECT_EQ(j["format"], "BER");
  EXPECT_EQ(j["encoding"], "BER");
  EXPECT_EQ(dump_json(d / "m.ko.p7s")["encoding"], "DER");
  // In a module: info reads it as the kernel does; so with every constructed element
  // indefinite (the issuer Name and its RDNs too: info names the signer), and with bytes
  // after the ContentInfo, where the kernel's decoder stops (its ASN1_OP_COMPLETE checks
  // only its stacks).
  Bytes trailing = ber;
  trailing.insert(trailing.end(), {0x05, 0x00});
  for (const auto& [name, p7] : std::vector<std::pair<std::string, Bytes>>{
           {"ber.ko", ber}, {"all-indefinite.ko", all_indefinite(der)}, {"trailing.ko", trailing}}) {
    spit(d / name, with_signature(slurp(d / "m.ko"), p7));
    r = run(M() + " info --json " + q(d / name));
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
    const json i = json::parse(r.out);
    EXPECT_EQ(i["signed"], true) << name;
    EXPECT_EQ(i["cms_length"], p7.size()) << name;
    EXPECT_EQ(i["signature_algorithm"], "ML-DSA-65") << name;
    EXPECT_EQ(i["signer"], "modsign module signing key") << name;
    // verify: the kernel matches the signer by the issuer Name's contents octets
    // (pkcs7_sig_note_issuer), which indefinite RDNs change: no key for all-indefinite.ko.
    r = run(M() + " verify --cert " + q(d / "c.pem") + " " + q(d / name));
    EXPECT_EQ(r.status, name == "all-indefinite.ko" ? 1 : 0) << name << ": " << r.out << r.err;
    if (name == "all-indefinite.ko") { EXPECT_NE(r.out.find("(ENOKEY)"), std::string::npos) << r.out; }
  }
  const Bytes all = all_indefinite(der);
  EXPECT_EQ(all[1], 0x80);
  EXPECT_NE(all, der);
}

}  // namespace
}  // namespace modsign::test
