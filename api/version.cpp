#include "modsign/version.hpp"

namespace modsign {
const char* version() noexcept { return MODSIGN_VERSION_STRING; }
}  // namespace modsign
