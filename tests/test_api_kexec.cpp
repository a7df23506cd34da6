// kexec_verdict() (include/modsign/kexec.hpp) on Debian's signed vmlinuz and changed copies
// (sbattach --remove, sbsign with other keys, byte edits), each with its exact errno; the
// kernel's image digest against `pesign -h`, trusted re-signed images against sbverify, and
// `modsign verify --usage kexec` (output, JSON, exit statuses).  The same cases run against
// real kernels in tools/conformance/cases_kexec.py.
#include <gtest/gtest.h>

#include <memory>

#include <nlohmann/json.hpp>

#include "efi_binaries_support.hpp"
#include "modsign/modsign.hpp"
#include "test_support.hpp"

namespace modsign {
namespace {
using test::sh;

using test::q;

std::string field(const std::string& out, const std::string& k) {
  const auto pos = out.find(k + "=");
  return pos == std::string::npos ? std::string()
                                  : out.substr(pos + k.size() + 1, out.find('\n', pos) - pos - k.size() - 1);
}

/// Debian's vmlinuz and the images made from it, once.
struct Images {
  test::TempDir dir;
  std::string signed_, unsigned_, flipped, unknown, unknown_cert, test_rsa, test_rsa_flipped, appended, revision;
  std::string builtin, signer;  ///< the kernel's built-in certificate; the image signer's certificate (PEM)
  std::string skip;
};

std::string sb_sign(const Images& im, const std::string& key, const std::string& cert, const std::string& name) {
  const std::string out = im.dir / name;
  sh("sbsign --key " + q(key) + " --cert " + q(cert) + " --output " + q(out) + " " + q(im.unsigned_) + " 2>&1");
  return out;
}

std::string edited(const Images& im, const std::string& from, const std::string& name, std::size_t at, std::uint8_t x) {
  Bytes b = test::slurp(from);
  b.at(at == SIZE_MAX ? b.size() / 2 : at) ^= x;
  test::spit(im.dir / name, b);
  return im.dir / name;
}

/// File offset of the Certificate Table (data directory 4) of a PE32+ image.
std::size_t cert_table(const Bytes& b) {
  auto u32 = [&](std::size_t o) {
    return std::size_t{b[o]} | b[o + 1] << 8 | b[o + 2] << 16 | std::size_t{b[o + 3]} << 24;
  };
  return u32(u32(0x3c) + 24 + 112 + 32);
}

const Images& images() {
  // Destroyed at exit, so the image copies (about 110 MB) go with the process.
  static const std::unique_ptr<Images> im = [] {
    auto r = std::make_unique<Images>();
    for (const char* tool : {"sbsign", "sbattach", "sbverify", "pesign"})
      if (test::run(std::string("command -v ") + tool).status != 0)
        ADD_FAILURE() << tool << " is not installed (Debian packages sbsigntool, pesign; tools/check installs them)";
    auto f = test::run(q(test::source_dir() + "/tools/fetch-debian-kernel"));
    if (f.status == 77) {
      r->skip = "no Debian kernel package reachable: " + f.err;
      return r;
    }
    EXPECT_EQ(f.status, 0) << f.err;
    r->signed_ = r->dir / "signed.efi";
    sh("cp " + q(field(f.out, "VMLINUZ")) + " " + q(r->signed_));
    r->builtin = field(f.out, "DIR") + "/builtin-1.der";
    r->unsigned_ = r->dir / "unsigned.efi";
    sh("cp " + q(r->signed_) + " " + q(r->unsigned_) + " && sbattach --remove " + q(r->unsigned_));
    r->flipped = edited(*r, r->signed_, "flipped.efi", SIZE_MAX, 0x01);
    const std::string ukey = r->dir / "unknown.key";
    r->unknown_cert = r->dir / "unknown.crt";
    sh(test::openssl() + " req -new -x509 -newkey rsa:2048 -nodes -keyout " + q(ukey) + " -out " + q(r->unknown_cert) +
       " -subj /CN=kexec-unknown -days 3650 2>&1");
    r->unknown = sb_sign(*r, ukey, r->unknown_cert, "unknown.efi");
    const std::string keys = test::source_dir() + "/tests/kernel/keys/";
    r->test_rsa = sb_sign(*r, keys + "rsa.key.pem", keys + "rsa.cert.pem", "rsa.efi");
    r->test_rsa_flipped = edited(*r, r->test_rsa, "rsa-flipped.efi", SIZE_MAX, 0x01);
    Bytes app = test::slurp(r->test_rsa);
    app.insert(app.end(), 8, 0);
    r->appended = r->dir / "rsa-appended.efi";
    test::spit(r->appended, app);
    const Bytes s = test::slurp(r->signed_);
    r->revision = edited(*r, r->signed_, "revision.efi", cert_table(s) + 5, 0x03);  // wRevision 0x0200 -> 0x0100
    // The signer's certificate, from the image's PKCS#7 (sbverify --list names it).
    r->signer = r->dir / "signer.pem";
    const std::string p7 = r->dir / "sig.p7";
    sh("sbattach --detach " + q(p7) + " " + q(r->signed_));
    sh(test::openssl() + " pkcs7 -inform DER -in " + q(p7) + " -print_certs | " + test::openssl() + " x509 -out " +
       q(r->signer));
    return r;
  }();
  return *im;
}

#define NEED_IMAGES()          \
  const Images& im = images(); \
  if (!im.skip.empty()) GTEST_SKIP() << im.skip;

TrustStore trust(const std::vector<std::string>& certs, const std::vector<std::string>& blacklists = {},
                 const std::vector<std::string>& revoked = {}) {
  return TrustStore::load({certs, blacklists, revoked, {}, false}, *KernelProfile::parse("v6"));
}

KexecVerdict verdict(const std::string& path, const TrustStore& t, bool force = false, bool lockdown = false,
                     const TrustStore* platform = nullptr) {
  KernelProfile p = *KernelProfile::parse("v6");
  p.set_lockdown(lockdown);
  KexecOptions o;
  o.sig_force = force;
  return kexec_verdict_file(path, t, platform, p, o);
}

TEST(ApiKexec, DebianSignedImageOnDebianKeyrings) {
  NEED_IMAGES();
  const TrustStore builtin = trust({im.builtin});
  // Debian's kernels trust its Secure Boot CA only through the platform/machine keyrings
  // (UEFI db, shim's MOK); the built-in keyring holds the build-time module key alone.
  auto v = verdict(im.signed_, builtin);
  EXPECT_EQ(v.outcome, KexecOutcome::loads_unverified);
  EXPECT_EQ(v.sig_errno, KErr::enokey);
  EXPECT_EQ(v.load_errno, KErr::none);
  EXPECT_EQ(v.err, KErr::enokey);
  EXPECT_EQ(v.keyring, "secondary");
  ASSERT_EQ(v.signers.size(), 1u);
  EXPECT_EQ(v.signers[0].digest_algo, "sha256");
  EXPECT_TRUE(v.signers[0].signed_attrs);
  v = verdict(im.signed_, builtin, true);
  EXPECT_EQ(v.outcome, KexecOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::enokey);
  v = verdict(im.signed_, builtin, false, true);
  EXPECT_EQ(v.outcome, KexecOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::eperm);
  EXPECT_EQ(v.sig_errno, KErr::enokey);
  // With the signer in the platform keyring: ENOKEY on secondary, then verified on platform.
  const TrustStore platform = trust({im.signer});
  v = verdict(im.signed_, builtin, true, false, &platform);
  EXPECT_EQ(v.outcome, KexecOutcome::loads) << v.reason;
  EXPECT_EQ(v.keyring, "platform");
  EXPECT_EQ(v.trusted_by, std::vector<std::string>{"Debian Secure Boot Signer 2022 - linux"});
  EXPECT_EQ(to_hex(v.image_digest), test::efi_binaries::pesign_hash(im.signed_));
  EXPECT_EQ(v.image_digest, v.signed_digest);
}

// An empty image: kimage_file_prepare_segments reads it with kernel_read_file first, which
// refuses it (EINVAL) before either architecture's probe (session 20's hostile review: it
// was the bzImage probe's ENOEXEC).
TEST(ApiKexec, AnEmptyImageIsEinvalBeforeTheProbe) {
  const test::TempDir d;
  test::spit(d / "empty", Bytes{});
  for (const KexecArch arch : {KexecArch::x86_64, KexecArch::arm64}) {
    KexecOptions o;
    o.arch = arch;
    const KexecVerdict v = kexec_verdict_file(d / "empty", trust({}), nullptr, *KernelProfile::parse("v6"), o);
    EXPECT_EQ(v.outcome, KexecOutcome::refused);
    EXPECT_EQ(v.err, KErr::einval);
    EXPECT_EQ(v.load_errno, KErr::einval);
    EXPECT_EQ(v.reason, "the kernel image is empty (kernel_read_file: EINVAL before the loader's probe)");
  }
}

TEST(ApiKexec, UnsignedFlippedUnknownAndBadWrapper) {
  NEED_IMAGES();
  const TrustStore builtin = trust({im.builtin});
  auto v = verdict(im.unsigned_, builtin, true);
  EXPECT_EQ(v.load_errno, KErr::enodata);
  EXPECT_EQ(v.reason, "Enforced kernel signature verification failed (ENODATA): PEFILE: Unsigned PE binary");
  EXPECT_EQ(verdict(im.flipped, builtin, true).load_errno, KErr::enokey);  // trust fails before the digest
  EXPECT_EQ(verdict(im.unknown, builtin, true).load_errno, KErr::enokey);
  v = verdict(im.revision, builtin, true);
  EXPECT_EQ(v.load_errno, KErr::enotsupp);
  EXPECT_EQ(static_cast<int>(v.load_errno), 524);
  EXPECT_EQ(v.reason,
            "Enforced kernel signature verification failed (ENOTSUPP): PEFILE: Signature is not revision 2.0");
  // Unforced: every failure loads, and the CLI says so with exit 1.
  EXPECT_EQ(verdict(im.revision, builtin).outcome, KexecOutcome::loads_unverified);
}

TEST(ApiKexec, ResignedWithATrustedKey) {
  NEED_IMAGES();
  const std::string keys = test::source_dir() + "/tests/kernel/keys/";
  const TrustStore t = trust({keys + "rsa.cert.pem"});
  auto v = verdict(im.test_rsa, t, true);
  EXPECT_EQ(v.outcome, KexecOutcome::loads) << v.reason;
  EXPECT_EQ(v.trusted_by, std::vector<std::string>{"modsign test RSA-3072"});
  EXPECT_EQ(sh("sbverify --cert " + q(keys + "rsa.cert.pem") + " " + q(im.test_rsa) + " 2>&1"),
            "Signature verification OK\n");
  // Re-signing leaves the image digest as pesign computes it for the unsigned image.
  EXPECT_EQ(to_hex(v.image_digest), test::efi_binaries::pesign_hash(im.unsigned_));
  v = verdict(im.test_rsa_flipped, t, true);
  EXPECT_EQ(v.load_errno, KErr::ekeyrejected);
  EXPECT_EQ(v.reason, "Enforced kernel signature verification failed (EKEYREJECTED): PEFILE: Digest mismatch");
  EXPECT_NE(v.image_digest, v.signed_digest);
  // Data after the Certificate Table: the kernel hashes FILE_SIZE - (headers and sections +
  // table size) bytes from the end of the sections, so the first 8 bytes of the table are
  // hashed instead of the appended ones: a mismatch.
  v = verdict(im.appended, t, true);
  EXPECT_EQ(v.load_errno, KErr::ekeyrejected);
  EXPECT_EQ(v.reason, "Enforced kernel signature verification failed (EKEYREJECTED): PEFILE: Digest mismatch");
}

TEST(ApiKexec, RevokedSignerAndDbxHash) {
  NEED_IMAGES();
  const TrustStore builtin = trust({im.builtin});
  const TrustStore platform = trust({im.signer});
  // The signer's certificate in the revocation list (CONFIG_SYSTEM_REVOCATION_KEYS, or a dbx
  // EFI_CERT_X509): is_key_on_revocation_list comes before the trust step, so the first
  // (secondary) pass already ends with EKEYREJECTED and the platform keyring is not tried.
  const TrustStore revoked = trust({im.builtin}, {}, {im.signer});
  auto v = verdict(im.signed_, revoked, true, false, &platform);
  EXPECT_EQ(v.load_errno, KErr::ekeyrejected);
  EXPECT_EQ(v.keyring, "secondary");
  EXPECT_NE(v.reason.find("Key is on the revocation list"), std::string::npos) << v.reason;
  // Its tbs: hash listed: the certificate is blacklisted in the message, EKEYREJECTED.
  const std::string tbs = sh(test::modsign_cli() + " blacklist entry --kernel v6 " + q(im.signer) + " 2>&1");
  const test::TempDir d;
  test::spit(d / "tbs.list", tbs);
  v = verdict(im.signed_, trust({im.builtin}, {d / "tbs.list"}), true, false, &platform);
  EXPECT_EQ(v.load_errno, KErr::ekeyrejected) << v.reason;
  // The image's Authenticode hash as a dbx-derived bin: entry changes nothing: no kexec path
  // consults bin: hashes (only IMA's is_binary_blacklisted does).
  const std::string hash = test::efi_binaries::pesign_hash(im.signed_);
  test::spit(d / "bin.list", "\"bin:" + hash + "\"\n");
  v = verdict(im.signed_, trust({im.builtin}, {d / "bin.list"}), true, false, &platform);
  EXPECT_EQ(v.outcome, KexecOutcome::loads) << v.reason;
  EXPECT_EQ(to_hex(v.image_digest), hash);
  // The same hash as a dbx EFI_CERT_SHA256 entry (what firmware compares): still loads.
  sh(test::modsign_cli() + " dbx add-hash --owner 77fa9abd-0359-4d32-bd60-28f4e78f784b -o " + q(d / "dbx.esl") + " " +
     hash);
  const TrustStore dbx = TrustStore::load({{im.builtin}, {}, {}, {d / "dbx.esl"}, false}, *KernelProfile::parse("v6"));
  EXPECT_EQ(dbx.blacklist_descriptions(), std::vector<std::string>{"bin:" + hash});
  v = verdict(im.signed_, dbx, true, false, &platform);
  EXPECT_EQ(v.outcome, KexecOutcome::loads) << v.reason;
}

TEST(ApiKexec, ProbeAndParseErrors) {
  NEED_IMAGES();
  const TrustStore builtin = trust({im.builtin});
  const test::TempDir d;
  test::spit(d / "short", Bytes(1023, 0));
  auto v = verdict(d / "short", builtin, true);
  EXPECT_EQ(v.load_errno, KErr::enoexec);
  EXPECT_EQ(v.sig_errno, KErr::none);  // never checked
  EXPECT_EQ(v.reason, "kexec-bzImage64: File is too short to be a bzImage");
  Bytes b = test::slurp(im.signed_);
  const std::size_t table = cert_table(b);
  auto with = [&](const std::string& name, const std::function<void(Bytes&)>& edit) {
    Bytes c = b;
    edit(c);
    test::spit(d / name, c);
    return verdict(d / name, builtin, true);
  };
  v = with("nomz", [](Bytes& c) { c[0] = 'X'; });  // the probe does not look at "MZ"; verify_pefile does
  EXPECT_EQ(v.load_errno, KErr::elibbad);
  EXPECT_EQ(v.reason, "Enforced kernel signature verification failed (ELIBBAD): PEFILE: no MZ signature");
  EXPECT_EQ(with("nohdrs", [](Bytes& c) { c[0x202] = 'X'; }).load_errno, KErr::enoexec);
  EXPECT_EQ(with("long3", [&](Bytes& c) { c[table + 9] = 0x83; }).load_errno, KErr::emsgsize);
  EXPECT_EQ(with("notseq", [&](Bytes& c) { c[table + 8] = 0x31; }).load_errno, KErr::elibbad);
  v = with("tiny-wrapper", [&](Bytes& c) { c[table] = 10, c[table + 1] = 0, c[table + 2] = 0, c[table + 3] = 0; });
  EXPECT_EQ(v.load_errno, KErr::ekeyrejected);
  EXPECT_EQ(v.reason, "Enforced kernel signature verification failed (EKEYREJECTED): PEFILE: Signature data missing");
  EXPECT_EQ(with("type", [&](Bytes& c) { c[table + 6] = 1; }).load_errno, KErr::enotsupp);
  EXPECT_EQ(with("wrapper-too-long", [&](Bytes& c) { c[table + 3] = 0x7f; }).load_errno, KErr::elibbad);
}

// bzImage64_probe's XLF_5LEVEL check, which the real kernels under qemu's "max" CPU (LA57)
// make: an image without the flag is ENOEXEC there (kexec-probe-no-xlf-5level in the
// conformance cases), and is checked for its signature on a 4-level machine.
TEST(ApiKexec, FiveLevelPagingRefusesAnImageWithoutXlf5Level) {
  NEED_IMAGES();
  const TrustStore builtin = trust({im.builtin});
  const TrustStore test_key = trust({test::source_dir() + "/tests/kernel/keys/rsa.cert.pem"});
  const test::TempDir d;
  Bytes b = test::slurp(im.test_rsa);
  ASSERT_EQ(b[0x236] & 0x20, 0x20);  // Debian's image has XLF_5LEVEL
  b[0x236] = static_cast<std::uint8_t>(b[0x236] & ~0x20);
  test::spit(d / "no5level", b);
  KexecOptions o;
  o.sig_force = true;
  const KernelProfile v6 = *KernelProfile::parse("v6");
  auto v = kexec_verdict_file(d / "no5level", test_key, nullptr, v6, o);
  EXPECT_EQ(v.load_errno, KErr::ekeyrejected);  // 4-level: probed, then the digest no longer matches
  EXPECT_EQ(v.sig_errno, KErr::ekeyrejected);
  o.five_level_paging = true;
  v = kexec_verdict_file(d / "no5level", test_key, nullptr, v6, o);
  EXPECT_EQ(v.outcome, KexecOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::enoexec);
  EXPECT_EQ(v.sig_errno, KErr::none);  // never checked
  EXPECT_EQ(v.reason, "kexec-bzImage64: bzImage cannot handle 5-level paging mode.");
  // An image with the flag is checked as before on a 5-level machine.
  EXPECT_EQ(kexec_verdict_file(im.test_rsa, test_key, nullptr, v6, o).outcome, KexecOutcome::loads);
  // arm64's loader does not look at the paging mode: the library ignores the option there.
  o.arch = KexecArch::arm64;
  EXPECT_EQ(kexec_verdict_file(d / "no5level", builtin, nullptr, v6, o).load_errno, KErr::einval);
  // The CLI: the option, its label, and a usage error with another architecture.
  const std::string M = test::modsign_cli() + " verify --usage kexec --kernel v6 --kexec-sig-force --keyring " +
                        q(test::source_dir() + "/tests/kernel/keys/rsa.cert.pem");
  auto r = test::run(M + " --kexec-5level-paging --json " + q(d / "no5level"));
  EXPECT_EQ(r.status, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["load_errno"], "ENOEXEC");
  EXPECT_EQ(j["profile"], "v6+kexec-sig-force+5level");
  r = test::run(test::modsign_cli() + " verify --usage kexec --kexec-5level-paging --kexec-arch arm64 " +
                q(d / "no5level"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "modsign: --kexec-5level-paging: only the x86-64 loader (bzImage64_probe) checks the paging mode; an "
            "arm64 image is probed by another loader\n");
  r = test::run(test::modsign_cli() + " verify --kexec-5level-paging " + q(d / "no5level"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "modsign: --kexec-5level-paging requires --usage kexec\n");
}

TEST(CliKexec, VerifyUsageKexec) {
  NEED_IMAGES();
  const std::string M = test::modsign_cli() + " verify --usage kexec --kernel v6 --keyring " + q(im.builtin);
  auto r = test::run(M + " " + q(im.signed_));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, im.signed_ +
                       ": loads-unverified (ENOKEY): kernel signature verification failed (ENOKEY): no trusted key "
                       "matches the signer" +
                       test::kexec_load_scope("v6") + "\n");
  r = test::run(M + " --lockdown --json " + q(im.unsigned_));
  EXPECT_EQ(r.status, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "refused");
  EXPECT_EQ(j["errno"], "EPERM");
  EXPECT_EQ(j["sig_errno"], "ENODATA");
  EXPECT_EQ(j["load_errno"], "EPERM");
  EXPECT_EQ(j["usage"], "kexec");
  r = test::run(M + " --kexec-sig-force --platform-keyring " + q(im.signer) + " " + q(im.signed_));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            im.signed_ +
                ": loads (OK): signature verified (platform keyring): trusted key \"Debian Secure Boot Signer 2022 "
                "- linux\" (skid 14011249c2675ea8e5148542202005810584b25f, serial "
                "32a0287f841a036fa393c1e065c43ae6b2422643)" +
                test::kexec_load_scope("v6+kexec-sig-force") + "\n");
  // The key that vouched, in JSON too (a new user missed it); -q hides a verified image's
  // line as it hides a module's, not a failed one's.
  r = test::run(M + " --kexec-sig-force --json --platform-keyring " + q(im.signer) + " " + q(im.signed_));
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["trusted_keys"], nlohmann::json::parse(R"([{"cn":"Debian Secure Boot Signer 2022 - linux",
      "skid":"14011249c2675ea8e5148542202005810584b25f","serial":"32a0287f841a036fa393c1e065c43ae6b2422643"}])"));
  r = test::run(M + " -q --platform-keyring " + q(im.signer) + " " + q(im.signed_) + " " + q(im.unsigned_));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.find(im.signed_ + ":"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.rfind(im.unsigned_ + ": loads-unverified (ENODATA): ", 0), 0u) << r.out;
  r = test::run(M + " --kexec-sig-force " + q(im.revision));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, im.revision +
                       ": refused (ENOTSUPP): Enforced kernel signature verification failed (ENOTSUPP): PEFILE: "
                       "Signature is not revision 2.0 [kernel v6+kexec-sig-force]\n");
  // Usage errors (exit 2) and bad input (exit 3).
  EXPECT_EQ(
      test::run(test::modsign_cli() + " verify --kexec-sig-force --keyring " + q(im.builtin) + " " + q(im.signed_))
          .status,
      2);
  EXPECT_EQ(test::run(M + " --enforce " + q(im.signed_)).status, 2);
  EXPECT_EQ(test::run(M).status, 2);
  EXPECT_EQ(test::run(M + " --usage firmware " + q(im.signed_)).status, 2);
  r = test::run(M + " " + q(im.dir / "missing.efi"));
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("missing.efi"), std::string::npos) << r.err;
  // An error record has every key of a verdict record.
  r = test::run(M + " --json " + q(im.dir / "missing.efi"));
  EXPECT_EQ(r.status, 3);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "error");
  EXPECT_EQ(j["errno"], nullptr);
  EXPECT_EQ(j["arch"], "x86_64");
  EXPECT_EQ(j["predicts"], "kimage_validate_signature");
  EXPECT_EQ(j["profile"], "v6");
  EXPECT_EQ(j.size(), 17u) << j.dump();
}

