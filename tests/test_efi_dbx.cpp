// UEFI signature databases: the dbx/db handlers (keyring_handler.c) on a synthetic dbx,
// authenticated-variable containers and efivarfs dumps, writing and merging lists.
#include <gtest/gtest.h>

#include "crypto/algorithms.hpp"
#include "efi_support.hpp"

using namespace modsign;
using namespace modsign::test::efi_tests;

// ---------------------------------------------------------------------------------------
// A synthetic dbx like the firmware's: hash lists next to a certificate list

TEST(EfiDbx, SyntheticDbxWith932ByteCertificate) {
  const SizedCert& c = cert_932();
  ASSERT_EQ(c.der.size(), 932u);
  Bytes tbs_data;
  const Bytes f = synthetic_dbx(c.der, tbs_data);
  EXPECT_EQ(detect_container(f), Container::esl);
  auto vf = parse_variable_file(f);
  ASSERT_TRUE(vf.ok());
  const ParsedLists& p = vf->lists;
  ASSERT_FALSE(p.error) << p.error->message;
  ASSERT_EQ(p.lists.size(), 5u);
  EXPECT_EQ(p.lists[0].offset, 0u);
  EXPECT_EQ(p.lists[1].offset, 124u);
  EXPECT_EQ(p.lists[2].offset, 200u);
  EXPECT_EQ(p.lists[2].signature_size, 948u);
  EXPECT_EQ(p.lists[2].list_size, 976u);
  EXPECT_EQ(p.lists[3].offset, 1176u);
  EXPECT_EQ(p.lists[4].offset, 1176u + 28 + 144);
  EXPECT_EQ(p.lists[2].entries.at(0).data, c.der);
  EXPECT_EQ(p.lists[3].entries.at(2).data, fill(32, 0xa0));
  EXPECT_EQ(p.lists[3].entries.at(2).owner, kOwnerB);

  const VariableEffects fx = apply_handlers(p, Variable::dbx);
  ASSERT_EQ(fx.entries.size(), 8u);
  const std::vector<EntryKind> kinds = {EntryKind::binary_hash,         EntryKind::binary_hash, EntryKind::binary_hash,
                                        EntryKind::revoked_certificate, EntryKind::binary_hash, EntryKind::binary_hash,
                                        EntryKind::binary_hash,         EntryKind::tbs_hash};
  for (std::size_t i = 0; i < kinds.size(); ++i) EXPECT_EQ(fx.entries[i].kind, kinds[i]) << i;
  EXPECT_EQ(fx.entries[3].text, "revoked certificate");
  ASSERT_TRUE(fx.entries[3].cert);
  EXPECT_EQ(fx.entries[3].cert->der(), c.der);
  EXPECT_EQ(fx.entries[7].description, "tbs:" + to_hex(tbs_data));
  ASSERT_EQ(fx.revoked_certificates.size(), 1u);

  Sources s;
  ASSERT_TRUE(add_to_sources(p, Variable::dbx, "dbx.esl", s).ok());
  EXPECT_EQ(s.keyring.descriptions.size(), 7u);
  ASSERT_EQ(s.keyring.revoked.size(), 1u);
  EXPECT_EQ(s.revoked_origins.at(0).where, "list 3 entry 1 (EFI_CERT_X509)");
  EXPECT_EQ(s.description_origins.at("bin:" + to_hex(fill(32, 0x80))).at(0).where, "list 4 entry 2 (EFI_CERT_SHA256)");
  EXPECT_EQ(s.notes.size(), 1u);

  // db: the same certificate becomes a platform keyring certificate; hashes are ignored.
  const VariableEffects db = apply_handlers(p, Variable::db);
  ASSERT_EQ(db.keyring_certificates.size(), 1u);
  EXPECT_EQ(db.keyring_certificates[0].der(), c.der);
  EXPECT_EQ(db.entries[3].text, "platform keyring certificate");
  EXPECT_EQ(db.entries[0].kind, EntryKind::ignored);
  EXPECT_TRUE(db.revoked_certificates.empty());
}

