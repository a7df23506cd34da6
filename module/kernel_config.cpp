// mirrors scripts/kconfig/confdata.c conf_set_sym_val (how a .config line is read), scripts/Makefile.modinst cmd_sign,
// certs/Makefile signing_key.x509, kernel/module/Kconfig MODULE_SIG, MODULE_SIG_HASH and the key-type symbols,
// Linux 7.2.13
#include "module/kernel_config.hpp"

#include <cctype>
#include <charconv>
#include <optional>

namespace modsign::module {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

/// The "7.2" of a text starting with "7.2" (digits '.' digits); "" otherwise.
std::string major_minor(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0 || i >= s.size() || s[i] != '.') return "";
  std::size_t j = i + 1;
  while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  return j == i + 1 ? "" : std::string(s.substr(0, j));
}

/// What a missing signature algorithm does (public_key_verify_signature's crypto_alloc_sig
/// finds none: ENOENT; pkcs7_validate_trust_one turns it into EKEYREJECTED, and
/// x509_check_for_self_signed keeps a self-signed certificate of that type out of the keyring).
constexpr const char* kNoSigAlgo =
    " (crypto_alloc_sig fails with ENOENT: a trusted key of this type refuses the module, EKEYREJECTED, and a "
    "self-signed certificate of this type is not loaded, ENOKEY)";

const std::vector<KernelConfig::Assignment>* assignments_of(const KernelConfig& c, std::string_view name) {
  const std::string key = config_key(name);
  const auto it = c.assignments.find(key);
  return it == c.assignments.end() ? nullptr : &it->second;
}

/// conf_set_sym_val's S_STRING reading of one assignment: a quoted text up to its closing
/// quote, backslash escapes undone ("\"sha512\" # note" is sha512); nullopt for an unquoted
/// text (ignored) or one without a closing quote ("invalid string found").
std::optional<std::string> string_assignment(std::string_view t) {
  if (t.empty() || t.front() != '"') return std::nullopt;
  std::string out;
  for (std::size_t i = 1; i < t.size(); ++i) {
    if (t[i] == '"') return out;
    if (t[i] == '\\' && ++i == t.size()) break;  // the escaped character is taken as it is
    out += t[i];
  }
  return std::nullopt;
}

/// The last assignment of `name` that kconfig takes for a string symbol; "" when none.
std::string string_of(const KernelConfig& c, std::string_view name, std::size_t* line = nullptr) {
  if (const auto* as = assignments_of(c, name))
    for (auto it = as->rbegin(); it != as->rend(); ++it)
      if (auto v = string_assignment(it->text)) {
        if (line) *line = it->line;
        return *v;
      }
  return "";
}

/// CONFIG_<name> read as a bool or tristate: the first character of the last assignment
/// that starts with y, m or n: "y", "m", or "" for n and when none does (not set).  The
/// symbols modsign reads are tristate when named CRYPTO_* and bool otherwise (their Kconfig
/// entries); for a bool an 'm' is no valid value (conf_set_sym_val), so it assigns nothing.
std::string tristate_of(const KernelConfig& c, std::string_view name) {
  const bool is_bool = !name.starts_with("CRYPTO_") && !name.starts_with("CONFIG_CRYPTO_");
  if (const auto* as = assignments_of(c, name))
    for (auto it = as->rbegin(); it != as->rend(); ++it)
      if (!it->text.empty() && (it->text[0] == 'y' || (it->text[0] == 'm' && !is_bool) || it->text[0] == 'n'))
        return it->text[0] == 'n' ? std::string() : std::string(1, it->text[0]);
  return "";
}

/// An assignment as `symbols` shows it: a string's text, a bool's or tristate's character,
/// anything else (an int, a hex) trimmed.
std::string display_value(std::string_view text) {
  if (auto v = string_assignment(text)) return *v;
  const std::string_view t = trim(text);
  if (!t.empty() && (t.front() == 'y' || t.front() == 'm' || t.front() == 'n')) return std::string(1, t.front());
  return std::string(t);
}

/// "needs CONFIG_X=y, which is not set" or "needs CONFIG_X=y, not =m".
std::string needs(const KernelConfig& c, const std::string& symbol) {
  const std::string v = tristate_of(c, symbol);
  return "needs " + symbol + "=y, " + (v.empty() ? std::string("which is not set") : "not =" + v);
}

/// The crypto symbol that provides `hash` (crypto/Kconfig: CRYPTO_SHA256 covers sha224,
/// CRYPTO_SHA512 sha384, CRYPTO_SHA3 every sha3-*); "" for a name it does not know.
std::string hash_symbol(std::string_view hash) {
  if (hash == "sha1") return "CONFIG_CRYPTO_SHA1";
  if (hash == "sha224" || hash == "sha256") return "CONFIG_CRYPTO_SHA256";
  if (hash == "sha384" || hash == "sha512") return "CONFIG_CRYPTO_SHA512";
  if (hash.starts_with("sha3-")) return "CONFIG_CRYPTO_SHA3";
  return "";
}

