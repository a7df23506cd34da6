// kexec_verdict() with KexecArch::arm64 (issue 27): arm64's only loader, kexec_image_ops
// (arch/arm64/kernel/kexec_image.c image_probe: the Image header's magic "ARM\x64" at byte
// 56, EINVAL without it), then the same PE/COFF signature check as x86's.  Input: Debian
// unstable's signed arm64 vmlinuz (an Image whose EFI stub carries Debian's Secure Boot
// signature; tools/fetch-debian-foreign --image-only), stripped, re-signed with sbsign and
// edited; sbverify confirms every signature modsign calls good or bad.  arm64 has no
// CONFIG_KEXEC_SIG_FORCE (only x86 selects ARCH_SUPPORTS_KEXEC_SIG_FORCE): a failed check
// loads unverified, or is EPERM under lockdown.
#include <gtest/gtest.h>

#include <memory>

#include <nlohmann/json.hpp>

#include "modsign/modsign.hpp"
#include "test_support.hpp"

namespace modsign {
namespace {
using test::sh;

using test::q;

struct Arm64Images {
  test::TempDir dir;
  std::string signed_, unsigned_, signer, test_rsa, flipped, skip;
};

const Arm64Images& images() {
  static const std::unique_ptr<Arm64Images> im = [] {
    auto r = std::make_unique<Arm64Images>();
    auto f = test::run(q(test::source_dir() + "/tools/fetch-debian-foreign") + " --suite unstable --image-only arm64");
    if (f.status == 77) {
      r->skip = "no Debian arm64 kernel package reachable: " + f.err;
      return r;
    }
    EXPECT_EQ(f.status, 0) << f.err;
    const auto at = f.out.find("VMLINUZ=");
    r->signed_ = r->dir / "Image.signed";
    sh("cp " + q(f.out.substr(at + 8, f.out.find('\n', at) - at - 8)) + " " + q(r->signed_));
    r->unsigned_ = r->dir / "Image.unsigned";
    sh("cp " + q(r->signed_) + " " + q(r->unsigned_) + " && sbattach --remove " + q(r->unsigned_));
    r->signer = r->dir / "signer.pem";
    const std::string p7 = r->dir / "sig.p7";
    sh("sbattach --detach " + q(p7) + " " + q(r->signed_));
    sh(test::openssl() + " pkcs7 -inform DER -in " + q(p7) + " -print_certs | " + test::openssl() + " x509 -out " +
       q(r->signer));
    const std::string keys = test::source_dir() + "/tests/kernel/keys/";
    r->test_rsa = r->dir / "Image.rsa";
    sh("sbsign --key " + q(keys + "rsa.key.pem") + " --cert " + q(keys + "rsa.cert.pem") + " --output " +
       q(r->test_rsa) + " " + q(r->unsigned_) + " 2>&1");
    Bytes b = test::slurp(r->test_rsa);
    b[b.size() / 2] ^= 0x01;
    r->flipped = r->dir / "Image.rsa-flipped";
    test::spit(r->flipped, b);
    return r;
  }();
  return *im;
}

#define NEED_IMAGES()               \
  const Arm64Images& im = images(); \
  if (!im.skip.empty()) GTEST_SKIP() << im.skip;

TrustStore trust(const std::string& cert) {
  return TrustStore::load({{cert}, {}, {}, {}, false}, *KernelProfile::parse("v7.0"));
}

KexecVerdict verdict(const std::string& path, const TrustStore& t, const TrustStore* platform = nullptr,
                     bool force = false, KexecArch arch = KexecArch::arm64, bool lockdown = false) {
  KexecOptions o;
  o.sig_force = force;
  o.arch = arch;
  auto profile = *KernelProfile::parse("v7.0");
  profile.set_lockdown(lockdown);
  return kexec_verdict_file(path, t, platform, profile, o);
}

TEST(ApiKexecArm64, DebianSignedImageThroughThePlatformKeyring) {
  NEED_IMAGES();
  const std::string keys = test::source_dir() + "/tests/kernel/keys/";
  const TrustStore builtin = trust(keys + "ecdsa.cert.pem"), platform = trust(im.signer);
  // Debian's signer is trusted only through the platform keyring (the UEFI db).
  auto v = verdict(im.signed_, builtin, &platform);
  EXPECT_EQ(v.outcome, KexecOutcome::loads);
  EXPECT_EQ(v.keyring, "platform");
  EXPECT_EQ(v.digest_algo, "sha256");
  EXPECT_EQ(v.signed_digest, v.image_digest);
  EXPECT_EQ(test::run("sbverify --cert " + q(im.signer) + " " + q(im.signed_)).status, 0);
  // Without it: ENOKEY, logged, and the image loads; under lockdown EPERM.
  v = verdict(im.signed_, builtin);
  EXPECT_EQ(v.outcome, KexecOutcome::loads_unverified);
  EXPECT_EQ(v.sig_errno, KErr::enokey);
  EXPECT_EQ(v.load_errno, KErr::none);
  v = verdict(im.signed_, builtin, nullptr, false, KexecArch::arm64, true);
  EXPECT_EQ(v.outcome, KexecOutcome::refused);
  EXPECT_EQ(v.sig_errno, KErr::enokey);
  EXPECT_EQ(v.load_errno, KErr::eperm);
  // The x86 loader does not take an arm64 Image: bzImage64_probe, ENOEXEC, no check.
  v = verdict(im.signed_, builtin, &platform, true, KexecArch::x86_64);
  EXPECT_EQ(v.load_errno, KErr::enoexec);
  EXPECT_EQ(v.sig_errno, KErr::none);
}

TEST(ApiKexecArm64, UnsignedResignedAndFlipped) {
  NEED_IMAGES();
  const std::string rsa = test::source_dir() + "/tests/kernel/keys/rsa.cert.pem";
  const TrustStore t = trust(rsa);
  auto v = verdict(im.unsigned_, t);
  EXPECT_EQ(v.outcome, KexecOutcome::loads_unverified);
  EXPECT_EQ(v.sig_errno, KErr::enodata);
  // sig_force asks for a kernel that cannot exist on arm64: ignored.
  v = verdict(im.unsigned_, t, nullptr, true);
  EXPECT_EQ(v.outcome, KexecOutcome::loads_unverified);
  EXPECT_EQ(v.load_errno, KErr::none);
  EXPECT_FALSE(kexec_sig_force_supported(KexecArch::arm64));
  EXPECT_TRUE(kexec_sig_force_supported(KexecArch::x86_64));
  v = verdict(im.test_rsa, t);
  EXPECT_EQ(v.outcome, KexecOutcome::loads) << v.reason;
  EXPECT_EQ(v.keyring, "secondary");
  EXPECT_EQ(test::run("sbverify --cert " + q(rsa) + " " + q(im.test_rsa)).status, 0);
  v = verdict(im.flipped, t);
  EXPECT_EQ(v.outcome, KexecOutcome::loads_unverified);
  EXPECT_EQ(v.sig_errno, KErr::ekeyrejected);
  EXPECT_NE(v.signed_digest, v.image_digest);  // "Digest mismatch"
  EXPECT_NE(test::run("sbverify --cert " + q(rsa) + " " + q(im.flipped)).status, 0);
}

TEST(ApiKexecArm64, ImageProbe) {
  NEED_IMAGES();
  const TrustStore t = trust(test::source_dir() + "/tests/kernel/keys/rsa.cert.pem");
  const test::TempDir d;
  Bytes b = test::slurp(im.test_rsa);
  EXPECT_EQ(std::string(b.begin() + 56, b.begin() + 60), "ARM\x64");
  b[56] = 'X';
  test::spit(d / "nomagic", b);
  auto v = verdict(d / "nomagic", t);
  EXPECT_EQ(v.outcome, KexecOutcome::refused);
  EXPECT_EQ(v.load_errno, KErr::einval);
  EXPECT_EQ(v.sig_errno, KErr::none);  // never checked
  EXPECT_EQ(v.reason, "kexec_file(Image): no arm64 Image magic \"ARM\\x64\" at byte 56");
  test::spit(d / "short", Bytes(b.begin(), b.begin() + 63));
  v = verdict(d / "short", t, nullptr, false);
  EXPECT_EQ(v.load_errno, KErr::einval);
  EXPECT_EQ(v.reason, "kexec_file(Image): shorter than struct arm64_image_header (64 bytes)");
}

TEST(CliKexecArm64, VerifyKexecArch) {
  NEED_IMAGES();
  const std::string M = test::modsign_cli() + " verify --usage kexec --keyring " +
                        q(test::source_dir() + "/tests/kernel/keys/rsa.cert.pem");
  auto r = test::run(M + " --kexec-arch arm64 --json " + q(im.test_rsa));
  EXPECT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["arch"], "arm64");
  EXPECT_EQ(j["outcome"], "loads");
  r = test::run(M + " --kexec-arch x86_64 " + q(im.test_rsa));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, im.test_rsa + ": refused (ENOEXEC): kexec-bzImage64: Not a bzImage" + test::kRefusedScope + "\n");
  // A failed check: loads-unverified, exit 1, the check's errno in the JSON.
  r = test::run(M + " --kexec-arch arm64 --json " + q(im.flipped));
  EXPECT_EQ(r.status, 1) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "loads-unverified");
  EXPECT_EQ(j["sig_errno"], "EKEYREJECTED");
  EXPECT_EQ(j["load_errno"], "OK");
  // No arm64 kernel has CONFIG_KEXEC_SIG_FORCE: a usage error, nothing read.
  r = test::run(M + " --kexec-arch arm64 --kexec-sig-force " + q(im.flipped));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--kexec-sig-force: an arm64 kernel cannot have CONFIG_KEXEC_SIG_FORCE"), std::string::npos)
      << r.err;
  r = test::run(test::modsign_cli() + " verify --kexec-arch arm64 --keyring " +
                q(test::source_dir() + "/tests/kernel/keys/rsa.cert.pem") + " " + q(im.test_rsa));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "modsign: --kexec-arch requires --usage kexec\n");
}

}  // namespace
}  // namespace modsign
