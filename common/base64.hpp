// modsign's own: RFC 4648 base64, for the JSON of prepare/attach manifests (not exported).
#pragma once

#include <string>
#include <string_view>

#include "common/result.hpp"

namespace modsign {

/// RFC 4648 §4 base64 with padding.
std::string to_base64(ByteView b);
/// The bytes of RFC 4648 §4 base64 text; the '=' padding may be omitted; no whitespace.
/// Throws InputError "not base64" for any other text.
Bytes from_base64(std::string_view text);

}  // namespace modsign
