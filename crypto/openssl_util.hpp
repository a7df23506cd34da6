// modsign's own: OpenSSL backend — internal helpers shared by openssl_keys.cpp, openssl_x509.cpp
// and openssl_ops.cpp (owning pointers for OpenSSL objects, ML-DSA algorithm names).  Not installed.
#pragma once

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

#include "crypto/algorithms.hpp"

namespace modsign::crypto::ossl {

template <class T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using X509NamePtr = std::unique_ptr<X509_NAME, Deleter<X509_NAME, X509_NAME_free>>;
using X509ExtPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION, X509_EXTENSION_free>>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX, EVP_MD_CTX_free>>;
using SigPtr = std::unique_ptr<EVP_SIGNATURE, Deleter<EVP_SIGNATURE, EVP_SIGNATURE_free>>;

/// One PEM_read_bio() step: a block (name, header and data are then the caller's to free),
/// the end of the input, or a block that does not decode (bad base64 or armour).
enum class PemStep { block, end, damaged };
inline PemStep read_pem_block(BIO* bio, char** name, char** header, unsigned char** data, long* len) {
  if (PEM_read_bio(bio, name, header, data, len)) return PemStep::block;
  const unsigned long e = ERR_peek_last_error();
  const bool end = ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE;
  ERR_clear_error();
  return end ? PemStep::end : PemStep::damaged;
}

inline const char* ml_dsa_name(KeyAlgo a) {
  switch (a) {
    case KeyAlgo::ml_dsa_44: return "ML-DSA-44";
    case KeyAlgo::ml_dsa_65: return "ML-DSA-65";
    case KeyAlgo::ml_dsa_87: return "ML-DSA-87";
    default: return nullptr;
  }
}

}  // namespace modsign::crypto::ossl
