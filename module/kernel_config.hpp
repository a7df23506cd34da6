// mirrors scripts/kconfig/confdata.c conf_set_sym_val (how a .config line is read), scripts/Makefile.modinst cmd_sign,
// certs/Makefile signing_key.x509, kernel/module/Kconfig MODULE_SIG, MODULE_SIG_HASH and the key-type symbols,
// Linux 7.2.13 modsign — what a kernel's configuration says about signing its modules and checking their signatures
// (the plain data is modsign::KernelConfig, include/modsign/kernel_config.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "modsign/kernel_config.hpp"
#include "modsign/machine.hpp"

namespace modsign::module {

using KernelConfig = modsign::KernelConfig;

/// The symbols of a .config / auto.conf text: "CONFIG_X=value" lines (a "..." value
/// unquoted with \" and \\ undone; an unquoted value starting with y, m or n is that one
/// character, as kconfig reads a bool or tristate: "y # note" is y); comments, "# CONFIG_X is not set" and blank lines
/// skipped.  Sets config.symbols, sig_hash, and version from the generated header line
/// "# Linux/<arch> <release> Kernel Configuration" when found; sig_hash_line the line
/// (from 1) of CONFIG_MODULE_SIG_HASH.
void parse_config_text(std::string_view text, KernelConfig& config);
/// "7.2" from a Makefile's "VERSION = 7" and "PATCHLEVEL = 2" lines; "" without both.
std::string version_from_makefile(std::string_view makefile);
/// "7.2" from a release string "7.2.13+deb14-amd64" (include/config/kernel.release); "".
std::string version_from_release(std::string_view release);
/// sig_key and sig_cert for the tree `dir`, as scripts/Makefile.modinst and certs/Makefile
/// resolve CONFIG_MODULE_SIG_KEY.
void resolve_signing_key(const std::string& dir, KernelConfig& config);
/// The in-kernel module decompressor of `config` (kernel/module/Kconfig): "none" without
/// CONFIG_MODULE_DECOMPRESS=y, else the format of CONFIG_MODULE_COMPRESS_GZIP/_XZ/_ZSTD
/// ("gzip", "xz", "zstd"; decompress.c builds only that one), "" when none is set.
std::string module_decompress_of(const KernelConfig& config);
/// The signature algorithm families the kernel of `config` cannot check with
/// (KernelProfile::absent_sig_algos): "rsa" without CONFIG_CRYPTO_RSA=y, "ecdsa" without
/// CONFIG_CRYPTO_ECDSA=y, "mldsa" without CONFIG_CRYPTO_MLDSA=y on 7.x (6.x has none, by
/// generation).  =m counts as absent: the certificates built into the kernel are parsed
/// at boot, before any module could provide the algorithm, and the key types of
/// certs/Kconfig select their algorithm =y.
std::vector<std::string> absent_sig_algos_of(const KernelConfig& config);
/// The digest families the kernel of `config` cannot compute (KernelProfile::
/// absent_hashes): "sm3" without CONFIG_CRYPTO_SM3 (6.x: CONFIG_CRYPTO_SM3_GENERIC or an
/// architecture's SM3 driver; 6.x's CONFIG_CRYPTO_SM3 is the library alone) =y or =m, "streebog" without
/// CONFIG_CRYPTO_STREEBOG =y or =m.  =m counts as present: a module signature is checked after boot, and
/// crypto_alloc_shash() loads the module on demand.
std::vector<std::string> absent_hashes_of(const KernelConfig& config);
/// Whether CONFIG_<name> is y (a bool or tristate built in): its last assignment that
/// starts with y, m or n (for a bool, y or n: CRYPTO_* are the tristates) starts with y
/// (KernelConfig::assignments).
bool is_set_y(const KernelConfig& config, std::string_view name);

/// "CONFIG_<name>", or `name` itself when it already starts with "CONFIG_": the key of
/// KernelConfig::symbols and KernelConfig::assignments.
std::string config_key(std::string_view name);
/// One assignment of CONFIG_<name> (with or without the prefix) at `line`: appended to
/// config.assignments, and config.symbols updated (taken out for a "# CONFIG_X is not set"
/// line, `not_set`; its text is "n").
void add_assignment(KernelConfig& config, std::string_view name, std::string_view text, std::size_t line, bool not_set);
/// The machine `config` builds for (arch/Kconfig's per-architecture symbols): s390x for
/// CONFIG_S390=y, arm64 for CONFIG_ARM64=y, x86_64 for CONFIG_X86_64=y; nullopt for any
/// other architecture, a configuration that names none, or one that names several.
std::optional<Machine> machine_of(const KernelConfig& config);
/// module_sig_modelled() (include/modsign/kernel_config.hpp): CONFIG_MODULE_SIG.
Status module_sig_modelled(const KernelConfig& config);
/// "v6.1", "v6" or "v7.0" for config.version (see kernel_profile_of()).
std::string generation_of(const KernelConfig& config);
/// kernel_config_warnings() (include/modsign/kernel_config.hpp).
std::vector<std::string> signature_warnings(const KernelConfig& config, std::string_view what,
                                            std::string_view algorithm, std::string_view hash, bool signed_attrs);

}  // namespace modsign::module
