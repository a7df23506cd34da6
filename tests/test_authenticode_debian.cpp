// Authenticode hashes of Debian's EFI binaries (tools/fetch-efi-binaries: shim, GRUB,
// systemd-boot) and of mutated copies, each against pesign, osslsigncode and sbverify.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>

#include "crypto/crypto.hpp"
#include "efi_binaries_support.hpp"
#include "modsign/authenticode.hpp"
#include "test_support.hpp"

namespace modsign {
namespace {

using test::q;
using test::efi_binaries::pesign_hash;
using test::efi_binaries::sh;
using test::efi_binaries::unsigned_unaligned;

// ----------------------------------------------------------------- Debian's EFI binaries

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// The digest `osslsigncode extract-data` puts into the SpcIndirectDataContent it would sign.
std::string osslsigncode_data_hash(const std::string& path, const std::string& digest, const test::TempDir& d) {
  const std::string out = d / ("data." + digest);
  sh("osslsigncode extract-data -h " + digest + " -in " + q(path) + " -out " + q(out) + " >/dev/null");
  const std::string line =
      sh(test::openssl() + " asn1parse -inform DER -in " + q(out) + " | grep 'prim: OCTET STRING' | tail -n 1");
  return lower(line.substr(line.rfind(':') + 1, line.find_last_not_of(" \n") - line.rfind(':')));
}

/// `osslsigncode verify`'s "Current message digest" (signed) and "Calculated message digest".
std::pair<std::string, std::string> osslsigncode_verify(const std::string& path) {
  const std::string out = test::run("osslsigncode verify -in " + q(path) + " 2>&1").out;
  auto field = [&out](const std::string& key) {
    const auto pos = out.find(key);
    if (pos == std::string::npos) return std::string("(missing)");
    const auto v = out.find(": ", pos) + 2;
    return lower(out.substr(v, 64));
  };
  return {field("Current message digest"), field("Calculated message digest")};
}

/// The certificates `sbverify --list` shows, as "subject <- issuer" lines per signature.
std::string sbverify_list(const std::string& path) { return sh("sbverify --list " + q(path)); }

/// The same listing from modsign's view of the signatures.
std::string as_sbverify_list(const AuthenticodeInfo& info) {
  auto slashed = [](std::string s) {
    std::string out = "/";
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s.compare(i, 2, ", ") == 0) {
        out += '/';
        ++i;
      } else {
        out += s[i];
      }
    }
    return out;
  };
  std::string out;
  for (std::size_t i = 0; i < info.signatures.size(); ++i) {
    const auto& s = info.signatures[i];
    out += "signature " + std::to_string(i + 1) + "\nimage signature issuers:\n - " + slashed(s.signer_issuer) +
           "\nimage signature certificates:\n";
    for (const auto& c : s.certificates)
      out += " - subject: " + slashed(c.subject) + "\n   issuer:  " + slashed(c.issuer) + "\n";
  }
  return out;
}

AuthenticodeInfo info_of(const std::string& path) {
  auto r = authenticode_file(path);
  if (!r.ok()) ADD_FAILURE() << r.error().message;
  return r.ok() ? std::move(r).value() : AuthenticodeInfo{};
}

std::string hex(const Bytes& b) { return to_hex(b); }

/// Copy `from` to d/name and return the new path.
std::string copy_of(const std::string& from, const test::TempDir& d, const std::string& name) {
  const std::string to = d / name;
  sh("cp " + q(from) + " " + q(to));
  return to;
}

/// d/k.pem and d/c.pem: an RSA-2048 key and its self-signed certificate for sbsign.
// The serial is fixed, with its top bit set, so that its DER INTEGER carries a leading 00
// byte that `openssl x509 -serial` does not print (a random serial made this test flaky).
constexpr const char* kSignerSerial = "fb142dafdc2abebf78afc21704b87b944e0239";

void make_signing_key(const test::TempDir& d) {
  sh(test::openssl() + " req -x509 -newkey rsa:2048 -nodes -keyout " + q(d / "k.pem") + " -out " + q(d / "c.pem") +
     " -days 30 -set_serial 0x" + kSignerSerial + " -subj '/CN=modsign test Authenticode signer' 2>/dev/null");
}

