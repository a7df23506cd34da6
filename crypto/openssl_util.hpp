// modsign's own: OpenSSL backend — internal helpers shared by openssl_keys.cpp, openssl_x509.cpp
// and openssl_ops.cpp (owning pointers for OpenSSL objects, ML-DSA algorithm names).  Not installed.
#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>
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

inline const char* ml_dsa_name(KeyAlgo a) {
  switch (a) {
    case KeyAlgo::ml_dsa_44: return "ML-DSA-44";
    case KeyAlgo::ml_dsa_65: return "ML-DSA-65";
    case KeyAlgo::ml_dsa_87: return "ML-DSA-87";
    default: return nullptr;
  }
}

}  // namespace modsign::crypto::ossl
