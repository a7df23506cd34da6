// modsign — libFuzzer target: the kernel-mirroring PKCS#7 parser (src/cms/kernel.hpp) and
// the generic CMS SignedData parser (src/cms/signed_data.hpp).
// The first input byte picks the kernel profile (bit 0: v6 / v7.0; bit 1: the 7.0 ML-DSA
// authattrs waiver); the rest is the message.  A parsed message gets detached data
// supplied when it has none, then pkcs7_get_digest() (as IMA calls it) and pkcs7_digest()
// for every signer.  Failures must be one of the errnos the kernel's parser returns.
#include <cstdint>
#include <cstdlib>

#include "cms/kernel.hpp"
#include "cms/signed_data.hpp"

using namespace modsign;

namespace {

bool kernel_errno(KErr e) {
  switch (e) {
    case KErr::ebadmsg:
    case KErr::einval:
    case KErr::enopkg:
    case KErr::ekeyrejected:
    case KErr::enomem: return true;
    default: return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  auto profile = (data[0] & 1) ? cms::KernelModel::v6() : cms::KernelModel::v7_0();
  profile.waive_mldsa_authattrs = (data[0] & 2) != 0;
  const ByteView der(data + 1, size - 1);

  (void)cms::parse(der);

  auto msg = cms::pkcs7_parse_message(der, profile);
  if (!msg.ok()) {
    if (!kernel_errno(msg.error().code)) std::abort();
    return 0;
  }
  static const std::uint8_t kContent[] = "modsign fuzz content";
  if (!msg->data) {
    if (!cms::pkcs7_supply_detached_data(*msg, ByteView(kContent, sizeof kContent - 1)).ok()) std::abort();
  } else if (cms::pkcs7_supply_detached_data(*msg, ByteView(kContent, 1)).ok()) {
    std::abort();  // data already present: EINVAL
  }
  auto d = cms::pkcs7_get_digest(*msg, profile);
  if (!d.ok() && !kernel_errno(d.error().code)) std::abort();
  for (std::size_t i = 0; i < msg->signed_infos.size() && i < 8; ++i) (void)cms::pkcs7_digest(*msg, i, profile);
  return 0;
}