/// A copy of the image at `path` as pesign 117 hashes it: its first FileSize -
/// CertificateTableSize bytes (the hashed extent, as in EDK2), zero-padded to a multiple of
/// 8, with the Certificate Table entry cleared.  Where that extent is already a multiple of
/// 8, its digest is the image's own.
std::string cut_and_padded(const std::string& path, const AuthenticodeInfo& info, const test::TempDir& d) {
  Bytes b = test::slurp(path);
  b.resize(info.file_size - info.certificate_table_size);
  b.resize((b.size() + 7) & ~std::size_t{7}, 0);
  const std::size_t lfanew = b[0x3c] | b[0x3d] << 8 | b[0x3e] << 16 | std::size_t{b[0x3f]} << 24;
  const std::size_t opt = lfanew + 24, dirs = opt + ((b[opt] | b[opt + 1] << 8) == 0x20b ? 112 : 96);
  if (info.certificate_table_size != 0)
    std::fill(b.begin() + static_cast<std::ptrdiff_t>(dirs + 32), b.begin() + static_cast<std::ptrdiff_t>(dirs + 40),
              0);
  test::spit(d / "cut-and-padded.efi", b);
  return d / "cut-and-padded.efi";
}

/// The SHA-256 and SHA-1 image digests against `pesign -h`.  pesign 0.112 hashes as EDK2's
/// DxeImageVerificationLib and modsign do; pesign 116 (Debian 13) and 117 zero-pad the hashed
/// extent to a multiple of 8 (an unaligned image, or data after the Certificate Table): there
/// they give modsign's digest of cut_and_padded().
void expect_digests_match_pesign(const std::string& path, const AuthenticodeInfo& info) {
  const bool padded = (info.file_size - info.certificate_table_size) % 8 != 0;
  const int pesign = test::efi_binaries::pesign_version();
  ASSERT_TRUE(pesign == 112 || pesign == 116 || pesign == 117)
      << "pesign " << pesign << ": pin its hashing of unaligned images here";
  if (padded && pesign >= 116) {
    test::TempDir d;
    const AuthenticodeInfo p = info_of(cut_and_padded(path, info, d));
    EXPECT_NE(p.sha256, info.sha256) << path;
    EXPECT_EQ(hex(p.sha256), pesign_hash(path)) << path;
    EXPECT_EQ(hex(p.sha1), pesign_hash(path, "sha1")) << path;
    return;
  }
  EXPECT_EQ(hex(info.sha256), pesign_hash(path)) << path;
  EXPECT_EQ(hex(info.sha1), pesign_hash(path, "sha1")) << path;
}

// The fuzz seeds (tools/fuzz-seeds-pe: PE32+ x86-64, PE32 IA-32, AArch64 with four data
// directories, sbsign-signed) need no download.
TEST(AuthenticodeTools, FuzzSeedsAgreeWithPesign) {
  const std::string dir = test::source_dir() + "/tests/fuzz/corpus/pe/";
  for (const char* name : {"pe32plus-x86-64", "pe32-ia32", "pe32plus-signed"}) {
    const AuthenticodeInfo info = info_of(dir + name);
    expect_digests_match_pesign(dir + name, info);
  }
  // With NumberOfRvaAndSizes 4 there is no Certificate Table entry: nothing but CheckSum
  // is left out (as EDK2's DxeImageVerificationLib hashes it).  pesign 0.112 skips the 8
  // bytes where entry 4 would be (here the first Section Table entry's Name) all the same,
  // and so does 116 (Debian 13).
  const std::string four = dir + "pe32plus-aarch64-4dirs";
  const AuthenticodeInfo info = info_of(four);
  EXPECT_EQ(info.machine_name, "AArch64");
  const Bytes b = test::slurp(four);
  auto sha256 = [&b](std::initializer_list<std::pair<std::size_t, std::size_t>> ranges) {
    crypto::Hasher h(crypto::HashAlgo::sha256);
    for (auto [from, to] : ranges) h.update(ByteView(b).subspan(from, to - from));
    return to_hex(h.final());
  };
  EXPECT_EQ(hex(info.sha256), sha256({{0, 0x98}, {0x9c, 0x600}}));
  const int pesign = test::efi_binaries::pesign_version();
  ASSERT_TRUE(pesign == 112 || pesign == 116 || pesign == 117)
      << "pesign " << pesign << ": pin what it does with four data directories";
  if (pesign == 117) {
    // pesign 117 refuses such an image ("could not parse signature list in EFI binary").
    const auto r = test::run("pesign -h -i " + q(four));
    EXPECT_NE(r.status, 0);
    EXPECT_EQ(r.out, "");
  } else {
    EXPECT_EQ(pesign_hash(four), sha256({{0, 0x98}, {0x9c, 0xe8}, {0xf0, 0x600}}));
  }
  const AuthenticodeInfo s = info_of(dir + "pe32plus-signed");
  ASSERT_EQ(s.signatures.size(), 1u);
  EXPECT_TRUE(s.signatures[0].matches);
  EXPECT_EQ(s.signatures[0].signer_issuer, "CN=modsign fuzz seed");
  EXPECT_EQ(s.sha256, info_of(dir + "pe32plus-x86-64").sha256);
  EXPECT_EQ(as_sbverify_list(s), sbverify_list(dir + "pe32plus-signed"));
}

