// Botan backend: pure ML-DSA (empty context) keygen-from-seed, sign, verify.
#include <botan/auto_rng.h>
#include <botan/ml_dsa.h>
#include <botan/pubkey.h>

#include "crypto/crypto.hpp"

namespace modsign::crypto::botan {

namespace {
Botan::ML_DSA_Mode mode_of(KeyAlgo a) {
  switch (a) {
    case KeyAlgo::ml_dsa_44: return Botan::ML_DSA_Mode::ML_DSA_4x4;
    case KeyAlgo::ml_dsa_65: return Botan::ML_DSA_Mode::ML_DSA_6x5;
    case KeyAlgo::ml_dsa_87: return Botan::ML_DSA_Mode::ML_DSA_8x7;
    default: throw std::invalid_argument("not an ML-DSA algorithm");
  }
}
}  // namespace

Bytes ml_dsa_public_from_seed(KeyAlgo level, ByteView seed) {
  Botan::ML_DSA_PrivateKey sk(seed, mode_of(level));
  return sk.public_key()->raw_public_key_bits();
}

Bytes ml_dsa_sign(KeyAlgo level, ByteView seed, ByteView message, bool deterministic) {
  Botan::ML_DSA_PrivateKey sk(seed, mode_of(level));
  Botan::AutoSeeded_RNG rng;
  Botan::PK_Signer signer(sk, rng, deterministic ? "Deterministic" : "Randomized");
  return signer.sign_message(message.data(), message.size(), rng);
}

bool ml_dsa_verify(KeyAlgo level, ByteView public_key, ByteView message, ByteView signature) {
  if (public_key.size() != ml_dsa_public_key_size(level)) return false;
  try {
    Botan::ML_DSA_PublicKey pk(public_key, mode_of(level));
    Botan::PK_Verifier verifier(pk, "");
    return verifier.verify_message(message.data(), message.size(), signature.data(), signature.size());
  } catch (const Botan::Exception&) {
    return false;
  }
}

}  // namespace modsign::crypto::botan
