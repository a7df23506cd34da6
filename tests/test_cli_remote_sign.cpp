// `modsign sign --prepare` / `--attach` and `--deterministic` through the CLI binary: the
// manifest's keys, `openssl pkeyutl -sign` as the remote signer, byte-identical results,
// and the refusals with their exit statuses (the module refused is left as it was).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_support.hpp"
#include "crypto/crypto.hpp"

namespace modsign::test::cli_tests {
namespace {

using json = nlohmann::ordered_json;

class CliRemote : public Cli {
 protected:
  /// The lines of `path` parsed as JSON.
  static std::vector<json> jsonl(const std::string& text) {
    std::vector<json> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
    return out;
  }
  /// Signs every manifest line's to_sign with `openssl pkeyutl` into DIR/<index>.sig.
  void sign_all(const std::string& manifest, const std::string& k, const std::string& opts, const std::string& dir) {
    ASSERT_EQ(run("mkdir -p " + q(dir)).status, 0);
    for (const auto& j :
         jsonl(std::string(reinterpret_cast<const char*>(slurp(manifest).data()), slurp(manifest).size()))) {
      spit(d_ / "tbs.bin", from_hex(j.at("to_sign").get<std::string>()));
      auto r = run(openssl() + " pkeyutl -sign -inkey " + q(key(k)) + " -in " + q(d_ / "tbs.bin") + " " + opts +
                   " -out " + q(dir + "/" + std::to_string(j.at("index").get<int>()) + ".sig"));
      ASSERT_EQ(r.status, 0) << r.err;
    }
  }
  std::string text(const std::string& path) {
    const Bytes b = slurp(path);
    return std::string(b.begin(), b.end());
  }
};

TEST_F(CliRemote, PrepareManifestKeysThenAttachEqualsDeterministicSign) {
  ASSERT_EQ(run("mkdir -p " + q(d_ / "tree/sub")).status, 0);
  spit(d_ / "tree/a.ko", pattern(3000));
  spit(d_ / "tree/sub/b.ko", pattern(5000));
  const std::string man = d_ / "m.jsonl";
  auto r = run(M() + " sign --prepare " + q(man) + " --cert " + q(key("mldsa.crt")) + " -r " + q(d_ / "tree"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, d_ / "tree/a.ko: prepared (ML-DSA-65, no signedAttrs, sha512, to_sign mu 64 bytes)\n" + d_.path() +
                       "/tree/sub/b.ko: prepared (ML-DSA-65, no signedAttrs, sha512, to_sign mu 64 bytes)\n");
  const auto lines = jsonl(text(man));
  ASSERT_EQ(lines.size(), 2u);
  const json& l = lines[0];
  std::vector<std::string> keys;
  for (auto it = l.begin(); it != l.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"index", "path", "size", "sha256", "compression", "certificate",
                                            "certificate_sha256", "algorithm", "hash", "form", "keyid", "replace",
                                            "recompress", "to_sign_type", "to_sign", "to_sign_base64"}));
  EXPECT_EQ(l.at("index"), 1);
  EXPECT_EQ(lines[1].at("index"), 2);
  EXPECT_EQ(l.at("path"), d_ / "tree/a.ko");
  EXPECT_EQ(l.at("size"), 3000);
  EXPECT_EQ(l.at("sha256"), to_hex(crypto::digest(crypto::HashAlgo::sha256, pattern(3000))));
  EXPECT_TRUE(l.at("compression").is_null());
  EXPECT_EQ(l.at("form"), "no signedAttrs");
  EXPECT_EQ(l.at("to_sign_type"), "mu");
  EXPECT_EQ(l.at("to_sign").get<std::string>().size(), 128u);
  EXPECT_EQ(l.at("to_sign_base64").get<std::string>().size(), 88u);
  EXPECT_EQ(text(d_ / "tree/a.ko"), text(module("x.ko", 3000))) << "prepare changes no module";