TEST(AuthenticodeDebian, ShimTwoMicrosoftSignatures) {
  NEED_EFI_BINARIES();
  const AuthenticodeInfo info = info_of(efi.shim);
  EXPECT_EQ(info.machine_name, "x86-64");
  EXPECT_TRUE(info.pe32_plus);
  EXPECT_EQ(info.subsystem, 10);
  expect_digests_match_pesign(efi.shim, info);
  if (efi.shim.find("shim-signed_1.51~1+deb12u1+16.1-2~deb12u1/") != std::string::npos) {
    EXPECT_EQ(hex(info.sha256), "80a66d53a945d2286fcadd780fae1c225aa732079cd67b5225dc78aaab4e2ff8");
  }
  ASSERT_EQ(info.signatures.size(), 2u);
  for (const auto& s : info.signatures) {
    EXPECT_EQ(s.error, "");
    EXPECT_EQ(s.revision, 0x0200);
    EXPECT_EQ(s.type, 0x0002);
    EXPECT_EQ(s.digest_algorithm, "sha256");
    EXPECT_EQ(s.digest, info.sha256);
    EXPECT_TRUE(s.matches);
    EXPECT_FALSE(s.signer_by_skid);
  }
  EXPECT_EQ(info.signatures[0].offset, info.certificate_table_offset);
  EXPECT_EQ(info.signatures[0].signer_issuer,
            "C=US, ST=Washington, L=Redmond, O=Microsoft Corporation, CN=Microsoft Corporation UEFI CA 2011");
  EXPECT_EQ(as_sbverify_list(info), sbverify_list(efi.shim));
}

TEST(AuthenticodeDebian, GrubSignedByDebian) {
  NEED_EFI_BINARIES();
  const AuthenticodeInfo info = info_of(efi.grub);
  expect_digests_match_pesign(efi.grub, info);
  if (efi.grub.find("grub-efi-amd64-signed_1+2.06+13+deb12u2/") != std::string::npos) {
    EXPECT_EQ(hex(info.sha256), "a68f6d71ebddaa19751ff8d729f67d11b0df8e4c49400c3e7e90de16119e1265");
  }
  ASSERT_EQ(info.signatures.size(), 1u);
  EXPECT_TRUE(info.signatures[0].matches);
  EXPECT_EQ(info.signatures[0].signer_issuer, "CN=Debian Secure Boot CA");
  const auto [current, calculated] = osslsigncode_verify(efi.grub);
  EXPECT_EQ(current, hex(info.signatures[0].digest));
  EXPECT_EQ(calculated, hex(info.sha256));
  EXPECT_EQ(as_sbverify_list(info), sbverify_list(efi.grub));
  EXPECT_EQ(info.bytes_after_certificate_table, 0u);
}

