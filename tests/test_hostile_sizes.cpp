// Hostile sizes (issue #6): declared lengths beyond the input, a 4 GiB sig_len, deeply
// nested and indefinite-length BER, 100,000 SignerInfos or certificates, length fields
// of 2^32-1 in measurement lists, EFI_SIGNATURE_LISTs whose sizes wrap 32-bit arithmetic,
// decompression bombs.  Each is rejected with the errno
// and message asserted here, and runs in a child process whose peak memory (getrusage
// ru_maxrss) is checked against the same child doing nothing, so memory stays bounded.
// No timing is asserted; a 120 s alarm in the child only turns a hang into a failure.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

#include "asn1/der.hpp"
#include "blacklist/efi.hpp"
#include "cms/kernel.hpp"
#include "cms/signed_data.hpp"
#include "crypto/crypto.hpp"
#include "digest/ima.hpp"
#include "module/compression.hpp"
#include "module/module_signature.hpp"
#include "test_support.hpp"

using namespace modsign;
using namespace modsign::test;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr long kSlackKiB = 768 * 1024;  // ASan's quarantine and shadow memory
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr long kSlackKiB = 768 * 1024;
#else
constexpr long kSlackKiB = 160 * 1024;
#endif
#else
constexpr long kSlackKiB = 160 * 1024;
#endif

struct ChildResult {
  int status = -1;  ///< exit status of the child, -1 if it died of a signal
  long maxrss_kib = 0;
};

/// Run `fn` in a forked child (its return value is the exit status) and report the
/// child's exit status and peak resident set size.
ChildResult in_child(const std::function<int()>& fn) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(120);
    int rc = 99;
    try {
      rc = fn();
    } catch (...) { rc = 98; }
    _exit(rc);
  }
  ChildResult r;
  int st = 0;
  struct rusage ru {};
  if (pid < 0 || wait4(pid, &st, 0, &ru) != pid) return r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.maxrss_kib = ru.ru_maxrss;
  return r;
}

/// Peak RSS of a child that does nothing (the parent's pages it starts with), measured
/// right before each check since the parent grows.
long baseline_kib() {
  return in_child([] { return 0; }).maxrss_kib;
}

/// `fn` returns 0 when the expected rejection happened; asserts that and bounded memory.
void expect_rejected_bounded(const std::function<int()>& fn, long budget_kib = kSlackKiB) {
  const long base = baseline_kib();
  const auto r = in_child(fn);
  EXPECT_EQ(r.status, 0) << "child status (98: exception, -1: signal or alarm)";
  EXPECT_LT(r.maxrss_kib - base, budget_kib) << "peak RSS " << r.maxrss_kib << " KiB, baseline " << base << " KiB";
}

Bytes cat(std::initializer_list<ByteView> parts) {
  Bytes b;
  for (auto p : parts) b.insert(b.end(), p.begin(), p.end());
  return b;
}

/// A detached ECDSA P-256 signature over "content" (sign-file layout), with a certificate.
struct Sample {
  crypto::PrivateKey key = crypto::PrivateKey::generate(crypto::KeyAlgo::ecdsa_p256);
  crypto::Certificate cert = crypto::Certificate::self_signed(key, "CN=hostile", 30).value();
  Bytes content = pattern(1000);
  Bytes cms = cms::build_detached(key, cert, content, cms::BuildOptions{crypto::HashAlgo::sha256}).value();
};
const Sample& sample() {
  static const Sample s;
  return s;
}

