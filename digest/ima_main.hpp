// mirrors security/integrity/ima/ima_main.c hash_setup(), Linux 7.2.13
#pragma once

#include <string_view>

#include "cms/kernel.hpp"
#include "crypto/crypto.hpp"

namespace modsign::digest {

/// The hash IMA uses for files under `profile` when booted with ima_hash=`name`:
/// hash_setup() matches the name against hash_algo_name[] (md5, sha1, sha224, sha256,
/// sha384, sha512, sha3-256/384/512; any case here).  Linux 6.1-6.6 (profile "v6.1",
/// legacy_digests) have no SHA-3 entries in hash_algo_name[] (they came with SHA-3 module
/// signing in 6.7), so hash_setup() refuses ima_hash=sha3-* there and IMA keeps its default.
/// Throws UsageError "unsupported --ima-hash 'X' (md5|sha1|sha224|sha256|sha384|sha512|
/// sha3-256|sha3-384|sha3-512)" for a name that is no such hash, and "--ima-hash sha3-256
/// does not exist under --kernel v6.1: Linux 6.1-6.6 have no SHA-3 in hash_algo_name[], so
/// ima_hash=sha3-256 is refused and IMA keeps its default" for SHA-3 under v6.1.
crypto::HashAlgo ima_hash_setup(std::string_view name, const cms::KernelModel& profile);

}  // namespace modsign::digest
