// mirrors security/integrity/ima/ima_modsig.c ima_collect_modsig, ima_modsig_verify, Linux 7.2.13
#include "digest/ima_modsig.hpp"

#include "cms/pkcs7_parser.hpp"
#include "cms/pkcs7_verify.hpp"

namespace modsign::digest {

cms::VerifyReport ima_modsig_verify(ByteView data, ByteView pkcs7, const cms::Keyring& keyring,
                                    const cms::KernelModel& profile, crypto::Backend backend) {
  return cms::verify_with(pkcs7, keyring, cms::Usage::module, profile, backend, [&](cms::Pkcs7Message& m) {
    // ima_collect_modsig(): supply the file, and only then pkcs7_get_digest() for d-modsig.
    // Its pkcs7_digest() runs before pkcs7_verify() on the same message, and keeps the
    // content digest in sig->m even when a messageDigest check fails; pkcs7_verify() then
    // finds sig->m set and checks the signature over that digest (reachable only where
    // module usage allows signedAttrs: ML-DSA under the waiver).
    if (cms::pkcs7_supply_detached_data(m, data)) (void)cms::pkcs7_get_digest(m, profile);
    return ok_status();
  });
}

}  // namespace modsign::digest
