// Known-answer and interop tests against the published ML-DSA vectors in tests/vectors
// (provenance and licences: tests/vectors/PROVENANCE.md), read at run time through
// test::vector_path().
//
//   VectorsWycheproof   raw ML-DSA verify / seed-sign vectors (C2SP Wycheproof)
//   VectorsAcvp         NIST ACVP ML-DSA keyGen (seed -> pk)
//   VectorsRfc9881      RFC 9881 Appendix C keys and certificates
//   VectorsRfc9882      RFC 9882 CMS examples (attached content)
//   VectorsOpenSsl357   signatures made by the OpenSSL 3.5.7 CLI (sign-file style)
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cms/signed_data.hpp"
#include "crypto/crypto.hpp"
#include "test_support.hpp"

using namespace modsign;
using crypto::Backend;
using crypto::HashAlgo;
using crypto::KeyAlgo;
using nlohmann::json;

namespace {

// ------------------------------------------------------------------------------ helpers

constexpr std::array<Backend, 2> kBackends = {Backend::openssl, Backend::botan};

const char* backend_name(Backend b) { return b == Backend::openssl ? "openssl" : "botan"; }

/// One ML-DSA parameter set with its FIPS 204 sizes, written out here independently of src/.
struct Level {
  int n;  // 44, 65, 87
  KeyAlgo algo;
  std::size_t pk_size, sig_size;
  std::uint8_t oid_last;  // id-ml-dsa-NN = 2.16.840.1.101.3.4.3.{17,18,19}
};
constexpr std::array<Level, 3> kLevels = {{
    {44, KeyAlgo::ml_dsa_44, 1312, 2420, 0x11},
    {65, KeyAlgo::ml_dsa_65, 1952, 3309, 0x12},
    {87, KeyAlgo::ml_dsa_87, 2592, 4627, 0x13},
}};

const Bytes kSha512Oid = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03};    // 2.16.840.1.101.3.4.2.3
const Bytes kShake256Oid = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x0c};  // 2.16.840.1.101.3.4.2.12

/// The RFC 9881 Appendix C seed: 00 01 02 .. 1f.
Bytes rfc_seed() {
  Bytes s(32);
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<std::uint8_t>(i);
  return s;
}

json load_json(const std::string& rel) {
  std::ifstream f(test::vector_path(rel));
  if (!f) throw std::runtime_error("cannot open " + rel);
  return json::parse(f);
}

/// A hex string member of a JSON object ("" and absent members give no bytes).
Bytes hex_field(const json& obj, const char* key) {
  if (!obj.contains(key) || obj[key].is_null()) return {};
  return from_hex(obj[key].get<std::string>());
}

template <class T>
KErr code_of(const Result<T>& r) {
  return r.ok() ? KErr::none : r.error().code;
}
template <class T>
std::string describe(const Result<T>& r) {
  return r.ok() ? std::string("OK") : std::string(errno_name(r.error().code)) + ": " + r.error().message;
}

/// RFC 4648 base64 (whitespace ignored, decoding stops at '=').
Bytes base64_decode(std::string_view in) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  Bytes out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    if (c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
    const int v = val(c);
    if (v < 0) throw std::runtime_error(std::string("bad base64 character '") + c + "'");
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::uint8_t>((acc >> bits) & 0xff));
    }
  }
  return out;
}

/// DER contents of the first "-----BEGIN <label>-----" block of a PEM file.
Bytes pem_file_der(const std::string& rel, const std::string& label) {
  const Bytes raw = test::slurp(test::vector_path(rel));
  const std::string text(raw.begin(), raw.end());
  const std::string begin = "-----BEGIN " + label + "-----", end = "-----END " + label + "-----";
  const auto b = text.find(begin);
  const auto e = text.find(end, b == std::string::npos ? 0 : b);
  if (b == std::string::npos || e == std::string::npos) throw std::runtime_error(rel + ": no " + label + " block");
  return base64_decode(std::string_view(text).substr(b + begin.size(), e - b - begin.size()));
}

/// RFC 9881 seed-form PKCS#8 written by hand (not by src/):
///   30 L 02 01 00 30 0b 06 09 <id-ml-dsa-NN> 04 (n+2) 80 n <seed>
Bytes seed_pkcs8(const Level& lv, ByteView seed) {
  const auto n = static_cast<std::uint8_t>(seed.size());  // < 0x7e in every use here
  const std::array<std::uint8_t, 22> head = {0x30, static_cast<std::uint8_t>(n + 20), 0x02, 0x01, 0x00, 0x30,
                                             0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04,
                                             0x03, lv.oid_last, 0x04, static_cast<std::uint8_t>(n + 2), 0x80, n};
  Bytes der(head.size() + seed.size());
  std::copy(head.begin(), head.end(), der.begin());
  std::copy(seed.begin(), seed.end(), der.begin() + static_cast<std::ptrdiff_t>(head.size()));
  return der;
}

Bytes flip_bit(Bytes b, std::size_t byte, int bit = 0) {
  b.at(byte) ^= static_cast<std::uint8_t>(1u << bit);
  return b;
}

crypto::Certificate one_cert(const std::string& rel) {
  auto certs = crypto::Certificate::load_all(test::vector_path(rel));
  if (!certs) throw std::runtime_error(rel + ": " + describe(certs));
  if (certs->size() != 1) throw std::runtime_error(rel + ": expected exactly one certificate");
  return certs->front();
}

cms::SignedData parse_or_throw(ByteView der, const std::string& what) {
  auto sd = cms::parse(der);
  if (!sd) throw std::runtime_error(what + ": " + describe(sd));
  return std::move(sd.value());
}