  sign_all(man, "mldsa.pem", "-pkeyopt mu:1 -pkeyopt deterministic:1", d_ / "sigs");
  r = run(M() + " sign --attach " + q(man) + " --signatures " + q(d_ / "sigs"));
  ASSERT_EQ(r.status, 0) << r.err;
  // The SignedData: the signed file less the content and the 40-byte trailer.
  const std::string cms = std::to_string(slurp(d_ / "tree/a.ko").size() - 3000 - 40);
  EXPECT_EQ(cms, "3471") << "as test_cli_sign's one-step ML-DSA-65 signature with this certificate";
  EXPECT_EQ(slurp(d_ / "tree/sub/b.ko").size(), 5000 + 40 + std::stoul(cms));
  EXPECT_EQ(r.out, d_ / "tree/a.ko: signed (ML-DSA-65, no signedAttrs, sha512, CMS " + cms + " bytes)\n" + d_.path() +
                       "/tree/sub/b.ko: signed (ML-DSA-65, no signedAttrs, sha512, CMS " + cms + " bytes)\n");
  // One step with --deterministic gives the same files.
  spit(d_ / "a2.ko", pattern(3000));
  r = run(M() + " sign --deterministic --key " + q(key("mldsa.pem")) + " --cert " + q(key("mldsa.crt")) + " " +
          q(d_ / "a2.ko"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(d_ / "a2.ko"), slurp(d_ / "tree/a.ko"));
  r = run(M() + " verify --keyring " + q(key("mldsa.crt")) + " -q -r " + q(d_ / "tree"));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

TEST_F(CliRemote, AttachFromJsonLinesBase64AndPathKeysWithP7s) {
  const std::string m = module("r.ko");
  auto r = run(M() + " sign --prepare - --cert " + q(key("rsa.crt")) + " --hash sha256 " + q(m));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto l = jsonl(r.out).at(0);
  EXPECT_EQ(l.at("to_sign_type"), "digest");
  EXPECT_EQ(l.at("digest_info").get<std::string>(),
            "3031300d060960864801650304020105000420" + l.at("to_sign").get<std::string>());
  spit(d_ / "m.jsonl", r.out);
  spit(d_ / "tbs.bin", from_hex(l.at("to_sign").get<std::string>()));
  r = run(openssl() + " pkeyutl -sign -inkey " + q(key("rsa.pem")) + " -in " + q(d_ / "tbs.bin") +
          " -pkeyopt digest:sha256 | base64 -w0");
  ASSERT_EQ(r.status, 0) << r.err;
  spit(d_ / "s.jsonl", json{{"path", m}, {"signature_base64", r.out}}.dump() + "\n");
  r = run(M() + " sign --attach " + q(d_ / "m.jsonl") + " --signatures " + q(d_ / "s.jsonl") + " --p7s");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, m + ": signed (RSA, no signedAttrs, sha256, CMS 416 bytes)\n");
  EXPECT_EQ(slurp(m + ".p7s").size(), 416u);
  const std::string one = module("one.ko");
  r = run(M() + " sign --key " + q(key("rsa.pem")) + " --cert " + q(key("rsa.crt")) + " --hash sha256 --p7s " + q(one));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(m), slurp(one));
  EXPECT_EQ(slurp(m + ".p7s"), slurp(one + ".p7s"));
}

TEST_F(CliRemote, BadSignatureChangedModuleMissingSignature) {
  const std::string a = module("a.ko"), b = module("b.ko", 5000), c = module("c.ko", 6000);
  const std::string man = d_ / "m.jsonl";
  auto r = run(M() + " sign -q --prepare " + q(man) + " --cert " + q(key("ec.crt")) + " --hash sha256 " + q(a) + " " +
               q(b) + " " + q(c));
  ASSERT_EQ(r.status, 0) << r.err;
  sign_all(man, "ec.pem", "-pkeyopt digest:sha256", d_ / "sigs");
  // a: a signature of another digest (b's); b: changed after prepare; c: fine.
  ASSERT_EQ(run("cp " + q(d_ / "sigs/2.sig") + " " + q(d_ / "sigs/1.sig")).status, 0);
  Bytes changed = pattern(5000);
  changed[0] ^= 1;
  spit(b, changed);
  r = run(M() + " sign --attach " + q(man) + " --signatures " + q(d_ / "sigs"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, c + ": signed (ECDSA-P256, no signedAttrs, sha256, CMS " +
                       std::to_string(slurp(c).size() - 6000 - 40) + " bytes)\n");
  EXPECT_NE(r.err.find("modsign: " + a + ": signature does not verify with " + key("ec.crt") + " (the signature from " +
                       d_ / "sigs/1.sig" + ")\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("modsign: " + b + ": changed since prepare (SHA-256 differs)\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("modsign: attach: 1 done, 2 failed, 0 skipped"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(a), pattern(4096));
  EXPECT_EQ(slurp(b), changed);
  // A missing N.sig names the module; the JSON form refuses an unknown path before anything.
  ASSERT_EQ(run("rm " + q(d_ / "sigs/1.sig")).status, 0);
  r = run(M() + " sign --attach " + q(man) + " --signatures " + q(d_ / "sigs"));
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("modsign: " + a + ": no signature: " + d_.path() + "/sigs/1.sig: "), std::string::npos) << r.err;
  spit(d_ / "s.jsonl", std::string("{\"path\":\"/nowhere.ko\",\"signature\":\"00\"}\n"));
  r = run(M() + " sign --attach " + q(man) + " --signatures " + q(d_ / "s.jsonl"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d_.path() + "/s.jsonl: line 1: path /nowhere.ko is not in the manifest\n");
  EXPECT_EQ(slurp(a), pattern(4096));
}

TEST_F(CliRemote, PathThatIsNotUtf8IsRefusedAtPrepare) {
  const std::string bad = module("bad\xff.ko"), good = module("good.ko");
  auto r = run(M() + " sign -q --prepare - --cert " + q(key("rsa.crt")) + " " + q(bad) + " " + q(good));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d_.path() + "/bad\xff.ko: the path is not UTF-8, which a JSON manifest cannot hold\n");
  const auto lines = jsonl(r.out);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].at("index"), 1);
  EXPECT_EQ(lines[0].at("path"), good);
}

TEST_F(CliRemote, UsageErrors) {
  const std::string m = module();
  struct Case {
    std::string args, err;
  };
  for (const Case& c : std::vector<Case>{
           {"sign " + q(m), "modsign: --key is required\nRun 'modsign sign --help' for more information.\n"},
           {"sign --prepare x.jsonl " + q(m),
            "modsign: --prepare needs --cert (the signer's certificate; the private "
            "key stays with the signer)\n"},
           {"sign --prepare x.jsonl --key k.pem " + q(m),
            "modsign: --prepare and --attach take no --key (the private key stays with the signer)\n"},
           {"sign --attach x.jsonl " + q(m), "modsign: --attach needs --signatures FILE|DIR\n"},
           {"sign --attach x.jsonl --prepare y.jsonl --signatures s",
            "modsign: --prepare and --attach are separate "
            "steps: give one\n"},
           {"sign --signatures s " + q(m), "modsign: --signatures is an option of --attach\n"},
           {"sign --prepare - --cert " + q(key("mldsa.crt")) + " --deterministic " + q(m),
            "modsign: --deterministic is the signer's choice with --prepare/--attach (e.g. openssl pkeyutl -pkeyopt "
            "deterministic:1)\n"},
           {"sign --prepare - --cert " + q(key("mldsa.crt")) + " -o y.ko " + q(m),
            "modsign: -o, --p7s and --p7s-only are options of --attach, which writes the modules\n"},
           {"sign --attach x.jsonl --signatures s " + q(m),
            "modsign: --attach takes its modules from MANIFEST (no "
            "MODULE or -r)\n"},
       }) {
    auto r = run(M() + " " + c.args);
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_EQ(r.err, c.err) << c.args;
  }
  EXPECT_EQ(slurp(m), pattern(4096));
}

TEST_F(CliRemote, DeterministicSignAndSignFileTwiceIdentical) {
  for (const std::string k : {"mldsa.pem", "ec.pem"}) {
    const std::string a = module("a.ko"), b = module("b.ko");
    for (const std::string& m : {a, b}) {
      auto r = run(M() + " sign -q --deterministic --key " + q(key(k)) + " --cert " +
                   q(key(k == "ec.pem" ? "ec.crt" : "mldsa.crt")) + " " + q(m));
      ASSERT_EQ(r.status, 0) << r.err;
    }
    EXPECT_EQ(slurp(a), slurp(b)) << k;
    const std::string cert = key(k == "ec.pem" ? "ec.crt" : "mldsa.crt");
    const std::string c = module("c.ko"), e = module("e.ko");
    for (const std::string& m : {c, e}) {
      auto r = run(M() + " sign-file --deterministic sha512 " + q(key(k)) + " " + q(cert) + " " + q(m));
      ASSERT_EQ(r.status, 0) << r.err;
    }
    EXPECT_EQ(slurp(c), slurp(e)) << k;
    EXPECT_EQ(slurp(c), slurp(a)) << k << ": sign-file and sign make the same default form";
  }
}

// Hostile manifests (hostile-input review): each refused with exit 3 before any module or
// signature file is written.
TEST_F(CliRemote, HostileManifestsAreRefusedBeforeAnythingIsWritten) {
  const std::string a = module("a.ko");
  const std::string man = d_ / "m.jsonl";
  auto r = run(M() + " sign -q --prepare " + q(man) + " --cert " + q(key("ec.crt")) + " --hash sha256 " + q(a));
  ASSERT_EQ(r.status, 0) << r.err;
  sign_all(man, "ec.pem", "-pkeyopt digest:sha256", d_ / "sigs");
  const Bytes sig = slurp(d_ / "sigs/1.sig");
  const std::string line = text(man);
  // -o naming the module's own signature file.
  r = run(M() + " sign --attach " + q(man) + " --signatures " + q(d_ / "sigs") + " -o " + q(d_ / "sigs/1.sig"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d_.path() + "/sigs/1.sig: is the same file as its signature file " + d_.path() +
                       "/sigs/1.sig; refusing to overwrite it\n");
  EXPECT_EQ(slurp(d_ / "sigs/1.sig"), sig);
  // The same module twice (two workers would write it).
  std::string twice = line + line;
  twice.replace(twice.find("\"index\":1", line.size()), 9, "\"index\":2");
  spit(man, twice);
  ASSERT_EQ(run("cp " + q(d_ / "sigs/1.sig") + " " + q(d_ / "sigs/2.sig")).status, 0);
  r = run(M() + " sign --attach " + q(man) + " --signatures " + q(d_ / "sigs") + " -j 2");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + man + ": indexes 1 and 2 name the same module " + a + "; nothing was written\n");
  // A NUL inside the path, an index that is not a whole number, 0, and an empty manifest.
  const std::pair<std::string, std::string> bad[] = {
      {"\"path\":\"" + a + "\"", "\"path\":\"" + a + "\\u0000x\""},
      {"\"index\":1", "\"index\":-1"},
      {"\"index\":1", "\"index\":1.0"},
      {"\"index\":1", "\"index\":0"},
  };
  // (A NUL is refused by the JSON reader itself, as in every JSON modsign reads.)
  const std::string why[] = {"\\u0000 (a NUL) in a string", "\"index\" is not a whole number from 0 to 2^64-1",
                             "\"index\" is not a whole number from 0 to 2^64-1", "\"index\" 0: indexes start at 1"};
  for (std::size_t i = 0; i < 4; ++i) {
    std::string l = line;
    ASSERT_NE(l.find(bad[i].first), std::string::npos) << bad[i].first;
    l.replace(l.find(bad[i].first), bad[i].first.size(), bad[i].second);
    spit(man, l);
    r = run(M() + " sign --attach " + q(man) + " --signatures " + q(d_ / "sigs"));
    EXPECT_EQ(r.status, 3) << why[i];
    EXPECT_EQ(r.err, "modsign: " + man + ": line 1: " + why[i] + "\n");
  }
  // The signatures file's "index" is held to the manifest's rule (a hostile review of
  // session 19: 1.9 was taken as 1, -1 as 2^64-1).
  const std::string sigs = d_ / "sigs.jsonl";
  spit(man, line);
  for (const std::string index : {"1.9", "-1"}) {
    spit(sigs, "{\"index\":" + index + ",\"signature\":\"00\"}\n");
    r = run(M() + " sign --attach " + q(man) + " --signatures " + q(sigs));
    EXPECT_EQ(r.status, 3) << index;
    EXPECT_EQ(r.err, "modsign: " + sigs + ": line 1: \"index\" is not a whole number from 0 to 2^64-1\n") << index;
  }
  // A line that is no JSON says why (a number out of a double's range; a syntax error), one
  // that is JSON but no object says that (a hostile review of session 19: both were "not a
  // JSON object").
  for (const auto& [text, why] :
       {std::pair{"{\"index\":1e400,\"signature\":\"00\"}", "not JSON: number overflow parsing '1e400'"},
        std::pair{"[1]", "not a JSON object"}}) {
    spit(sigs, std::string(text) + "\n");
    r = run(M() + " sign --attach " + q(man) + " --signatures " + q(sigs));
    EXPECT_EQ(r.status, 3) << text;
    EXPECT_EQ(r.err, "modsign: " + sigs + ": line 1: " + why + "\n") << text;
  }
  spit(sigs, "{\"index\":\n");
  r = run(M() + " sign --attach " + q(man) + " --signatures " + q(sigs));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err.rfind("modsign: " + sigs + ": line 1: not JSON: column 10: syntax error while parsing value", 0), 0u)
      << r.err;
  // nlohmann's reader stops at a NUL byte, so what follows went unread and the line was
  // taken (session 20's hostile review): refused.
  constexpr char kNulLine[] = "{\"index\":1}\0 garbage\n";
  spit(sigs, std::string(kNulLine, sizeof kNulLine - 1));
  r = run(M() + " sign --attach " + q(man) + " --signatures " + q(sigs));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + sigs + ": line 1: a NUL byte in the line: not JSON\n");
  // An empty manifest is said first, whatever the signatures are.
  spit(man, std::string());
  for (const std::string& s : {std::string(d_ / "sigs"), sigs}) {
    r = run(M() + " sign --attach " + q(man) + " --signatures " + q(s));
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.err, "modsign: " + man + ": no modules in the manifest; nothing to attach\n");
  }
  EXPECT_EQ(slurp(a), pattern(4096));
}

