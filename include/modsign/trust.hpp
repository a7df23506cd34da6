// modsign — the keys a kernel trusts and distrusts for module signatures: the
// .builtin_trusted_keys/.secondary_trusted_keys certificates and the .blacklist keyring
// (bin:/tbs: hashes and revoked certificates), loaded in the kernel's order.
// Mirrors certs/system_keyring.c (load_system_certificate_list), certs/blacklist.c
// (blacklist_init, load_revocation_certificate_list) and
// security/integrity/platform_certs/load_uefi.c (load_uefi_certs), Linux 7.2.13.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "modsign/export.hpp"
#include "modsign/profile.hpp"
#include "modsign/result.hpp"

namespace modsign {

/// The files a TrustStore is loaded from (each list may be empty).
struct TrustSources {
  /// Trusted certificates: PEM files (every CERTIFICATE block; other blocks are skipped),
  /// DER certificate files, or directories (each regular file, sorted by name, not
  /// recursive).  `modsign verify --keyring/--cert`.  In a directory, an entry that is
  /// not a certificate file (FIFO, socket, device, subdirectory, dangling or looping
  /// symbolic link, an empty file or one holding neither DER nor a PEM CERTIFICATE
  /// block) is skipped, as the kernel's loaders skip what they cannot parse, with the
  /// note "<dir>/<entry>: skipped: <why> (not a certificate)"; see `strict`.  A keyring
  /// file (given, or in a directory) whose certificate has a public key type the kernel
  /// cannot parse (Ed25519, Ed448, DSA ...: ENOPKG) is skipped too, as
  /// x509_load_certificate_list() goes on after "Problem loading in-kernel X.509
  /// certificate", with the note "<file>: skipped: PEM block 1: certificate: unsupported
  /// public key algorithm 1.3.101.112 (a key type the kernel cannot load)" (the whole file:
  /// a bundle's other certificates in it are skipped with it).
  std::vector<std::string> keyrings;
  /// CONFIG_SYSTEM_BLACKLIST_HASH_LIST files ("bin:<hex>", "tbs:<hex>" strings, comma
  /// separated); each must pass `modsign blacklist lint`.  `--blacklist`.
  std::vector<std::string> blacklists;
  /// CONFIG_SYSTEM_REVOCATION_KEYS certificate files (PEM or DER).  `--revoked`.
  std::vector<std::string> revoked;
  /// EFI dbx or MokListXRT contents: a bare EFI_SIGNATURE_LIST sequence, an efivarfs copy
  /// (4-byte attributes first) or a time-based authenticated (auth-2) payload.  `--dbx`.
  std::vector<std::string> dbx;
  /// Refuse, instead of skipping, a keyring directory entry that is not a certificate
  /// file: InputError "<dir>/<entry>: <why> (not a certificate)".  A file that claims to
  /// be a certificate (DER, or a PEM CERTIFICATE block) but does not parse is an error
  /// either way.  A certificate of a key type the kernel cannot load is refused too:
  /// InputError "<file>: <reason> (a key type the kernel cannot load)".  `--strict`.
  bool strict = false;
};

/// Where a .blacklist key came from: `file` as given in TrustSources, `where` inside it
/// ("line 3" for a hash list, "certificate 1" for a revoked file, "list 2 entry 5
/// (EFI_CERT_SHA256)" for an EFI signature list; positions count from 1).
struct TrustOrigin {
  std::string file;
  std::string where;
};

/// A certificate in the .blacklist keyring (is_key_on_revocation_list), DER encoded.
struct RevokedCertificate {
  Bytes der;
  TrustOrigin origin;
};

/// The certificates the kernel trusts for module signatures and its .blacklist keyring.
/// Immutable once loaded; copies share the loaded data.
class MODSIGN_API TrustStore {
 public:
  /// Load `sources` as the kernel of `profile` loads them:
  ///  1. every keyring file, in order (a directory's non-certificate entries skipped
  ///     with a note, or refused under TrustSources::strict).  A certificate the profile's kernel cannot parse
  ///     (x509_cert_parse: ML-DSA before 7.0, SHA-3 signatures before 6.7: ENOPKG) stays
  ///     in the store, as a keyring without it gives the same verdicts, with the note
  ///     "<file> certificate <n> is not loaded by a <profile> kernel (<ERRNO>: <reason>)"
  ///     (n counts from 1 within that keyrings entry, also across a directory's files);
  ///  2. the hash lists (blacklist_init at device_initcall), duplicates kept once;
  ///  3. the revoked certificates (CONFIG_SYSTEM_REVOCATION_KEYS, late_initcall).  One the
  ///     kernel would refuse is left out with a note: "<file> certificate <n> is not loaded
  ///     by a <profile> kernel (<ERRNO>: <reason>)" (x509_cert_parse) or "<file>
  ///     certificate <n> is not loaded: its tbs:<hex> is listed (x509_key_preparse:
  ///     EKEYREJECTED)";
  ///  4. the dbx/MokListXRT files (load_uefi_certs, get_handler_for_dbx), with the notes of
  ///     blacklist/keyring_handler ("<file> list 1 entry 1 (EFI_CERT_X509) is not loaded
  ///     by a v6 kernel (ENOPKG: ...)", never-matching tbs: entries, ...).
  /// Throws IoError when a file or directory cannot be read; InputError for bad content:
  ///   keyrings  "<file>: <reason>" (no certificate, malformed certificate; under strict,
  ///             "<dir>/<entry>: <why> (not a certificate)");
  ///   blacklists "<file>:<line>:<column>: <problem> (awk: ...) (run modsign blacklist lint)";
  ///   revoked   "<file>: <reason>";
  ///   dbx       "<file>: EBADMSG: <reason>" (a container or EFI_SIGNATURE_LIST error).
  static TrustStore load(const TrustSources& sources, const KernelProfile& profile);
  /// The same.  When it throws, `*keyring_notes_before_failure` (if given) holds the notes
  /// of step 1 gathered before the failure (the CLI prints them before the error, as it
  /// did when it loaded the files itself); it is left empty on success.
  static TrustStore load(const TrustSources& sources, const KernelProfile& profile,
                         std::vector<std::string>* keyring_notes_before_failure);