std::string rfc9881(const std::string& name) { return "rfc9881-dilithium-certificates/" + name; }
std::string gen(const std::string& name) { return "openssl-3.5.7-generated/" + name; }

}  // namespace

// =========================================================================== Wycheproof

// Every verify vector: the raw public key goes through PublicKey::from_ml_dsa_raw; empty-
// context cases through verify_message on both backends, non-empty contexts through
// ml_dsa_verify_with_context (OpenSSL).  Expected errno: EBADMSG for a key or signature of
// the wrong length, EINVAL for a context longer than 255 bytes (documented API contract),
// EKEYREJECTED for every other invalid signature.
TEST(VectorsWycheproof, MlDsaVerifyAllCases) {
  struct Expect {
    int total, valid, invalid, key_rejected, sig_length, ctx_too_long, rejected, ctx_valid;
  };
  // Counted from the JSON files (Wycheproof dac1dd4); the sums are 180 + 210 + 241 = 631.
  const std::array<Expect, 3> expect = {{
      {180, 77, 103, 4, 3, 5, 91, 2},
      {210, 79, 131, 4, 3, 5, 119, 2},
      {241, 71, 170, 4, 3, 5, 158, 2},
  }};
  int grand_total = 0;
  for (std::size_t li = 0; li < kLevels.size(); ++li) {
    const Level& lv = kLevels[li];
    const std::string file = "wycheproof/testvectors_v1/mldsa_" + std::to_string(lv.n) + "_verify_test.json";
    const json j = load_json(file);
    ASSERT_EQ(j.at("schema"), "mldsa_verify_schema.json") << file;
    int total = 0, valid = 0, invalid = 0, acceptable = 0;
    int key_rejected = 0, sig_length = 0, ctx_too_long = 0, rejected = 0, ctx_valid = 0;
    for (const auto& g : j.at("testGroups")) {
      const Bytes pk_raw = hex_field(g, "publicKey");
      const Bytes pk_der = hex_field(g, "publicKeyDer");
      auto pk = crypto::PublicKey::from_ml_dsa_raw(lv.algo, pk_raw);
      if (pk) {
        // The group's SPKI must describe the same key, and ours must encode it identically.
        EXPECT_EQ(pk->raw(), pk_raw) << file;
        EXPECT_EQ(pk->algo(), lv.algo) << file;
        EXPECT_EQ(pk->spki(), pk_der) << file;
        auto from_der = crypto::PublicKey::from_spki(pk_der);
        ASSERT_TRUE(from_der.ok()) << file << ": " << describe(from_der);
        EXPECT_EQ(from_der->raw(), pk_raw) << file;
      } else {
        EXPECT_NE(pk_raw.size(), lv.pk_size) << file << ": a key of the right length was refused: " << describe(pk);
      }
      for (const auto& t : g.at("tests")) {
        ++total;
        const std::string where = file + " tcId " + std::to_string(t.at("tcId").get<int>());
        const std::string result = t.at("result");
        const bool is_valid = result == "valid";
        if (is_valid) ++valid;
        else if (result == "invalid") ++invalid;
        else if (result == "acceptable") ++acceptable;
        else ADD_FAILURE() << where << ": unknown result " << result;
        if (!pk) {
          EXPECT_EQ(result, "invalid") << where << ": key refused but the case is not invalid";
          EXPECT_EQ(code_of(pk), KErr::ebadmsg) << where << ": " << describe(pk);
          ++key_rejected;
          continue;
        }
        const Bytes msg = hex_field(t, "msg"), sig = hex_field(t, "sig"), ctx = hex_field(t, "ctx");
        // What the API documents for this case.
        KErr want = KErr::none;
        if (!is_valid) {
          if (ctx.size() > 255) want = KErr::einval;
          else if (sig.size() != lv.sig_size) want = KErr::ebadmsg;
          else want = KErr::ekeyrejected;
        }
        if (want == KErr::einval) ++ctx_too_long;
        if (want == KErr::ebadmsg) ++sig_length;
        if (want == KErr::ekeyrejected) ++rejected;
        if (!ctx.empty()) {
          auto st = crypto::ml_dsa_verify_with_context(*pk, msg, sig, ctx, Backend::openssl);
          EXPECT_EQ(code_of(st), want) << where << " (ctx, openssl): " << describe(st);
          // Botan has no context parameter: always EINVAL for a non-empty context.
          auto sb = crypto::ml_dsa_verify_with_context(*pk, msg, sig, ctx, Backend::botan);
          EXPECT_EQ(code_of(sb), KErr::einval) << where << " (ctx, botan): " << describe(sb);
          if (is_valid) {
            ++ctx_valid;
            // The context is bound into the signature: the empty context must not verify it.
            for (Backend b : kBackends) {
              auto s0 = crypto::verify_message(*pk, HashAlgo::sha512, msg, sig, b);
              EXPECT_EQ(code_of(s0), KErr::ekeyrejected) << where << " (empty ctx, " << backend_name(b) << ")";
            }
          }
        } else {
          for (Backend b : kBackends) {
            auto st = crypto::verify_message(*pk, HashAlgo::sha512, msg, sig, b);
            EXPECT_EQ(code_of(st), want) << where << " (" << backend_name(b) << "): " << describe(st);
          }
        }
      }
    }
    EXPECT_EQ(total, j.at("numberOfTests").get<int>()) << file;
    EXPECT_EQ(valid + invalid + acceptable, total) << file;
    const Expect& e = expect[li];
    EXPECT_EQ(total, e.total) << file;
    EXPECT_EQ(valid, e.valid) << file;
    EXPECT_EQ(invalid, e.invalid) << file;
    EXPECT_EQ(acceptable, 0) << file;
    EXPECT_EQ(key_rejected, e.key_rejected) << file;
    EXPECT_EQ(sig_length, e.sig_length) << file;
    EXPECT_EQ(ctx_too_long, e.ctx_too_long) << file;
    EXPECT_EQ(rejected, e.rejected) << file;
    EXPECT_EQ(ctx_valid, e.ctx_valid) << file;
    EXPECT_EQ(key_rejected + sig_length + ctx_too_long + rejected, invalid) << file;
    std::printf("[ vectors  ] %s: %d cases: %d valid, %d invalid (%d key EBADMSG, %d sig EBADMSG, %d ctx EINVAL, "
                "%d EKEYREJECTED), %d acceptable\n",
                file.c_str(), total, valid, invalid, key_rejected, sig_length, ctx_too_long, rejected, acceptable);
    grand_total += total;
  }
  EXPECT_EQ(grand_total, 631);
}

