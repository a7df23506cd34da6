// `modsign dbx hash` and `modsign dbx check` on Debian's shim, GRUB and systemd-boot
// (tools/fetch-efi-binaries): hashes against pesign, db verdicts against sbverify with the
// real certificates (Debian's CA from shim's .vendor_cert, Microsoft's UEFI CA 2011 from
// shim's signature), and shim's own .sbatlevel against GRUB's .sbat.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "efi_binaries_support.hpp"
#include "modsign/efi_image.hpp"
#include "test_support.hpp"

namespace modsign {
namespace {

using test::q;
using test::efi_binaries::pesign_hash;
using test::efi_binaries::sh;

std::string cli() { return test::modsign_cli(); }

nlohmann::json hash_json(const std::string& path) {
  return nlohmann::json::parse(sh(cli() + " dbx hash --json " + q(path)));
}

/// The Debian 12 packages whose exact values the tests know.
bool deb12(const test::efi_binaries::Tools& efi) {
  return efi.shim.find("shim-signed_1.51~1+deb12u1+16.1-2~deb12u1/") != std::string::npos &&
         efi.grub.find("grub-efi-amd64-signed_1+2.06+13+deb12u2/") != std::string::npos;
}

/// d/debian-ca.der: the vendor certificate Debian's shim trusts (its .vendor_cert section:
/// u32 authorized size, deauthorized size, authorized offset, deauthorized offset, then
/// the certificate and the vendor dbx); d/vendor-dbx.esl: that vendor dbx.
void vendor_cert(const std::string& shim, const test::TempDir& d) {
  sh("objcopy -O binary --only-section=.vendor_cert " + q(shim) + " " + q(d / "vc.bin"));
  const Bytes vc = test::slurp(d / "vc.bin");
  ASSERT_GE(vc.size(), 16u);
  auto u32 = [&vc](std::size_t at) {
    return vc[at] | vc[at + 1] << 8 | vc[at + 2] << 16 | std::uint32_t{vc[at + 3]} << 24;
  };
  test::spit(d / "debian-ca.der", ByteView(vc).subspan(u32(8), u32(0)));
  test::spit(d / "vendor-dbx.esl", ByteView(vc).subspan(u32(12), u32(4)));
}

TEST(DbxDebian, HashEqualsPesignOnBinariesAndMutations) {
  NEED_EFI_BINARIES();
  test::TempDir d;
  for (const std::string& f : {efi.shim, efi.grub, efi.systemd_boot}) {
    const std::string out = sh(cli() + " dbx hash " + q(f));
    EXPECT_EQ(out.substr(0, out.find("  ")), pesign_hash(f)) << f;
    EXPECT_EQ(out.substr(66, out.find('\n') - 66), f);
    const std::string sha1 = sh(cli() + " dbx hash --hash sha1 " + q(f));
    EXPECT_EQ(sha1.substr(0, 40), pesign_hash(f, "sha1")) << f;
  }
  if (deb12(efi)) {
    EXPECT_EQ(hash_json(efi.shim)["sha256"], "80a66d53a945d2286fcadd780fae1c225aa732079cd67b5225dc78aaab4e2ff8");
    EXPECT_EQ(hash_json(efi.grub)["sha256"], "a68f6d71ebddaa19751ff8d729f67d11b0df8e4c49400c3e7e90de16119e1265");
  }
  // shim: two Microsoft signatures, each digest the image's.
  auto j = hash_json(efi.shim);
  ASSERT_EQ(j["signatures"].size(), 2u);
  for (const auto& s : j["signatures"]) {
    EXPECT_EQ(s["digest"], j["sha256"]);
    EXPECT_EQ(s["matches"], true);
    EXPECT_EQ(s["certificates"].size(), 2u);
  }
  EXPECT_EQ(j["signatures"][0]["signer_issuer"],
            "C=US, ST=Washington, L=Redmond, O=Microsoft Corporation, CN=Microsoft Corporation UEFI CA 2011");
  EXPECT_EQ(j["signatures"][1]["signer_issuer"], "C=US, O=Microsoft Corporation, CN=Microsoft UEFI CA 2023");
  EXPECT_EQ(j["signatures"][0]["offset"], j["certificate_table_offset"]);
  // GNU ld writes names over 8 bytes as "/N" into the COFF string table: objdump's names.
  std::string long_names;
  for (const auto& s : j["sections"])
    long_names += (s["long_name"].is_null() ? std::string(s["name"]) : std::string(s["long_name"])) + "\n";
  EXPECT_EQ(long_names, sh("objdump -h " + q(efi.shim) + " | awk '$1 ~ /^[0-9]+$/ {print $2}'"));

  // Mutations: trailing data, the signature stripped, a second signature added.
  sh("cp " + q(efi.grub) + " " + q(d / "appended.efi") + " && printf 'trailing' >> " + q(d / "appended.efi"));
  sh("cp " + q(efi.grub) + " " + q(d / "stripped.efi") + " && sbattach --remove " + q(d / "stripped.efi"));
  sh(test::openssl() + " req -x509 -newkey rsa:2048 -nodes -keyout " + q(d / "k.pem") + " -out " + q(d / "c.pem") +
     " -days 30 -subj '/CN=second signer' 2>/dev/null");
  sh("sbsign --key " + q(d / "k.pem") + " --cert " + q(d / "c.pem") + " --output " + q(d / "two.efi") + " " +
     q(efi.grub) + " 2>/dev/null");
  const std::string grub_sha = hash_json(efi.grub)["sha256"];
  for (const char* m : {"appended.efi", "stripped.efi", "two.efi"}) {
    auto mj = hash_json(d / m);
    EXPECT_EQ(mj["sha256"], pesign_hash(d / m)) << m;
    EXPECT_EQ(mj["sha1"], pesign_hash(d / m, "sha1")) << m;
  }
  auto a = hash_json(d / "appended.efi");
  EXPECT_NE(a["sha256"], grub_sha);
  EXPECT_EQ(a["bytes_after_certificate_table"], 8);
  EXPECT_EQ(a["signatures"][0]["matches"], false);
  EXPECT_EQ(hash_json(d / "stripped.efi")["sha256"], grub_sha);
  EXPECT_EQ(hash_json(d / "stripped.efi")["signatures"].size(), 0u);
  auto two = hash_json(d / "two.efi");
  ASSERT_EQ(two["signatures"].size(), 2u);
  EXPECT_EQ(two["signatures"][1]["signer_issuer"], "CN=second signer");
  EXPECT_EQ(two["signatures"][1]["matches"], true);
  // -r: every PE file under a tree, sorted; other files skipped.
  sh("mkdir -p " + q(d / "esp/EFI/debian") + " && cp " + q(efi.shim) + " " + q(d / "esp/EFI/debian/shimx64.efi") +
     " && cp " + q(efi.grub) + " " + q(d / "esp/EFI/debian/grubx64.efi") + " && echo x > " +
     q(d / "esp/EFI/debian/grub.cfg"));
  const std::string tree = sh(cli() + " dbx hash --json -r " + q(d / "esp"));
  EXPECT_EQ(std::count(tree.begin(), tree.end(), '\n'), 2);
  EXPECT_EQ(nlohmann::json::parse(tree.substr(0, tree.find('\n')))["path"], d / "esp/EFI/debian/grubx64.efi");
}

// dbx hash -r and dbx check -r follow the -r rules of every command (issue 29's hostile
// pass): a directory this user cannot read is named and the rest is still hashed (it
// stopped everything: nothing was hashed, not even a FILE named on the command line); an
// -r DIR with no EFI binary under it is named, exit 3.
TEST(DbxDebian, HashDirUnreadableSubdirectoryAndEmptyDir) {
  NEED_EFI_BINARIES();
  const std::string drop = "setpriv --bounding-set=-dac_override,-dac_read_search ";
  if (::geteuid() == 0 && test::run(drop + "true").status != 0) GTEST_SKIP() << "setpriv cannot drop capabilities here";
  const std::string as_user = ::geteuid() == 0 ? drop : "";
  test::TempDir d;
  ASSERT_EQ(test::run("mkdir -p " + q(d / "esp/ok") + " " + q(d / "esp/locked") + " " + q(d / "empty") + " && cp " +
                      q(efi.grub) + " " + q(d / "esp/ok/grubx64.efi") + " && cp " + q(efi.grub) + " " +
                      q(d / "named.efi") + " && chmod 000 " + q(d / "esp/locked"))
                .status,
            0);
  const std::string grub_hash = pesign_hash(efi.grub);
  ASSERT_EQ(test::run(test::modsign_cli() + " dbx add-hash --owner 77fa9abd-0359-4d32-bd60-28f4e78f784b -o " +
                      q(d / "dbx.esl") + " " + std::string(64, 'a'))
                .status,
            0);
  for (const std::string& verb : {std::string("hash"), "check --dbx " + q(d / "dbx.esl")}) {
    SCOPED_TRACE(verb);
    const auto r = test::run(as_user + test::modsign_cli() + " dbx " + verb + " -r " + q(d / "esp") + " -r " +
                             q(d / "empty") + " " + q(d / "named.efi"));
    EXPECT_EQ(r.status, 3);
    EXPECT_NE(r.err.find("modsign: " + d / "esp/locked" + ": Permission denied\n"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("modsign: " + d / "empty" + ": no EFI binary (MZ) under it\n"), std::string::npos) << r.err;
    if (verb == "hash") {
      EXPECT_NE(r.out.find(d / "named.efi"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find(d / "esp/ok/grubx64.efi"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find(grub_hash), std::string::npos) << r.out;
    }
  }
  ::chmod((d / "esp/locked").c_str(), 0755);
}

TEST(DbxDebian, GrubAllowedByDebianCaShimByMicrosoftCa) {
  NEED_EFI_BINARIES();
  test::TempDir d;
  vendor_cert(efi.shim, d);
  sh(cli() + " dbx add-cert --owner 11111111-2222-3333-4444-555555555555 -o " + q(d / "db.esl") + " " +
     q(d / "debian-ca.der"));
  // Debian's own revocations (shim's vendor dbx, 114 SHA-256 entries) do not list this GRUB.
  auto r =
      test::run(cli() + " dbx check --dbx " + q(d / "vendor-dbx.esl") + " --db " + q(d / "db.esl") + " " + q(efi.grub));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            efi.grub + ": allowed: signature 1 verifies against db certificate \"CN = Debian Secure Boot CA\" (" +
                d / "db.esl" + " list 1 entry 1, byte offset 28)");
  EXPECT_EQ(test::run(test::openssl() + " x509 -inform DER -in " + q(d / "debian-ca.der") + " -out " +
                      q(d / "debian-ca.pem") + " && sbverify --cert " + q(d / "debian-ca.pem") + " " + q(efi.grub) +
                      " >/dev/null 2>&1")
                .status,
            0);
  // shim is not signed by Debian's CA: not allowed by that db.  (sbverify 0.9.4 says
  // "Signature verification OK" here all the same, so it is no reference for a refusal.)
  r = test::run(cli() + " dbx check --json --dbx " + q(d / "vendor-dbx.esl") + " --db " + q(d / "db.esl") + " " +
                q(efi.shim));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(nlohmann::json::parse(r.out)["rule"], "not_allowed_by_db");

  // Microsoft Corporation UEFI CA 2011, the second certificate of shim's first signature.
  // (osslsigncode 2.9 cannot extract a signature from this two-entry table: the first
  // WIN_CERTIFICATE's bCertificate, cut out by its offset and length, is the PKCS#7.)
  const auto info = authenticode_file(efi.shim);
  ASSERT_TRUE(info.ok());
  const auto& w = info->signatures.at(0);
  test::spit(d / "shim.p7", ByteView(test::slurp(efi.shim)).subspan(w.offset + 8, w.length - 8));
  sh(test::openssl() + " pkcs7 -inform DER -in " + q(d / "shim.p7") +
     " -print_certs | awk '/subject=.*Microsoft "
     "Corporation UEFI CA 2011/{p=1} p&&/BEGIN/{w=1} w{print} /END/{if(w)exit}' > " +
     q(d / "ms2011.pem"));
  sh(cli() + " dbx add-cert --owner 77fa9abd-0359-4d32-bd60-28f4e78f784b -o " + q(d / "msdb.esl") + " " +
     q(d / "ms2011.pem"));
  r = test::run(cli() + " dbx check --json --dbx " + q(d / "vendor-dbx.esl") + " --db " + q(d / "msdb.esl") + " " +
                q(efi.shim));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rule"], "allowed_by_db_certificate");
  EXPECT_EQ(j["signatures"][0]["allowed_certificate"],
            "C = US, ST = Washington, L = Redmond, O = Microsoft Corporation, CN = Microsoft Corporation UEFI CA 2011");
  EXPECT_EQ(test::run("sbverify --cert " + q(d / "ms2011.pem") + " " + q(efi.shim) + " >/dev/null 2>&1").status, 0);
  // The same certificate in dbx instead: refused, and GRUB's hash in dbx refuses GRUB.
  r = test::run(cli() + " dbx check --json --dbx " + q(d / "msdb.esl") + " --db " + q(d / "msdb.esl") + " " +
                q(efi.shim));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(nlohmann::json::parse(r.out)["rule"], "certificate_in_dbx");
  const std::string grub_sha = hash_json(efi.grub)["sha256"];
  sh(cli() + " dbx add-hash --owner 11111111-2222-3333-4444-555555555555 -o " + q(d / "grubhash.esl") + " " + grub_sha);
  // An unsigned image (systemd-boot, unsigned in Debian 12, its signature removed where signed).
  const std::string unsigned_sdb = test::efi_binaries::unsigned_unaligned(efi.systemd_boot, d);
  r = test::run(cli() + " dbx check --dbx " + q(d / "vendor-dbx.esl") + " --dbx " + q(d / "grubhash.esl") + " --db " +
                q(d / "db.esl") + " " + q(efi.grub) + " " + q(unsigned_sdb));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), efi.grub + ": refused: Authenticode hash in dbx as EFI_CERT_SHA256 (" +
                                                   d / "grubhash.esl" + " list 1 entry 1, byte offset 28)");
  EXPECT_NE(r.out.find(unsigned_sdb + ": refused: not allowed by db"), std::string::npos) << r.out;
}

TEST(DbxDebian, SbatOfGrubAgainstShimsLevel) {
  NEED_EFI_BINARIES();
  test::TempDir d;
  test::spit(d / "empty.esl", Bytes{});
  const Bytes shim = test::slurp(efi.shim);
  auto latest = sbat_level_of_shim(shim, SbatPolicy::latest);
  auto previous = sbat_level_of_shim(shim, SbatPolicy::previous);
  ASSERT_TRUE(latest.ok()) << latest.error().message;
  ASSERT_TRUE(previous.ok()) << previous.error().message;
  // objcopy's view of the same section: the latest level is the second NUL-terminated text.
  sh("objcopy -O binary --only-section=.sbatlevel " + q(efi.shim) + " " + q(d / "sl.bin"));
  const Bytes sl = test::slurp(d / "sl.bin");
  ASSERT_GE(sl.size(), 12u);
  const std::size_t at = 4 + (sl[8] | sl[9] << 8);
  ASSERT_LT(at, sl.size());
  EXPECT_EQ(latest->text, std::string(reinterpret_cast<const char*>(sl.data() + at)));
  if (deb12(efi)) {
    EXPECT_EQ(latest->text, "sbat,1,2025051000\nshim,4\ngrub,5\ngrub.proxmox,2\n");
    EXPECT_EQ(previous->text, "sbat,1,2025021800\nshim,4\ngrub,5\n");
    EXPECT_EQ(latest->datestamp, "2025051000");
  }
  auto r = test::run(cli() + " dbx check --json --dbx " + q(d / "empty.esl") + " --sbat-level-from " + q(efi.shim) +
                     " " + q(efi.grub));
  EXPECT_EQ(r.status, 1);  // nothing in db
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["sbat"].is_object());
  EXPECT_EQ(j["sbat"]["refused"].size(), 0u);
  ASSERT_GE(j["sbat"]["rows"].size(), 3u);
  EXPECT_EQ(j["sbat"]["rows"][1]["component"], "grub");
  if (deb12(efi)) {
    EXPECT_EQ(j["sbat"]["rows"].size(), 4u);
    EXPECT_EQ(j["sbat"]["rows"][1]["generation"], 5);
    EXPECT_EQ(j["sbat"]["rows"][2]["component"], "grub.debian");
    EXPECT_EQ(j["sbat"]["rows"][3]["component"], "grub.debian12");
    EXPECT_EQ(j["sbat"]["rows"][2]["version"], "2.06-13+deb12u2");
  }
  // A level one generation above: GRUB (allowed by Debian's CA) is refused by shim.
  vendor_cert(efi.shim, d);
  sh(cli() + " dbx add-cert --owner 11111111-2222-3333-4444-555555555555 -o " + q(d / "db.esl") + " " +
     q(d / "debian-ca.der"));
  const int gen = j["sbat"]["rows"][1]["generation"];
  test::spit(d / "SbatLevel", "sbat,1,2099010100\nshim,4\ngrub," + std::to_string(gen + 1) + "\n");
  r = test::run(cli() + " dbx check --dbx " + q(d / "vendor-dbx.esl") + " --db " + q(d / "db.esl") + " --sbat-level " +
                q(d / "SbatLevel") + " " + q(efi.grub));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, efi.grub + ": refused by shim's SBAT check\n  authenticode-sha256: " +
                       std::string(hash_json(efi.grub)["sha256"]) + "\n  sbat: grub generation " + std::to_string(gen) +
                       " is below the level's " + std::to_string(gen + 1) + ": refused\n");
  // With shim's own latest level it passes.
  r = test::run(cli() + " dbx check --dbx " + q(d / "vendor-dbx.esl") + " --db " + q(d / "db.esl") +
                " --sbat-level-from " + q(efi.shim) + " --sbat-policy previous " + q(efi.grub));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("  sbat: "), std::string::npos);
  // --sbat-level-from a binary without .sbatlevel (GRUB): input error.
  r = test::run(cli() + " dbx check --dbx " + q(d / "empty.esl") + " --sbat-level-from " + q(efi.grub) + " " +
                q(efi.grub));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err, "modsign: " + efi.grub + ": no .sbatlevel section\n");
}

}  // namespace
}  // namespace modsign
