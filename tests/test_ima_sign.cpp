// The internal IMA file-signature layer (digest/digsig_asymmetric, digest/digsig,
// digest/ima_policy, digest/ima_appraise, digest/hash_info): exact header bytes, the
// ima_file_id layout, the hash numbering of include/uapi/linux/hash_info.h, the policy
// parse per kernel profile and the version dispatch of integrity_digsig_verify.
#include <gtest/gtest.h>

#include "cms/kernel_model.hpp"
#include "digest/digsig.hpp"
#include "digest/digsig_asymmetric.hpp"
#include "digest/hash_info.hpp"
#include "digest/ima_appraise.hpp"
#include "digest/ima_policy.hpp"
#include "test_support.hpp"

namespace modsign::digest {
namespace {

using cms::KernelModel;

TEST(ImaSign, HashAlgoNumberingIsTheKernels) {
  EXPECT_EQ(hash_algo_name(0), "md4");
  EXPECT_EQ(hash_algo_name(2), "sha1");
  EXPECT_EQ(hash_algo_name(4), "sha256");
  EXPECT_EQ(hash_algo_name(5), "sha384");
  EXPECT_EQ(hash_algo_name(6), "sha512");
  EXPECT_EQ(hash_algo_name(7), "sha224");
  EXPECT_EQ(hash_algo_name(17), "sm3");
  EXPECT_EQ(hash_algo_name(20), "sha3-256");
  EXPECT_EQ(hash_algo_name(22), "sha3-512");
  EXPECT_EQ(hash_algo_name(23), "");
  EXPECT_EQ(hash_digest_size(10), 40u);  // rmd320
  EXPECT_EQ(hash_digest_size(21), 48u);
  EXPECT_EQ(hash_algo_of(crypto::HashAlgo::sha256), 4);
  EXPECT_EQ(hash_algo_of(crypto::HashAlgo::sha3_384), 21);
  EXPECT_FALSE(computable_hash(3).has_value());  // rmd160
  EXPECT_EQ(computable_hash(6), crypto::HashAlgo::sha512);
}

TEST(ImaSign, SignatureV2HeaderBytes) {
  SignatureV2Hdr h;
  h.type = 3;
  h.version = 3;
  h.hash_algo = 4;
  h.keyid = 0x1a2b3c4d;
  const Bytes v = signature_v2_value(h, Bytes(0x0cf5, 0xaa));  // 3,317 bytes: sig_size 0x0cf5
  ASSERT_EQ(v.size(), 9u + 0x0cf5);
  EXPECT_EQ(to_hex(ByteView(v).first(10)), "0303041a2b3c4d0cf5aa");
  const auto p = parse_signature_v2_hdr(v);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->keyid, 0x1a2b3c4du);
  EXPECT_EQ(p->sig_size, 0x0cf5);
  EXPECT_FALSE(parse_signature_v2_hdr(ByteView(v).first(8)));
  EXPECT_THROW(signature_v2_value(h, Bytes(65536)), std::length_error);
}

TEST(ImaSign, FileIdIsTypeAlgoDigest) {
  const Bytes d(48, 0x11);
  const Bytes id = ima_file_id(3, 5, d);
  ASSERT_EQ(id.size(), 50u);
  EXPECT_EQ(id[0], 3);
  EXPECT_EQ(id[1], 5);
  EXPECT_EQ(id[49], 0x11);
  // RSA/ECDSA v3 sign the hash of it; ML-DSA the bytes; v2 the digest.
  EXPECT_EQ(ima_signed_data(3, crypto::KeyAlgo::ml_dsa_65, crypto::HashAlgo::sha384, d).data, id);
  EXPECT_TRUE(ima_signed_data(3, crypto::KeyAlgo::ml_dsa_65, crypto::HashAlgo::sha384, d).message);
  EXPECT_EQ(ima_signed_data(3, crypto::KeyAlgo::rsa, crypto::HashAlgo::sha384, d).data,
            crypto::digest(crypto::HashAlgo::sha384, id));
  EXPECT_EQ(ima_signed_data(2, crypto::KeyAlgo::ecdsa_p384, crypto::HashAlgo::sha384, d).data, d);
}

TEST(ImaSign, GetHashAlgoFollowsTheValue) {
  EXPECT_EQ(ima_get_hash_algo(std::nullopt, 4), 4);
  EXPECT_EQ(ima_get_hash_algo(Bytes{3, 2, 6, 0, 0, 0, 0, 0, 1, 0}, 4), 6);
  EXPECT_EQ(ima_get_hash_algo(Bytes{3, 3, 20, 0, 0, 0, 0, 0, 1, 0}, 4), 20);
  EXPECT_EQ(ima_get_hash_algo(Bytes{3, 2, 6, 0, 0, 0, 0, 0, 0}, 4), 4) << "9 bytes: no signature, the default";
  EXPECT_EQ(ima_get_hash_algo(Bytes{3, 4, 6, 0, 0, 0, 0, 0, 1, 0}, 4), 4) << "version 4";
  EXPECT_EQ(ima_get_hash_algo(Bytes{3, 2, 23, 0, 0, 0, 0, 0, 1, 0}, 4), 4) << "no such hash";
  EXPECT_EQ(ima_get_hash_algo(Bytes{4, 5, 1}, 4), 5);
  EXPECT_EQ(ima_get_hash_algo(Bytes(17, 1), 4), 1);  // old md5 digest
}

TEST(ImaSign, PolicyParsePerProfile) {
  const auto v70 = KernelModel::v7_0(), v71 = *KernelModel::parse("v7.1"), v6 = KernelModel::v6();
  EXPECT_EQ(v71.name(), "v7.1");
  EXPECT_EQ(KernelModel::parse("7.2")->name(), "v7.2");
  EXPECT_EQ(KernelModel::parse("v7.2")->generation, cms::Generation::v7_0);
  auto f = ima_parse_appraise_rule("FILE_CHECK", "imasig", v6);
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->digsig_required && f->check_blacklist && !f->sigv3_required);
  auto s = ima_parse_appraise_rule("FILE_CHECK", "sigv3", v70);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, KErr::einval);
  s = ima_parse_appraise_rule("BPRM_CHECK", "sigv3", v71);
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->sigv3_required && s->digsig_required && s->check_blacklist);
  EXPECT_FALSE(ima_parse_appraise_rule("FILE_CHECK", "imasig|modsig", v71)) << "modsig only for modules/kexec";
  EXPECT_TRUE(ima_parse_appraise_rule("MODULE_CHECK", "imasig|modsig", v71));
  EXPECT_FALSE(ima_parse_appraise_rule("FILE_CHECK", "modsig", v71));
  EXPECT_FALSE(ima_parse_appraise_rule("NO_CHECK", "imasig", v71));
  EXPECT_FALSE(ima_sigv3_file_signatures(v70));
  EXPECT_TRUE(ima_sigv3_file_signatures(v71));
  EXPECT_FALSE(ima_mldsa_hashless(v71));
  EXPECT_TRUE(ima_mldsa_hashless(*KernelModel::parse("v7.2")));
}

TEST(ImaSign, DigsigVersionDispatch) {
  const std::vector<const crypto::Certificate*> none;
  const Bytes d(32, 0);
  const auto p = *KernelModel::parse("v7.2");
  EXPECT_EQ(integrity_digsig_verify(none, Bytes{3}, d, 4, p).err, KErr::einval);
  EXPECT_EQ(integrity_digsig_verify(none, Bytes{3, 1, 0}, d, 4, p).err, KErr::enokey);
  EXPECT_EQ(integrity_digsig_verify(none, Bytes{3, 0, 0}, d, 4, p).err, KErr::eopnotsupp);
  EXPECT_EQ(integrity_digsig_verify(none, Bytes{3, 2, 4, 0, 0, 0, 1, 0, 1, 0}, d, 4, p).err, KErr::enokey);
  EXPECT_EQ(integrity_digsig_verify(none, Bytes{3, 2, 4, 0, 0, 0, 1, 0, 1}, d, 4, p).err, KErr::ebadmsg);
  EXPECT_EQ(integrity_digsig_verify(none, Bytes{3, 3, 4, 0, 0, 0, 1, 0, 1, 0}, d, 23, p).err, KErr::enopkg);
}

}  // namespace
}  // namespace modsign::digest
