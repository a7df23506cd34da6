// modsign's own: Microsoft's dbx JSON and SVN records (blacklist/msft_dbx.hpp).
#include "blacklist/msft_dbx.hpp"

#include <algorithm>
#include <filesystem>

#include "common/file.hpp"
#include "common/json.hpp"
#include "crypto/crypto.hpp"

namespace modsign::blacklist::msft_dbx {

namespace {

constexpr const char* kArchs[] = {"x64", "ia32", "aarch64", "arm"};

[[noreturn]] void bad(const std::string& name, const std::string& what) { throw InputError(name + ": " + what); }

Bytes hex32(const std::string& text, const std::string& name, const std::string& where) {
  if (text.size() != 64) bad(name, where + ": \"" + text + "\" is not 64 hex digits");
  try {
    return from_hex(text);
  } catch (const std::exception&) { bad(name, where + ": \"" + text + "\" is not 64 hex digits"); }
}

}  // namespace

std::optional<std::string> arch(std::string_view n) {
  if (n == "x64" || n == "amd64") return "x64";
  if (n == "ia32" || n == "x86") return "ia32";
  if (n == "aarch64" || n == "arm64") return "aarch64";
  if (n == "arm") return "arm";
  return std::nullopt;
}

std::optional<EfiSvnRecord> svn_record(const EfiGuid& owner, ByteView d) {
  if (owner != efi_guids::svn_owner || d.size() != 32 || d[0] != 0x01) return std::nullopt;
  if (!std::all_of(d.begin() + 21, d.end(), [](std::uint8_t b) { return b == 0; })) return std::nullopt;
  EfiSvnRecord r;
  r.application = EfiGuid::from_bytes(d.data() + 1);
  r.minor = static_cast<std::uint16_t>(d[17] | d[18] << 8);
  r.major = static_cast<std::uint16_t>(d[19] | d[20] << 8);
  if (r.application == efi_guids::bootmgr_dbxsvn) r.application_name = "EFI_BOOTMGR_DBXSVN_GUID";
  return r;
}

EfiDatabase parse(std::string_view text, const std::string& want, const std::string& name, const std::string& der_dir) {
  auto doc = json::parse(text);
  if (!doc) bad(name, doc.error().message);
  const json::Value* images = doc->find("images");
  if (!images || !images->is(json::Value::Kind::object))
    bad(name, "no \"images\" object (not a dbx_info_msft JSON file)");
  std::optional<std::string> only;
  if (!want.empty()) {
    only = arch(want);
    if (!only) bad(name, "unknown architecture \"" + want + "\" (x64, ia32, aarch64, arm; amd64, x86, arm64)");
  }
  EfiDatabase db;
  db.file = name;
  db.form = "msft-json";
  auto add = [&](EfiGuid type, EfiGuid owner, Bytes data, std::string origin) {
    db.entries.push_back({name, type, owner, std::move(data), 0, 0, 0, std::move(origin), ""});
  };
  for (const char* a : kArchs) {
    if (only && *only != a) continue;
    const json::Value* list = images->find(a);
    if (!list) continue;
    if (!list->is(json::Value::Kind::array)) bad(name, std::string("images.") + a + " is not an array");
    for (std::size_t i = 0; i < list->items.size(); ++i) {
      const json::Value& it = list->items[i];
      const std::string where = std::string("images.") + a + "[" + std::to_string(i) + "]";
      if (!it.is(json::Value::Kind::object)) bad(name, where + " is not an object");
      const std::string type = it.str("hashType");
      if (!type.empty() && type != "SHA256") bad(name, where + ": hashType \"" + type + "\" is not SHA256");
      if (const json::Value* h = it.find("authenticodeHash"); h && !h->is(json::Value::Kind::string))
        bad(name, where + ".authenticodeHash is not a string");
      add(efi_guids::cert_sha256, efi_guids::microsoft_owner,
          hex32(it.str("authenticodeHash"), name, where + ".authenticodeHash"),
          where + " (" + it.str("filename") + ")");
    }
  }
  if (const json::Value* certs = doc->find("certificates"); certs && certs->is(json::Value::Kind::array)) {
    for (std::size_t i = 0; i < certs->items.size(); ++i) {
      const json::Value& c = certs->items[i];
      const std::string where = "certificates[" + std::to_string(i) + "]";
      const std::string value = c.str("value");
      const std::filesystem::path p = std::filesystem::path(der_dir) / value;
      std::error_code ec;
      if (value.empty() || value.find('/') != std::string::npos || !std::filesystem::is_regular_file(p, ec)) {
        db.notes.push_back(where + ": " + value + " (" + c.str("subjectName") +
                           ") not found beside the JSON; not included");
        continue;
      }
      Bytes der = read_file(p.string(), kMaxSmallFileSize);
      if (auto cert = crypto::Certificate::from_der(der); !cert)
        bad(p.string(), "not a DER certificate: " + cert.error().message);
      add(efi_guids::cert_x509, efi_guids::microsoft_owner, std::move(der), where + " (" + value + ")");
    }
  }
  if (const json::Value* svns = doc->find("svns"); svns && svns->is(json::Value::Kind::array)) {
    for (std::size_t i = 0; i < svns->items.size(); ++i) {
      const json::Value& s = svns->items[i];
      const std::string where = "svns[" + std::to_string(i) + "]";
      add(efi_guids::cert_sha256, efi_guids::svn_owner, hex32(s.str("value"), name, where + ".value"),
          where + " (" + s.str("filename") + ")");
    }
  }
  return db;
}

}  // namespace modsign::blacklist::msft_dbx