// Seed-sign vectors: key derivation from the seed (OpenSSL through the group's RFC 9881
// PKCS#8, or our hand-wrapped seed; Botan directly), deterministic signing with Botan,
// verification of every expected signature, and the schema's rules for invalid cases
// (empty `sig`, no `mu`, publicKey null for a bad seed).
TEST(VectorsWycheproof, MlDsaSignSeedAllCases) {
  struct Expect {
    int total, groups_pkcs8, groups_seed_only, groups_bad_seed, deterministic, ctx, randomized, internal,
        invalid_ctx, invalid_seed;
  };
  const std::array<Expect, 3> expect = {{
      {86, 16, 9, 3, 70, 3, 1, 8, 1, 3},
      {105, 27, 12, 3, 80, 3, 1, 17, 1, 3},
      {96, 27, 12, 3, 71, 3, 1, 17, 1, 3},
  }};
  int grand_total = 0;
  for (std::size_t li = 0; li < kLevels.size(); ++li) {
    const Level& lv = kLevels[li];
    const std::string file = "wycheproof/testvectors_v1/mldsa_" + std::to_string(lv.n) + "_sign_seed_test.json";
    const json j = load_json(file);
    ASSERT_EQ(j.at("schema"), "mldsa_sign_seed_schema.json") << file;
    int total = 0, groups_pkcs8 = 0, groups_seed_only = 0, groups_bad_seed = 0;
    int deterministic = 0, ctx_cases = 0, randomized = 0, internal = 0, invalid_ctx = 0, invalid_seed = 0;
    for (const auto& g : j.at("testGroups")) {
      const Bytes seed = hex_field(g, "privateSeed");
      const Bytes pkcs8 = hex_field(g, "privateKeyPkcs8");
      const bool pk_null = g.at("publicKey").is_null();
      const Bytes pk = hex_field(g, "publicKey");
      std::optional<crypto::PublicKey> pub;

      if (seed.size() != 32) {
        // IncorrectPrivateKeyLength: no key, no PKCS#8, and our loader must refuse the seed
        // wrapped in the RFC 9881 seed form.
        ++groups_bad_seed;
        EXPECT_TRUE(pk_null) << file << ": bad seed of " << seed.size() << " bytes has a public key";
        EXPECT_TRUE(pkcs8.empty()) << file;
        auto k = crypto::PrivateKey::from_bytes(seed_pkcs8(lv, seed), std::nullopt);
        EXPECT_EQ(code_of(k), KErr::ebadmsg) << file << ": " << seed.size() << "-byte seed: " << describe(k);
      } else {
        ASSERT_FALSE(pk_null) << file;
        ASSERT_EQ(pk.size(), lv.pk_size) << file;
        EXPECT_EQ(crypto::botan::ml_dsa_public_from_seed(lv.algo, seed), pk) << file << " (botan keygen)";
        // OpenSSL: the vector's own PKCS#8 when there is one, else the seed wrapped by us.
        const Bytes der = pkcs8.empty() ? seed_pkcs8(lv, seed) : pkcs8;
        if (pkcs8.empty()) ++groups_seed_only;
        else {
          ++groups_pkcs8;
          EXPECT_EQ(pkcs8, seed_pkcs8(lv, seed)) << file << ": privateKeyPkcs8 is not the RFC 9881 seed form";
        }
        auto k = crypto::PrivateKey::from_bytes(der, std::nullopt);
        ASSERT_TRUE(k.ok()) << file << ": " << describe(k);
        EXPECT_EQ(k->algo(), lv.algo) << file;
        EXPECT_EQ(k->public_key().raw(), pk) << file << " (openssl keygen)";
        EXPECT_EQ(k->ml_dsa_seed(), std::optional<Bytes>(seed)) << file;
        auto out = k->pkcs8_der();
        ASSERT_TRUE(out.ok()) << describe(out);
        EXPECT_EQ(*out, der) << file << ": pkcs8_der() is not the seed form byte for byte";
        pub = k->public_key();
      }

      for (const auto& t : g.at("tests")) {
        ++total;
        const std::string where = file + " tcId " + std::to_string(t.at("tcId").get<int>());
        const std::string result = t.at("result");
        const Bytes msg = hex_field(t, "msg"), sig = hex_field(t, "sig"), ctx = hex_field(t, "ctx");
        const bool has_msg = t.contains("msg"), has_rnd = t.contains("rnd");
        if (result == "invalid") {
          // Schema: sig empty and mu omitted on expected failure.
          EXPECT_TRUE(sig.empty()) << where;
          EXPECT_FALSE(t.contains("mu")) << where;
          if (!pub) {
            ++invalid_seed;
            continue;
          }
          // The only other invalid case is a context of more than 255 bytes.
          ASSERT_EQ(ctx.size(), 256u) << where;
          ++invalid_ctx;
          const Bytes dummy(lv.sig_size, 0);
          auto st = crypto::ml_dsa_verify_with_context(*pub, msg, dummy, ctx, Backend::openssl);
          EXPECT_EQ(code_of(st), KErr::einval) << where << ": " << describe(st);
          continue;
        }
        ASSERT_EQ(result, "valid") << where;
        ASSERT_TRUE(pub.has_value()) << where;
        EXPECT_EQ(hex_field(t, "mu").size(), 64u) << where << ": valid cases carry a 64-byte mu";
        EXPECT_EQ(sig.size(), lv.sig_size) << where;
        if (!has_msg) {
          // Schema: Internal (mu-only) vectors have no message; nothing to sign or verify here.
          const auto& flags = t.at("flags");
          EXPECT_NE(std::find(flags.begin(), flags.end(), "Internal"), flags.end()) << where;
          ++internal;
          continue;
        }
        if (!ctx.empty()) {
          ++ctx_cases;
          EXPECT_FALSE(has_rnd) << where;
          auto st = crypto::ml_dsa_verify_with_context(*pub, msg, sig, ctx, Backend::openssl);
          EXPECT_TRUE(st.ok()) << where << ": " << describe(st);
          auto s0 = crypto::verify_message(*pub, HashAlgo::sha512, msg, sig, Backend::openssl);
          EXPECT_EQ(code_of(s0), KErr::ekeyrejected) << where << " (verified without its context)";
          continue;
        }
        if (has_rnd) {
          ++randomized;  // hedged with a given rnd: our API cannot inject it, so verify only
        } else {
          ++deterministic;
          EXPECT_EQ(crypto::botan::ml_dsa_sign(lv.algo, seed, msg, /*deterministic=*/true), sig)
              << where << ": Botan deterministic signature differs";
        }
        for (Backend b : kBackends) {
          auto st = crypto::verify_message(*pub, HashAlgo::sha512, msg, sig, b);
          EXPECT_TRUE(st.ok()) << where << " (" << backend_name(b) << "): " << describe(st);
        }
      }
    }
    EXPECT_EQ(total, j.at("numberOfTests").get<int>()) << file;
    const Expect& e = expect[li];
    EXPECT_EQ(total, e.total) << file;
    EXPECT_EQ(groups_pkcs8, e.groups_pkcs8) << file;
    EXPECT_EQ(groups_seed_only, e.groups_seed_only) << file;
    EXPECT_EQ(groups_bad_seed, e.groups_bad_seed) << file;
    EXPECT_EQ(deterministic, e.deterministic) << file;
    EXPECT_EQ(ctx_cases, e.ctx) << file;
    EXPECT_EQ(randomized, e.randomized) << file;
    EXPECT_EQ(internal, e.internal) << file;
    EXPECT_EQ(invalid_ctx, e.invalid_ctx) << file;
    EXPECT_EQ(invalid_seed, e.invalid_seed) << file;
    EXPECT_EQ(deterministic + ctx_cases + randomized + internal + invalid_ctx + invalid_seed, total) << file;
    std::printf("[ vectors  ] %s: %d cases: %d deterministic signed+verified, %d ctx, %d randomized, %d internal "
                "(mu only), %d invalid ctx, %d invalid seed; key groups %d pkcs8 + %d seed-only + %d bad seed\n",
                file.c_str(), total, deterministic, ctx_cases, randomized, internal, invalid_ctx, invalid_seed,
                groups_pkcs8, groups_seed_only, groups_bad_seed);
    grand_total += total;
  }
  EXPECT_EQ(grand_total, 287);
}