TEST(EfiDbx, UnparseableRevokedCertificate) {
  // add_key_to_revocation_list -> key_create_or_update("asymmetric") fails (EBADMSG from
  // every parser): "Problem with revocation key (-74)", nothing added.
  Bytes junk = fill(100, 0x30);
  const ParsedLists p = parse_signature_lists(good_list(guids::cert_x509, {{kOwnerA, junk}}));
  const VariableEffects fx = apply_handlers(p, Variable::dbx);
  ASSERT_EQ(fx.entries.size(), 1u);
  EXPECT_EQ(fx.entries[0].key_error, KErr::ebadmsg);
  EXPECT_EQ(fx.entries[0].text, "revoked certificate (not added: EBADMSG)");
  Sources s;
  ASSERT_TRUE(add_to_sources(p, Variable::dbx, "d", s).ok());
  EXPECT_TRUE(s.keyring.revoked.empty());
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0], "d: list 1 entry 1 (EFI_CERT_X509): not added to .blacklist (EBADMSG)");
}

TEST(EfiDbx, RevokedCertificateRefusals) {
  const SizedCert& c = cert_932();
  TempDir d;
  // RSASSA-PSS-signed: the kernel's X.509 parser has no OID for it -> ENOPKG, not added.
  auto r =
      run(test::openssl() + " req -x509 -new -key " + q(c.key) +
          " -subj /CN=pss -days 1 -sigopt rsa_padding_mode:pss " + "-sha256 -outform DER -out " + q(d / "pss.der"));
  ASSERT_EQ(r.status, 0) << r.err;
  Bytes f = good_list(guids::cert_x509, {{kOwnerA, slurp(d / "pss.der")}});
  append(f, good_list(guids::cert_x509, {{kOwnerA, c.der}}));
  append(f, good_list(guids::cert_x509, {{kOwnerB, c.der}}));  // the same certificate again
  const ParsedLists p = parse_signature_lists(f);
  const VariableEffects fx = apply_handlers(p, Variable::dbx);
  ASSERT_EQ(fx.entries.size(), 3u);
  EXPECT_EQ(fx.entries[0].key_error, KErr::enopkg);
  EXPECT_EQ(fx.entries[0].text, "revoked certificate (not added: ENOPKG)");
  EXPECT_EQ(fx.entries[1].key_error, KErr::none);
  EXPECT_EQ(fx.revoked_certificates.size(), 2u);
  Sources s;
  ASSERT_TRUE(add_to_sources(p, Variable::dbx, "d", s).ok());
  ASSERT_EQ(s.keyring.revoked.size(), 1u);  // the repeat replaces the same key
  EXPECT_EQ(fx.entries[0].key_error_reason, "unsupported certificate signature algorithm 1.2.840.113549.1.1.10");
  // Worded as `--revoked` words a certificate the kernel cannot load.
  EXPECT_EQ(s.notes,
            (std::vector<std::string>{"d list 1 entry 1 (EFI_CERT_X509) is not loaded by a v7.0 kernel (ENOPKG: "
                                      "unsupported certificate signature algorithm 1.2.840.113549.1.1.10)",
                                      "d: list 3 entry 1 (EFI_CERT_X509): revoked certificate already loaded"}));
  // Its TBS SHA-256 already blacklisted (e.g. by the build-time hash list): x509_key_preparse
  // refuses it with EKEYREJECTED; with a v6 profile the lookup uses the signature's hash
  // (SHA-256 here too).
  auto cert = crypto::Certificate::from_der(c.der);
  ASSERT_TRUE(cert.ok());
  Sources t;
  t.add_description("tbs:" + to_hex(crypto::digest(crypto::HashAlgo::sha256, cert->tbs())), {"hashes", "line 1"});
  ASSERT_TRUE(
      add_to_sources(parse_signature_lists(good_list(guids::cert_x509, {{kOwnerA, c.der}})), Variable::dbx, "d", t)
          .ok());
  EXPECT_TRUE(t.keyring.revoked.empty());
  EXPECT_EQ(t.notes,
            (std::vector<std::string>{"d: list 1 entry 1 (EFI_CERT_X509): not added to .blacklist (EKEYREJECTED: "
                                      "its TBS is blacklisted)"}));
  const VariableEffects db = apply_handlers(parse_signature_lists(good_list(guids::cert_x509, {{kOwnerA, c.der}})),
                                            Variable::db, cms::KernelModel::v6(), &t.keyring);
  EXPECT_EQ(db.entries.at(0).key_error, KErr::ekeyrejected);
  EXPECT_TRUE(db.keyring_certificates.empty());
}

