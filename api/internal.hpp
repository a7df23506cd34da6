// modsign — what the facade implementations (api/) share: the handles' insides and the
// conversion of the public KernelProfile.  Not installed.
#pragma once

#include <string>
#include <vector>

#include "cms/kernel.hpp"
#include "crypto/crypto.hpp"
#include "modsign/profile.hpp"
#include "modsign/sign.hpp"
#include "modsign/verdict.hpp"

namespace modsign {

struct Signer::Impl {
  crypto::PrivateKey key;
  crypto::Certificate cert;
  std::string cert_path;
};

struct TrustStore::Impl {
  kernel::Keyring keyring;
  std::vector<std::string> notes;
};

namespace api {
/// The internal profile with the public one's generation and switches.
kernel::KernelProfile to_kernel(const KernelProfile& p);
}  // namespace api

}  // namespace modsign
