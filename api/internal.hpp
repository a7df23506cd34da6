// modsign — what the facade implementations (api/) share: the handles' insides and the
// conversion of the public KernelProfile.  Not installed.
#pragma once

#include <string>
#include <vector>

#include "blacklist/sources.hpp"
#include "cms/kernel.hpp"
#include "crypto/crypto.hpp"
#include "modsign/profile.hpp"
#include "modsign/sign.hpp"
#include "modsign/trust.hpp"
#include "modsign/verdict.hpp"

namespace modsign {

struct Signer::Impl {
  crypto::PrivateKey key;
  crypto::Certificate cert;
  std::string cert_path;
};

/// keyring.blacklist is a copy of sources.keyring (what verify_pkcs7_signature consults);
/// `sources` keeps the origins for blacklist checks.
struct TrustStore::Impl {
  KernelProfile profile;
  kernel::Keyring keyring;
  blacklist::Sources sources;
  std::vector<std::string> notes, keyring_notes;
};

namespace api {
/// The internal profile with the public one's generation and switches.
kernel::KernelProfile to_kernel(const KernelProfile& p);
}  // namespace api

}  // namespace modsign
