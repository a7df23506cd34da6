// Inputs from the hostile review of the read-only commands: verify without any module, a
// --keyring directory holding entries that are not certificates (skipped with a note as
// the kernel's loaders skip them, refused under --strict), one --json line per input for
// digest / ima template / blacklist entry, and error texts that do not repeat the path.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_support.hpp"

namespace modsign::test::cli_tests {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = s.find('\n', start)) != std::string::npos; start = nl + 1)
    out.push_back(s.substr(start, nl - start));
  if (start < s.size()) out.push_back(s.substr(start));
  return out;
}

// A UNIX socket bound at `path` (left in place when the descriptor closes).
void make_socket(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof a.sun_path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a), 0) << path;
  close(fd);
}

class HostileInputs : public Cli {
 protected:
  // A module signed with the suite's RSA key.
  std::string signed_module() {
    const std::string m = module("s.ko");
    auto r = test::run(M() + " sign --key " + q(key("rsa.pem")) + " --cert " + q(key("rsa.crt")) + " " + q(m));
    EXPECT_EQ(r.status, 0) << r.err;
    return m;
  }
  // d_/kr holding a copy of the RSA certificate as a.crt.
  std::string keyring_dir() {
    const std::string kr = d_ / "kr";
    fs::create_directory(kr);
    fs::copy_file(key("rsa.crt"), kr + "/a.crt");
    return kr;
  }
  // A zstd frame header with nothing after it.
  std::string truncated_zst() {
    const std::string p = d_ / "trunc.ko.zst";
    test::spit(p, Bytes{0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x58});
    return p;
  }
};

// 1. verify: no MODULE and no -r is a usage error, as for sign (exit 0 would say that
// every module loads untainted).
TEST_F(HostileInputs, VerifyWithoutModulesIsAUsageError) {
  for (const std::string& extra : std::vector<std::string>{"", " --json", " --keyring " + q(key("rsa.crt")),
                                                           " --json --keyring " + q(key("rsa.crt"))}) {
    SCOPED_TRACE(extra);
    auto r = test::run(M() + " verify" + extra);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "modsign: no modules given (MODULE... or -r DIR)\n");
  }
  // -r with an empty directory verified nothing: exit 3 with the reason, as for every
  // command (test_tree_walk.cpp), not exit 0 "every module loads".
  fs::create_directory(d_ / "empty");
  const std::string none =
      "modsign: " + std::string(d_ / "empty") + ": no modules under it (*.ko, *.ko.xz, *.ko.zst, *.ko.gz)\n";
  auto r = test::run(M() + " verify -r " + q(d_ / "empty"));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, none);
  r = test::run(M() + " verify --json -r " + q(d_ / "empty"));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, none);
}

// 2. A keyring directory: every entry that is not a certificate file is skipped with a
// note, in name order, and the certificates that are there still trust the module.
TEST_F(HostileInputs, KeyringDirectorySkipsWhatIsNotACertificate) {
  const std::string mod = signed_module();
  const std::string kr = keyring_dir();
  test::spit(kr + "/b.txt", std::string("not a certificate\n"));
  ASSERT_EQ(mkfifo((kr + "/c.fifo").c_str(), 0600), 0);
  fs::create_directory(kr + "/d");
  fs::create_symlink(kr + "/nowhere", kr + "/e.lnk");
  fs::create_symlink(kr + "/f.loop", kr + "/f.loop");
  make_socket(kr + "/g.sock");
  fs::create_symlink("/dev/null", kr + "/h.null");
  test::spit(kr + "/i.empty", std::string());
  const std::string notes = "modsign: note: " + kr +
                            "/b.txt: skipped: neither DER nor a PEM CERTIFICATE block (not a certificate)\n"
                            "modsign: note: " +
                            kr +
                            "/c.fifo: skipped: FIFO (not a certificate)\n"
                            "modsign: note: " +
                            kr +
                            "/d: skipped: subdirectory (not a certificate)\n"
                            "modsign: note: " +
                            kr +
                            "/e.lnk: skipped: dangling symbolic link (not a certificate)\n"
                            "modsign: note: " +
                            kr +
                            "/f.loop: skipped: symbolic link loop (not a certificate)\n"
                            "modsign: note: " +
                            kr +
                            "/g.sock: skipped: socket (not a certificate)\n"
                            "modsign: note: " +
                            kr +
                            "/h.null: skipped: character device (not a certificate)\n"
                            "modsign: note: " +
                            kr + "/i.empty: skipped: empty file (not a certificate)\n";
  auto r = test::run(M() + " verify --keyring " + q(kr) + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind(mod + ": loads (OK): ", 0), 0u) << r.out;
  EXPECT_EQ(r.err, notes);
  r = test::run(M() + " verify --json --keyring " + q(kr) + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(lines_of(r.out).size(), 1u) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["outcome"], "loads");
  EXPECT_EQ(r.err, notes);
  // The same loader for ima appraise and blacklist check.
  r = test::run(M() + " ima appraise --keyring " + q(kr) + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, notes);
  r = test::run(M() + " blacklist check --keyring " + q(kr) + " " + q(mod));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, notes);
  // A directory with nothing but non-certificates trusts nothing: the module is unsigned
  // for that keyring (ENOKEY), each entry noted, and the empty keyring said once.
  fs::remove(kr + "/a.crt");
  r = test::run(M() + " verify --keyring " + q(kr) + " " + q(mod));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("(ENOKEY)"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, notes +
                       "modsign: note: the keyring holds no key (give them with --keyring/--cert FILE; a "
                       "kernel build's own key is its certs/signing_key.x509), so every signature is predicted "
                       "ENOKEY\n");
}

