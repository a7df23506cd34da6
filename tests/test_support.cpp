#include "test_support.hpp"

#include "crypto/crypto.hpp"
#include "module/module_signature.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cctype>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace modsign::test {

std::string vector_path(const std::string& rel) { return std::string(MODSIGN_VECTORS) + "/" + rel; }

Bytes slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}

void spit(const std::string& path, ByteView data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

void spit(const std::string& path, const std::string& text) {
  spit(path, ByteView(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/modsign-test-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed under " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string q(const std::string& s) {
  std::string r = "'";
  for (char c : s) {
    if (c == '\'') r += "'\\''";
    else r += c;
  }
  return r + "'";
}

std::string sh(const std::string& cmd) {
  auto r = run(cmd);
  EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;
  return r.out;
}

std::string tool_hash(const std::string& tool, ByteView data) {
  TempDir d;
  spit(d / "in", data);
  const std::string out = run(tool + " " + q(d / "in")).out;
  return out.substr(0, out.find(' '));
}

Run run(const std::string& cmd) {
  TempDir d;
  const std::string full = "( " + cmd + " ) >" + q(d / "out") + " 2>" + q(d / "err") + " </dev/null";
  const int rc = std::system(full.c_str());
  Run r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  auto text = [](const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  r.out = text(d / "out");
  r.err = text(d / "err");
  return r;
}

std::string openssl() { return q(MODSIGN_OPENSSL_BIN); }
std::string modsign_cli() { return q(MODSIGN_CLI); }
int openssl_major() {
  static const int v = [] {
    const std::string out = run(openssl() + " version").out;
    return out.rfind("OpenSSL ", 0) == 0 ? std::atoi(out.c_str() + 8) : 0;
  }();
  return v;
}
std::string openssl_cms_module(const std::string& dir, const std::string& name, const std::string& flags,
                               const std::string& cert, const std::string& key) {
  const std::string content = dir + "/content", p7 = dir + "/p7", out = dir + "/" + name;
  spit(content, pattern(5000));
  sh(openssl() + " cms -sign -binary -md sha256 -outform DER " + flags + " -in " + q(content) + " -signer " + q(cert) +
     " -inkey " + q(key) + " -out " + q(p7));
  spit(out, module::append_signature(pattern(5000), slurp(p7)));
  return out;
}
std::string openssl_mldsa_noattr_refusal(bool attached) {
  if (openssl_major() == 3) return "provider signature not supported";
  if (openssl_major() == 4 && attached) return "no content";
  ADD_FAILURE() << "openssl " << openssl_major() << (attached ? " attached" : " detached")
                << ": pin what it does with ML-DSA without signedAttrs";
  return "(not pinned)";
}
std::string source_dir() { return MODSIGN_SOURCE_DIR; }

void expect_cli_refused(const std::string& dir, const std::string& args, int status, const std::string& message) {
  const auto before = snapshot_dir(dir);
  const Run r = run("cd " + q(dir) + " && " + modsign_cli() + " " + args);
  EXPECT_EQ(r.status, status) << args << "\n" << r.err;
  EXPECT_EQ(r.err, "modsign: " + message + "\n") << args;
  EXPECT_EQ(snapshot_dir(dir), before) << args;
}

std::map<std::string, std::string> snapshot_dir(const std::string& dir) {
  std::map<std::string, std::string> s;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string p = e.path().string();
    struct stat st {};
    ::lstat(p.c_str(), &st);
    std::string v = std::to_string(st.st_mode) + " " + std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid);
    if (S_ISREG(st.st_mode)) v += " " + to_hex(crypto::digest(crypto::HashAlgo::sha256, slurp(p)));
    if (S_ISLNK(st.st_mode)) v += " -> " + std::filesystem::read_symlink(p).string();
    s[e.path().filename().string()] = v;
  }
  return s;
}
std::string kernel_source_dir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && *v ? v : "";
  };
  std::string cache = env("MODSIGN_CACHE");
  if (cache.empty()) {
    const std::string xdg = env("XDG_CACHE_HOME");
    cache = (xdg.empty() ? env("HOME") + "/.cache" : xdg) + "/modsign";
  }
  return cache + "/kernel-src/linux-source-7.2";
}
std::string cli_path() { return MODSIGN_CLI; }
std::string openssl_bin() { return MODSIGN_OPENSSL_BIN; }
std::string pkcs11_provider_path() { return MODSIGN_PKCS11_PROVIDER; }
std::string sanitize_build() { return MODSIGN_SANITIZE_BUILD; }

void expect_openssl_cms_verifies(const std::string& p7s, const Bytes& content, const std::string& cert,
                                 const std::string& scratch, bool chain) {
  spit(scratch, content);
  auto r =
      run(openssl() + " cms -verify -binary -inform DER -in " + q(p7s) + " -content " + q(scratch) + " -certfile " +
          q(cert) + " -nointern " + (chain ? "-CAfile " + q(cert) : std::string("-noverify")) + " -out /dev/null");
  EXPECT_EQ(r.status, 0) << p7s << ": " << r.err;
}

std::string trusted_key_ids(const std::string& cert_file) {
  auto hex_of = [](const std::string& s) {
    std::string h;
    for (char c : s)
      if (std::isxdigit(static_cast<unsigned char>(c)))
        h += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return h;
  };
  const auto serial = run(openssl() + " x509 -noout -serial -in " + q(cert_file));
  const auto ext = run(openssl() + " x509 -noout -ext subjectKeyIdentifier -in " + q(cert_file));
  std::string s = hex_of(serial.out.substr(serial.out.find('=') + 1));
  if (s.size() % 2) s = "0" + s;
  if (!s.empty() && s[0] >= '8') s = "00" + s;  // INTEGER contents octets keep the sign byte
  const auto nl = ext.out.find('\n');
  const std::string skid = nl == std::string::npos ? "" : hex_of(ext.out.substr(nl + 1));
  return " (" + (skid.empty() ? std::string("no skid") : "skid " + skid) + ", serial " + s + ")";
}

Bytes pattern(std::size_t n) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>((i * 7 + 3) & 0xff);
  return b;
}

}  // namespace modsign::test