// An edited manifest line: each recorded value is checked against the certificate, the
// module and the other values before anything is written; the refusal names the manifest
// line, the module and the field (exit 3).
TEST_F(CliRemote, EditedManifestFieldsAreRefusedBeforeAnythingIsWritten) {
  const std::string a = module("a.ko"), ml = module("ml.ko");
  const std::string man = d_ / "m.jsonl", mlman = d_ / "ml.jsonl";
  auto r = run(M() + " sign -q --prepare " + q(man) + " --cert " + q(key("rsa.crt")) + " --hash sha256 " + q(a));
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(M() + " sign -q --prepare " + q(mlman) + " --cert " + q(key("mldsa.crt")) + " " + q(ml));
  ASSERT_EQ(r.status, 0) << r.err;
  sign_all(man, "rsa.pem", "-pkeyopt digest:sha256", d_ / "sigs");
  sign_all(mlman, "mldsa.pem", "-pkeyopt mu:1", d_ / "mlsigs");
  struct Case {
    std::string manifest, from, to, why;
  };
  const std::vector<Case> cases = {
      {man, "\"algorithm\":\"RSA\"", "\"algorithm\":\"ECDSA-P256\"",
       a + ": \"algorithm\" is ECDSA-P256, the certificate's key is RSA"},
      {man, "\"compression\":null", "\"compression\":\"xz\"",
       a + ": \"compression\" is xz, the module is not compressed"},
      {man, "\"recompress\":false", "\"recompress\":true",
       a + ": \"recompress\" is true, the module is not compressed"},
      {man, "\"hash\":\"sha256\"", "\"hash\":\"sha512\"", a + ": \"hash\" is sha512 (64 bytes), to_sign has 32"},
      {man, "\"hash\":\"sha256\"", "\"hash\":\"sha999\"", a + ": \"hash\" is sha999, not a digest modsign knows"},
      {man, "\"form\":\"no signedAttrs\"", "\"form\":\"signedAttrs\"",
       a + ": \"form\" is signedAttrs, but the line has no signed_attrs_der"},
      {man, "\"to_sign_type\":\"digest\"", "\"to_sign_type\":\"mu\"",
       a + ": \"to_sign_type\" is mu, an RSA key signs a digest"},
      {mlman, "\"form\":\"no signedAttrs\"", "\"form\":\"signedAttrs\"",
       ml + ": \"form\" is signedAttrs, which makes to_sign_type signed-attrs, not mu"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.to);
    std::string l = text(c.manifest);
    ASSERT_NE(l.find(c.from), std::string::npos);
    l.replace(l.find(c.from), c.from.size(), c.to);
    spit(d_ / "edited.jsonl", l);
    r = run(M() + " sign --attach " + q(d_ / "edited.jsonl") + " --signatures " +
            q(c.manifest == man ? d_ / "sigs" : d_ / "mlsigs"));
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "modsign: " + d_ / "edited.jsonl" + ": line 1: " + c.why +
                         " (edited since prepare); nothing was written\n");
    EXPECT_EQ(slurp(a), pattern(4096));
    EXPECT_EQ(slurp(ml), pattern(4096));
  }
  // The manifests as prepared attach.
  r = run(M() + " sign -q --attach " + q(man) + " --signatures " + q(d_ / "sigs"));
  EXPECT_EQ(r.status, 0) << r.err;
}