/// The sample's ContentInfo re-encoded (DER) with `n_signers` copies of its SignerInfo and
/// `n_certs` copies of its certificate.
Bytes multiplied(std::size_t n_signers, std::size_t n_certs) {
  const auto& s = sample();
  asn1::Reader top(s.cms);
  auto ci = top.enter(asn1::kSequence, "ContentInfo");
  const auto type = ci.expect(asn1::kOid, "type");
  auto e0 = ci.enter(asn1::context_cons(0), "[0]");
  auto sd = e0.enter(asn1::kSequence, "SignedData");
  const auto version = sd.expect(asn1::kInteger, "version");
  const auto algs = sd.expect(asn1::kSet, "digestAlgorithms");
  const auto encap = sd.expect(asn1::kSequence, "encapContentInfo");
  auto sis = sd.enter(asn1::kSet, "signerInfos");
  const auto si = sis.expect(asn1::kSequence, "SignerInfo");
  asn1::Writer w;
  w.add(asn1::kSequence, [&](asn1::Writer& c) {
    c.raw(type.tlv).add(asn1::context_cons(0), [&](asn1::Writer& x) {
      x.add(asn1::kSequence, [&](asn1::Writer& d) {
        d.raw(version.tlv).raw(algs.tlv).raw(encap.tlv);
        if (n_certs)
          d.add(asn1::context_cons(0), [&](asn1::Writer& cs) {
            for (std::size_t i = 0; i < n_certs; ++i) cs.raw(s.cert.der());
          });
        d.add(asn1::kSet, [&](asn1::Writer& set) {
          for (std::size_t i = 0; i < n_signers; ++i) set.raw(si.tlv);
        });
      });
    });
  });
  return w.take();
}

}  // namespace

TEST(HostileSizes, Asn1DeclaredLengthBeyondInput) {
  const Bytes four = {0x30, 0x84, 0xff, 0xff, 0xff, 0xff, 0x02, 0x01, 0x00};
  const Bytes two = {0x30, 0x82, 0xff, 0xff, 0x02, 0x01, 0x00};
  const Bytes eight = {0x30, 0x88, 0, 0, 0, 1, 0, 0, 0, 0, 0x02};
  auto reason = [](ByteView in, asn1::Rules rules) {
    try {
      asn1::Reader(in, rules).next();
      return std::string("accepted");
    } catch (const asn1::DecodeError& e) { return std::string(e.what()); }
  };
  EXPECT_EQ(reason(four, asn1::Rules::der), "element length exceeds the input");
  EXPECT_EQ(reason(four, asn1::Rules::ber), "length field longer than 2 octets");
  EXPECT_EQ(reason(two, asn1::Rules::ber), "element length exceeds the input");
  EXPECT_EQ(reason(eight, asn1::Rules::der), "length field longer than 4 octets");
}

TEST(HostileSizes, Pkcs7DeclaredLengthBeyondInput) {
  // The sample's ContentInfo with its length octets replaced by 82 ff f0: it claims
  // 65,520 bytes; the input has ~ 200.
  const Bytes& orig = sample().cms;
  ASSERT_EQ(orig[1], 0x81);
  Bytes der = {0x30, 0x82, 0xff, 0xf0};
  der.insert(der.end(), orig.begin() + 3, orig.end());
  auto m = cms::pkcs7_parse_message(der, cms::KernelModel::v7_0());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, KErr::ebadmsg);
  EXPECT_EQ(m.error().message, "ASN.1 decoder: ContentInfo: element length exceeds the input");
  auto c = cms::parse(der);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, KErr::ebadmsg);
}

TEST(HostileSizes, ModuleSigLen4GiB) {
  const Bytes content = pattern(100);
  Bytes trailer = module::encode_module_signature(0xffffffffu);
  const Bytes file =
      cat({content, trailer,
           ByteView(reinterpret_cast<const std::uint8_t*>(module::kMarker.data()), module::kMarker.size())});
  auto s = module::split(file);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, KErr::ebadmsg);
  EXPECT_EQ(s.error().message, "signature length 4294967295 does not fit in the 100 bytes before the trailer");
  // A file that is big enough for the claim (as a 5 GiB sparse file would be): the
  // trailer alone is parsed; the claimed 4 GiB PKCS#7 is never read by the streaming path.
  auto t = module::parse_tail(ByteView(file).last(40), std::uint64_t{5} << 30);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->sig_len, 0xffffffffu);
  EXPECT_EQ(t->content_len, (std::uint64_t{5} << 30) - 40 - 0xffffffffull);
}