// A trial found options of module loading accepted and ignored with --usage kexec
// (--kernel-config with CONFIG_KEXEC_SIG_FORCE=y predicted loads-unverified).  The
// configuration now gives the architecture and sig_force (kexec_options_of), --kernel-lacks
// applies, and the options kexec_file_load has no counterpart for are usage errors.
TEST(CliKexec, KernelConfigAndModuleOnlyOptions) {
  NEED_IMAGES();
  const test::TempDir d;
  // With the crypto Debian's image needs (an unset CONFIG_CRYPTO_RSA is a kernel without RSA).
  const std::string base =
      "CONFIG_X86_64=y\nCONFIG_CRYPTO_RSA=y\nCONFIG_CRYPTO_SHA256=y\nCONFIG_KEXEC_FILE=y\n"
      "CONFIG_KEXEC_SIG=y\nCONFIG_KEXEC_BZIMAGE_VERIFY_SIG=y\n";
  test::spit(d / "forced", base + "CONFIG_KEXEC_SIG_FORCE=y\n");
  test::spit(d / "unforced", base);
  test::spit(d / "nosig", std::string("CONFIG_X86_64=y\nCONFIG_KEXEC_FILE=y\n"));
  test::spit(d / "nofile", std::string("CONFIG_X86_64=y\n"));
  test::spit(d / "arm64",
             std::string("CONFIG_ARM64=y\nCONFIG_KEXEC_FILE=y\nCONFIG_KEXEC_SIG=y\nCONFIG_KEXEC_IMAGE_VERIFY_SIG=y\n"));
  const std::string M = test::modsign_cli() + " verify --usage kexec --keyring " + q(im.builtin);
  auto r = test::run(M + " --kernel-config " + q(d / "forced") + " " + q(im.signed_));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.substr(0, r.out.find(':', im.signed_.size() + 2)), im.signed_ + ": refused (ENOKEY)");
  r = test::run(M + " --kernel-config " + q(d / "unforced") + " " + q(im.signed_));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.substr(0, r.out.find(':', im.signed_.size() + 2)), im.signed_ + ": loads-unverified (ENOKEY)");
  r = test::run(M + " --kernel-config " + q(d / "nosig") + " " + q(im.signed_));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + (d / "nosig") +
                       ": CONFIG_KEXEC_SIG is not set: kexec_file_load checks no signature "
                       "(not modelled)\n");
  r = test::run(M + " --kernel-config " + q(d / "nofile") + " " + q(im.signed_));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + (d / "nofile") + ": CONFIG_KEXEC_FILE is not set: kexec_file_load is ENOSYS\n");
  // The configuration's architecture: arm64's probe refuses a bzImage; --kexec-arch may not contradict it.
  r = test::run(M + " --kernel-config " + q(d / "arm64") + " --json " + q(im.signed_));
  EXPECT_EQ(r.status, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["arch"], "arm64");
  EXPECT_EQ(j["load_errno"], "EINVAL");
  r = test::run(M + " --kernel-config " + q(d / "arm64") + " --kexec-arch x86_64 " + q(im.signed_));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "modsign: --kexec-arch x86_64: " + (d / "arm64") + " is an arm64 kernel's configuration\n");
  // --kernel-lacks rsa: no RSA to check the signature with: crypto_alloc_sig()'s ENOENT,
  // which public_key_verify_signature() returns as it is (as on Debian 12 without ECDSA).
  r = test::run(M + " --kexec-sig-force --platform-keyring " + q(im.signer) + " --kernel-lacks rsa --json " +
                q(im.signed_));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(nlohmann::json::parse(r.out)["load_errno"], "ENOENT") << r.out;
  r = test::run(M + " --kexec-sig-force --platform-keyring " + q(im.signer) + " --json " + q(im.signed_));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(nlohmann::json::parse(r.out)["load_errno"], "OK") << r.out;
  // Options of module loading: usage errors naming the option, nothing read.
  for (const std::string& opt : std::vector<std::string>{"--max-size 100", "--module-decompress xz",
                                                         "-r " + q(d.path()), "--waive-mldsa-authattrs"}) {
    r = test::run(M + " " + opt + " " + q(im.signed_));
    EXPECT_EQ(r.status, 2) << opt;
    EXPECT_EQ(r.err, "modsign: " + opt.substr(0, opt.find(' ')) + " does not apply to --usage kexec\n") << opt;
    EXPECT_EQ(r.out, "");
  }
  // -r with no image names -r, not the missing images (session 23's trial).
  r = test::run(test::modsign_cli() + " verify --usage kexec -r " + q(d.path()));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "modsign: -r does not apply to --usage kexec\n");
  // A configuration's module-loading switches (CONFIG_MODULE_SIG_FORCE, the ML-DSA waiver,
  // the decompressor) change no kexec verdict, so the label does not name them (it said
  // "v7.0+waiver+enforce+decompress=xz" for kexec_file_load).
  test::spit(d / "modules", base +
                                "CONFIG_LOCALVERSION=\"\"\nCONFIG_MODULE_SIG_FORCE=y\nCONFIG_MODULE_DECOMPRESS=y\n"
                                "CONFIG_MODULE_COMPRESS_XZ=y\nCONFIG_KEXEC_SIG_FORCE=y\n");
  r = test::run(M + " --kernel-config " + q(d / "modules") + " --json " + q(im.signed_));
  EXPECT_EQ(r.status, 1);
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["profile"].get<std::string>().find("enforce"), std::string::npos) << j["profile"];
  EXPECT_EQ(j["profile"].get<std::string>().find("decompress"), std::string::npos) << j["profile"];
  EXPECT_NE(j["profile"].get<std::string>().find("+kexec-sig-force"), std::string::npos) << j["profile"];
  // With no key at all, the note names --platform-keyring too.
  r = test::run(test::modsign_cli() + " verify --usage kexec --kernel v6 " + q(im.signed_));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "modsign: note: the keyring holds no key (give them with --keyring/--cert FILE, the .platform keyring's "
            "with --platform-keyring; a kernel build's own key is its certs/signing_key.x509), so every signature "
            "is predicted ENOKEY\n");
}