// ================================================================================= ACVP

TEST(VectorsAcvp, KeyGenSeedToPublicKey) {
  const json j = load_json("acvp/ML-DSA-keyGen-FIPS204-internalProjection.json");
  ASSERT_EQ(j.at("mode"), "keyGen");
  std::array<int, 3> per_level = {0, 0, 0};
  int total = 0;
  for (const auto& g : j.at("testGroups")) {
    const std::string ps = g.at("parameterSet");
    std::size_t li = 0;
    while (li < kLevels.size() && ps != "ML-DSA-" + std::to_string(kLevels[li].n)) ++li;
    ASSERT_LT(li, kLevels.size()) << "unknown parameterSet " << ps;
    const Level& lv = kLevels[li];
    for (const auto& t : g.at("tests")) {
      const std::string where = ps + " tcId " + std::to_string(t.at("tcId").get<int>());
      const Bytes seed = hex_field(t, "seed"), pk = hex_field(t, "pk");
      ASSERT_EQ(seed.size(), 32u) << where;
      ASSERT_EQ(pk.size(), lv.pk_size) << where;
      EXPECT_EQ(crypto::botan::ml_dsa_public_from_seed(lv.algo, seed), pk) << where << " (botan)";
      auto k = crypto::PrivateKey::from_bytes(seed_pkcs8(lv, seed), std::nullopt);
      ASSERT_TRUE(k.ok()) << where << ": " << describe(k);
      EXPECT_EQ(k->public_key().raw(), pk) << where << " (openssl)";
      EXPECT_EQ(k->ml_dsa_seed(), std::optional<Bytes>(seed)) << where;
      ++per_level[li];
      ++total;
    }
  }
  EXPECT_EQ(per_level, (std::array<int, 3>{25, 25, 25}));
  EXPECT_EQ(total, 75);
}

