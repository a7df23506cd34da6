// mirrors crypto/asymmetric_keys/asymmetric_type.c find_asymmetric_key, asymmetric_key_cmp_partial (key id matching),
// Linux 7.2.13
#include "cms/asymmetric_type.hpp"

#include <algorithm>

namespace modsign::cms {

Result<const crypto::Certificate*> find_asymmetric_key(const std::vector<crypto::Certificate>& trusted,
                                                       const std::optional<Bytes>& id0,
                                                       const std::optional<Bytes>& id1) {
  const std::optional<Bytes>& primary = id0 ? id0 : id1;
  if (!primary) return make_error(KErr::enokey, "no key id");
  if (primary->empty()) return make_error(KErr::einval, "empty key id");
  for (const auto& t : trusted) {
    if (t.kernel_id() != *primary && !(t.skid() && *t.skid() == *primary)) continue;
    if (id0 && id1 && !(t.skid() && *t.skid() == *id1))
      return make_error(KErr::ekeyrejected, "First ID matches, but second is missing or different");
    return &t;
  }
  return make_error(KErr::enokey, "no trusted key matches");
}

namespace {
bool ends_with(ByteView id, ByteView tail) {
  return id.size() >= tail.size() &&
         std::equal(tail.begin(), tail.end(), id.end() - static_cast<std::ptrdiff_t>(tail.size()));
}
}  // namespace

const crypto::Certificate* find_key_by_partial_id(const std::vector<const crypto::Certificate*>& trusted,
                                                  ByteView tail) {
  for (const auto* t : trusted) {
    const Bytes id0 = t->kernel_id();
    if (ends_with(id0, tail) || (t->skid() && ends_with(*t->skid(), tail))) return t;
  }
  return nullptr;
}

}  // namespace modsign::cms