// ---------------------------------------------------------------------------------------
// Containers

TEST(EfiContainer, AuthenticatedUpdateWithRealPkcs7) {
  const SizedCert& c = cert_932();
  TempDir d;
  const Bytes payload = good_list(guids::cert_sha256, {{guids::microsoft_owner, fill(32, 7)}});
  spit(d / "payload", payload);
  auto r = run(test::openssl() + " cms -sign -binary -md sha256 -outform DER -in " + q(d / "payload") + " -signer " +
               q(c.pem) + " -inkey " + q(c.key) + " -out " + q(d / "p7.der"));
  ASSERT_EQ(r.status, 0) << r.err;
  const Bytes p7 = slurp(d / "p7.der");
  const EfiTime ts = *EfiTime::parse("2010-03-06 19:17:21");
  const Bytes file = auth2(ts, p7, payload);
  EXPECT_EQ(detect_container(file), Container::auth2);
  auto vf = parse_variable_file(file);
  ASSERT_TRUE(vf.ok()) << vf.error().message;
  EXPECT_EQ(vf->form, Container::auth2);
  ASSERT_TRUE(vf->auth);
  EXPECT_EQ(vf->auth->timestamp, ts);
  EXPECT_EQ(vf->auth->dw_length, 24 + p7.size());
  EXPECT_EQ(vf->auth->revision, 0x0200);
  EXPECT_EQ(vf->auth->certificate_type, 0x0ef1);
  EXPECT_EQ(vf->auth->pkcs7, p7);
  EXPECT_EQ(vf->payload_offset, 40 + p7.size());
  ASSERT_FALSE(vf->lists.error);
  ASSERT_EQ(vf->lists.lists.size(), 1u);
  EXPECT_EQ(vf->lists.lists[0].offset, 40 + p7.size());
  EXPECT_EQ(vf->lists.lists[0].entries.at(0).data, fill(32, 7));
  // The CertData we extracted is the SignedData openssl made: it verifies over the payload.
  spit(d / "extracted.der", vf->auth->pkcs7);
  r = run(test::openssl() + " cms -verify -binary -inform DER -in " + q(d / "extracted.der") + " -content " +
          q(d / "payload") + " -CAfile " + q(c.pem) + " -out /dev/null");
  EXPECT_EQ(r.status, 0) << r.err;
  // Forcing esl reads the timestamp as a list header: EBADMSG, nothing parsed.
  auto as_esl = parse_variable_file(file, Container::esl);
  ASSERT_TRUE(as_esl.ok());
  ASSERT_TRUE(as_esl->lists.error);
  EXPECT_TRUE(as_esl->lists.lists.empty());
}

