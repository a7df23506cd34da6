// modsign's own: PKCS#11 token keys through pkcs11-provider in a library context of their
// own, OSSL_STORE_open_ex on the RFC 7512 URI (crypto/pkcs11_store.hpp).
#include "crypto/pkcs11_store.hpp"

#include <dlfcn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/store.h>
#include <openssl/ui.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <utility>

namespace modsign::crypto::pkcs11 {

/// The name of a return value that C_OpenSession or C_Login can give (PKCS #11 v3.0,
/// section 5 and pkcs11t.h's CKR_ values), "CKR_USER_PIN_NOT_INITIALIZED, 0x102", or
/// "CKR 0x..." for another.
std::string ckr_text(unsigned long rv) {
  static constexpr std::pair<unsigned long, const char*> kNames[] = {
      {0x001, "CKR_CANCEL"},
      {0x002, "CKR_HOST_MEMORY"},
      {0x003, "CKR_SLOT_ID_INVALID"},
      {0x005, "CKR_GENERAL_ERROR"},
      {0x006, "CKR_FUNCTION_FAILED"},
      {0x007, "CKR_ARGUMENTS_BAD"},
      {0x030, "CKR_DEVICE_ERROR"},
      {0x031, "CKR_DEVICE_MEMORY"},
      {0x032, "CKR_DEVICE_REMOVED"},
      {0x050, "CKR_FUNCTION_CANCELED"},
      {0x054, "CKR_FUNCTION_NOT_SUPPORTED"},
      {0x0a0, "CKR_PIN_INCORRECT"},
      {0x0a1, "CKR_PIN_INVALID"},
      {0x0a2, "CKR_PIN_LEN_RANGE"},
      {0x0a3, "CKR_PIN_EXPIRED"},
      {0x0a4, "CKR_PIN_LOCKED"},
      {0x0b1, "CKR_SESSION_COUNT"},
      {0x0b3, "CKR_SESSION_HANDLE_INVALID"},
      {0x0b4, "CKR_SESSION_PARALLEL_NOT_SUPPORTED"},
      {0x0b6, "CKR_SESSION_EXISTS"},
      {0x0b7, "CKR_SESSION_READ_ONLY_EXISTS"},
      {0x0b8, "CKR_SESSION_READ_WRITE_SO_EXISTS"},
      {0x0e0, "CKR_TOKEN_NOT_PRESENT"},
      {0x0e1, "CKR_TOKEN_NOT_RECOGNIZED"},
      {0x101, "CKR_USER_NOT_LOGGED_IN"},
      {0x102, "CKR_USER_PIN_NOT_INITIALIZED"},
      {0x103, "CKR_USER_TYPE_INVALID"},
      {0x104, "CKR_USER_ANOTHER_ALREADY_LOGGED_IN"},
      {0x105, "CKR_USER_TOO_MANY_TYPES"},
      {0x190, "CKR_CRYPTOKI_NOT_INITIALIZED"},
      {0x1a0, "CKR_MUTEX_BAD"},
      {0x1a1, "CKR_MUTEX_NOT_LOCKED"},
  };
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%lx", static_cast<unsigned long>(rv));
  for (const auto& [v, name] : kNames)
    if (v == rv) return std::string(name) + ", " + hex;
  return std::string("CKR ") + hex;
}

namespace {

// ------------------------------------------------------------- RFC 7512 URI checking

bool hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

std::string pct_decode(std::string_view v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '%' && i + 2 < v.size() && hex(v[i + 1]) && hex(v[i + 2])) {
      out += static_cast<char>(std::stoi(std::string(v.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += v[i];
    }
  }
  return out;
}

bool pin_like(std::string_view text);

struct Uri {
  std::vector<std::pair<std::string, std::string>> path, query;  // decoded values
  std::string get(std::string_view name) const {
    for (const auto& [n, v] : path)
      if (n == name) return v;
    return "";
  }
};

std::optional<std::string> parse_part(std::string_view s, char sep, bool is_query,
                                      std::vector<std::pair<std::string, std::string>>& out) {
  static constexpr std::string_view kPath[] = {"id",
                                               "library-description",
                                               "library-manufacturer",
                                               "library-version",
                                               "manufacturer",
                                               "model",
                                               "object",
                                               "serial",
                                               "slot-description",
                                               "slot-id",
                                               "slot-manufacturer",
                                               "token",
                                               "type"};
  static constexpr std::string_view kQuery[] = {"module-name", "module-path", "pin-source", "pin-value"};
  while (!s.empty()) {
    const auto end = s.find(sep);
    const std::string_view attr = s.substr(0, end);
    s = end == std::string_view::npos ? std::string_view() : s.substr(end + 1);
    if (attr.empty()) continue;
    const auto eq = attr.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return pin_like(attr) ? "an attribute (not shown: it looks like a PIN) has no name=value form"
                            : "attribute '" + std::string(attr) + "' has no name=value form";
    const std::string_view name = attr.substr(0, eq), value = attr.substr(eq + 1);
    const bool known = is_query ? std::ranges::find(kQuery, name) != std::end(kQuery)
                                : std::ranges::find(kPath, name) != std::end(kPath);
    if (!known) return "unknown " + std::string(is_query ? "query" : "path") + " attribute '" + std::string(name) + "'";
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (value[i] == '%' && (i + 2 >= value.size() || !hex(value[i + 1]) || !hex(value[i + 2])))
        return "bad %-escape in '" + std::string(name) + "'";
      // RFC 7512 §2.3 values are percent-encoded octets, but no PKCS#11 label, id or path
      // holds a NUL, and a NUL would end the C strings the value is handed on as.
      if (value[i] == '%' && value[i + 1] == '0' && value[i + 2] == '0')
        return "%00 (a NUL byte) in '" + std::string(name) + "': no PKCS#11 attribute value holds one";
    }
    out.emplace_back(std::string(name), pct_decode(value));
  }
  return std::nullopt;
}

Result<Uri> parse_uri(const std::string& s) {
  if (!is_uri(s)) return make_error(KErr::einval, "not a PKCS#11 URI (RFC 7512): no pkcs11: scheme");
  Uri u;
  const std::string_view rest = std::string_view(s).substr(7);
  const auto q = rest.find('?');
  if (auto why = parse_part(rest.substr(0, q), ';', false, u.path))
    return make_error(KErr::einval, "not a PKCS#11 URI (RFC 7512): " + *why);
  if (q != std::string_view::npos)
    if (auto why = parse_part(rest.substr(q + 1), '&', true, u.query))
      return make_error(KErr::einval, "not a PKCS#11 URI (RFC 7512): " + *why);
  for (const auto& [n, v] : u.query)
    if (n == "pin-value")
      return make_error(KErr::einval,
                        "the PIN must not be in the URI (pin-value): use KBUILD_SIGN_PIN, --pin-file or the prompt");
  const std::string type = u.get("type");
  if (!type.empty() && type != "private")
    return make_error(KErr::einval, "not a PKCS#11 URI (RFC 7512) of a private key: type=" + type);
  return u;
}

/// `uri` with its type attribute set to `type` (added when absent).
std::string with_type(const std::string& uri, const std::string& type) {
  const auto q = uri.find('?');
  std::string path = uri.substr(0, q), query = q == std::string::npos ? "" : uri.substr(q);
  std::string out = "pkcs11:";
  bool first = true;
  std::string_view p = std::string_view(path).substr(7);
  while (!p.empty()) {
    const auto end = p.find(';');
    const std::string_view attr = p.substr(0, end);
    p = end == std::string_view::npos ? std::string_view() : p.substr(end + 1);
    if (attr.empty() || attr.starts_with("type=")) continue;
    out += (first ? "" : ";") + std::string(attr);
    first = false;
  }
  return out + (first ? "" : ";") + "type=" + type + query;
}

// ------------------------------------------------------------------- provider location

bool is_file(const std::string& p) {
  struct stat st {};
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::optional<std::string> provider_path(const std::string& given, std::string& tried) {
  std::vector<std::string> candidates;
  if (!given.empty()) candidates.push_back(given);
  if (const char* e = std::getenv("MODSIGN_PKCS11_PROVIDER"); e && *e) candidates.emplace_back(e);
  if (const char* e = std::getenv("OPENSSL_MODULES"); e && *e) candidates.push_back(std::string(e) + "/pkcs11.so");
#ifdef MODSIGN_PKCS11_PROVIDER_DEFAULT
  candidates.emplace_back(MODSIGN_PKCS11_PROVIDER_DEFAULT);
#endif
  if (const char* d = OPENSSL_info(OPENSSL_INFO_MODULES_DIR)) candidates.push_back(std::string(d) + "/pkcs11.so");
  for (const auto& c : candidates) {
    if (is_file(c)) return c;
    tried += (tried.empty() ? "" : ", ") + c;
    if (!given.empty() || std::getenv("MODSIGN_PKCS11_PROVIDER")) break;  // a path asked for is not replaced
  }
  return std::nullopt;
}

// ------------------------------------------------- the token's own view (C_GetTokenInfo)
// Only the prefix of CK_FUNCTION_LIST and the structures modsign reads (PKCS#11 3.0 §5,
// base specification; Linux x86-64: CK_ULONG is unsigned long, structures not packed).

using CK_ULONG = unsigned long;
using CK_RV = CK_ULONG;
struct CkVersion {
  unsigned char major, minor;
};
struct CkTokenInfo {
  unsigned char label[32], manufacturer[32], model[16], serial[16];
  CK_ULONG flags, max_sessions, sessions, max_rw, rw, max_pin, min_pin, pub_total, pub_free, priv_total, priv_free;
  CkVersion hw, fw;
  unsigned char utc_time[16];
};
struct CkFunctionList {
  CkVersion version;
  CK_RV (*C_Initialize)(void*);
  CK_RV (*C_Finalize)(void*);
  void* C_GetInfo;
  void* C_GetFunctionList;
  CK_RV (*C_GetSlotList)(unsigned char, CK_ULONG*, CK_ULONG*);
  void* C_GetSlotInfo;
  CK_RV (*C_GetTokenInfo)(CK_ULONG, CkTokenInfo*);
  CK_RV (*C_GetMechanismList)(CK_ULONG, CK_ULONG*, CK_ULONG*);
  void *C_GetMechanismInfo, *C_InitToken, *C_InitPIN, *C_SetPIN;
  CK_RV (*C_OpenSession)(CK_ULONG, CK_ULONG, void*, void*, CK_ULONG*);
  CK_RV (*C_CloseSession)(CK_ULONG);
  void *C_CloseAllSessions, *C_GetSessionInfo, *C_GetOperationState, *C_SetOperationState;
  CK_RV (*C_Login)(CK_ULONG, CK_ULONG, const unsigned char*, CK_ULONG);
  CK_RV (*C_Logout)(CK_ULONG);
};
constexpr CK_RV kCkrOk = 0, kCkrAlreadyInitialized = 0x191, kCkrPinIncorrect = 0xa0, kCkrPinLocked = 0xa4,
                kCkrAlreadyLoggedIn = 0x100;
constexpr CK_ULONG kCkfLoginRequired = 0x4, kCkfSerialSession = 0x4, kCkuUser = 1;
constexpr CK_ULONG kCkmMlDsa = 0x1d;  // PKCS#11 3.2 CKM_ML_DSA

std::string padded(const unsigned char* p, std::size_t n) {
  std::string s(reinterpret_cast<const char*>(p), n);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

struct TokenView {
  std::string name;  // "'LABEL' (MANUFACTURER MODEL)"
  bool ml_dsa = false;
  bool login_required = false;
  bool one_session = false;  // ulMaxSessionCount 1
  CK_ULONG slot = 0;
};

/// The PIN checked by a login of our own (the provider reports a wrong PIN only as "no
/// key"): kCkrOk, kCkrPinIncorrect, kCkrPinLocked or another CKR.
CK_RV check_pin(CkFunctionList* f, CK_ULONG slot, const std::string& pin) {
  CK_ULONG h = 0;
  CK_RV rv = f->C_OpenSession(slot, kCkfSerialSession, nullptr, nullptr, &h);
  if (rv != kCkrOk) return rv;
  rv = f->C_Login(h, kCkuUser, reinterpret_cast<const unsigned char*>(pin.data()), pin.size());
  if (rv == kCkrOk) f->C_Logout(h);
  if (rv == kCkrAlreadyLoggedIn) rv = kCkrOk;
  f->C_CloseSession(h);
  return rv;
}

/// The first token that matches the URI's token/manufacturer/model/serial in `module`;
/// nullopt (no error) when the module cannot be opened here: the provider reports that.
/// When the token needs a login, `pin` (asked for through `ask` when empty) is checked.
Result<std::optional<TokenView>> probe(const std::string& module, const Uri& u, std::optional<SecretString>& pin,
                                       const std::function<std::optional<SecretString>()>& ask, bool need_ml_dsa) {
  void* h = ::dlopen(module.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) return std::optional<TokenView>();
  using GetList = CK_RV (*)(CkFunctionList**);
  auto get = reinterpret_cast<GetList>(::dlsym(h, "C_GetFunctionList"));
  CkFunctionList* f = nullptr;
  if (!get || get(&f) != kCkrOk || !f) {
    ::dlclose(h);
    return std::optional<TokenView>();
  }
  const CK_RV init = f->C_Initialize(nullptr);
  std::optional<TokenView> found;
  if (init == kCkrOk || init == kCkrAlreadyInitialized) {
    CK_ULONG n = 0;
    std::vector<CK_ULONG> slots;
    if (f->C_GetSlotList(1, nullptr, &n) == kCkrOk && n) {
      slots.resize(n);
      if (f->C_GetSlotList(1, slots.data(), &n) != kCkrOk) n = 0;
      slots.resize(n);
    }
    for (CK_ULONG s : slots) {
      CkTokenInfo ti{};
      if (f->C_GetTokenInfo(s, &ti) != kCkrOk) continue;
      const std::string label = padded(ti.label, 32), manuf = padded(ti.manufacturer, 32), model = padded(ti.model, 16),
                        serial = padded(ti.serial, 16);
      auto differs = [&](const char* attr, const std::string& v) {
        const std::string want = u.get(attr);
        return !want.empty() && want != v;
      };
      if (differs("token", label) || differs("manufacturer", manuf) || differs("model", model) ||
          differs("serial", serial))
        continue;
      TokenView v;
      v.name = "'" + label + "' (" + manuf + " " + model + ")";
      CK_ULONG m = 0;
      if (f->C_GetMechanismList(s, nullptr, &m) == kCkrOk && m) {
        std::vector<CK_ULONG> mechs(m);
        if (f->C_GetMechanismList(s, mechs.data(), &m) == kCkrOk)
          v.ml_dsa = std::find(mechs.begin(), mechs.begin() + static_cast<long>(m), kCkmMlDsa) !=
                     mechs.begin() + static_cast<long>(m);
      }
      v.login_required = (ti.flags & kCkfLoginRequired) != 0;
      v.one_session = ti.max_sessions == 1;
      v.slot = s;
      found = v;
      break;
    }
    CK_RV pin_rv = kCkrOk;
    if (found && found->login_required && !(need_ml_dsa && !found->ml_dsa)) {
      if (!pin && ask) pin = ask();
      if (pin) pin_rv = check_pin(f, found->slot, pin->value());
    }
    if (init == kCkrOk) f->C_Finalize(nullptr);
    ::dlclose(h);
    if (pin_rv == kCkrPinIncorrect)
      return make_error(KErr::enokey, "token " + found->name + ": wrong PIN (CKR_PIN_INCORRECT)");
    if (pin_rv == kCkrPinLocked)
      return make_error(KErr::enokey, "token " + found->name + ": PIN locked (CKR_PIN_LOCKED)");
    if (pin_rv != kCkrOk)
      return make_error(KErr::enokey, "token " + found->name + ": login failed (" + ckr_text(pin_rv) + ")");
  } else {
    ::dlclose(h);
  }
  if (!found) return make_error(KErr::enokey, "no token matches the URI in " + module);
  return found;
}

// --------------------------------------------------------------- OpenSSL side

/// The keys of tokens that allow one session at a time, each with the lock its signers
/// take turns on (session_turn()).
std::mutex g_turns_mu;
std::map<const void*, std::shared_ptr<std::mutex>> g_turns;
std::atomic<bool> g_any_turns{false};

struct Context {
  OSSL_LIB_CTX* libctx = nullptr;
  OSSL_PROVIDER* deflt = nullptr;
  OSSL_PROVIDER* p11 = nullptr;
  const void* one_session_key = nullptr;  // registered in g_turns
  ~Context() {
    if (one_session_key) {
      std::lock_guard<std::mutex> l(g_turns_mu);
      g_turns.erase(one_session_key);
    }
    if (p11) OSSL_PROVIDER_unload(p11);
    if (deflt) OSSL_PROVIDER_unload(deflt);
    if (libctx) OSSL_LIB_CTX_free(libctx);
  }
};

struct PinState {
  const TokenOptions* o = nullptr;
  std::optional<SecretString> typed;  ///< wiped when the state is destroyed
  bool asked = false, used = false;
};

int pin_cb(char* buf, int size, int, void* u) {
  auto* st = static_cast<PinState*>(u);
  const std::string* pin = st->typed ? &st->typed->value() : nullptr;
  if (!pin && !st->asked && st->o->ask) {
    st->asked = true;
    st->typed = st->o->ask();
  }
  if (!pin && st->typed) pin = &st->typed->value();
  if (!pin || static_cast<int>(pin->size()) > size) return -1;
  std::copy_n(pin->data(), pin->size(), buf);  // a length-counted buffer: no NUL is needed
  st->used = true;
  return static_cast<int>(pin->size());
}

struct UiMethod {
  UI_METHOD* m = UI_UTIL_wrap_read_pem_callback(pin_cb, 0);
  ~UiMethod() {
    if (m) UI_destroy_method(m);
  }
};

/// Every object of `kind` (OSSL_STORE_INFO_PKEY / _CERT) the store yields for `uri`.
std::vector<OSSL_STORE_INFO*> store_load(Context& c, const std::string& uri, int kind, PinState& pin) {
  std::vector<OSSL_STORE_INFO*> out;
  UiMethod ui;
  struct WipeStack {  // the PIN went through OpenSSL's UI bridge (crypto.hpp wipe_stack)
    const PinState& pin;
    ~WipeStack() {
      if (pin.used) wipe_stack();
    }
  } wipe{pin};
  OSSL_STORE_CTX* s =
      OSSL_STORE_open_ex(uri.c_str(), c.libctx, "provider=pkcs11", ui.m, &pin, nullptr, nullptr, nullptr);
  if (!s) return out;
  OSSL_STORE_expect(s, kind);
  while (!OSSL_STORE_eof(s)) {
    OSSL_STORE_INFO* i = OSSL_STORE_load(s);
    if (!i) {
      if (OSSL_STORE_error(s)) break;
      continue;
    }
    if (OSSL_STORE_INFO_get_type(i) == kind) out.push_back(i);
    else OSSL_STORE_INFO_free(i);
  }
  OSSL_STORE_close(s);
  return out;
}

}  // namespace

std::unique_lock<std::mutex> session_turn(const void* evp_pkey) {
  if (!g_any_turns.load(std::memory_order_acquire)) return {};
  std::shared_ptr<std::mutex> m;
  {
    std::lock_guard<std::mutex> l(g_turns_mu);
    const auto it = g_turns.find(evp_pkey);
    if (it == g_turns.end()) return {};
    m = it->second;
  }
  return std::unique_lock<std::mutex>(*m);  // the Context (and so the map entry) outlives the key's signers
}

bool is_uri(std::string_view key) noexcept {
  constexpr std::string_view kScheme = "pkcs11:";  // a scheme's case does not matter (RFC 3986 3.1)
  if (key.size() < kScheme.size()) return false;
  for (std::size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(key[i])) != kScheme[i]) return false;
  return true;
}

namespace {
// Text that looks like it names a PIN or password, whatever its case or %-encoding
// ("pin-value", "PIN-VALUE", "pin%2Dvalue", "passphrase", a value holding
// "x;pin-value=..."): never shown.
bool pin_like(std::string_view name) {
  std::string n = pct_decode(name);
  for (auto& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return n.find("pin") != std::string::npos || n.find("pass") != std::string::npos ||
         n.find("secret") != std::string::npos;
}

bool attr_start(std::string_view uri, std::size_t i) {
  return i == 7 || uri[i - 1] == ';' || uri[i - 1] == '?' || uri[i - 1] == '&' || uri[i - 1] == ':';
}

void append_printable(std::string& out, std::string_view s) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7f) {  // shown percent-encoded, as RFC 7512 writes such octets
      char hexed[4];
      std::snprintf(hexed, sizeof hexed, "%%%02X", c);
      out += hexed;
    } else {
      out += static_cast<char>(c);
    }
  }
}
}  // namespace