// --strict: each kind of entry is an error (exit 3) naming it and why, in every command
// that takes --keyring; nothing is verified.
TEST_F(HostileInputs, StrictRefusesEachNonCertificateEntry) {
  const std::string mod = signed_module();
  struct Case {
    const char* name;
    const char* why;
  };
  const Case cases[] = {{"b.txt", "neither DER nor a PEM CERTIFICATE block"},
                        {"c.fifo", "FIFO"},
                        {"d", "subdirectory"},
                        {"e.lnk", "dangling symbolic link"},
                        {"f.loop", "symbolic link loop"},
                        {"g.sock", "socket"},
                        {"h.null", "character device"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    fs::remove_all(d_ / "kr");
    const std::string kr = keyring_dir();
    const std::string e = kr + "/" + c.name;
    const std::string n = c.name;
    if (n == "b.txt") test::spit(e, std::string("stray\n"));
    if (n == "c.fifo") { ASSERT_EQ(mkfifo(e.c_str(), 0600), 0); }
    if (n == "d") fs::create_directory(e);
    if (n == "e.lnk") fs::create_symlink(kr + "/nowhere", e);
    if (n == "f.loop") fs::create_symlink(e, e);
    if (n == "g.sock") make_socket(e);
    if (n == "h.null") fs::create_symlink("/dev/null", e);
    const std::string err = "modsign: " + e + ": " + c.why + " (not a certificate)\n";
    for (const std::string cmd : {"verify", "verify --json", "ima appraise", "blacklist check"}) {
      SCOPED_TRACE(cmd);
      auto r = test::run(M() + " " + cmd + " --strict --keyring " + q(kr) + " " + q(mod));
      EXPECT_EQ(r.status, 3);
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(r.err, err);
    }
  }
}

// A file that claims to be a certificate but is damaged stays an error, with or without
// --strict: a PEM CERTIFICATE block with bad base64, DER that is not X.509.
TEST_F(HostileInputs, DamagedCertificateInKeyringDirectoryIsAnError) {
  const std::string mod = signed_module();
  const std::string kr = keyring_dir();
  test::spit(kr + "/z.pem",
             std::string("-----BEGIN CERTIFICATE-----\n!!!!not base64!!!!\n-----END CERTIFICATE-----\n"));
  for (const std::string strict : {"", " --strict"}) {
    SCOPED_TRACE(strict);
    auto r = test::run(M() + " verify" + strict + " --keyring " + q(kr) + " " + q(mod));
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "modsign: " + kr + "/z.pem: PEM block 1 is damaged (bad base64 or armour)\n");
  }
  fs::remove(kr + "/z.pem");
  test::spit(kr + "/z.der", Bytes{0x30, 0x03, 0x02, 0x01, 0x00});
  for (const std::string strict : {"", " --strict"}) {
    SCOPED_TRACE(strict);
    auto r = test::run(M() + " blacklist check" + strict + " --keyring " + q(kr) + " " + q(mod));
    EXPECT_EQ(r.status, 3);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("modsign: " + kr + "/z.der: malformed certificate: ", 0), 0u) << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  }
}

