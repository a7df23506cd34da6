// Helpers shared by the tests: paths, temporary folders, running commands.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace modsign {
/// GoogleTest prints KErr values by name ("EBADMSG").
inline void PrintTo(KErr e, std::ostream* os) { *os << errno_name(e); }
}  // namespace modsign

namespace modsign::test {

/// MODSIGN_VECTORS/<rel> (tests/vectors unless configured otherwise).
std::string vector_path(const std::string& rel);
/// Read a whole file (throws on failure).
Bytes slurp(const std::string& path);
void spit(const std::string& path, ByteView data);
void spit(const std::string& path, const std::string& text);

/// A fresh directory under $TMPDIR (else /tmp), removed with everything in it on destruction.
/// tools/check gives each ctest run its own TMPDIR and fails if anything is left in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Result of running a shell command.
struct Run {
  int status = -1;  ///< exit status, or -1 if killed by a signal
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};
/// Run `cmd` with /bin/sh -c, capturing stdout and stderr.
Run run(const std::string& cmd);
/// The openssl binary (OpenSSL >= 3.5) and the modsign CLI, quoted for the shell.
std::string openssl();
/// The major version of that openssl binary (`openssl version`: 3 or 4), for behaviour that
/// differs by version and is pinned per version in the tests.
int openssl_major();
/// DIR/NAME: a module of pattern(5000) with the SignedData that `openssl cms -sign -binary
/// -md sha256 -outform DER FLAGS -signer CERT -inkey KEY` makes of those bytes appended as
/// the kernel's sign-file appends one (module_signature, marker); DIR/p7 keeps the
/// SignedData, DIR/content the signed bytes.  Fails the test when openssl fails.
std::string openssl_cms_module(const std::string& dir, const std::string& name, const std::string& flags,
                               const std::string& cert, const std::string& key);
/// What each openssl major does with an ML-DSA SignerInfo without signedAttrs
/// (`openssl cms -verify`): 3 (3.5.7) refuses every one ("provider signature not
/// supported"); 4 (4.0.3) verifies the detached form and refuses the attached one
/// ("CMS_SignerInfo_verify_ex: no content").  Returns the stderr text that version gives
/// for the refused form.
std::string openssl_mldsa_noattr_refusal(bool attached);
/// " (skid HEX, serial HEX)" for the certificate in `cert_file` (PEM or DER), read with
/// `openssl x509` (independently of modsign): what verify adds after the trusted key's CN.
std::string trusted_key_ids(const std::string& cert_file);
/// What verify's text line ends with: the kernel predicted (KernelProfile::label(); v7.0,
/// the default, here) and, for a load, that the prediction covers module_sig_check
/// (modsign::kVerdictPredicts), not the checks after it.  kRefusedScope: a refusal's end.
/// kexec_load_scope(): a load's end for --usage kexec (modsign::kKexecVerdictPredicts).
inline std::string load_scope(const std::string& kernel) {
  return " [kernel " + kernel + "; predicts module_sig_check, not the ELF checks]";
}
inline const std::string kLoadScope = load_scope("v7.0");
inline const std::string kRefusedScope = " [kernel v7.0]";
inline std::string kexec_load_scope(const std::string& kernel) {
  return " [kernel " + kernel + "; predicts kimage_validate_signature, not the load]";
}
/// `openssl cms -verify` (independently of modsign) of the detached DER SignedData `p7s`
/// over `content` (written to `scratch`) with `cert`: no chain check, or with `chain` the
/// signer's certificate checked against `cert` as the trust anchor (-CAfile); a test failure
/// names `p7s` and openssl's stderr.
void expect_openssl_cms_verifies(const std::string& p7s, const Bytes& content, const std::string& cert,
                                 const std::string& scratch, bool chain = false);
std::string modsign_cli();
/// Where this build's files are (compiled into test_support.cpp alone, so that the other test
/// files do not hold the checkout's path): the checkout (tests/, tools/), the modsign binary,
/// the openssl binary (unquoted), pkcs11-provider's module given to CMake (may be empty), and
/// the -DMODSIGN_SANITIZE value ("" in the plain build).
std::string source_dir();
// The unpacked linux-source-7.2 tree that tools/check fetches (tools/build-test-kernel
// --source-only): $MODSIGN_CACHE/kernel-src/linux-source-7.2, MODSIGN_CACHE defaulting to
// ${XDG_CACHE_HOME:-$HOME/.cache}/modsign as in the scripts.
std::string kernel_source_dir();
std::string cli_path();
std::string openssl_bin();
std::string pkcs11_provider_path();
std::string sanitize_build();
/// Every entry of `dir` (not recursive) by name: kind and mode, owner and group, and the
/// SHA-256 of a regular file or the target of a symbolic link: equal before and after a
/// command that must change nothing.
std::map<std::string, std::string> snapshot_dir(const std::string& dir);

/// Runs `modsign ARGS` in `dir`; expects exit `status`, exactly "modsign: MESSAGE\n" on
/// stderr, and no change to any entry of `dir` (snapshot_dir()).
void expect_cli_refused(const std::string& dir, const std::string& args, int status, const std::string& message);

/// Shell-quote one word.
std::string q(const std::string& s);

/// Runs `cmd` and expects exit 0 (a test failure naming it and its stderr otherwise); its
/// standard output.
std::string sh(const std::string& cmd);

/// The first word `tool` (sha1sum, sha256sum, sha512sum, ...) prints for a file holding
/// `data`: its hex digest, from an independent tool.
std::string tool_hash(const std::string& tool, ByteView data);

/// Deterministic test content: n bytes, byte i = (i*7+3) & 0xff (the vectors' content.bin).
Bytes pattern(std::size_t n);

}  // namespace modsign::test
