// mirrors certs/blacklist.c blacklist_vet_description, get_raw_hash, mark_raw_hash_blacklisted, mark_hash_blacklisted,
// is_hash_blacklisted, is_binary_blacklisted, load_revocation_certificate_list, Linux 7.2.13 modsign — blacklist key
// descriptions ("tbs:<hex>", "bin:<hex>") and the kernel's lookups on the .blacklist keyring (certs/blacklist.c,
// Linux 7.2.13). is_key_on_revocation_list() (certs/blacklist.c:289-299) is applied where the kernel calls it, in
// cms::verify_with() (cms/system_keyring.cpp): the cms/ layer cannot depend on blacklist/.
#pragma once

#include <string>
#include <string_view>

#include "blacklist/sources.hpp"
#include "cms/kernel_model.hpp"
#include "common/result.hpp"

namespace modsign::blacklist {

/// enum blacklist_hash_type (include/keys/system_keyring.h).
enum class HashType {
  x509_tbs,  ///< BLACKLIST_HASH_X509_TBS: "tbs:" prefix
  binary,    ///< BLACKLIST_HASH_BINARY: "bin:" prefix
};

/// Longest hash part the kernel accepts: MAX_HASH_LEN, 128 hex characters (certs/blacklist.c:28).
constexpr std::size_t kMaxHashHexLen = 128;

/// blacklist_vet_description() (certs/blacklist.c:47-85), the key type's check of every
/// description handed to key_create() (builtin list, dbx, keyctl).  The description is a
/// C string: it ends at the first NUL byte, if any.  In the kernel's order:
///  1. a prefix of exactly "tbs" or "bin" (case-sensitive) followed by ':'; no colon, a
///     colon at another position, or another prefix -> EINVAL;
///  2. the first 128 characters after the colon must each be 0-9 or a-f (isxdigit and not
///     isupper) -> else EINVAL (a bad character among the first 128 wins over length);
///  3. anything after those 128 characters -> ENOPKG ("the hash is greater than
///     MAX_HASH_LEN"), whatever it is;
///  4. zero or an odd number of hex characters -> EINVAL.
/// No check ties the length to a hash algorithm.  The error message names the rule.
Status vet_description(std::string_view description);

/// get_raw_hash() (certs/blacklist.c:147-177): "tbs:" or "bin:" then lower-case hex of
/// every byte of `hash` (any length, also 0: "bin:").
std::string raw_hash(ByteView hash, HashType type);

/// is_hash_blacklisted() (certs/blacklist.c:225-244): KErr::ekeyrejected when the
/// description raw_hash(hash, type) is in `keyring`, KErr::none otherwise.  The lookup
/// (keyring_search) does not vet the string, so a 0-length hash ("bin:") or one longer
/// than 64 bytes is simply never found.
KErr is_hash_blacklisted(const cms::Blacklist& keyring, ByteView hash, HashType type);

/// is_binary_blacklisted() (certs/blacklist.c:247-254): KErr::eperm when "bin:<hex>" is in
/// `keyring`, KErr::none otherwise (ima_check_blacklist's return value).
KErr is_binary_blacklisted(const cms::Blacklist& keyring, ByteView hash);

/// mark_hash_blacklisted() (certs/blacklist.c:205-217) into `sources`: builds
/// raw_hash(hash, type), vets it as key_create() does (EINVAL for a 0-length hash, ENOPKG
/// above 64 bytes) and adds it.  Returns true if the key is new, false if it was already
/// present (the kernel's -EEXIST "Duplicate blacklisted hash"; the origin is recorded).
Result<bool> mark_hash_blacklisted(Sources& sources, ByteView hash, HashType type, Origin origin);

/// The same for a description string (mark_raw_hash_blacklisted, certs/blacklist.c:183-203,
/// as blacklist_init() calls it for the CONFIG_SYSTEM_BLACKLIST_HASH_LIST strings).
Result<bool> mark_raw_hash_blacklisted(Sources& sources, const std::string& description, Origin origin);

/// load_revocation_certificate_list() (certs/blacklist.c, CONFIG_SYSTEM_REVOCATION_KEYS, at
/// late_initcall, after blacklist_init's hash list): every certificate of `file` (PEM or
/// DER, crypto::Certificate::load_all) goes into the .blacklist keyring with Origin{file,
/// "certificate N"} (N from 1), unless x509_key_preparse would refuse it, which leaves a
/// note in sources.notes instead: "<file> certificate N is not loaded by a <profile>
/// kernel (<ERRNO>: <reason>)" when x509_cert_parse cannot parse it (x509_supported), or
/// "<file> certificate N is not loaded: its tbs:<hex> is listed (x509_key_preparse:
/// EKEYREJECTED)" when its tbs: key is already in `sources` (x509_get_sig_params).
/// Errors: load_all's (EBADMSG for no or a malformed certificate; message without the
/// file name).  Throws IoError if unreadable.
Status load_revocation_certificates(Sources& sources, const std::string& file, const cms::KernelModel& profile);

}  // namespace modsign::blacklist