// Every field of every line is checked against its module before any module is written
// (issue 29: an RSA "hash" edited to another of the same size, and "recompress" turned off
// for a compressed module, were caught only after the modules before them were written).
TEST_F(CliRemote, EditedFieldsOfALaterLineAreRefusedBeforeAnyModuleIsWritten) {
  const std::string a = module("a.ko"), b = module("b.ko", 5000);
  ASSERT_EQ(run("cp " + q(b) + " " + q(d_ / "c.ko") + " && xz --check=crc32 " + q(d_ / "c.ko")).status, 0);
  const std::string c = d_ / "c.ko.xz";
  const Bytes c_before = slurp(c);
  const std::string man = d_ / "m.jsonl";
  auto r = run(M() + " sign -q --prepare " + q(man) + " --cert " + q(key("rsa.crt")) + " --hash sha256 " + q(a) + " " +
               q(b));
  ASSERT_EQ(r.status, 0) << r.err;
  r = run(M() + " sign -q --prepare " + q(d_ / "c.jsonl") + " --cert " + q(key("rsa.crt")) +
          " --hash sha256 --recompress " + q(c));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string third = text(d_ / "c.jsonl");
  ASSERT_EQ(third.rfind("{\"index\":1,", 0), 0u) << third;
  spit(man, text(man) + "{\"index\":3," + third.substr(11));
  sign_all(man, "rsa.pem", "-pkeyopt digest:sha256", d_ / "sigs");
  const std::string lines = text(man);
  const std::size_t line2 = lines.find('\n') + 1, line3 = lines.find('\n', line2) + 1;
  struct Case {
    std::size_t from;
    std::string was, now, why;
  };
  for (const Case& k : std::vector<Case>{
           {line2, "\"hash\":\"sha256\"", "\"hash\":\"sha3-256\"",
            "line 2: " + b +
                ": \"to_sign\" is not what the module gives with the recorded hash sha3-256 and form no "
                "signedAttrs (edited since prepare)"},
           {line3, "\"recompress\":true", "\"recompress\":false",
            "line 3: " + c + ": \"recompress\" is false, the module is xz-compressed (edited since prepare)"},
           {line2, "\"index\":2", "\"index\":2,\"index\":3", "line 2: member \"index\" given twice"},
           {line2, "\"path\":\"", "\"path\":\"\\u0000", "line 2: \\u0000 (a NUL) in a string"},
       }) {
    SCOPED_TRACE(k.now);
    std::string l = lines;
    const std::size_t at = l.find(k.was, k.from);
    ASSERT_NE(at, std::string::npos);
    l.replace(at, k.was.size(), k.now);
    spit(d_ / "edited.jsonl", l);
    r = run(M() + " sign --attach " + q(d_ / "edited.jsonl") + " --signatures " + q(d_ / "sigs"));
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.out, "");
    const std::string tail = k.why.find("edited since prepare") != std::string::npos ? "; nothing was written\n" : "\n";
    EXPECT_EQ(r.err, "modsign: " + d_ / "edited.jsonl" + ": " + k.why + tail);
    EXPECT_EQ(slurp(a), pattern(4096));
    EXPECT_EQ(slurp(b), pattern(5000));
    EXPECT_EQ(slurp(c), c_before);
  }
  // A signatures file naming an index twice in one line.
  spit(d_ / "sigs.jsonl", "{\"index\":1,\"index\":2,\"signature\":\"00\"}\n");
  r = run(M() + " sign --attach " + q(man) + " --signatures " + q(d_ / "sigs.jsonl"));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + d_ / "sigs.jsonl" + ": line 1: member \"index\" given twice\n");
  EXPECT_EQ(slurp(a), pattern(4096));
  // The manifest as prepared attaches all three.
  r = run(M() + " sign -q --attach " + q(man) + " --signatures " + q(d_ / "sigs"));
  EXPECT_EQ(r.status, 0) << r.err;
}

