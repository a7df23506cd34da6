// modsign's own: private keys (and their certificates) on PKCS#11 tokens, named by RFC 7512
// `pkcs11:` URIs, reached through OpenSSL's pkcs11-provider and OSSL_STORE.
//
// The provider is loaded into an OpenSSL library context of its own (OSSL_LIB_CTX), never
// into the default one: a software token such as SoftHSM calls OpenSSL itself, and with the
// provider in the default context those calls would come back into the token (a deadlock).
// The context lives as long as the last PrivateKey made from it.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "crypto/crypto.hpp"

namespace modsign::crypto::pkcs11 {

/// True when `key` names a token key ("pkcs11:" ..., the scheme in any case: "PKCS11:"
/// too, RFC 3986 3.1; load() is given it with the scheme in lower case).
bool is_uri(std::string_view key) noexcept;

/// The turn of the caller that is about to sign with `evp_pkey` (PrivateKey::native()):
/// a held lock when the key is on a token that allows one session at a time
/// (CK_TOKEN_INFO.ulMaxSessionCount 1), so that the workers of a batch take turns on it;
/// an empty lock for every other key (a token with more sessions gives each concurrent
/// operation a session of its own, through pkcs11-provider's session pool).
std::unique_lock<std::mutex> session_turn(const void* evp_pkey);

/// True when the URI `uri` carries a PIN: an attribute, in its path or query, whose name
/// looks like one whatever its case or %-encoding (pin-value, PIN-VALUE, pin%2Dvalue,
/// "pass", "secret"), which modsign never accepts (the command line is visible to every user).
bool pin_in_uri(std::string_view uri);

/// `uri` as messages show it: the value of every attribute whose name looks like a PIN
/// (as pin_in_uri) replaced by "(not shown)", a query that does not parse not shown at all,
/// and each octet that is a control character or not ASCII shown percent-encoded ("%0A").
std::string printable_uri(std::string_view uri);

/// How load() finds the provider and logs in.
struct TokenOptions {
  /// pkcs11-provider's module (pkcs11.so); "" = $MODSIGN_PKCS11_PROVIDER, else
  /// $OPENSSL_MODULES/pkcs11.so, else the build's default (tools/bootstrap-deps'
  /// PKCS11_PROVIDER), else OpenSSL's own modules directory.
  std::string provider;
  /// The user PIN; nullopt = ask, when the token needs it.
  std::optional<SecretString> pin;
  /// Asked once for the PIN when `pin` is nullopt and the token asks for a login.
  std::function<std::optional<SecretString>()> ask;
  /// The key algorithm the certificate already names, when known (ML-DSA is checked
  /// against the token's mechanisms before anything is asked).
  std::optional<KeyAlgo> expect;
  /// Also load the certificates of the token object (the same URI with type=cert).
  bool with_certs = false;
};

/// A token's key, what the token calls itself, and its certificates (with_certs).
struct TokenKey {
  PrivateKey key;
  std::string token;  ///< "'LABEL' (MANUFACTURER MODEL)" for messages, or "" when not probed
  std::vector<Certificate> certs;
};

/// Load the private key named by `uri` (RFC 7512; type=private is added when the URI has
/// no type).  Errors (messages without the URI; the caller prefixes it):
///  - EINVAL "not a PKCS#11 URI (RFC 7512): <why>" (unknown attribute, bad %-escape,
///    type other than private, "%00 (a NUL byte) in 'token': no PKCS#11 attribute value
///    holds one"), "the PIN must not be in the URI (pin-value): use KBUILD_SIGN_PIN,
///    --pin-file or the prompt";
///  - ENOPKG "pkcs11-provider not found (...)", "PKCS#11 module <path>
///    (PKCS11_PROVIDER_MODULE) does not exist or is not a file", the same with
///    "(module-path in the URI)", "cannot load pkcs11-provider <path>: ...",
///    "token <T> has no CKM_ML_DSA mechanism: ML-DSA signing needs a PKCS#11 3.2 token
///    that offers it" (options.expect is ML-DSA, and the token has no ML-DSA key or one
///    it cannot sign with; a key of another algorithm is returned: the caller names the
///    mismatch);
///  - ENOKEY "no token matches the URI in <module>", "token <T>: wrong PIN
///    (CKR_PIN_INCORRECT)", "token <T>: no private key matches the URI", "token <T>: no
///    certificate matches the URI (type=cert)" (with_certs).
Result<TokenKey> load(const std::string& uri, const TokenOptions& options);

/// The name of a CK_RV that C_OpenSession or C_Login can return (PKCS #11 v3.0, pkcs11t.h):
/// "CKR_USER_PIN_NOT_INITIALIZED, 0x102"; "CKR 0x..." for another value.
std::string ckr_text(unsigned long rv);

}  // namespace modsign::crypto::pkcs11