  /// Shorthand: only keyring files (TrustSources{paths}), but notes() are worded
  /// "<file> certificate <n>: <ERRNO>: <reason>".  Same errors as load().
  static TrustStore from_certificates(const std::vector<std::string>& paths, const KernelProfile& profile);

  /// Number of keyring certificates loaded (also those the profile's kernel cannot parse).
  std::size_t size() const;
  /// Every note, keyring notes first, then the .blacklist notes (load order), without
  /// the CLI's "modsign: note: " prefix.
  const std::vector<std::string>& notes() const;
  /// The notes of step 1 only (keyring certificates the profile's kernel cannot parse).
  const std::vector<std::string>& keyring_notes() const;
  /// The notes of steps 2-4 only (the .blacklist keyring).
  const std::vector<std::string>& blacklist_notes() const;

  /// The profile the store was loaded for.
  const KernelProfile& profile() const;
  /// DER of every keyring certificate, in load order.
  std::vector<Bytes> certificates() const;
  /// DER of the keyring certificates the profile's kernel can parse (x509_cert_parse),
  /// in load order: those it would put in the keyring unless a tbs: key lists them.
  std::vector<Bytes> supported_certificates() const;
  /// The bin:/tbs: keys of the .blacklist keyring (sorted, each once).
  std::vector<std::string> blacklist_descriptions() const;
  /// Every origin of a .blacklist key, in load order (empty for an unknown key).
  std::vector<TrustOrigin> origins(const std::string& description) const;
  /// The revoked certificates of the .blacklist keyring (--revoked, then dbx EFI_CERT_X509),
  /// in load order.
  std::vector<RevokedCertificate> revoked_certificates() const;

  TrustStore(const TrustStore&);
  TrustStore& operator=(const TrustStore&);
  ~TrustStore();

  /// The library's side of the handle (opaque to callers).
  struct Impl;

 private:
  friend struct detail::Access;
  explicit TrustStore(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace modsign
