// modsign — library version and the cryptographic libraries in use (include/modsign/version.hpp).
#include "modsign/version.hpp"

#include <link.h>
#include <openssl/crypto.h>

#include <botan/version.h>

namespace modsign {
const char* version() noexcept { return MODSIGN_VERSION_STRING; }

std::string crypto_library_versions() {
  return std::string(OpenSSL_version(OPENSSL_VERSION)) + "\nBotan " + Botan::short_version_string();
}

std::vector<std::string> loaded_libcrypto() {
  std::vector<std::string> found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) noexcept {
        try {  // nothing may leave a callback the loader calls under its lock
          const std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
          if (path.compare(path.rfind('/') + 1, 13, "libcrypto.so.") == 0)
            static_cast<std::vector<std::string>*>(out)->push_back(path);
          return 0;
        } catch (...) {
          return 1;  // out of memory: the list so far
        }
      },
      &found);
  return found;
}
}  // namespace modsign
