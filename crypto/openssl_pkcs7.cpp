// modsign's own: pkcs7_verify_trusted() (crypto/openssl_pkcs7.hpp) with OpenSSL's PKCS7 API.
#include "crypto/openssl_pkcs7.hpp"

#include <openssl/err.h>
#include <openssl/pkcs7.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <climits>

#include "crypto/crypto.hpp"
#include "crypto/openssl_util.hpp"

namespace modsign::crypto {

namespace {
using Pkcs7Ptr = std::unique_ptr<PKCS7, ossl::Deleter<PKCS7, PKCS7_free>>;
using StorePtr = std::unique_ptr<X509_STORE, ossl::Deleter<X509_STORE, X509_STORE_free>>;
}  // namespace

Status pkcs7_verify_trusted(ByteView pkcs7, ByteView content, ByteView trusted) {
  if (pkcs7.size() > INT_MAX || content.size() > INT_MAX || trusted.size() > INT_MAX)
    return make_error(KErr::ebadmsg, "input too large");
  const unsigned char* p = pkcs7.data();
  Pkcs7Ptr p7(d2i_PKCS7(nullptr, &p, static_cast<long>(pkcs7.size())));
  if (!p7 || !PKCS7_type_is_signed(p7.get()))
    return make_error(KErr::ebadmsg, "not a PKCS#7 SignedData: " + openssl_error());
  const unsigned char* c = trusted.data();
  ossl::X509Ptr anchor(d2i_X509(nullptr, &c, static_cast<long>(trusted.size())));
  if (!anchor) return make_error(KErr::ebadmsg, "trusted certificate does not decode: " + openssl_error());
  StorePtr store(X509_STORE_new());
  if (!store || X509_STORE_add_cert(store.get(), anchor.get()) != 1)
    return make_error(KErr::enomem, "X509_STORE: " + openssl_error());
  X509_STORE_set_flags(store.get(), X509_V_FLAG_PARTIAL_CHAIN | X509_V_FLAG_NO_CHECK_TIME);
  X509_STORE_set_purpose(store.get(), X509_PURPOSE_ANY);
  ossl::BioPtr in(BIO_new_mem_buf(content.data(), static_cast<int>(content.size())));
  if (!in) return make_error(KErr::enomem, "BIO: " + openssl_error());
  ERR_clear_error();
  if (PKCS7_verify(p7.get(), nullptr, store.get(), in.get(), nullptr, PKCS7_BINARY) != 1)
    return make_error(KErr::ekeyrejected, openssl_error());
  return ok_status();
}

}  // namespace modsign::crypto