bool pin_in_uri(std::string_view uri) {
  if (!is_uri(uri)) return false;
  for (std::size_t i = 7; i < uri.size(); ++i) {
    if (!attr_start(uri, i)) continue;
    const auto eq = uri.find('=', i);
    const auto end = uri.find_first_of(";?&", i);
    if (eq != std::string_view::npos && (end == std::string_view::npos || eq < end) && pin_like(uri.substr(i, eq - i)))
      return true;
  }
  return false;
}

std::string printable_uri(std::string_view uri) {
  std::string out;
  if (!is_uri(uri)) {
    append_printable(out, uri);
    return out;
  }
  // Each attribute as it is, but the value of one whose name looks like a PIN.
  const auto emit = [&out](std::string_view part, char sep) {
    for (std::size_t start = 0;;) {
      const auto end = part.find(sep, start);
      const std::string_view attr = part.substr(start, end == std::string_view::npos ? end : end - start);
      const auto eq = attr.find('=');
      // A PIN-like name, or a value that holds one ("module-path=/x;pin-value=..."): the
      // name only when it is not itself PIN-like, never the value.
      if (eq != std::string_view::npos && pin_like(attr)) {
        append_printable(out, attr.substr(0, eq + 1));
        out += "(not shown)";
      } else if (pin_like(attr)) {
        out += "(not shown)";
      } else {
        append_printable(out, attr);
      }
      if (end == std::string_view::npos) break;
      out += sep;
      start = end + 1;
    }
  };
  out = "pkcs11:";
  const auto q = uri.find('?');
  emit(uri.substr(7, q == std::string_view::npos ? std::string_view::npos : q - 7), ';');
  if (q == std::string_view::npos) return out;
  out += '?';
  // The query of a URI that does not parse is not shown (it may hold anything).
  std::vector<std::pair<std::string, std::string>> scratch;
  if (parse_part(uri.substr(q + 1), '&', true, scratch)) out += "(not shown: not a valid query)";
  else emit(uri.substr(q + 1), '&');
  return out;
}