// ============================================================================ RFC 9881

// The nine good private keys (seed / expandedKey / both, three levels) against the .pub files.
TEST(VectorsRfc9881, PrivateKeysInAllThreeForms) {
  // PKCS#8 DER sizes: seed / expanded / both (cms-ml-dsa.md §1).
  const std::array<std::array<std::size_t, 3>, 3> der_size = {{{54, 2588, 2626}, {54, 4060, 4098}, {54, 4924, 4962}}};
  const std::array<const char*, 3> forms = {"seed", "expanded", "both"};
  const std::array<std::size_t, 3> spki_size = {1334, 1974, 2614};
  int loaded = 0;
  for (std::size_t li = 0; li < kLevels.size(); ++li) {
    const Level& lv = kLevels[li];
    const std::string base = "ML-DSA-" + std::to_string(lv.n);
    const Bytes spki = pem_file_der(rfc9881(base + ".pub"), "PUBLIC KEY");
    ASSERT_EQ(spki.size(), spki_size[li]) << base;
    // The raw key is the BIT STRING payload at the end of the SPKI.
    const Bytes pk_raw(spki.end() - static_cast<std::ptrdiff_t>(lv.pk_size), spki.end());
    auto pub = crypto::PublicKey::from_spki(spki);
    ASSERT_TRUE(pub.ok()) << base << ": " << describe(pub);
    EXPECT_EQ(pub->algo(), lv.algo);
    EXPECT_EQ(pub->raw(), pk_raw) << base;
    EXPECT_EQ(crypto::botan::ml_dsa_public_from_seed(lv.algo, rfc_seed()), pk_raw) << base;
    const Bytes seed_der = pem_file_der(rfc9881(base + "-seed.priv"), "PRIVATE KEY");
    EXPECT_EQ(seed_der, seed_pkcs8(lv, rfc_seed())) << base;

    for (std::size_t fi = 0; fi < forms.size(); ++fi) {
      const std::string name = base + "-" + forms[fi] + ".priv";
      EXPECT_EQ(pem_file_der(rfc9881(name), "PRIVATE KEY").size(), der_size[li][fi]) << name;
      auto k = crypto::PrivateKey::load(test::vector_path(rfc9881(name)), std::nullopt);
      ASSERT_TRUE(k.ok()) << name << ": " << describe(k);
      ++loaded;
      EXPECT_EQ(k->algo(), lv.algo) << name;
      EXPECT_EQ(k->public_key().raw(), pk_raw) << name;
      EXPECT_TRUE(k->public_key() == *pub) << name;
      const bool has_seed = fi != 1;
      EXPECT_EQ(k->ml_dsa_seed(), has_seed ? std::optional<Bytes>(rfc_seed()) : std::nullopt) << name;
      auto der = k->pkcs8_der();
      if (has_seed) {
        // Both the seed form and the both form are written back in seed form.
        ASSERT_TRUE(der.ok()) << name << ": " << describe(der);
        EXPECT_EQ(*der, seed_der) << name;
      } else {
        EXPECT_EQ(code_of(der), KErr::enokey) << name << ": " << describe(der);
      }
    }
  }
  EXPECT_EQ(loaded, 9);
}

// Appendix C.4: inconsistent ML-DSA-44 keys must be refused.
TEST(VectorsRfc9881, BadPrivateKeysRejected) {
  int rejected = 0;
  for (int i = 1; i <= 3; ++i) {
    const std::string name = "bad-ML-DSA-44-" + std::to_string(i) + ".priv";
    auto k = crypto::PrivateKey::load(test::vector_path(rfc9881(name)), std::nullopt);
    EXPECT_FALSE(k.ok()) << name << " was accepted (public key " << (k.ok() ? to_hex(k->public_key().raw()).substr(0, 16) : "")
                         << "...)";
    if (k.ok()) continue;
    EXPECT_EQ(code_of(k), KErr::ebadmsg) << name << ": " << describe(k);
    EXPECT_EQ(k.error().message.rfind("invalid private key (inconsistent key material): ", 0), 0u) << k.error().message;
    std::printf("[ vectors  ] %s: %s\n", name.c_str(), describe(k).c_str());
    ++rejected;
  }
  EXPECT_EQ(rejected, 3);
}

TEST(VectorsRfc9881, CertificatesShareIssuerAndSerial) {
  std::vector<crypto::Certificate> certs;
  for (const Level& lv : kLevels) {
    const std::string base = "ML-DSA-" + std::to_string(lv.n);
    auto list = crypto::Certificate::load_all(test::vector_path(rfc9881(base + ".crt")));
    ASSERT_TRUE(list.ok()) << base << ": " << describe(list);
    ASSERT_EQ(list->size(), 1u) << base;
    const auto& c = list->front();
    EXPECT_EQ(c.public_key().algo(), lv.algo) << base;
    const Bytes spki = pem_file_der(rfc9881(base + ".pub"), "PUBLIC KEY");
    EXPECT_EQ(c.public_key().spki(), spki) << base;
    EXPECT_EQ(c.issuer_cn(), "LAMPS WG") << base;
    EXPECT_EQ(c.subject_cn(), "LAMPS WG") << base;
    EXPECT_TRUE(std::equal(c.issuer().begin(), c.issuer().end(), c.subject().begin(), c.subject().end())) << base;
    EXPECT_EQ(to_hex(c.serial()).substr(0, 8), "159ffe6f") << base;
    EXPECT_EQ(c.serial().size(), 20u) << base;
    certs.push_back(c);
  }
  ASSERT_EQ(certs.size(), 3u);
  for (std::size_t i = 1; i < certs.size(); ++i) {
    EXPECT_EQ(Bytes(certs[i].issuer().begin(), certs[i].issuer().end()),
              Bytes(certs[0].issuer().begin(), certs[0].issuer().end()));
    EXPECT_EQ(Bytes(certs[i].serial().begin(), certs[i].serial().end()),
              Bytes(certs[0].serial().begin(), certs[0].serial().end()));
    EXPECT_EQ(certs[i].kernel_id(), certs[0].kernel_id());
    EXPECT_NE(certs[i].der(), certs[0].der());
  }
}