TEST(EfiContainer, Auth2HeaderErrors) {
  const EfiTime ts = *EfiTime::parse("2010-03-06 19:17:21");
  const Bytes p7 = fill(10, 0x30), payload = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 0)}});
  auto err = [](const Bytes& f) {
    auto vf = parse_variable_file(f, Container::auth2);
    return vf.ok() ? std::string("ok") : std::string(errno_name(vf.error().code)) + " " + vf.error().message;
  };
  EXPECT_EQ(err(auth2(ts, p7, payload, 0x0100)), "EBADMSG byte offset 20: wRevision 0x0100, not 0x0200");
  EXPECT_EQ(err(auth2(ts, p7, payload, 0x0200, 0x0002)),
            "EBADMSG byte offset 22: wCertificateType 0x0002, not WIN_CERT_TYPE_EFI_GUID 0x0ef1");
  EXPECT_EQ(err(auth2(ts, p7, payload, 0x0200, 0x0ef1, 0xffffffffu)),
            "EBADMSG byte offset 16: dwLength 4294967295 exceeds the 110 bytes after the timestamp");
  EXPECT_EQ(err(auth2(ts, p7, payload, 0x0200, 0x0ef1, 23)),
            "EBADMSG byte offset 16: dwLength 23 is smaller than the 24-byte WIN_CERTIFICATE_UEFI_GUID header");
  EXPECT_EQ(err(Bytes(39, 0)),
            "EBADMSG byte offset 0: EFI_VARIABLE_AUTHENTICATION_2 needs 40 bytes (EFI_TIME + WIN_CERTIFICATE_UEFI_GUID "
            "header), file has 39");
  Bytes wrong_guid = auth2(ts, p7, payload);
  wrong_guid[24] ^= 1;
  EXPECT_EQ(err(wrong_guid),
            "EBADMSG byte offset 24: CertType 4aafd29c-68df-49ee-8aa9-347d375665a7, not EFI_CERT_TYPE_PKCS7_GUID");
  EXPECT_EQ(detect_container(wrong_guid), Container::esl);
  // dwLength exactly to the end: no payload, zero lists, kernel status 0.
  auto vf = parse_variable_file(auth2(ts, p7, {}));
  ASSERT_TRUE(vf.ok());
  EXPECT_TRUE(vf->lists.lists.empty());
  EXPECT_TRUE(vf->lists.status().ok());
}

TEST(EfiContainer, EfivarfsDump) {
  Bytes f;
  put32(f, kAttrNonVolatile | kAttrBootserviceAccess | kAttrRuntimeAccess | kAttrTimeBasedAuthenticatedWriteAccess);
  const Bytes esl = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 9)}});
  append(f, esl);
  EXPECT_EQ(detect_container(f), Container::efivarfs);
  auto vf = parse_variable_file(f);
  ASSERT_TRUE(vf.ok());
  EXPECT_EQ(vf->form, Container::efivarfs);
  EXPECT_EQ(vf->attributes, 0x27u);
  EXPECT_EQ(vf->payload_offset, 4u);
  ASSERT_EQ(vf->lists.lists.size(), 1u);
  EXPECT_EQ(vf->lists.lists[0].offset, 4u);
  EXPECT_EQ(vf->lists.lists[0].entries[0].offset, 32u);
  // Attribute byte with bit 0x80 set: not efivarfs to dbxtool's guess; parsed as bare lists.
  f[0] = 0x80;
  EXPECT_EQ(detect_container(f), Container::esl);
  EXPECT_EQ(detect_container(esl), Container::esl);
  EXPECT_EQ(detect_container({}), Container::esl);
  auto tiny = parse_variable_file(Bytes{1, 0}, Container::efivarfs);
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(tiny.error().message, "byte offset 0: efivarfs file of 2 bytes has no 4-byte attributes");
  EXPECT_EQ(parse_container("auto"), Container::detect);
  EXPECT_EQ(parse_container("auth2"), Container::auth2);
  EXPECT_FALSE(parse_container("auth"));
}

// ---------------------------------------------------------------------------------------
// Writing and merging