enum class KeyFamily { rsa, ecdsa, mldsa, other };
KeyFamily family(std::string_view algorithm) {
  if (algorithm.starts_with("ML-DSA") || algorithm.starts_with("mldsa")) return KeyFamily::mldsa;
  if (algorithm.starts_with("ECDSA") || algorithm.starts_with("ecdsa")) return KeyFamily::ecdsa;
  if (algorithm == "RSA" || algorithm == "rsa") return KeyFamily::rsa;
  return KeyFamily::other;
}

}  // namespace

bool is_set_y(const KernelConfig& c, std::string_view name) { return tristate_of(c, name) == "y"; }

std::string config_key(std::string_view name) {
  return name.starts_with("CONFIG_") ? std::string(name) : "CONFIG_" + std::string(name);
}

void add_assignment(KernelConfig& c, std::string_view name, std::string_view text, std::size_t line, bool not_set) {
  const std::string key = config_key(name);
  if (not_set) c.symbols.erase(key);
  else c.symbols[key] = display_value(text);
  c.assignments[key].push_back({line, std::string(text)});
}

// conf_read_simple(): a line is split at '\n' alone (a '\r' stays in it); "# CONFIG_X is
// not set" assigns "n"; any other line must start with "CONFIG_" and hold a '=' (the name
// is what lies between, spaces included), else kconfig skips it ("unexpected data").
void parse_config_text(std::string_view text, KernelConfig& c) {
  constexpr std::string_view kNotSet = " is not set", kPrefix = "CONFIG_";
  for (std::size_t line_no = 1; !text.empty(); ++line_no) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    constexpr std::string_view kHeader = "# Linux/";
    if (line.starts_with(kHeader) && c.version.empty()) {
      const std::size_t sp = line.find(' ', kHeader.size());
      if (sp != std::string_view::npos) c.version = major_minor(trim(line.substr(sp + 1)));
      continue;
    }
    if (line.starts_with("# CONFIG_")) {
      const std::string_view rest = line.substr(2);
      const std::size_t sp = rest.find(' ');
      if (sp == std::string_view::npos || rest.substr(sp) != kNotSet) continue;
      add_assignment(c, rest.substr(0, sp), "n", line_no, true);
    } else {
      const std::size_t eq = line.find('=');
      if (!line.starts_with(kPrefix) || eq == std::string_view::npos) continue;
      add_assignment(c, line.substr(0, eq), line.substr(eq + 1), line_no, false);
    }
  }
  c.sig_hash = string_of(c, "MODULE_SIG_HASH", &c.sig_hash_line);
}

std::string version_from_makefile(std::string_view mk) {
  std::string version, patchlevel;
  while (!mk.empty()) {
    const std::size_t nl = mk.find('\n');
    const std::string_view line = mk.substr(0, nl);
    mk = nl == std::string_view::npos ? std::string_view() : mk.substr(nl + 1);
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = trim(line.substr(0, eq)), val = trim(line.substr(eq + 1));
    if (key == "VERSION" && version.empty()) version = std::string(val);
    if (key == "PATCHLEVEL" && patchlevel.empty()) patchlevel = std::string(val);
  }
  if (version.empty() || patchlevel.empty()) return "";
  return major_minor(version + "." + patchlevel);
}

std::string version_from_release(std::string_view release) { return major_minor(trim(release)); }

void resolve_signing_key(const std::string& dir, KernelConfig& c) {
  // certs/Kconfig: MODULE_SIG_KEY defaults to "certs/signing_key.pem"; Makefile.modinst
  // passes a pkcs11: URI unchanged and prefixes a relative path with $(objtree).
  std::string key = string_of(c, "MODULE_SIG_KEY");
  if (key.empty()) key = "certs/signing_key.pem";
  if (key.starts_with("pkcs11:") || key.starts_with("/")) c.sig_key = key;
  else c.sig_key = dir + "/" + key;
  c.sig_cert = dir + "/certs/signing_key.x509";
}

std::string module_decompress_of(const KernelConfig& config) {
  if (!is_set_y(config, "MODULE_DECOMPRESS")) return "none";
  for (const char* f : {"gzip", "xz", "zstd"}) {
    std::string sym = std::string("MODULE_COMPRESS_") + f;
    for (auto& ch : sym) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (is_set_y(config, sym)) return f;
  }
  return "";
}

std::vector<std::string> absent_sig_algos_of(const KernelConfig& c) {
  std::vector<std::string> out;
  if (!is_set_y(c, "CRYPTO_RSA")) out.emplace_back("rsa");
  if (!is_set_y(c, "CRYPTO_ECDSA")) out.emplace_back("ecdsa");
  if (generation_of(c) == "v7.0" && !is_set_y(c, "CRYPTO_MLDSA")) out.emplace_back("mldsa");
  return out;
}