TEST(AuthenticodeDebian, SystemdBootUnsignedAndUnaligned) {
  NEED_EFI_BINARIES();
  test::TempDir d;
  const std::string sdb = unsigned_unaligned(efi.systemd_boot, d);
  const AuthenticodeInfo info = info_of(sdb);
  expect_digests_match_pesign(sdb, info);
  EXPECT_TRUE(info.signatures.empty());
  EXPECT_EQ(info.certificate_table_size, 0u);
  // osslsigncode hashes an image whose size is no multiple of 8 as if padded with zeros
  // to one: modsign's digest of the padded copy, in all four algorithms.
  ASSERT_NE(info.file_size % 8, 0u);
  Bytes padded = test::slurp(sdb);
  padded.resize((padded.size() + 7) & ~std::size_t{7}, 0);
  test::spit(d / "padded.efi", padded);
  const AuthenticodeInfo p = info_of(d / "padded.efi");
  EXPECT_NE(p.sha256, info.sha256);
  EXPECT_EQ(hex(p.sha256), osslsigncode_data_hash(sdb, "sha256", d));
  EXPECT_EQ(hex(p.sha1), osslsigncode_data_hash(sdb, "sha1", d));
  EXPECT_EQ(hex(p.sha384), osslsigncode_data_hash(sdb, "sha384", d));
  EXPECT_EQ(hex(p.sha512), osslsigncode_data_hash(sdb, "sha512", d));
  expect_digests_match_pesign(d / "padded.efi", p);
}

TEST(AuthenticodeDebian, MutationTrailingDataAppended) {
  NEED_EFI_BINARIES();
  test::TempDir d;
  for (const std::string& src : {efi.grub, efi.systemd_boot}) {
    const std::string f = copy_of(src, d, "appended.efi");
    sh("printf 'data appended by the test' >> " + q(f));
    const AuthenticodeInfo before = info_of(src), info = info_of(f);
    expect_digests_match_pesign(f, info);
    EXPECT_NE(info.sha256, before.sha256) << src;
    if (!info.signatures.empty()) {
      EXPECT_EQ(info.bytes_after_certificate_table, 25u);
      EXPECT_FALSE(info.signatures[0].matches);
      EXPECT_EQ(info.signatures[0].digest, before.sha256);
    }
  }
}

TEST(AuthenticodeDebian, MutationSignatureStripped) {
  NEED_EFI_BINARIES();
  test::TempDir d;
  const AuthenticodeInfo signed_info = info_of(efi.grub);
  const std::string f = copy_of(efi.grub, d, "stripped.efi");
  sh("sbattach --remove " + q(f));
  const AuthenticodeInfo info = info_of(f);
  expect_digests_match_pesign(f, info);
  EXPECT_TRUE(info.signatures.empty());
  EXPECT_EQ(info.certificate_table_size, 0u);
  EXPECT_EQ(info.sha256, signed_info.sha256);
  EXPECT_EQ(info.sha512, signed_info.sha512);
  EXPECT_EQ(hex(info.sha256), osslsigncode_data_hash(f, "sha256", d));
  EXPECT_EQ(hex(info.sha1), osslsigncode_data_hash(f, "sha1", d));
  EXPECT_EQ(hex(info.sha384), osslsigncode_data_hash(f, "sha384", d));
  EXPECT_EQ(hex(info.sha512), osslsigncode_data_hash(f, "sha512", d));
}

TEST(AuthenticodeDebian, MutationSecondSignatureAdded) {
  NEED_EFI_BINARIES();
  test::TempDir d;
  make_signing_key(d);
  const std::string serial = sh(test::openssl() + " x509 -noout -serial -in " + q(d / "c.pem"));
  const AuthenticodeInfo before = info_of(efi.grub);
  sh("sbsign --key " + q(d / "k.pem") + " --cert " + q(d / "c.pem") + " --output " + q(d / "two.efi") + " " +
     q(efi.grub) + " 2>/dev/null");
  const AuthenticodeInfo info = info_of(d / "two.efi");
  expect_digests_match_pesign(d / "two.efi", info);
  EXPECT_EQ(info.sha256, before.sha256);
  ASSERT_EQ(info.signatures.size(), 2u);
  EXPECT_TRUE(info.signatures[0].matches);
  EXPECT_TRUE(info.signatures[1].matches);
  EXPECT_EQ(info.signatures[1].signer_issuer, "CN=modsign test Authenticode signer");
  EXPECT_EQ(lower(serial), std::string("serial=") + kSignerSerial + "\n");
  EXPECT_EQ(to_hex(info.signatures[1].signer_serial), std::string("00") + kSignerSerial);
  EXPECT_EQ(as_sbverify_list(info), sbverify_list(d / "two.efi"));
  // Signing the unaligned systemd-boot: sbsign pads it to 8 bytes and signs the digest
  // osslsigncode computes for the unpadded file; the signed file's digest is that value.
  const std::string unaligned = unsigned_unaligned(efi.systemd_boot, d);
  sh("sbsign --key " + q(d / "k.pem") + " --cert " + q(d / "c.pem") + " --output " + q(d / "sdb.efi") + " " +
     q(unaligned) + " 2>/dev/null");
  const AuthenticodeInfo sdb = info_of(d / "sdb.efi");
  expect_digests_match_pesign(d / "sdb.efi", sdb);
  ASSERT_EQ(sdb.signatures.size(), 1u);
  EXPECT_TRUE(sdb.signatures[0].matches);
  EXPECT_EQ(hex(sdb.sha256), osslsigncode_data_hash(unaligned, "sha256", d));
  const auto [current, calculated] = osslsigncode_verify(d / "sdb.efi");
  EXPECT_EQ(current, hex(sdb.sha256));
  EXPECT_EQ(calculated, hex(sdb.sha256));
}