// ============================================================================ RFC 9882

namespace {
struct Rfc9882Example {
  const Level* lv;
  bool signed_attrs;
  std::string file;  // relative to the vectors folder
  std::string cert;  // matching RFC 9881 certificate
};
std::vector<Rfc9882Example> rfc9882_examples() {
  std::vector<Rfc9882Example> v;
  for (const Level& lv : kLevels)
    for (bool sa : {true, false})
      v.push_back({&lv, sa,
                   "rfc9882-cms-ml-dsa/mldsa" + std::to_string(lv.n) + (sa ? "-signed-attrs.pem" : "-no-signed-attrs.pem"),
                   rfc9881("ML-DSA-" + std::to_string(lv.n) + ".crt")});
  return v;
}
}  // namespace

TEST(VectorsRfc9882, ParseStructure) {
  int parsed = 0;
  for (const auto& ex : rfc9882_examples()) {
    const auto sd = parse_or_throw(pem_file_der(ex.file, "CMS"), ex.file);
    const auto cert = one_cert(ex.cert);
    const std::string text = "ML-DSA-" + std::to_string(ex.lv->n) + " signed-data example with" +
                             (ex.signed_attrs ? "" : "out") + " signed attributes";
    EXPECT_EQ(sd.version, 1) << ex.file;
    EXPECT_EQ(sd.digest_algorithm_oids, std::vector<Bytes>{kSha512Oid}) << ex.file;
    EXPECT_EQ(sd.econtent_type, (Bytes{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01}))
        << ex.file;
    ASSERT_TRUE(sd.econtent.has_value()) << ex.file;
    EXPECT_EQ(std::string(sd.econtent->begin(), sd.econtent->end()), text) << ex.file;
    EXPECT_TRUE(sd.certificates.empty()) << ex.file;
    EXPECT_FALSE(sd.has_crls) << ex.file;
    ASSERT_EQ(sd.signers.size(), 1u) << ex.file;
    const auto& si = sd.signers[0];
    EXPECT_EQ(si.version, 1) << ex.file;
    EXPECT_EQ(si.sid_type, cms::SignerIdType::issuer_and_serial) << ex.file;
    EXPECT_EQ(si.issuer, Bytes(cert.issuer().begin(), cert.issuer().end())) << ex.file;
    EXPECT_EQ(si.serial, Bytes(cert.serial().begin(), cert.serial().end())) << ex.file;
    EXPECT_EQ(si.digest_algorithm_oid, kSha512Oid) << ex.file;
    EXPECT_EQ(si.digest_algorithm, std::optional<HashAlgo>(HashAlgo::sha512)) << ex.file;
    EXPECT_EQ(si.signature_key_algo, std::optional<KeyAlgo>(ex.lv->algo)) << ex.file;
    EXPECT_FALSE(si.signature_algorithm_params_null) << ex.file;
    EXPECT_EQ(si.signature.size(), ex.lv->sig_size) << ex.file;
    EXPECT_EQ(si.signed_attrs.has_value(), ex.signed_attrs) << ex.file;
    if (ex.signed_attrs) {
      EXPECT_EQ(si.signed_attrs->at(0), 0xa0) << ex.file;
      EXPECT_EQ(si.signed_attrs_as_set().at(0), 0x31) << ex.file;
      ASSERT_TRUE(si.message_digest_attr.has_value()) << ex.file;
      EXPECT_EQ(*si.message_digest_attr, crypto::digest(HashAlgo::sha512, *sd.econtent)) << ex.file;
      EXPECT_TRUE(si.content_type_attr.has_value()) << ex.file;
    } else {
      EXPECT_FALSE(si.message_digest_attr.has_value()) << ex.file;
      EXPECT_TRUE(si.signed_attrs_as_set().empty()) << ex.file;
    }
    ++parsed;
  }
  EXPECT_EQ(parsed, 6);
}