// A hostile review: a configuration without CONFIG_INTEGRITY_PLATFORM_KEYRING still retried
// ENOKEY against --platform-keyring (a false "loads"); one with two architectures was read as
// arm64; a probe's refusal printed "sig_errno": "OK" for a check that never ran.
TEST(CliKexec, PlatformKeyringArchitecturesAndUncheckedImages) {
  NEED_IMAGES();
  const test::TempDir d;
  const std::string base =
      "CONFIG_X86_64=y\nCONFIG_CRYPTO_RSA=y\nCONFIG_CRYPTO_SHA256=y\nCONFIG_KEXEC_FILE=y\n"
      "CONFIG_KEXEC_SIG=y\nCONFIG_KEXEC_BZIMAGE_VERIFY_SIG=y\nCONFIG_KEXEC_SIG_FORCE=y\n";
  test::spit(d / "noplatform", base);
  test::spit(d / "platform", base + "CONFIG_INTEGRITY_PLATFORM_KEYRING=y\n");
  test::spit(d / "two", base + "CONFIG_ARM64=y\n");
  KernelConfig cfg = read_kernel_config(d / "noplatform");
  ASSERT_TRUE(kexec_options_of(cfg));
  EXPECT_FALSE(kexec_options_of(cfg)->platform_keyring);
  EXPECT_TRUE(kexec_options_of(read_kernel_config(d / "platform"))->platform_keyring);
  const auto two = kexec_options_of(read_kernel_config(d / "two"));
  ASSERT_FALSE(two);
  EXPECT_EQ(two.error().code, KErr::eopnotsupp);
  EXPECT_EQ(two.error().reason, Error::Reason::unpredictable);
  // The library: options.platform_keyring false never consults `platform`.
  const TrustStore builtin = trust({im.builtin});
  const TrustStore platform = trust({im.signer});
  KexecOptions ko = *kexec_options_of(cfg);
  EXPECT_EQ(kexec_verdict_file(im.signed_, builtin, &platform, *KernelProfile::parse("v6"), ko).load_errno,
            KErr::enokey);
  ko.platform_keyring = true;
  EXPECT_EQ(kexec_verdict_file(im.signed_, builtin, &platform, *KernelProfile::parse("v6"), ko).outcome,
            KexecOutcome::loads);
  // The CLI: --platform-keyring against such a configuration is a usage error.
  const std::string M = test::modsign_cli() + " verify --usage kexec --keyring " + q(im.builtin);
  auto r = test::run(M + " --kernel-config " + q(d / "noplatform") + " --platform-keyring " + q(im.signer) + " " +
                     q(im.signed_));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "modsign: --platform-keyring: " + (d / "noplatform") +
                " has no CONFIG_INTEGRITY_PLATFORM_KEYRING: kexec_file_load never consults a platform keyring\n");
  EXPECT_EQ(r.out, "");
  r = test::run(M + " --kernel-config " + q(d / "platform") + " --platform-keyring " + q(im.signer) + " " +
                q(im.signed_));
  EXPECT_EQ(r.status, 0) << r.err;
  r = test::run(M + " --kernel-config " + q(d / "two") + " " + q(im.signed_));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + (d / "two") +
                       ": not exactly one of CONFIG_X86_64, CONFIG_ARM64 and CONFIG_S390 is y: "
                       "kexec_file_load of another architecture's image is not modelled\n");
  // The probe refuses: no signature was checked, so no sig_errno and no keyring.
  test::spit(d / "short", Bytes(1023, 0));
  r = test::run(M + " --kernel v6 --json " + q(d / "short"));
  EXPECT_EQ(r.status, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["load_errno"], "ENOEXEC");
  EXPECT_EQ(j["sig_errno"], nullptr);
  EXPECT_EQ(j["keyring"], nullptr);
  EXPECT_EQ(j.size(), 17u);
  r = test::run(M + " --kernel v6 --json " + q(im.unsigned_));
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["sig_errno"], "ENODATA");
  EXPECT_EQ(j["keyring"], "secondary");
}

}  // namespace
}  // namespace modsign