TEST(HostileSizes, ModuleSigLen4GiBCli) {
  TempDir d;
  const Bytes content = pattern(100);
  Bytes file = cat({content, module::encode_module_signature(0xffffffffu),
                    ByteView(reinterpret_cast<const std::uint8_t*>(module::kMarker.data()), module::kMarker.size())});
  spit(d / "m.ko", file);
  auto r = run(modsign_cli() + " verify " + q(d / "m.ko"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, (d / "m.ko") +
                       ": refused (EBADMSG): signature length 4294967295 does not fit in the 100 bytes "
                       "before the trailer" +
                       kRefusedScope + "\n");
  EXPECT_EQ(slurp(d / "m.ko"), file);
  // 5 GiB sparse file with the same trailer: refused as EMSGSIZE from its last 40 bytes.
  const std::string big = d / "big.ko";
  ASSERT_EQ(run("truncate -s " + std::to_string((std::uint64_t{5} << 30) - 40) + " " + q(big)).status, 0);
  spit(d / "tail", ByteView(file).last(40));
  ASSERT_EQ(run("cat " + q(d / "tail") + " >> " + q(big)).status, 0);
  auto b = run(modsign_cli() + " verify --stream-above 0 " + q(big));
  EXPECT_EQ(b.status, 1) << b.err;
  EXPECT_EQ(
      b.out,
      big +
          ": refused (EMSGSIZE): PKCS#7 message of 4294967295 bytes exceeds the ASN.1 decoder's 65535 [kernel v7.0]\n");
}

TEST(HostileSizes, DeeplyNestedIndefiniteBer) {
  // 30 80 repeated: the grammar walks into the ContentInfo and finds a SEQUENCE where
  // contentType's OID belongs, as lib/asn1_decoder.c does.
  Bytes nested;
  for (int i = 0; i < 16000; ++i) nested.insert(nested.end(), {0x30, 0x80});
  nested.resize(nested.size() + 32000, 0);  // 64,000 bytes: under the decoder's 65535
  auto m = cms::pkcs7_parse_message(nested, cms::KernelModel::v7_0());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, KErr::ebadmsg);
  EXPECT_EQ(m.error().message, "ASN.1 decoder: contentType: expected tag 0x06, found 0x30");
  // An element taken whole (an ANY) is measured as asn1_find_indefinite_length measures it:
  // a level count, no limit, no recursion: a million levels in bounded time and memory,
  // and without their last end-of-contents octets a refusal.
  expect_rejected_bounded([] {
    Bytes deep;
    for (int i = 0; i < 1'000'000; ++i) deep.insert(deep.end(), {0x30, 0x80});
    deep.resize(deep.size() + 2'000'000, 0);
    if (asn1::Reader(deep, asn1::Rules::ber).next().tlv.size() != deep.size()) return 1;
    deep.resize(deep.size() - 2);
    try {
      asn1::Reader(deep, asn1::Rules::ber).next();
    } catch (const asn1::DecodeError& e) { return std::string(e.what()) == "missing end-of-contents octets" ? 0 : 2; }
    return 3;
  });
  // Definite lengths nest without a limit in the reader, but a parser only descends as
  // its grammar does: 20,000 nested SEQUENCEs are one malformed ContentInfo.
  Bytes def = {0x06, 0x00};
  for (int i = 0; i < 20000 && def.size() < 60000; ++i) {
    Bytes h = asn1::header(asn1::kSequence, def.size());
    def.insert(def.begin(), h.begin(), h.end());
  }
  auto d = cms::pkcs7_parse_message(def, cms::KernelModel::v7_0());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, KErr::ebadmsg);
}