TEST(VectorsRfc9882, VerifyWithRfc9881Certificates) {
  int verified = 0;
  for (const auto& ex : rfc9882_examples()) {
    const auto sd = parse_or_throw(pem_file_der(ex.file, "CMS"), ex.file);
    const auto cert = one_cert(ex.cert);
    cms::SignedData tampered = sd;
    tampered.econtent = flip_bit(*sd.econtent, sd.econtent->size() / 2, 3);
    for (Backend b : kBackends) {
      const std::string where = ex.file + " (" + backend_name(b) + ")";
      auto v = cms::verify(sd, std::nullopt, {cert}, b);
      ASSERT_TRUE(v.ok()) << where << ": " << describe(v);
      EXPECT_EQ(v->certificate_index, 0u) << where;
      EXPECT_EQ(v->key_algo, ex.lv->algo) << where;
      ++verified;
      auto t = cms::verify(tampered, std::nullopt, {cert}, b);
      EXPECT_EQ(code_of(t), KErr::ekeyrejected) << where << " tampered: " << describe(t);
      // The other two certificates have the same issuer and serial but another key type.
      for (const Level& other : kLevels) {
        if (&other == ex.lv) continue;
        const auto wrong = one_cert(rfc9881("ML-DSA-" + std::to_string(other.n) + ".crt"));
        auto w = cms::verify(sd, std::nullopt, {wrong}, b);
        EXPECT_EQ(code_of(w), KErr::ekeyrejected) << where << " with the ML-DSA-" << other.n << " cert: " << describe(w);
      }
      // No certificate at all: nobody matches the signer.
      auto none = cms::verify(sd, std::nullopt, {}, b);
      EXPECT_EQ(code_of(none), KErr::enokey) << where << ": " << describe(none);
    }
  }
  EXPECT_EQ(verified, 12);
}

// Interop: OpenSSL 3.5.7 verifies the signed-attrs examples; it cannot verify the
// no-signed-attrs ones ("provider signature not supported", fixed in OpenSSL 4.0).
TEST(VectorsRfc9882, OpenSslCliVerifiesSignedAttrsExamples) {
  int ok = 0, refused = 0;
  for (const auto& ex : rfc9882_examples()) {
    const auto r = test::run(test::openssl() + " cms -verify -binary -inform PEM -in " +
                             test::q(test::vector_path(ex.file)) + " -certfile " + test::q(test::vector_path(ex.cert)) +
                             " -noverify -out /dev/null");
    if (ex.signed_attrs) {
      EXPECT_EQ(r.status, 0) << ex.file << ": " << r.err;
      EXPECT_NE(r.err.find("CMS Verification successful"), std::string::npos) << ex.file << ": " << r.err;
      ok += r.status == 0;
    } else {
      EXPECT_NE(r.status, 0) << ex.file;
      EXPECT_NE(r.err.find("provider signature not supported"), std::string::npos) << ex.file << ": " << r.err;
      refused += r.status != 0;
    }
  }
  EXPECT_EQ(ok, 3);
  EXPECT_EQ(refused, 3);
}

// ===================================================================== OpenSSL 3.5.7 CLI

namespace {
struct Generated {
  crypto::Certificate cert;
  Bytes content;
};
Generated generated(const Level& lv) {
  return {one_cert(gen("mldsa" + std::to_string(lv.n) + ".cert.der")), test::slurp(test::vector_path(gen("content.bin")))};
}
std::string p7s_name(const Level& lv, const std::string& kind) { return gen("mldsa" + std::to_string(lv.n) + "." + kind + ".p7s"); }
}  // namespace

TEST(VectorsOpenSsl357, DetachedMinimalAttrsVerify) {
  int verified = 0;
  for (const Level& lv : kLevels) {
    const auto g = generated(lv);
    ASSERT_EQ(g.content, test::pattern(4096));
    ASSERT_TRUE(g.cert.skid().has_value());
    EXPECT_EQ(g.cert.serial().size(), 2u);
    EXPECT_EQ(to_hex(g.cert.serial()), "1001");
    EXPECT_EQ(g.cert.subject_cn(), "Test module signing key");
    for (const bool skid : {false, true}) {
      const std::string file = p7s_name(lv, skid ? "detached.min-attrs.skid" : "detached.min-attrs.issuer-serial");
      const auto sd = parse_or_throw(test::slurp(test::vector_path(file)), file);
      EXPECT_EQ(sd.version, skid ? 3 : 1) << file;
      EXPECT_FALSE(sd.econtent.has_value()) << file;
      EXPECT_TRUE(sd.certificates.empty()) << file;
      ASSERT_EQ(sd.signers.size(), 1u) << file;
      const auto& si = sd.signers[0];
      EXPECT_EQ(si.version, skid ? 3 : 1) << file;
      if (skid) {
        EXPECT_EQ(si.sid_type, cms::SignerIdType::subject_key_id) << file;
        EXPECT_EQ(si.skid, *g.cert.skid()) << file;
        EXPECT_EQ(si.kernel_key_id(), *g.cert.skid()) << file;
      } else {
        EXPECT_EQ(si.sid_type, cms::SignerIdType::issuer_and_serial) << file;
        EXPECT_EQ(si.serial, (Bytes{0x10, 0x01})) << file;
        EXPECT_EQ(si.kernel_key_id(), g.cert.kernel_id()) << file;
      }
      EXPECT_EQ(si.digest_algorithm_oid, kSha512Oid) << file;
      EXPECT_FALSE(si.has_signing_time) << file;
      EXPECT_FALSE(si.has_smime_capabilities) << file;
      EXPECT_EQ(si.signature.size(), lv.sig_size) << file;
      const Bytes changed = flip_bit(g.content, 100);
      for (Backend b : kBackends) {
        auto v = cms::verify(sd, ByteView(g.content), {g.cert}, b);
        ASSERT_TRUE(v.ok()) << file << " (" << backend_name(b) << "): " << describe(v);
        EXPECT_EQ(v->key_algo, lv.algo);
        ++verified;
        auto t = cms::verify(sd, ByteView(changed), {g.cert}, b);
        EXPECT_EQ(code_of(t), KErr::ekeyrejected) << file << " (" << backend_name(b) << ") changed: " << describe(t);
      }
    }
  }
  EXPECT_EQ(verified, 12);
}

