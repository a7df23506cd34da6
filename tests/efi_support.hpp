// Helpers shared by the test_efi_*.cpp files: EFI_SIGNATURE_LIST bytes built by hand (sizes
// computed here, not by write_lists), a 932-byte certificate, a synthetic dbx, an
// EFI_VARIABLE_AUTHENTICATION_2 container, and the CLI.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "blacklist/efi.hpp"
#include "test_support.hpp"

namespace modsign::test::efi_tests {

using namespace modsign::blacklist;
using namespace modsign::blacklist::efi;
using modsign::test::q;
using modsign::test::run;
using modsign::test::slurp;
using modsign::test::spit;
using modsign::test::TempDir;

inline void put32(Bytes& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(std::uint8_t(v >> (8 * i)));
}
inline void append(Bytes& b, ByteView v) { b.insert(b.end(), v.begin(), v.end()); }
inline void append(Bytes& b, const Guid& g) { b.insert(b.end(), g.bytes.begin(), g.bytes.end()); }

/// A list header with the given raw fields, followed by `body`.
inline Bytes raw_list(const Guid& type, std::uint32_t lsize, std::uint32_t hsize, std::uint32_t esize,
                      ByteView body = {}) {
  Bytes b;
  append(b, type);
  put32(b, lsize);
  put32(b, hsize);
  put32(b, esize);
  append(b, body);
  return b;
}
/// A well-formed list of entries of equal size, sizes computed by hand (not by write_lists).
inline Bytes good_list(const Guid& type, const std::vector<std::pair<Guid, Bytes>>& entries, ByteView header = {}) {
  Bytes body(header.begin(), header.end());
  for (const auto& [o, d] : entries) {
    append(body, o);
    append(body, d);
  }
  const auto esize = std::uint32_t(16 + entries.front().second.size());
  return raw_list(type, std::uint32_t(28 + body.size()), std::uint32_t(header.size()), esize, body);
}
inline Bytes fill(std::size_t n, std::uint8_t start) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = std::uint8_t(start + i);
  return b;
}

inline const Guid kOwnerA = *Guid::parse("11111111-2222-3333-4444-555555555555");
inline const Guid kOwnerB = *Guid::parse("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee");
inline const Guid kUnknown = *Guid::parse("01020304-0506-0708-090a-0b0c0d0e0f10");

/// A self-signed RSA-2048 certificate of exactly `size` DER bytes (subject CN padded, serial
/// 1 or 256 for parity), made once with the openssl CLI, with its key for signing.
struct SizedCert {
  TempDir dir;
  Bytes der;
  std::string key, pem;
};
inline const SizedCert& cert_932() {
  static const std::unique_ptr<SizedCert> c = [] {
    auto s = std::make_unique<SizedCert>();
    s->key = s->dir / "k.pem";
    s->pem = s->dir / "c.pem";
    auto r = run(test::openssl() + " genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out " + q(s->key));
    EXPECT_EQ(r.status, 0) << r.err;
    for (const char* serial : {"1", "256"}) {
      for (int n = 1; n < 128 && s->der.size() != 932; ++n) {
        // CN (at most 64 characters), then O: each character adds 2 bytes (subject = issuer).
        std::string subj = "/CN=" + std::string(std::min(n, 64), 'x');
        if (n > 64) subj += "/O=" + std::string(n - 64, 'o');
        r = run(test::openssl() + " req -x509 -new -key " + q(s->key) + " -subj " + q(subj) + " -days 30 -set_serial " +
                serial + " -outform DER -out " + q(s->dir / "c.der"));
        EXPECT_EQ(r.status, 0) << r.err;
        s->der = slurp(s->dir / "c.der");
        if (s->der.size() > 932) break;
      }
      if (s->der.size() == 932) break;
    }
    run(test::openssl() + " x509 -inform DER -in " + q(s->dir / "c.der") + " -out " + q(s->pem));
    return s;
  }();
  return *c;
}

/// A synthetic dbx like the firmware's: hash lists next to a certificate list.
inline Bytes synthetic_dbx(const Bytes& cert, Bytes& tbs_data) {
  tbs_data = x509_sha256_data(fill(32, 0x90), *EfiTime::parse("2023-05-09 00:00:00"));
  Bytes f = good_list(guids::cert_sha256,
                      {{guids::microsoft_owner, fill(32, 0x00)}, {guids::microsoft_owner, fill(32, 0x20)}});
  append(f, good_list(guids::cert_sha256, {{kOwnerA, fill(32, 0x40)}}));
  append(f, good_list(guids::cert_x509, {{guids::microsoft_owner, cert}}));
  append(f, good_list(guids::cert_sha256,
                      {{kOwnerB, fill(32, 0x60)}, {kOwnerB, fill(32, 0x80)}, {kOwnerB, fill(32, 0xa0)}}));
  append(f, good_list(guids::cert_x509_sha256, {{guids::microsoft_owner, tbs_data}}));
  return f;
}

/// timestamp ‖ WIN_CERTIFICATE_UEFI_GUID{dwLength, 0x0200, 0x0EF1, PKCS7 GUID, p7} ‖ payload
inline Bytes auth2(const EfiTime& t, ByteView p7, ByteView payload, std::uint16_t rev = 0x0200,
                   std::uint16_t type = 0x0ef1, std::optional<std::uint32_t> dw = std::nullopt) {
  Bytes b;
  const auto tb = t.bytes();
  append(b, tb);
  put32(b, dw ? *dw : std::uint32_t(24 + p7.size()));
  b.push_back(std::uint8_t(rev));
  b.push_back(std::uint8_t(rev >> 8));
  b.push_back(std::uint8_t(type));
  b.push_back(std::uint8_t(type >> 8));
  append(b, guids::cert_type_pkcs7);
  append(b, p7);
  append(b, payload);
  return b;
}

inline std::string cli() { return test::modsign_cli(); }
inline const std::string kMs = "77fa9abd-0359-4d32-bd60-28f4e78f784b";

}  // namespace modsign::test::efi_tests