// A manifest that cannot be written: no "prepared" line is printed (issue 29: they were
// printed before the write failed), exit 3.
TEST_F(CliRemote, NoPreparedLineWhenTheManifestCannotBeWritten) {
  const std::string a = module("a.ko");
  const auto r = run(M() + " sign --prepare " + q(d_ / "nodir/m.jsonl") + " --cert " + q(key("rsa.crt")) + " " + q(a));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("modsign: " + d_ / "nodir/m.jsonl" + ": ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("No such file or directory; no module was prepared\n"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(d_ / "nodir"));
}

// ML-DSA with signedAttrs through prepare/attach (its manifest has no signed_attrs_der: the
// SET is to_sign; the recheck refused every such line, hostile pass and the kernel tier).
TEST_F(CliRemote, MlDsaSignedAttrsAttachesAndEqualsItsCheck) {
  const std::string a = module("a.ko"), b = module("b.ko", 5000);
  const std::string man = d_ / "m.jsonl";
  auto r = run(M() + " sign -q --prepare " + q(man) + " --cert " + q(key("mldsa.crt")) + " --signed-attrs " + q(a) +
               " " + q(b));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(text(man).find("signed_attrs_der"), std::string::npos);
  sign_all(man, "mldsa.pem", "-rawin", d_ / "sigs");
  r = run(M() + " sign --attach " + q(man) + " --signatures " + q(d_ / "sigs"));
  EXPECT_EQ(r.status, 0) << r.err;
  r = run(M() + " verify --keyring " + q(key("mldsa.crt")) + " --kernel v7.0 --waive-mldsa-authattrs " + q(a) + " " +
          q(b));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
}

// What the hostile pass over attach found, each refused before any module is touched
// (exit 3): a DIR/N.sig for an index the manifest does not have, a signature that is not
// hex, a signatures line giving both "index" and "path", "compression": "".  And a
// --prepare that prepares nothing leaves an existing manifest as it was.
TEST_F(CliRemote, AttachRefusesStrayOrMalformedSignaturesUpFront) {
  const std::string a = module("a.ko"), b = module("b.ko", 5000);
  const std::string man = d_ / "m.jsonl";
  auto r = run(M() + " sign -q --prepare " + q(man) + " --cert " + q(key("rsa.crt")) + " --hash sha256 " + q(a) + " " +
               q(b));
  ASSERT_EQ(r.status, 0) << r.err;
  sign_all(man, "rsa.pem", "-pkeyopt digest:sha256", d_ / "sigs");
  auto refused = [&](const std::string& manifest, const std::string& sigs, const std::string& message) {
    const auto res = run(M() + " sign --attach " + q(manifest) + " --signatures " + q(sigs));
    EXPECT_EQ(res.status, 3);
    EXPECT_EQ(res.err, "modsign: " + message + "\n");
    EXPECT_EQ(slurp(a), pattern(4096));
    EXPECT_EQ(slurp(b), pattern(5000));
  };
  for (const char* stray : {"99.sig", "02.sig", "0.sig"}) {
    SCOPED_TRACE(stray);
    spit(d_ / "sigs" + "/" + stray, "x");
    refused(man, d_ / "sigs",
            d_ / "sigs" + "/" + stray + ": no index " + std::string(stray).substr(0, std::string(stray).size() - 4) +
                " in the manifest");
    std::filesystem::remove(d_ / "sigs" + "/" + stray);
  }
  const std::string good = to_hex(slurp(d_ / "sigs/1.sig"));
  spit(d_ / "s.jsonl", "{\"index\":1,\"signature\":\"" + good + "\"}\n{\"index\":2,\"signature\":\"zz\"}\n");
  refused(man, d_ / "s.jsonl", d_ / "s.jsonl" + ": line 2: \"signature\" is not hex");
  spit(d_ / "s.jsonl", "{\"index\":1,\"path\":" + json(b).dump() + ",\"signature\":\"" + good + "\"}\n");
  refused(man, d_ / "s.jsonl", d_ / "s.jsonl" + ": line 1: gives both \"index\" and \"path\": give one");
  std::string l = text(man);
  l.replace(l.find("\"compression\":null"), 18, "\"compression\":\"\"");
  spit(d_ / "e.jsonl", l);
  refused(d_ / "e.jsonl", d_ / "sigs",
          d_ / "e.jsonl" + ": line 1: \"compression\" is \"\": null, or the format's name");
  // Once the modules are signed, a --prepare of them prepares nothing: the old manifest stays.
  r = run(M() + " sign -q --attach " + q(man) + " --signatures " + q(d_ / "sigs"));
  ASSERT_EQ(r.status, 0) << r.err;
  const Bytes before = slurp(man);
  r = run(M() + " sign --prepare " + q(man) + " --cert " + q(key("rsa.crt")) + " " + q(a));
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("modsign: " + man + ": not written: no module was prepared\n"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(man), before);
}

// An attach run again after a partial failure: the module attached the first time is
// recognised ("already attached", left as it is), the one that failed is signed now.
TEST_F(CliRemote, AttachAgainAfterAPartialFailure) {
  const std::string a = module("a.ko"), b = module("b.ko", 5000), c = module("c.ko", 6000);
  const std::string man = d_ / "m.jsonl";
  auto r = run(M() + " sign -q --prepare " + q(man) + " --cert " + q(key("rsa.crt")) + " --hash sha256 " + q(a) + " " +
               q(b) + " " + q(c));
  ASSERT_EQ(r.status, 0) << r.err;
  sign_all(man, "rsa.pem", "-pkeyopt digest:sha256", d_ / "sigs");
  const Bytes good = slurp(d_ / "sigs/2.sig");
  Bytes bad = good;
  bad[10] ^= 1;
  spit(d_ / "sigs/2.sig", bad);
  r = run(M() + " sign --attach " + q(man) + " --signatures " + q(d_ / "sigs"));
  EXPECT_EQ(r.status, 3);
  const Bytes signed_a = slurp(a), signed_c = slurp(c);
  EXPECT_EQ(signed_a.size(), 4096u + 416 + 40);
  EXPECT_EQ(slurp(b), pattern(5000));
  spit(d_ / "sigs/2.sig", good);
  r = run(M() + " sign --attach " + q(man) + " --signatures " + q(d_ / "sigs"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, a + ": already attached (it carries this signature)\n" + b +
                       ": signed (RSA, no signedAttrs, sha256, CMS 416 bytes)\n" + c +
                       ": already attached (it carries this signature)\n");
  EXPECT_EQ(slurp(a), signed_a);
  EXPECT_EQ(slurp(c), signed_c);
  EXPECT_EQ(slurp(b).size(), 5000u + 416 + 40);
  // A module signed since prepare with another signature is still "changed since prepare".
  spit(d_ / "sigs/1.sig", slurp(d_ / "sigs/3.sig"));
  r = run(M() + " sign --attach " + q(man) + " --signatures " + q(d_ / "sigs"));
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("modsign: " + a + ": changed since prepare (4552 bytes, prepared with 4096)\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(slurp(a), signed_a);
}

}  // namespace
}  // namespace modsign::test::cli_tests