TEST(HostileSizes, HundredThousandSignerInfos) {
  const Bytes der = multiplied(100'000, 0);
  ASSERT_GT(der.size(), 65535u);
  auto m = cms::pkcs7_parse_message(der, cms::KernelModel::v7_0());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, KErr::emsgsize);
  EXPECT_EQ(m.error().message,
            "PKCS#7 message of " + std::to_string(der.size()) + " bytes exceeds the ASN.1 decoder's 65535");
  // The generic parser takes them all, with memory proportional to the input.
  expect_rejected_bounded([&] {
    auto sd = cms::parse(der);
    return sd.ok() && sd->signers.size() == 100'000 ? 0 : 1;
  });
  // As many as fit under 64 KiB: parsed, and pkcs7_get_digest wants exactly one.
  const std::size_t per = multiplied(2, 0).size() - multiplied(1, 0).size();
  const std::size_t n = (65535 - multiplied(1, 0).size()) / per;
  const Bytes fits = multiplied(n, 0);
  ASSERT_LE(fits.size(), 65535u);
  expect_rejected_bounded([&] {
    auto k = cms::pkcs7_parse_message(fits, cms::KernelModel::v7_0());
    if (!k.ok() || k->signed_infos.size() != n) return 1;
    if (!cms::pkcs7_supply_detached_data(*k, sample().content).ok()) return 2;
    auto dg = cms::pkcs7_get_digest(*k, cms::KernelModel::v7_0());
    return !dg.ok() && dg.error().code == KErr::ebadmsg ? 0 : 3;
  });
}

TEST(HostileSizes, HundredThousandCertificates) {
  const Bytes der = multiplied(1, 100'000);
  auto m = cms::pkcs7_parse_message(der, cms::KernelModel::v7_0());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, KErr::emsgsize);
  expect_rejected_bounded([&] {
    auto sd = cms::parse(der);
    return sd.ok() && sd->certificates.size() == 100'000 ? 0 : 1;
  });
}

TEST(HostileSizes, MeasurementListLengths4GiB) {
  auto u32 = [](std::uint32_t v) {
    return Bytes{std::uint8_t(v), std::uint8_t(v >> 8), std::uint8_t(v >> 16), std::uint8_t(v >> 24)};
  };
  const Bytes digest(20, 0x11);
  const std::string name = "ima-ng";
  Bytes rec = cat({u32(10), digest, u32(6), ByteView(reinterpret_cast<const std::uint8_t*>(name.data()), 6),
                   u32(0xffffffffu), Bytes(16, 0)});
  auto r = digest::parse_measurement_list(rec, crypto::HashAlgo::sha1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, KErr::ebadmsg);
  EXPECT_NE(r.error().message.find("template data length 4294967295 (read little-endian) beyond the end of the list"),
            std::string::npos)
      << r.error().message;
  Bytes big_name = cat({u32(10), digest, u32(0xffffffffu)});
  auto n = digest::parse_measurement_list(big_name, crypto::HashAlgo::sha1);
  ASSERT_FALSE(n.ok());
  // The first record's name length decides the list's byte order (issue 27): 4 GiB is
  // 1-255 in neither, so the list is refused there; in a given order it is the length.
  EXPECT_EQ(n.error().message,
            "record 1 at offset 0: template name length 0xffffffff (as stored) is 1-255 in neither "
            "byte order (not a binary measurement list with 20-byte sha1 template hashes)");
  n = digest::parse_measurement_list(big_name, crypto::HashAlgo::sha1, ByteOrder::little);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().message.find("template name length 4294967295"), std::string::npos) << n.error().message;
  // A field inside the template data claiming 4 GiB.
  Bytes field = cat({u32(10), digest, u32(6), ByteView(reinterpret_cast<const std::uint8_t*>(name.data()), 6), u32(8),
                     u32(0xfffffffcu), Bytes(4, 0)});
  auto f = digest::parse_measurement_list(field, crypto::HashAlgo::sha1);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message.find("field length 4294967292 (read little-endian) beyond the template data"),
            std::string::npos)
      << f.error().message;
}