TEST(AuthenticodeDebian, MutationByteFlippedInASection) {
  NEED_EFI_BINARIES();
  test::TempDir d;
  const AuthenticodeInfo before = info_of(efi.grub);
  ASSERT_FALSE(before.sections.empty());
  Bytes b = test::slurp(efi.grub);
  const auto& text = before.sections[0];
  b[text.pointer_to_raw_data + text.size_of_raw_data / 2] ^= 0x01;
  test::spit(d / "flipped.efi", b);
  const AuthenticodeInfo info = info_of(d / "flipped.efi");
  expect_digests_match_pesign(d / "flipped.efi", info);
  EXPECT_NE(info.sha256, before.sha256);
  ASSERT_EQ(info.signatures.size(), 1u);
  EXPECT_FALSE(info.signatures[0].matches);
  EXPECT_EQ(info.signatures[0].digest, before.sha256);
  const auto [current, calculated] = osslsigncode_verify(d / "flipped.efi");
  EXPECT_EQ(current, hex(before.sha256));
  EXPECT_EQ(calculated, hex(info.sha256));
}

// Sections are hashed sorted by PointerToRawData, whatever the Section Table's order (the
// table itself is part of the hashed headers, so the digest changes).  osslsigncode and
// sbsign compute the same digest; pesign 0.112 (Debian 12) does not sort the same way and gives
// another value for such an image, so it is not the reference here.
TEST(AuthenticodeDebian, MutationSectionTableReordered) {
  NEED_EFI_BINARIES();
  test::TempDir d;
  make_signing_key(d);
  const std::string sdb = unsigned_unaligned(efi.systemd_boot, d);
  const AuthenticodeInfo before = info_of(sdb);
  ASSERT_GE(before.sections.size(), 3u);
  Bytes b = test::slurp(sdb);
  b.resize((b.size() + 7) & ~std::size_t{7}, 0);  // aligned, so that osslsigncode hashes the same bytes
  const std::size_t lfanew = b[0x3c] | b[0x3d] << 8 | b[0x3e] << 16 | std::size_t{b[0x3f]} << 24;
  const std::size_t table = lfanew + 24 + (b[lfanew + 20] | b[lfanew + 21] << 8);
  // The first and the last entry change places.
  const std::size_t last = table + 40 * (before.sections.size() - 1);
  std::swap_ranges(b.begin() + static_cast<std::ptrdiff_t>(table), b.begin() + static_cast<std::ptrdiff_t>(table + 40),
                   b.begin() + static_cast<std::ptrdiff_t>(last));
  test::spit(d / "reordered.efi", b);
  const AuthenticodeInfo info = info_of(d / "reordered.efi");
  EXPECT_EQ(info.sections.front().name, before.sections.back().name);
  EXPECT_EQ(hex(info.sha256), osslsigncode_data_hash(d / "reordered.efi", "sha256", d));
  EXPECT_EQ(hex(info.sha512), osslsigncode_data_hash(d / "reordered.efi", "sha512", d));
  sh("sbsign --key " + q(d / "k.pem") + " --cert " + q(d / "c.pem") + " --output " + q(d / "signed.efi") + " " +
     q(d / "reordered.efi") + " 2>/dev/null");
  const AuthenticodeInfo s = info_of(d / "signed.efi");
  ASSERT_EQ(s.signatures.size(), 1u);
  EXPECT_EQ(s.signatures[0].digest, info.sha256);
  EXPECT_TRUE(s.signatures[0].matches);
}

}  // namespace
}  // namespace modsign
