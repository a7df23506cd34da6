// modsign — read_kernel_build(), read_kernel_config(), kernel_profile_of() and
// kernel_config_warnings() (include/modsign/kernel_config.hpp); the rules are
// module/kernel_config.cpp.
#include "modsign/kernel_config.hpp"

#include <filesystem>

#include "common/file.hpp"
#include "modsign/result.hpp"
#include "modsign/sign.hpp"
#include "module/kernel_config.hpp"

namespace modsign {

std::string KernelConfig::value(std::string_view name) const {
  const auto it = symbols.find(module::config_key(name));
  return it == symbols.end() ? std::string() : it->second;
}

void KernelConfig::set(std::string_view name, std::string_view text) {
  module::add_assignment(*this, name, text, 0, false);
}

namespace {
constexpr std::uint64_t kMaxConfig = std::uint64_t{16} << 20;

std::string text_of(const std::string& file) {
  const Bytes b = read_file(file, kMaxConfig);
  return std::string(b.begin(), b.end());
}
}  // namespace

KernelConfig read_kernel_config(const std::string& file) {
  KernelConfig c;
  c.source = file;
  module::parse_config_text(text_of(file), c);
  if (c.symbols.empty()) throw InputError(file + ": no CONFIG_ symbol (not a kernel configuration)");
  return c;
}

KernelConfig read_kernel_build(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string file = dir + "/.config";
  if (!fs::is_regular_file(file, ec)) file = dir + "/include/config/auto.conf";
  if (!fs::is_regular_file(file, ec))
    throw IoError(dir + ": no .config or include/config/auto.conf (not a kernel build tree)");
  KernelConfig c = read_kernel_config(file);
  c.build_dir = dir;
  std::string v;
  if (fs::is_regular_file(dir + "/Makefile", ec)) v = module::version_from_makefile(text_of(dir + "/Makefile"));
  if (v.empty() && fs::is_regular_file(dir + "/include/config/kernel.release", ec))
    v = module::version_from_release(text_of(dir + "/include/config/kernel.release"));
  if (!v.empty()) c.version = v;
  module::resolve_signing_key(dir, c);
  return c;
}

void check_kernel_config_hash(const KernelConfig& config) {
  if (config.sig_hash.empty()) return;
  SignOptions o;
  o.hash = config.sig_hash;
  try {
    check_sign_options(o);
  } catch (const SignError& e) {
    if (e.reason() != SignRefusal::unknown_hash) throw;
    throw InputError(
        config.source + ":" + std::to_string(config.sig_hash_line) + ": CONFIG_MODULE_SIG_HASH=\"" + config.sig_hash +
        "\" is not a digest modsign signs with (sha1|sha224|sha256|sha384|sha512|sha3-256|sha3-384|sha3-512)");
  }
}

KernelProfile kernel_profile_of(const KernelConfig& config) {
  KernelProfile p = *KernelProfile::parse(module::generation_of(config));
  if (p.name() == "v7.0")
    p.set_waive_mldsa_authattrs(module::is_set_y(config, "PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA"));
  p.set_enforce(module::is_set_y(config, "MODULE_SIG_FORCE"));
  p.set_module_decompress(module::module_decompress_of(config));
  p.set_absent_sig_algos(module::absent_sig_algos_of(config));
  p.set_absent_hashes(module::absent_hashes_of(config));
  p.set_byte_order(module::is_set_y(config, "CPU_BIG_ENDIAN") ? ByteOrder::big : ByteOrder::little);
  p.set_machine(module::machine_of(config).value_or(Machine::x86_64));
  return p;
}

Status module_sig_modelled(const KernelConfig& config) { return module::module_sig_modelled(config); }

std::vector<std::string> kernel_config_warnings(const KernelConfig& config, std::string_view what,
                                                std::string_view algorithm, std::string_view hash, bool signed_attrs) {
  return module::signature_warnings(config, what, algorithm, hash, signed_attrs);
}

}  // namespace modsign
