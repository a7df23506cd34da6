// The bad-input contract (docs/cli/bad-input.md): one test per table row, each checking the
// message, the exit status, and that every file in the test's directory is byte-identical
// afterwards (SHA-256 of each file before and after, and no file added or removed).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>

#include "bad_input_support.hpp"
#include "crypto/crypto.hpp"
#include "module/compression.hpp"
#include "module/module_signature.hpp"
#include "test_support.hpp"

using namespace modsign;
using test::q;

using namespace bad_input_test;

namespace {

/// What a command run on a pseudo-terminal did (run_on_tty()).
struct TtyRun {
  int status = -1;        ///< exit status; -1 if killed by a signal or stopped at the 60 s limit
  std::string screen;     ///< every byte the command wrote to the terminal (read on the pty master)
  std::string out, err;   ///< its stdout and stderr (files, not the terminal)
  bool prompted = false;  ///< the terminal showed the prompt
  bool echo_off = false;  ///< ECHO was clear in the terminal's c_lflag when the line was typed
};

/// Runs `argv` (execve, no shell; KBUILD_SIGN_PIN removed from the environment) in a new
/// session whose controlling terminal (/dev/tty) and stdin are the slave of a fresh
/// pseudo-terminal (openpty, TIOCSCTTY), with stdout and stderr going to files.  Once the
/// terminal shows `prompt`, waits up to 10 s for the command to clear ECHO on it, then types
/// `line` and Enter on the master as a user would, and reads the terminal until the command
/// exits (at most 60 s, then SIGKILL).
TtyRun run_on_tty(const std::vector<std::string>& argv, const std::string& prompt, const std::string& line) {
  TtyRun r;
  test::TempDir files;
  int master = -1, slave = -1;
  if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) {
    ADD_FAILURE() << "openpty: " << std::strerror(errno);
    return r;
  }
  fcntl(master, F_SETFD, FD_CLOEXEC);
  fcntl(slave, F_SETFD, FD_CLOEXEC);
  const int out = open((files / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int err = open((files / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  std::vector<char*> args, env;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "KBUILD_SIGN_PIN=", 16) != 0) env.push_back(*e);
  env.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {  // only async-signal-safe calls from here on
    if (setsid() < 0 || ioctl(slave, TIOCSCTTY, 0) < 0 || dup2(slave, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
      _exit(126);
    execve(args[0], args.data(), env.data());
    _exit(127);
  }
  close(slave);
  close(out);
  close(err);
  if (pid < 0) {
    close(master);
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    return r;
  }
  fcntl(master, F_SETFL, O_NONBLOCK);
  const auto drain = [&] {
    char buf[4096];
    ssize_t n;
    while ((n = read(master, buf, sizeof buf)) > 0) r.screen.append(buf, static_cast<std::size_t>(n));
  };
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::seconds(60);
  clock::time_point prompted_at{};
  bool typed = false;
  int st = 0;
  for (;;) {
    pollfd p{master, POLLIN, 0};
    poll(&p, 1, 20);
    drain();
    if (!typed && !r.prompted && r.screen.find(prompt) != std::string::npos) {
      r.prompted = true;
      prompted_at = clock::now();
    }
    if (!typed && r.prompted) {
      termios t{};  // on Linux the master reports the slave's termios
      r.echo_off = tcgetattr(master, &t) == 0 && !(t.c_lflag & ECHO);
      if (r.echo_off || clock::now() - prompted_at > std::chrono::seconds(10)) {
        const std::string typing = line + "\n";
        EXPECT_EQ(write(master, typing.data(), typing.size()), static_cast<ssize_t>(typing.size()));
        typed = true;
      }
    }
    if (waitpid(pid, &st, WNOHANG) == pid) {
      drain();
      r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
      break;
    }
    if (clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      ADD_FAILURE() << "still running after 60 s; the terminal showed: " << r.screen;
      break;
    }
  }
  close(master);
  const auto text = [](const Bytes& b) { return std::string(b.begin(), b.end()); };
  r.out = text(test::slurp(files / "out"));
  r.err = text(test::slurp(files / "err"));
  return r;
}

}  // namespace

TEST_F(BadInput, MissingFile) {
  module();
  const std::string f = d_ / "missing.ko";
  expect_refused(sign() + q(f), 3, "modsign: " + f + ": No such file or directory\n");
  expect_refused(verify() + q(f), 3, "modsign: " + f + ": No such file or directory\n");
  expect_refused(M() + " sign --key " + q(d_ / "nokey.pem") + " " + q(d_ / "m.ko"), 3,
                 "modsign: " + (d_ / "nokey.pem") + ": No such file or directory\n");
}

TEST_F(BadInput, NotARegularFile) {
  const std::string fifo = d_ / "fifo.ko";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  expect_refused(verify() + q(fifo), 3, "modsign: " + fifo + ": is a FIFO, not a regular file\n");
  expect_refused(verify() + q(d_.path()), 3, "modsign: " + d_.path() + ": is a directory\n");
  expect_refused(verify() + "/dev/null", 3, "modsign: /dev/null: is a device, not a regular file\n");
}

TEST_F(BadInput, CompressedWithoutRecompress) {
  test::spit(d_ / "c.ko.xz", module::compress(test::pattern(3000), module::Compression::xz));
  expect_refused(sign() + q(d_ / "c.ko.xz"), 3,
                 "modsign: " + (d_ / "c.ko.xz") +
                     ": xz-compressed module: use --recompress (or decompress it, sign the .ko, then recompress; the "
                     "kernel checks the signature inside the decompressed image)\n");
}

TEST_F(BadInput, BrokenCompressedStreams) {
  const Bytes xz = module::compress(test::pattern(3000), module::Compression::xz);
  test::spit(d_ / "t.ko.xz", ByteView(xz).first(xz.size() / 2));
  expect_refused(verify() + q(d_ / "t.ko.xz"), 3,
                 "modsign: " + (d_ / "t.ko.xz") + ": xz-compressed module: truncated xz data\n");
  Bytes two = xz;
  two.insert(two.end(), xz.begin(), xz.end());
  test::spit(d_ / "tr.ko.xz", two);
  expect_refused(M() + " info " + q(d_ / "tr.ko.xz"), 3,
                 "modsign: " + (d_ / "tr.ko.xz") + ": xz-compressed module: " + std::to_string(xz.size()) +
                     " bytes of trailing data after the xz stream\n");
  // verify predicts the kernel, whose module_decompress() stops at the end of the first
  // stream: the image (unsigned here) is what it checks.
  auto r = test::run(verify() + q(d_ / "tr.ko.xz"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind((d_ / "tr.ko.xz") + ": loads-tainted (ENODATA): ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(std::to_string(xz.size()) + " bytes after the xz stream ignored]" + test::kLoadScope + "\n"),
            std::string::npos)
      << r.out;
  // A bomb: 8 MiB of zeros as zstd, opened with a 1 MiB bound.
  test::spit(d_ / "bomb.ko.zst", module::compress(Bytes(8 << 20, 0), module::Compression::zstd));
  expect_refused(verify() + "--max-size 1048576 " + q(d_ / "bomb.ko.zst"), 3,
                 "modsign: " + (d_ / "bomb.ko.zst") +
                     ": zstd-compressed module: decompressed size exceeds the limit of 1048576 bytes (a compression "
                     "bomb, or raise --max-size)\n");
  expect_refused(sign() + "--recompress --max-size 1048576 " + q(d_ / "bomb.ko.zst"), 3,
                 "modsign: " + (d_ / "bomb.ko.zst") +
                     ": zstd-compressed module: decompressed size exceeds the limit of 1048576 bytes (a compression "
                     "bomb, or raise --max-size)\n");
}

TEST_F(BadInput, HugeDecompressionWindow) {
  // A zstd frame header declaring a 2 GiB window (fuzz_compression's finding).
  test::spit(d_ / "w.ko.zst", from_hex("28b52ffd04a864f27b10"));
  expect_refused(verify() + "--max-size 1048576 " + q(d_ / "w.ko.zst"), 3,
                 "modsign: " + (d_ / "w.ko.zst") +
                     ": zstd-compressed module: zstd window needs more than 67108864 bytes of memory (twice the size "
                     "limit of 1048576 bytes, at least 64 MiB; raise --max-size)\n");
}

TEST_F(BadInput, XzCrc64Check) {
  const std::string p = module("c.ko");
  ASSERT_EQ(test::run("xz -C crc64 " + q(p)).status, 0);
  auto r = expect_refused(verify() + q(p + ".xz"), 1, "");
  EXPECT_EQ(r.out.rfind(p + ".xz: refused (EINVAL): xz stream uses a CRC64 check; the kernel's xz decoder accepts only "
                            "CRC32 or none",
                        0),
            0u)
      << r.out;
}

TEST_F(BadInput, AlreadySigned) {
  const std::string p = signed_module();
  expect_refused(
      sign() + q(p), 3,
      "modsign: " + p + ": module is already signed (use --replace to strip the old signature and re-sign)\n");
}

TEST_F(BadInput, KeyDoesNotMatchCertificate) {
  const std::string p = module();
  expect_refused(M() + " sign --key " + q(key("ml.pem")) + " --cert " + q(key("ec.crt")) + " " + q(p), 3,
                 "modsign: " + key("ec.crt") + ": no certificate matches the private key " + key("ml.pem") +
                     " (the key is ML-DSA-65, the certificate ECDSA-P256)\n");
}

TEST_F(BadInput, NotACertificateOrKey) {
  const std::string p = module();
  test::spit(d_ / "junk", std::string("hello\n"));
  expect_refused(M() + " verify --cert " + q(d_ / "junk") + " " + q(p), 3,
                 "modsign: " + (d_ / "junk") + ": no X.509 certificate found (neither DER nor PEM CERTIFICATE)\n");
  test::spit(d_ / "dmg.crt", std::string("-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n"));
  expect_refused(M() + " verify --cert " + q(d_ / "dmg.crt") + " " + q(p), 3,
                 "modsign: " + (d_ / "dmg.crt") + ": PEM block 1 is damaged (bad base64 or armour)\n");
  ASSERT_EQ(chmod((d_ / "junk").c_str(), 0600), 0);
  auto r = test::run(M() + " sign --key " + q(d_ / "junk") + " --cert " + q(key("ec.crt")) + " " + q(p));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err.rfind("modsign: " + (d_ / "junk") + ": not a DER PKCS#8 private key: ", 0), 0u) << r.err;
}

TEST_F(BadInput, WrongFormatKeyMessageHasNoKeyBytes) {
  // A PKCS#8 ML-DSA key with one byte of its OID changed, as PEM and as DER: refused, and
  // neither the seed nor the base64 text appears in the message.
  const Bytes pem = test::slurp(key("ml.pem"));
  const std::string text(pem.begin(), pem.end());
  const auto b = text.find("-----\n") + 6, e = text.find("\n-----END");
  const std::string body = text.substr(b, e - b);
  auto der = test::run("printf %s " + q(body) + " | base64 -d");
  ASSERT_EQ(der.status, 0) << der.err;
  Bytes bad(der.out.begin(), der.out.end());
  ASSERT_EQ(bad.size(), 54u);
  const Bytes seed(bad.end() - 32, bad.end());
  bad[15] ^= 0x55;  // inside the algorithm OID
  test::spit(d_ / "bad.der", bad);
  ASSERT_EQ(chmod((d_ / "bad.der").c_str(), 0600), 0);
  const std::string p = module();
  auto r = test::run(M() + " sign --key " + q(d_ / "bad.der") + " --cert " + q(key("ml.crt")) + " " + q(p));
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.err.rfind("modsign: " + (d_ / "bad.der") + ": ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find(to_hex(seed)), std::string::npos);
  EXPECT_EQ(r.err.find(to_colon_hex(seed)), std::string::npos);
  EXPECT_EQ(r.err.find(std::string(seed.begin(), seed.end())), std::string::npos);
  const std::string pem_text =
      "-----BEGIN PRIVATE KEY-----\n" + body.substr(0, 10) + "!" + body.substr(11) + "\n-----END PRIVATE KEY-----\n";
  test::spit(d_ / "bad.pem", pem_text);
  ASSERT_EQ(chmod((d_ / "bad.pem").c_str(), 0600), 0);
  r = test::run(M() + " sign --key " + q(d_ / "bad.pem") + " --cert " + q(key("ml.crt")) + " " + q(p));
  EXPECT_EQ(r.status, 3);
  // Named as a damaged certificate is ("PEM block 1 is damaged"), not by OpenSSL's decoder.
  EXPECT_EQ(r.err, "modsign: " + (d_ / "bad.pem") + ": PEM block 1 is damaged (bad base64 or armour)\n");
  EXPECT_EQ(r.err.find(body.substr(12, 16)), std::string::npos) << r.err;
  EXPECT_EQ(test::slurp(p), test::pattern(3000));
}

TEST_F(BadInput, KeyReadableByOthersWarns) {
  // Used anyway (as sign-file does), with a warning on stderr as ssh gives; 0600 is silent.
  Bytes k = test::slurp(key("ec.pem"));
  test::spit(d_ / "open.pem", k);
  ASSERT_EQ(chmod((d_ / "open.pem").c_str(), 0644), 0);
  const std::string p = module();
  auto r = test::run(M() + " sign --key " + q(d_ / "open.pem") + " --cert " + q(key("ec.crt")) + " " + q(p));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "modsign: " + (d_ / "open.pem") +
                       ": warning: permissions 0644 let group or others access this "
                       "private key (chmod 600 " +
                       (d_ / "open.pem") + ")\n");
  ASSERT_EQ(chmod((d_ / "open.pem").c_str(), 0600), 0);
  const std::string p2 = module("m2.ko");
  r = test::run(M() + " sign --key " + q(d_ / "open.pem") + " --cert " + q(key("ec.crt")) + " " + q(p2));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(test::slurp(d_ / "open.pem"), k);
}

TEST_F(BadInput, EncryptedKeyWithoutPassphrase) {
  // KBUILD_SIGN_PIN unset and stdin not a terminal: no prompt, a clear error.
  auto e = test::run(test::openssl() + " pkcs8 -topk8 -v2 aes-256-cbc -passout pass:s3cret -in " + q(key("ec.pem")) +
                     " -out " + q(d_ / "enc.pem") + " && chmod 600 " + q(d_ / "enc.pem"));
  ASSERT_EQ(e.status, 0) << e.err;
  const std::string p = module();
  expect_refused("env -u KBUILD_SIGN_PIN " +
                     sign().replace(sign().find(q(key("ec.pem"))), q(key("ec.pem")).size(), q(d_ / "enc.pem")) + q(p),
                 3,
                 "modsign: " + (d_ / "enc.pem") +
                     ": private key is encrypted and no passphrase was given (set KBUILD_SIGN_PIN)\n");
  auto wrong = test::run("KBUILD_SIGN_PIN=nope " + M() + " sign --key " + q(d_ / "enc.pem") + " --cert " +
                         q(key("ec.crt")) + " " + q(p));
  EXPECT_EQ(wrong.status, 3);
  EXPECT_EQ(wrong.err, "modsign: " + (d_ / "enc.pem") + ": cannot decrypt private key (wrong passphrase?)\n");
  EXPECT_EQ(wrong.err.find("nope"), std::string::npos);
  EXPECT_EQ(test::slurp(p), test::pattern(3000));
  auto good = test::run("KBUILD_SIGN_PIN=s3cret " + M() + " sign --key " + q(d_ / "enc.pem") + " --cert " +
                        q(key("ec.crt")) + " " + q(p));
  EXPECT_EQ(good.status, 0) << good.err;
}

// KBUILD_SIGN_PIN unset and stdin a terminal: the passphrase is asked for on /dev/tty
// (here the slave of a pseudo-terminal that is the session's controlling terminal) with
// echo off; the terminal shows the prompt and the newline after it, never the passphrase,
// and neither stdout nor stderr contains it.  The signature verifies (modsign, and
// `openssl cms -verify` on the extracted PKCS#7).
TEST_F(BadInput, EncryptedKeyPassphraseTypedOnTerminal) {
  const std::string pass = "Tty-s3cret-4711";
  auto e = test::run(test::openssl() + " pkcs8 -topk8 -v2 aes-256-cbc -passout pass:" + pass + " -in " +
                     q(key("ec.pem")) + " -out " + q(d_ / "enc.pem") + " && chmod 600 " + q(d_ / "enc.pem"));
  ASSERT_EQ(e.status, 0) << e.err;
  const std::string p = module();
  const std::string prompt = "Enter pass phrase for " + (d_ / "enc.pem") + ":";
  auto r = run_on_tty({test::cli_path(), "sign", "--key", d_ / "enc.pem", "--cert", key("ec.crt"), p}, prompt, pass);
  EXPECT_TRUE(r.prompted) << r.screen;
  EXPECT_TRUE(r.echo_off) << "ECHO was still set on the terminal after the prompt";
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.screen, prompt + "\r\n");  // ONLCR: the "\n" written after reading shows as CR LF
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind(p + ": signed (ECDSA-P256, no signedAttrs, sha512, CMS ", 0), 0u) << r.out;
  for (const std::string* s : {&r.screen, &r.out, &r.err}) EXPECT_EQ(s->find(pass), std::string::npos) << *s;

  auto v = test::run(verify() + q(p));
  EXPECT_EQ(v.status, 0) << v.err;
  EXPECT_EQ(v.out, p + ": loads (OK): signature verified: ecdsa signature, trusted key \"modsign module signing key\"" +
                       test::trusted_key_ids(key("ec.crt")) + test::kLoadScope + "\n");
  const Bytes signed_mod = test::slurp(p);
  auto split = module::split(signed_mod);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(Bytes(split->content.begin(), split->content.end()), test::pattern(3000));
  test::TempDir o;
  test::spit(o / "sig.p7s", split->cms);
  test::spit(o / "content.bin", test::pattern(3000));
  auto c = test::run(test::openssl() + " cms -verify -binary -inform DER -in " + q(o / "sig.p7s") + " -content " +
                     q(o / "content.bin") + " -certfile " + q(key("ec.crt")) + " -nointern -noverify -out /dev/null");
  EXPECT_EQ(c.status, 0) << c.err;
}

// A wrong passphrase typed at the prompt (and an empty one): exit status 3, the same
// message as a wrong KBUILD_SIGN_PIN, nothing of it on the terminal or in the output, the
// module unchanged and no --dest file created (no file in the directory changes).
TEST_F(BadInput, EncryptedKeyWrongPassphraseOnTerminal) {
  auto e = test::run(test::openssl() + " pkcs8 -topk8 -v2 aes-256-cbc -passout pass:Right-0ne -in " + q(key("ec.pem")) +
                     " -out " + q(d_ / "enc.pem") + " && chmod 600 " + q(d_ / "enc.pem"));
  ASSERT_EQ(e.status, 0) << e.err;
  const std::string p = module();
  const std::string prompt = "Enter pass phrase for " + (d_ / "enc.pem") + ":";
  for (const std::string typed : {"Wr0ng-guess-99", ""}) {
    for (const bool dest : {true, false}) {
      std::vector<std::string> argv{test::cli_path(), "sign", "--key", d_ / "enc.pem", "--cert", key("ec.crt")};
      if (dest) argv.insert(argv.end(), {"--dest", d_ / "out.ko"});
      argv.push_back(p);
      const auto before = snapshot(d_.path());
      auto r = run_on_tty(argv, prompt, typed);
      EXPECT_TRUE(r.echo_off);
      EXPECT_EQ(r.status, 3) << r.err;
      EXPECT_EQ(r.err, "modsign: " + (d_ / "enc.pem") + ": cannot decrypt private key (wrong passphrase?)\n");
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(r.screen, prompt + "\r\n");
      EXPECT_EQ(snapshot(d_.path()), before) << "typed '" << typed << "', --dest " << dest;
      EXPECT_FALSE(std::filesystem::exists(d_ / "out.ko"));
      EXPECT_EQ(test::slurp(p), test::pattern(3000));
    }
  }
}

TEST_F(BadInput, MlDsaSignedAttrsWithOtherHash) {
  const std::string p = module();
  expect_refused(
      M() + " sign --key " + q(key("ml.pem")) + " --cert " + q(key("ml.crt")) + " --signed-attrs --hash sha256 " + q(p),
      2,
      "modsign: ML-DSA with --signed-attrs needs --hash sha512: kernels refuse any other digest there "
      "(crypto/asymmetric_keys/public_key.c)\n");
}

TEST_F(BadInput, MalformedCms) {
  const std::string p = signed_module();
  Bytes b = test::slurp(p);
  auto split = module::split(b);
  ASSERT_TRUE(split.ok());
  const std::size_t at = split->content.size();
  b[at] = 0xff;  // the ContentInfo's tag
  test::spit(p, b);
  auto r = expect_refused(verify() + q(p), 1, "");
  EXPECT_EQ(r.out,
            p + ": refused (EBADMSG): ASN.1 decoder: ContentInfo: expected tag 0x30, found 0xff [kernel v7.0]\n");
  expect_refused(M() + " info " + q(p), 3,
                 "modsign: " + p + ": EBADMSG: malformed PKCS#7: ContentInfo: expected tag 0x30, found 0xff\n");
}

TEST_F(BadInput, TrailerWithNonZeroLegacyFields) {
  const std::string p = signed_module();
  Bytes b = test::slurp(p);
  b[b.size() - 40] = 1;  // module_signature.algo
  test::spit(p, b);
  auto r = expect_refused(verify() + q(p), 1, "");
  EXPECT_EQ(r.out, p + ": refused (EBADMSG): PKCS#7 signature info has unexpected non-zero params [kernel v7.0]\n");
  expect_refused(sign() + "--replace " + q(p), 3,
                 "modsign: " + p +
                     ": cannot strip the existing signature: EBADMSG PKCS#7 signature info has unexpected "
                     "non-zero params\n");
}

TEST_F(BadInput, SigLen4GiB) {
  const std::string p = module();
  Bytes b = test::slurp(p);
  const Bytes t = module::encode_module_signature(0xffffffffu);
  b.insert(b.end(), t.begin(), t.end());
  b.insert(b.end(), module::kMarker.begin(), module::kMarker.end());
  test::spit(p, b);
  auto r = expect_refused(verify() + q(p), 1, "");
  EXPECT_EQ(r.out, p + ": refused (EBADMSG): signature length 4294967295 does not fit in the 3000 bytes before the "
                       "trailer [kernel v7.0]\n");
}

TEST_F(BadInput, MeasurementListLength4GiB) {
  Bytes list = {10, 0, 0, 0};
  list.resize(4 + 20, 0x11);
  for (int c : {6, 0, 0, 0, int{'i'}, int{'m'}, int{'a'}, int{'-'}, int{'n'}, int{'g'}, 0xff, 0xff, 0xff, 0xff})
    list.push_back(static_cast<std::uint8_t>(c));
  test::spit(d_ / "list", list);
  auto r = test::run(M() + " ima replay " + q(d_ / "list"));
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("template data length 4294967295 (read little-endian) beyond the end of the list"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.rfind("modsign: " + (d_ / "list") + ": ", 0), 0u) << r.err;
  EXPECT_EQ(test::slurp(d_ / "list"), list);
}

TEST_F(BadInput, DeviceAsDest) {
  const std::string p = module();
  expect_refused(sign() + "--dest /dev/null " + q(p), 3,
                 "modsign: /dev/null: is a device, not a regular file; not replacing it\n");
}

TEST_F(BadInput, UsageError) {
  const std::string p = module();
  expect_refused(verify() + "--bogus " + q(p), 2,
                 "modsign: The following argument was not expected: --bogus\n"
                 "Run 'modsign verify --help' for more information.\n");
  // A command named wrong is named back, with the closest one (CLI11 alone said "A
  // subcommand is required" for `modsign verfy`: a new user's trial).
  expect_refused(M() + " verfy " + q(p), 2,
                 "modsign: unknown command 'verfy' (did you mean 'verify'?)\n"
                 "Run 'modsign --help' for more information.\n");
  expect_refused(M() + " dbx chek " + q(p), 2,
                 "modsign: unknown command 'dbx chek' (did you mean 'check'?)\n"
                 "Run 'modsign dbx --help' for more information.\n");
  expect_refused(M() + " --bogus", 2,
                 "modsign: unknown option '--bogus'\nRun 'modsign --help' for more information.\n");
  expect_refused(sign() + "--dest " + q(d_ / "o.ko") + " " + q(p) + " " + q(p), 2,
                 test::run(sign() + "--dest " + q(d_ / "o.ko") + " " + q(p) + " " + q(p)).err);
}

TEST_F(BadInput, HashListTheBuildRefuses) {
  test::spit(d_ / "good", std::string("\"bin:aa\"\n"));
  test::spit(d_ / "bad", std::string("\"bin:aa\",\n\"bin:AB\"\n"));
  const std::string msg = "modsign: " + (d_ / "bad") +
                          ":2:6: upper-case hex digit 'A' (awk: Not a lowercase hexadecimal string (item 2))\n";
  expect_refused(M() + " blacklist merge -o " + q(d_ / "merged") + " " + q(d_ / "good") + " " + q(d_ / "bad"), 3, msg);
  const std::string m = signed_module();
  expect_refused(M() + " blacklist check --list " + q(d_ / "bad") + " " + q(m), 3,
                 msg.substr(0, msg.size() - 1) + " (run modsign blacklist lint)\n");
  // The same file given as verify and ima appraise spell the option.
  for (const std::string cmd : {" blacklist check", " ima appraise", " verify"})
    expect_refused(M() + cmd + " --blacklist " + q(d_ / "bad") + " " + q(m), 3,
                   msg.substr(0, msg.size() - 1) + " (run modsign blacklist lint)\n");
}

TEST_F(BadInput, MalformedEfiSignatureList) {
  // One good EFI_CERT_SHA256 list (76 bytes), then a list claiming 0xffffffff bytes.
  auto list = [](std::uint32_t list_size) {
    Bytes b = from_hex("2616c4c14c509240aca941f936934328");  // EFI_CERT_SHA256_GUID
    for (std::uint32_t v : {list_size, 0u, 48u})
      for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    b.resize(b.size() + 48, 0x11);
    return b;
  };
  Bytes f = list(76);
  const Bytes bad = list(0xffffffffu);
  f.insert(f.end(), bad.begin(), bad.end());
  test::spit(d_ / "dbx.esl", f);
  expect_refused(M() + " dbx list " + q(d_ / "dbx.esl"), 3,
                 "modsign: " + (d_ / "dbx.esl") +
                     ": EBADMSG: EFI_SIGNATURE_LIST at byte offset 76: signature_list_size 4294967295 exceeds the 76 "
                     "bytes left (the kernel stops here; the entries above stay loaded)\n");
}

TEST_F(BadInput, BadAuth2Header) {
  test::spit(d_ / "dbx.auth", Bytes(100, 0));
  expect_refused(M() + " dbx list --form auth2 " + q(d_ / "dbx.auth"), 3,
                 "modsign: " + (d_ / "dbx.auth") + ": EBADMSG: byte offset 20: wRevision 0x0000, not 0x0200\n");
  Bytes h(100, 0);
  h[16] = h[17] = h[18] = h[19] = 0xff;  // dwLength 0xffffffff
  h[21] = 0x02;                          // wRevision 0x0200
  h[22] = 0xf1, h[23] = 0x0e;            // WIN_CERT_TYPE_EFI_GUID
  const Bytes pkcs7_guid = from_hex("9dd2af4adf68ee498aa9347d375665a7");
  std::copy(pkcs7_guid.begin(), pkcs7_guid.end(), h.begin() + 24);
  test::spit(d_ / "dbx.auth", h);
  expect_refused(M() + " dbx list --form auth2 " + q(d_ / "dbx.auth"), 3,
                 "modsign: " + (d_ / "dbx.auth") +
                     ": EBADMSG: byte offset 16: dwLength 4294967295 exceeds the 84 bytes "
                     "after the timestamp\n");
}

TEST_F(BadInput, SizeThatIsNotAByteCount) {
  // CLI11 alone reads "-1" as 18446744073709551615 (no bomb bound at all) and "" as 0.
  const std::string p = signed_module();
  const std::string tail = " is not a number of bytes (decimal digits, at most 18446744073709551615)\n";
  const auto refused = [&](const std::string& command, const std::string& args, const std::string& what) {
    expect_refused(M() + " " + command + " " + args + " " + q(p), 2,
                   "modsign: " + what + tail + "Run 'modsign " + command + " --help' for more information.\n");
  };
  refused("verify", "--max-size -1", "--max-size: '-1'");
  refused("verify", "--max-size 18446744073709551616", "--max-size: '18446744073709551616'");
  refused("verify", "--max-size ''", "--max-size: ''");
  refused("verify", "--stream-above 1e6", "--stream-above: '1e6'");
  refused("sign", "--replace --max-size ' 5'", "--max-size: ' 5'");
  refused("ima appraise", "--max-size +5", "--max-size: '+5'");
  refused("blacklist check", "--max-size -0", "--max-size: '-0'");
  refused("blacklist entry", "--max-size 0x10", "--max-size: '0x10'");
  refused("digest", "--max-size -1", "--max-size: '-1'");
  // The largest value is accepted.
  auto r = test::run(verify() + "--max-size 18446744073709551615 " + q(p));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST_F(BadInput, ImaHashTheKernelDoesNotKnow) {
  const std::string p = signed_module();
  const std::string list = "(md5|sha1|sha224|sha256|sha384|sha512|sha3-256|sha3-384|sha3-512)\n";
  for (const std::string cmd : {" ima appraise", " ima template", " blacklist entry", " blacklist check"}) {
    expect_refused(M() + cmd + " --ima-hash wp512 " + q(p), 2, "modsign: unsupported --ima-hash 'wp512' " + list);
    expect_refused(M() + cmd + " --ima-hash md4 " + q(p), 2, "modsign: unsupported --ima-hash 'md4' " + list);
    // 6.1-6.6 have no SHA-3 in hash_algo_name[]: ima_hash=sha3-256 would be refused at boot.
    expect_refused(M() + cmd + " --kernel v6.1 --ima-hash sha3-256 " + q(p), 2,
                   "modsign: --ima-hash sha3-256 does not exist under --kernel v6.1: Linux 6.1-6.6 have no SHA-3 in "
                   "hash_algo_name[], so ima_hash=sha3-256 is refused and IMA keeps its default\n");
    auto r = test::run(M() + cmd + " --kernel v6 --ima-hash sha3-256 " + q(p));
    EXPECT_NE(r.status, 2) << cmd << ": " << r.err;
  }
}
