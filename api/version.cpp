// modsign — library version and the cryptographic libraries in use (include/modsign/version.hpp).
#include "modsign/version.hpp"

#include <openssl/crypto.h>

#include <botan/version.h>

namespace modsign {
const char* version() noexcept { return MODSIGN_VERSION_STRING; }

std::string crypto_library_versions() {
  return std::string(OpenSSL_version(OPENSSL_VERSION)) + "\nBotan " + Botan::short_version_string();
}
}  // namespace modsign
