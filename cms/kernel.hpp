// modsign's own: umbrella for the kernel mirror, one header per kernel file it mirrors
// What a given Linux kernel does with a PKCS#7 message: parse, digest, verify, trust.  Each
// rule lives in the file named after the kernel file (Linux 7.2.13 paths):
//   cms/pkcs7_parser      crypto/asymmetric_keys/pkcs7_parser.c, pkcs7.asn1
//   cms/pkcs7_verify      crypto/asymmetric_keys/pkcs7_verify.c
//   cms/pkcs7_trust       crypto/asymmetric_keys/pkcs7_trust.c
//   cms/x509_cert_parser  crypto/asymmetric_keys/x509_cert_parser.c
//   cms/x509_public_key   crypto/asymmetric_keys/x509_public_key.c
//   cms/public_key        crypto/asymmetric_keys/public_key.c
//   cms/asymmetric_type   crypto/asymmetric_keys/asymmetric_type.c
//   cms/system_keyring    certs/system_keyring.c
//   digest/ima_modsig     security/integrity/ima/ima_modsig.c (ima_modsig_verify)
// with the behaviour of each kernel generation chosen by a KernelModel (cms/kernel_model;
// docs/kernel-semantics.md).  Library code includes the specific headers; this one is for
// the CLI, tests, benchmarks and fuzz targets, and is the only cms/ header that reaches up
// into digest/ (for cms::ima_modsig_verify).
#pragma once

#include "cms/asymmetric_type.hpp"
#include "cms/kernel_model.hpp"
#include "cms/pkcs7_parser.hpp"
#include "cms/pkcs7_trust.hpp"
#include "cms/pkcs7_verify.hpp"
#include "cms/public_key.hpp"
#include "cms/system_keyring.hpp"
#include "cms/x509_cert_parser.hpp"
#include "cms/x509_public_key.hpp"
#include "digest/ima_modsig.hpp"

namespace modsign::cms {
using digest::ima_modsig_verify;
}  // namespace modsign::cms
