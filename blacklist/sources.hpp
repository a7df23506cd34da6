// modsign's own: the .blacklist keyring assembled from files, with the origin of every key
// The kernel's .blacklist keyring as modsign assembles it from files, with the origin of
// every key so that a verdict can name the entry that stops an item.
//
// Producers: blacklist/hash_list (CONFIG_SYSTEM_BLACKLIST_HASH_LIST files) and
// blacklist/efi (dbx / MokListX EFI_SIGNATURE_LISTs, revoked certificates).
// Consumers: the checker (blacklist/check) and cms::verify_pkcs7_signature through
// `keyring` (a cms::Blacklist: descriptions + revoked certificates).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cms/kernel_model.hpp"
#include "crypto/crypto.hpp"
#include "modsign/trust.hpp"

namespace modsign::blacklist {

/// Where a key came from (the public modsign::TrustOrigin): `file` as given, `where` inside
/// it, e.g. "line 3" (hash list) or "list 2 entry 5 (EFI_CERT_SHA256)" (EFI signature list).
using Origin = modsign::TrustOrigin;

/// What the kernel's .blacklist keyring would hold after loading every source, in load
/// order.  A description loaded twice stays one key (the kernel logs "Duplicate
/// blacklisted hash", -EEXIST, and keeps the first); every origin is remembered.
struct Sources {
  cms::Blacklist keyring;                                          ///< descriptions + revoked certificates
  std::map<std::string, std::vector<Origin>> description_origins;  ///< key -> every origin, load order
  std::vector<Origin> revoked_origins;                             ///< parallel to keyring.revoked
  std::vector<std::string> notes;  ///< e.g. entries that can never match a lookup (§7.2 X509_SHA256)

  /// Add a vetted description ("bin:<hex>" / "tbs:<hex>"); returns false if it was
  /// already present (the kernel's -EEXIST), true if new.  Does not vet: callers vet
  /// with blacklist_vet_description first, as mark_hash_blacklisted does.
  bool add_description(const std::string& description, Origin origin) {
    auto& o = description_origins[description];
    o.push_back(std::move(origin));
    return keyring.descriptions.insert(description).second;
  }
  /// Add a revoked certificate (CONFIG_SYSTEM_REVOCATION_KEYS, dbx EFI_CERT_X509).
  void add_revoked(crypto::Certificate cert, Origin origin) {
    keyring.revoked.push_back(std::move(cert));
    revoked_origins.push_back(std::move(origin));
  }
};

}  // namespace modsign::blacklist