TEST(EfiWrite, ListsOfAllThreeTypes) {
  const SizedCert& c = cert_932();
  const Bytes tbs = x509_sha256_data(fill(32, 0x55), *EfiTime::parse("2020-01-01 00:00:00"));
  const std::vector<FlatEntry> in = {
      {guids::cert_sha256, kOwnerA, fill(32, 1)}, {guids::cert_x509, kOwnerA, c.der},
      {guids::cert_sha256, kOwnerB, fill(32, 2)}, {guids::cert_sha256, kOwnerA, fill(32, 3)},
      {guids::cert_x509_sha256, kOwnerB, tbs},    {guids::cert_x509, kOwnerB, c.der},
  };
  const auto lists = group_entries(in);
  ASSERT_EQ(lists.size(), 5u);  // sha256/A [1,3], x509, sha256/B [2], x509_sha256, x509
  Bytes expect = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 1)}, {kOwnerA, fill(32, 3)}});
  append(expect, good_list(guids::cert_x509, {{kOwnerA, c.der}}));
  append(expect, good_list(guids::cert_sha256, {{kOwnerB, fill(32, 2)}}));
  append(expect, good_list(guids::cert_x509_sha256, {{kOwnerB, tbs}}));
  append(expect, good_list(guids::cert_x509, {{kOwnerB, c.der}}));
  const Bytes out = write_lists(lists);
  EXPECT_EQ(out, expect);
  EXPECT_EQ(out.size(), 5 * 28u + 2 * 48 + 948 + 48 + 64 + 948);
  EXPECT_THROW(x509_sha256_data(fill(31, 0), EfiTime{}), std::invalid_argument);
  EXPECT_THROW(group_entries({{guids::cert_sha256, kOwnerA, {}}}), std::invalid_argument);
  SignatureList mixed;
  mixed.type = guids::cert_sha256;
  mixed.entries = {{kOwnerA, fill(32, 0), 0}, {kOwnerA, fill(31, 0), 0}};
  EXPECT_THROW(write_lists({mixed}), std::invalid_argument);
  EXPECT_THROW(write_lists({SignatureList{}}), std::invalid_argument);
}

TEST(EfiWrite, MergeDeduplicates) {
  const SizedCert& c = cert_932();
  Bytes f1 = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 1)}, {kOwnerA, fill(32, 2)}});
  append(f1, good_list(guids::cert_x509, {{kOwnerA, c.der}}));
  Bytes f2 = good_list(guids::cert_sha256, {{kOwnerB, fill(32, 2)}, {kOwnerB, fill(32, 3)}, {kOwnerA, fill(32, 1)}});
  append(f2, good_list(guids::cert_x509, {{kOwnerA, c.der}}));
  // Same data under another type is a different entry.
  append(f2, good_list(guids::cert_x509_sha256, {{kOwnerA, x509_sha256_data(fill(32, 1), EfiTime{})}}));
  append(f2, good_list(kUnknown, {{kOwnerA, fill(32, 1)}}));
  Merge m;
  m.add(parse_signature_lists(f1), "one");
  m.add(parse_signature_lists(f2), "two");
  EXPECT_EQ(m.duplicates, 3u);  // sha256 2 (owner B dropped), sha256 1, x509
  ASSERT_EQ(m.owner_conflicts.size(), 1u);
  EXPECT_EQ(m.owner_conflicts[0],
            "two: list 1 entry 1: EFI_CERT_SHA256 already present with owner 11111111-2222-3333-4444-555555555555; "
            "owner aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee dropped");
  ASSERT_EQ(m.entries.size(), 6u);
  Bytes expect = good_list(guids::cert_sha256, {{kOwnerA, fill(32, 1)}, {kOwnerA, fill(32, 2)}});
  append(expect, good_list(guids::cert_x509, {{kOwnerA, c.der}}));
  append(expect, good_list(guids::cert_sha256, {{kOwnerB, fill(32, 3)}}));
  append(expect, good_list(guids::cert_x509_sha256, {{kOwnerA, x509_sha256_data(fill(32, 1), EfiTime{})}}));
  append(expect, good_list(kUnknown, {{kOwnerA, fill(32, 1)}}));
  EXPECT_EQ(m.serialize(), expect);
  // Merging the result with itself changes nothing.
  Merge again;
  again.add(parse_signature_lists(expect), "a");
  again.add(parse_signature_lists(expect), "b");
  EXPECT_EQ(again.duplicates, 6u);
  EXPECT_TRUE(again.owner_conflicts.empty());
  EXPECT_EQ(again.serialize(), expect);
}