std::vector<std::string> absent_hashes_of(const KernelConfig& c) {
  auto built = [&](std::string_view name) { return tristate_of(c, name) == "y" || tristate_of(c, name) == "m"; };
  std::vector<std::string> out;
  // The "sm3" shash: CRYPTO_SM3 on 7.x; on 6.x CRYPTO_SM3 is the library alone, and the hash
  // is CRYPTO_SM3_GENERIC or an architecture's driver (hostile review).
  const bool sm3 = generation_of(c) == "v7.0" ? built("CRYPTO_SM3")
                                              : built("CRYPTO_SM3_GENERIC") || built("CRYPTO_SM3_AVX_X86_64") ||
                                                    built("CRYPTO_SM3_NEON") || built("CRYPTO_SM3_ARM64_CE");
  if (!sm3) out.emplace_back("sm3");
  if (!built("CRYPTO_STREEBOG")) out.emplace_back("streebog");
  return out;
}

std::optional<Machine> machine_of(const KernelConfig& c) {
  std::optional<Machine> found;
  for (const auto& [symbol, machine] :
       {std::pair{"S390", Machine::s390x}, std::pair{"ARM64", Machine::arm64}, std::pair{"X86_64", Machine::x86_64}}) {
    if (!is_set_y(c, symbol)) continue;
    if (found) return std::nullopt;  // no kernel is built for two
    found = machine;
  }
  return found;
}

Status module_sig_modelled(const KernelConfig& c) {
  if (is_set_y(c, "MODULE_SIG")) return ok_status();
  return make_error(KErr::eopnotsupp,
                    c.source +
                        ": CONFIG_MODULE_SIG is not set: this kernel checks no module signature and loads "
                        "every module untainted (not modelled)",
                    Error::Reason::unpredictable);
}

std::string generation_of(const KernelConfig& c) {
  if (c.version.empty()) return "v7.0";
  const std::size_t dot = c.version.find('.');
  int major = 0, minor = 0;
  std::from_chars(c.version.data(), c.version.data() + dot, major);
  std::from_chars(c.version.data() + dot + 1, c.version.data() + c.version.size(), minor);
  if (major >= 7) return "v7.0";
  if (major == 6 && minor >= 7) return "v6";
  return "v6.1";
}

std::vector<std::string> signature_warnings(const KernelConfig& c, std::string_view what, std::string_view algorithm,
                                            std::string_view hash, bool signed_attrs) {
  std::vector<std::string> w;
  const std::string head = "warning: " + c.source + ": " + std::string(what) + ": ";
  if (!is_set_y(c, "MODULE_SIG")) {
    w.push_back(head + "CONFIG_MODULE_SIG is not set: this kernel checks no module signature");
    return w;
  }
  const std::string hs = hash_symbol(hash);
  const std::string hv = hs.empty() ? "" : tristate_of(c, hs);
  if (!hs.empty() && hv.empty())
    w.push_back(head + std::string(hash) + " needs " + hs + "=y, which is not set (the kernel refuses it: ENOPKG)");
  else if (!hs.empty() && hv != "y")
    w.push_back(head + std::string(hash) + " needs " + hs + "=y, not =" + hv +
                " (the digest must be built in to check module signatures)");
  if (hash == "sha1" && !is_set_y(c, "MODULE_SIG_SHA1"))
    w.push_back(head +
                "sha1 is no module-signing choice of this kernel (CONFIG_MODULE_SIG_SHA1 is not set; "
                "Linux 7.x removed it)");
  const bool v7 = generation_of(c) == "v7.0";
  switch (family(algorithm)) {
    case KeyFamily::rsa:
      if (!is_set_y(c, "CRYPTO_RSA")) w.push_back(head + "RSA " + needs(c, "CONFIG_CRYPTO_RSA") + kNoSigAlgo);
      break;
    case KeyFamily::ecdsa:
      if (!is_set_y(c, "CRYPTO_ECDSA")) w.push_back(head + "ECDSA " + needs(c, "CONFIG_CRYPTO_ECDSA") + kNoSigAlgo);
      break;
    case KeyFamily::mldsa:
      if (!v7) {
        w.push_back(head + "Linux " + c.version + " knows no ML-DSA (added in 7.0; the kernel refuses it: ENOPKG)");
        break;
      }
      if (!is_set_y(c, "CRYPTO_MLDSA")) w.push_back(head + "ML-DSA " + needs(c, "CONFIG_CRYPTO_MLDSA") + kNoSigAlgo);
      if (signed_attrs && !is_set_y(c, "PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA"))
        w.push_back(head +
                    "ML-DSA with signedAttrs is refused (EKEYREJECTED) without "
                    "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y");
      break;
    case KeyFamily::other: break;
  }
  return w;
}

}  // namespace modsign::module