Result<TokenKey> load(const std::string& uri, const TokenOptions& o) {
  auto u = parse_uri(uri);
  if (!u) return u.error();
  std::string tried;
  const auto prov = provider_path(o.provider, tried);
  if (!prov)
    return make_error(KErr::enopkg,
                      "pkcs11-provider not found (tried " + tried +
                          "): set MODSIGN_PKCS11_PROVIDER or OPENSSL_MODULES, or install pkcs11-provider");
  const char* module_env = std::getenv("PKCS11_PROVIDER_MODULE");
  const std::string module = module_env ? module_env : "";
  // The PKCS#11 module the provider would dlopen: a path that is not there is named here
  // (the provider would only fail to find the key).
  if (!module.empty() && !is_file(module))
    return make_error(KErr::enopkg, "PKCS#11 module " + printable_uri(module) +
                                        " (PKCS11_PROVIDER_MODULE) does not exist or is not a file");
  for (const auto& [n, v] : u->query)
    if (n == "module-path" && !is_file(v))  // a path that looks like it holds a PIN is not shown
      return make_error(KErr::enopkg, "PKCS#11 module " +
                                          (pin_like(v) ? std::string("(not shown)") : printable_uri(v)) +
                                          " (module-path in the URI) does not exist or is not a file");
  TokenKey out;
  bool one_session = false, no_ml_dsa = false;
  PinState pin;
  pin.o = &o;
  pin.typed = o.pin;
  pin.asked = true;  // the probe asks, once; the provider only gets what it found
  if (module.empty()) {
    pin.asked = false;
  } else {
    auto view = probe(module, *u, pin.typed, o.ask, o.expect && is_ml_dsa(*o.expect));
    if (!view) return view.error();
    if (*view) {
      out.token = (*view)->name;
      one_session = (*view)->one_session;
      // Said once the key is known: an RSA key beside an ML-DSA certificate is a mismatch,
      // which the caller names, not a missing mechanism.
      no_ml_dsa = o.expect && is_ml_dsa(*o.expect) && !(*view)->ml_dsa;
    } else {
      pin.asked = false;
    }
  }
  const std::string label = u->get("token");
  const std::string token = !out.token.empty() ? out.token : pin_like(label) ? "'(not shown)'" : "'" + label + "'";
  auto ctx = std::make_shared<Context>();
  ctx->libctx = OSSL_LIB_CTX_new();
  if (!ctx->libctx) return make_error(KErr::enomem, "cannot create an OpenSSL library context");
  ctx->deflt = OSSL_PROVIDER_load(ctx->libctx, "default");
  // No digests from the token (OpenSSL's are used), and no C_Finalize when the provider is
  // unloaded (SoftHSM 2.6 crashes when finalized while OpenSSL winds down).
  std::string block = "digest", quirks = "no-deinit";
  std::string mod = module;
  OSSL_PARAM params[4];
  int n = 0;
  params[n++] = OSSL_PARAM_construct_utf8_string("pkcs11-module-block-operations", block.data(), 0);
  params[n++] = OSSL_PARAM_construct_utf8_string("pkcs11-module-quirks", quirks.data(), 0);
  if (!mod.empty()) params[n++] = OSSL_PARAM_construct_utf8_string("pkcs11-module-path", mod.data(), 0);
  params[n] = OSSL_PARAM_construct_end();
  ctx->p11 = OSSL_PROVIDER_load_ex(ctx->libctx, prov->c_str(), params);
  if (!ctx->deflt || !ctx->p11)
    return make_error(KErr::enopkg, "cannot load pkcs11-provider " + *prov + ": " + openssl_error());

  ERR_clear_error();
  const std::string key_uri = u->get("type").empty() ? with_type(uri, "private") : uri;
  auto keys = store_load(*ctx, key_uri, OSSL_STORE_INFO_PKEY, pin);
  const std::string why = keys.empty() ? openssl_error() : "";
  const auto mechanism_missing = [&] {
    return make_error(KErr::enopkg, "token " + out.token +
                                        " has no CKM_ML_DSA mechanism: ML-DSA signing needs a PKCS#11 3.2 token "
                                        "that offers it");
  };
  if (keys.empty() && no_ml_dsa) return mechanism_missing();
  if (keys.empty()) {
    if (why.find("PIN_INCORRECT") != std::string::npos || why.find("0xA0") != std::string::npos ||
        why.find("000000A0") != std::string::npos)
      return make_error(KErr::enokey, "token " + token + ": wrong PIN (CKR_PIN_INCORRECT)");
    if (why.find("PIN_LOCKED") != std::string::npos)
      return make_error(KErr::enokey, "token " + token + ": PIN locked (CKR_PIN_LOCKED)");
    if (!pin.used && !o.pin && !pin.typed)
      return make_error(KErr::enokey, "token " + token +
                                          ": no private key matches the URI (no PIN was given: set KBUILD_SIGN_PIN, "
                                          "--pin-file, or type it at the prompt)");
    return make_error(KErr::enokey, "token " + token + ": no private key matches the URI");
  }
  EVP_PKEY* pkey = OSSL_STORE_INFO_get1_PKEY(keys.front());
  for (auto* i : keys) OSSL_STORE_INFO_free(i);
  if (!pkey) { return make_error(KErr::enokey, "token " + token + ": no private key matches the URI"); }
  auto key = PrivateKey::from_native(pkey, ctx);
  if (!key) { return make_error(key.error().code, "token " + token + ": " + key.error().message); }
  out.key = std::move(key.value());
  if (no_ml_dsa && is_ml_dsa(out.key.algo())) return mechanism_missing();
  if (one_session) {
    std::lock_guard<std::mutex> l(g_turns_mu);
    g_turns[out.key.native()] = std::make_shared<std::mutex>();
    ctx->one_session_key = out.key.native();
    g_any_turns.store(true, std::memory_order_release);
  }
  if (o.with_certs) {
    auto certs = store_load(*ctx, with_type(uri, "cert"), OSSL_STORE_INFO_CERT, pin);
    for (auto* i : certs) {
      if (X509* x = OSSL_STORE_INFO_get0_CERT(i)) {
        unsigned char* der = nullptr;
        const int len = i2d_X509(x, &der);
        if (len > 0) {
          if (auto c = Certificate::from_der(ByteView(der, static_cast<std::size_t>(len))))
            out.certs.push_back(std::move(c.value()));
          OPENSSL_free(der);
        }
      }
      OSSL_STORE_INFO_free(i);
    }
    ERR_clear_error();
    if (out.certs.empty()) {
      return make_error(KErr::enokey, "token " + token + ": no certificate matches the URI (type=cert)");
    }
  }
  if (out.token.empty()) out.token = token;
  return out;
}

}  // namespace modsign::crypto::pkcs11