// 3. digest --json: one line per input, in input order; an input without a result is
// {"path", "error"} as in info --json, the error without the path.
TEST_F(HostileInputs, DigestJsonHasOneLinePerInput) {
  const std::string a = module("a.ko");
  const std::string missing = d_ / "nosuch.ko";
  const std::string zst = truncated_zst();
  auto r = test::run(M() + " digest --json " + q(a) + " " + q(missing) + " " + q(zst));
  EXPECT_EQ(r.status, 3);
  const auto out = lines_of(r.out);
  ASSERT_EQ(out.size(), 3u) << r.out;
  const auto j0 = nlohmann::json::parse(out[0]), j1 = nlohmann::json::parse(out[1]), j2 = nlohmann::json::parse(out[2]);
  EXPECT_EQ(j0["path"], a);
  EXPECT_EQ(j0["signed"], false);
  EXPECT_EQ(j1, nlohmann::json({{"path", missing}, {"error", "No such file or directory"}}));
  EXPECT_EQ(j2["path"], zst);
  ASSERT_TRUE(j2["error"].is_string());
  EXPECT_EQ(j2["error"].get<std::string>().rfind("zstd-compressed module: ", 0), 0u) << j2;
  EXPECT_EQ(j2.size(), 2u);
  const auto err = lines_of(r.err);
  ASSERT_EQ(err.size(), 2u) << r.err;
  EXPECT_EQ(err[0], "modsign: " + missing + ": No such file or directory");
  EXPECT_EQ(err[1], "modsign: " + zst + ": " + j2["error"].get<std::string>());
}

// ima template --json: the one FILE gets its line even without a result.
TEST_F(HostileInputs, ImaTemplateJsonWritesAnErrorLine) {
  const std::string missing = d_ / "nosuch.ko";
  auto r = test::run(M() + " ima template --json " + q(missing));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, nlohmann::json({{"path", missing}, {"error", "No such file or directory"}}).dump() + "\n");
  EXPECT_EQ(r.err, "modsign: " + missing + ": No such file or directory\n");
  r = test::run(M() + " ima template --json " + q(module("a.ko")));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(lines_of(r.out).size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(r.out)["template"], "ima-modsig");
}

// blacklist entry --json: every ITEM has a line, in input order.
TEST_F(HostileInputs, BlacklistEntryJsonHasALinePerInput) {
  const std::string a = module("a.ko");
  const std::string missing = d_ / "nosuch.ko";
  const std::string zst = truncated_zst();
  auto r = test::run(M() + " blacklist entry --json " + q(missing) + " " + q(a) + " " + q(zst));
  EXPECT_EQ(r.status, 3);
  const auto out = lines_of(r.out);
  ASSERT_EQ(out.size(), 3u) << r.out;
  EXPECT_EQ(nlohmann::json::parse(out[0]), nlohmann::json({{"path", missing}, {"error", "No such file or directory"}}));
  EXPECT_EQ(nlohmann::json::parse(out[1])["path"], a);
  EXPECT_EQ(nlohmann::json::parse(out[1])["kind"], "module");
  const auto j2 = nlohmann::json::parse(out[2]);
  EXPECT_EQ(j2["path"], zst);
  EXPECT_EQ(j2["error"].get<std::string>().rfind("zstd-compressed module: ", 0), 0u) << j2;
}

// 4. digest's text message for a broken compressed stream is the same as info's and
// verify's, "zstd-compressed module:" included (info --json's "error" is that message
// without the path).
TEST_F(HostileInputs, ErrorTextsNameThePathOnce) {
  const std::string missing = d_ / "nosuch.ko";
  const std::string zst = truncated_zst();
  auto r = test::run(M() + " info --json " + q(missing) + " " + q(zst));
  EXPECT_EQ(r.status, 3);
  const auto out = lines_of(r.out);
  ASSERT_EQ(out.size(), 2u) << r.out;
  const auto j0 = nlohmann::json::parse(out[0]), j1 = nlohmann::json::parse(out[1]);
  EXPECT_EQ(j0["path"], missing);
  EXPECT_EQ(j0["error"], "No such file or directory");  // an I/O error's too (session 19's hostile review)
  EXPECT_EQ(j1["path"], zst);
  EXPECT_EQ(j1["error"].get<std::string>().rfind("zstd-compressed module: ", 0), 0u) << j1;
  const std::string info_err = test::run(M() + " info " + q(zst)).err;
  EXPECT_EQ(info_err, "modsign: " + zst + ": " + j1["error"].get<std::string>() + "\n");
  const auto d = test::run(M() + " digest " + q(zst));
  EXPECT_EQ(d.status, 3);
  EXPECT_EQ(d.err, info_err);
  const auto v = test::run(M() + " verify " + q(zst));
  EXPECT_EQ(v.status, 3);
  EXPECT_EQ(v.err, info_err);
  // verify --json too, for an I/O error (session 20's hostile review: it kept the path).
  const auto vj = test::run(M() + " verify --json " + q(missing));
  EXPECT_EQ(vj.status, 3);
  EXPECT_EQ(nlohmann::json::parse(vj.out)["reason"], "No such file or directory");
}

}  // namespace
}  // namespace modsign::test::cli_tests