TEST(VectorsOpenSsl357, Shake256DigestIsUnsupported) {
  const Level& lv = kLevels[1];
  const auto g = generated(lv);
  const std::string file = p7s_name(lv, "detached.min-attrs.shake256");
  const auto sd = parse_or_throw(test::slurp(test::vector_path(file)), file);
  ASSERT_EQ(sd.signers.size(), 1u);
  EXPECT_EQ(sd.signers[0].digest_algorithm_oid, kShake256Oid);
  EXPECT_EQ(sd.signers[0].digest_algorithm, std::nullopt);
  ASSERT_TRUE(sd.signers[0].message_digest_attr.has_value());
  EXPECT_EQ(sd.signers[0].message_digest_attr->size(), 64u);
  for (Backend b : kBackends) {
    auto v = cms::verify(sd, ByteView(g.content), {g.cert}, b);
    EXPECT_EQ(code_of(v), KErr::enopkg) << backend_name(b) << ": " << describe(v);
  }
}

TEST(VectorsOpenSsl357, AttachedDefaultAttrsWithEmbeddedCert) {
  int verified = 0;
  for (const Level& lv : kLevels) {
    const auto g = generated(lv);
    const std::string file = p7s_name(lv, "attached.default-attrs.with-cert");
    const auto sd = parse_or_throw(test::slurp(test::vector_path(file)), file);
    ASSERT_EQ(sd.certificates.size(), 1u) << file;
    EXPECT_EQ(sd.certificates[0], g.cert.der()) << file;
    ASSERT_TRUE(sd.econtent.has_value()) << file;
    EXPECT_EQ(*sd.econtent, g.content) << file;
    ASSERT_EQ(sd.signers.size(), 1u) << file;
    EXPECT_TRUE(sd.signers[0].has_signing_time) << file;
    EXPECT_TRUE(sd.signers[0].has_smime_capabilities) << file;
    EXPECT_EQ(sd.signers[0].sid_type, cms::SignerIdType::issuer_and_serial) << file;
    cms::SignedData tampered = sd;
    tampered.econtent = flip_bit(g.content, 4095, 7);
    // A certificate carried in the message is never trusted by itself: without a
    // candidate the signer is unknown (ENOKEY); the caller trusts it by passing it.
    auto untrusted = cms::verify(sd, std::nullopt, {});
    EXPECT_EQ(code_of(untrusted), KErr::enokey) << file << ": " << describe(untrusted);
    const std::vector<crypto::Certificate> embedded{crypto::Certificate::from_der(sd.certificates[0]).value()};
    for (Backend b : kBackends) {
      auto v = cms::verify(sd, std::nullopt, embedded, b);
      ASSERT_TRUE(v.ok()) << file << " (" << backend_name(b) << "): " << describe(v);
      EXPECT_EQ(v->certificate_index, 0u) << file;
      EXPECT_EQ(v->key_algo, lv.algo) << file;
      ++verified;
      auto t = cms::verify(tampered, std::nullopt, embedded, b);
      EXPECT_EQ(code_of(t), KErr::ekeyrejected) << file << " (" << backend_name(b) << ") changed: " << describe(t);
      // Attached content plus detached content is refused (kernel: "non-detached data").
      auto both = cms::verify(sd, ByteView(g.content), embedded, b);
      EXPECT_EQ(code_of(both), KErr::ebadmsg) << file << ": " << describe(both);
    }
  }
  EXPECT_EQ(verified, 6);
}

// Our builder reproduces sign-file/OpenSSL's DER exactly; only the (hedged) ML-DSA
// signature value at the very end differs.
TEST(VectorsOpenSsl357, BuildDetachedMatchesByteStructure) {
  int compared = 0;
  for (const Level& lv : kLevels) {
    const auto g = generated(lv);
    auto key = crypto::PrivateKey::load(test::vector_path(gen("mldsa" + std::to_string(lv.n) + ".key.pem")), std::nullopt);
    ASSERT_TRUE(key.ok()) << describe(key);
    EXPECT_EQ(key->ml_dsa_seed(), std::optional<Bytes>(rfc_seed()));
    for (const bool skid : {false, true}) {
      const std::string file = p7s_name(lv, skid ? "detached.min-attrs.skid" : "detached.min-attrs.issuer-serial");
      const Bytes want = test::slurp(test::vector_path(file));
      for (Backend b : kBackends) {
        const std::string where = file + " (" + backend_name(b) + ")";
        cms::BuildOptions opt;
        opt.digest = HashAlgo::sha512;
        opt.signed_attrs = true;
        opt.sid = skid ? cms::SignerIdType::subject_key_id : cms::SignerIdType::issuer_and_serial;
        opt.backend = b;
        auto built = cms::build_detached(*key, g.cert, g.content, opt);
        ASSERT_TRUE(built.ok()) << where << ": " << describe(built);
        ASSERT_EQ(built->size(), want.size()) << where;
        const auto prefix = static_cast<std::ptrdiff_t>(want.size() - lv.sig_size);
        EXPECT_TRUE(std::equal(want.begin(), want.begin() + prefix, built->begin())) << where << ": DER differs before the signature";
        EXPECT_FALSE(std::equal(want.begin() + prefix, want.end(), built->begin() + prefix))
            << where << ": signature identical to OpenSSL's (not hedged?)";
        const auto sd = parse_or_throw(*built, where);
        for (Backend vb : kBackends) {
          auto v = cms::verify(sd, ByteView(g.content), {g.cert}, vb);
          EXPECT_TRUE(v.ok()) << where << " verified by " << backend_name(vb) << ": " << describe(v);
        }
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 12);
}