TEST(HostileSizes, DecompressionBombBounded) {
  // 64 MiB of zeros compress to a few KiB; opening with a 1 MiB bound stops at the bound.
  for (auto fmt : {module::Compression::xz, module::Compression::zstd, module::Compression::gzip}) {
    SCOPED_TRACE(std::string(module::compression_name(fmt)));
    const Bytes bomb = [&] {
      Bytes zeros(std::size_t{64} << 20, 0);
      return module::compress(zeros, fmt);
    }();
    ASSERT_LT(bomb.size(), 64u * 1024);
    expect_rejected_bounded(
        [&] {
          auto m = module::open_module(bomb, std::uint64_t{1} << 20);
          if (m.ok() || m.error().code != KErr::einval) return 1;
          return m.error().message.find("decompressed size exceeds the limit of 1048576 bytes") != std::string::npos
                     ? 0
                     : 2;
        },
        kSlackKiB / 2);
  }
}

TEST(HostileSizes, ZstdWindowBeyondTheBound) {
  // Found by fuzz_compression: a 10-byte zstd frame header declaring a 2 GiB window made
  // libzstd reserve 2 GiB whatever the size bound.  Now the window may take at most twice
  // the bound (at least 64 MiB); the file is tests/fuzz/corpus/compression/regress-zstd-2gib-window.
  const Bytes header = from_hex("28b52ffd04a864f27b10");
  expect_rejected_bounded(
      [&] {
        auto m = module::open_module(header, std::uint64_t{1} << 20);
        if (m.ok() || m.error().code != KErr::einval) return 1;
        if (m.error().reason != Error::Reason::over_own_bound) return 3;  // modsign's bound, not the kernel's
        return m.error().message ==
                       "zstd window needs more than 67108864 bytes of memory (twice the size limit of "
                       "1048576 bytes, at least 64 MiB; raise --max-size)"
                   ? 0
                   : 2;
      },
      64 * 1024);
  // With the default bound (1 GiB) the window is allowed, as the kernel allows it, and the
  // stream fails later.
  auto d = module::open_module(header);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, KErr::einval);
  EXPECT_EQ(d.error().message.find("zstd window"), std::string::npos) << d.error().message;
}

TEST(HostileSizes, EfiListSizesOverflow32Bit) {
  namespace efi = modsign::blacklist::efi;
  // EFI_SIGNATURE_LIST headers whose sizes wrap 32-bit arithmetic (28 + header_size,
  // list_size - 28 - header_size, count * signature_size): each is EBADMSG with no list,
  // never a huge allocation.
  auto list = [](std::uint32_t list_size, std::uint32_t header_size, std::uint32_t sig_size, std::size_t body) {
    Bytes b = from_hex("2616c4c14c509240aca941f936934328");  // EFI_CERT_SHA256_GUID
    for (std::uint32_t v : {list_size, header_size, sig_size})
      for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    b.resize(b.size() + body, 0x22);
    return b;
  };
  const std::vector<Bytes> cases = {
      list(0xffffffffu, 0, 48, 48),      // list beyond the input
      list(76, 0xffffffe4u, 48, 48),     // 28 + header_size wraps to 0
      list(76, 0, 0xffffffffu, 48),      // signature_size beyond the list
      list(76, 0xfffffff0u, 0x40u, 48),  // list_size - 28 - header_size wraps
  };
  expect_rejected_bounded(
      [&] {
        for (const auto& c : cases) {
          auto p = efi::parse_signature_lists(c);
          if (!p.error || p.error->code != KErr::ebadmsg || !p.lists.empty()) return 1;
        }
        return 0;
      },
      64 * 1024);
  // 100,000 well-formed one-entry lists: all parsed, memory proportional to the input.
  Bytes many;
  for (int i = 0; i < 100'000; ++i) {
    const Bytes l = list(76, 0, 48, 48);
    many.insert(many.end(), l.begin(), l.end());
  }
  expect_rejected_bounded([&] {
    auto p = efi::parse_signature_lists(many);
    return !p.error && p.lists.size() == 100'000 ? 0 : 1;
  });
}
