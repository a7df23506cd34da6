// `modsign sign --prepare` / `--attach`; see sign_prepare_attach.hpp.
#include "sign_prepare_attach.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <variant>

#include <modsign/output.hpp>
#include <modsign/remote_sign.hpp>

#include "cli_common.hpp"
#include "common/base64.hpp"
#include "common/file.hpp"

namespace modsign::cli {

namespace {

using ordered_json = nlohmann::ordered_json;

std::string dump_line(const ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// ----------------------------------------------------------------------------- manifest

/// One manifest line (the keys of docs/cli/modsign-sign.1.md, REMOTE SIGNING).
ordered_json manifest_line(std::size_t index, const PreparedModule& p) {
  ordered_json j;
  j["index"] = index;
  j["path"] = p.path;
  j["size"] = p.size;
  j["sha256"] = to_hex(p.sha256);
  j["compression"] = p.compression.empty() ? ordered_json(nullptr) : ordered_json(p.compression);
  j["certificate"] = p.certificate;
  j["certificate_sha256"] = to_hex(p.certificate_sha256);
  j["algorithm"] = p.algorithm;
  j["hash"] = p.hash;
  j["form"] = p.signed_attrs ? "signedAttrs" : "no signedAttrs";
  j["keyid"] = p.skid;
  j["replace"] = p.replace;
  j["recompress"] = p.recompress;
  j["to_sign_type"] = std::string(to_sign_name(p.kind));
  j["to_sign"] = to_hex(p.to_sign);
  j["to_sign_base64"] = to_base64(p.to_sign);
  if (!p.mu.empty() && p.kind != ToSign::mu) {
    j["mu"] = to_hex(p.mu);
    j["mu_base64"] = to_base64(p.mu);
  }
  if (!p.digest_info.empty()) {
    j["digest_info"] = to_hex(p.digest_info);
    j["digest_info_base64"] = to_base64(p.digest_info);
  }
  if (!p.signed_attrs_der.empty() && p.kind == ToSign::digest) j["signed_attrs_der"] = to_hex(p.signed_attrs_der);
  return j;
}

/// A parser callback for nlohmann::json::parse() that refuses what the library's JSON
/// reader (json::parse) refuses beyond the grammar, in its words, into `refused` (the first
/// only): a member named twice in one object ("member \"K\" given twice"; nlohmann keeps the
/// last, a first-wins reader the first) and a NUL in a string or name ("\u0000 (a NUL) in a
/// string").
nlohmann::json::parser_callback_t strict_json_reader(std::string& refused) {
  auto names = std::make_shared<std::vector<std::set<std::string>>>();
  return [names, &refused](int, nlohmann::json::parse_event_t ev, nlohmann::json& v) {
    using E = nlohmann::json::parse_event_t;
    if (ev == E::object_start) names->emplace_back();
    if (ev == E::object_end && !names->empty()) names->pop_back();
    if ((ev == E::key || ev == E::value) && v.is_string() &&
        v.get_ref<const std::string&>().find('\0') != std::string::npos && refused.empty())
      refused = "\\u0000 (a NUL) in a string";
    if (ev == E::key && !names->empty() && !names->back().insert(v.get<std::string>()).second && refused.empty())
      refused = "member \"" + v.get<std::string>() + "\" given twice";
    return true;
  };
}

/// Calls `f(object, where)` for each non-empty line of the file `path`, parsed as a JSON
/// object; `where` is "PATH: line N: ".  A line that is not a JSON object throws InputError.
void for_each_json_line(const std::string& path,
                        const std::function<void(const nlohmann::json&, const std::string&)>& f) {
  const Bytes b = read_file(path, kMaxSmallFileSize * 4);
  std::size_t n = 0, start = 0;
  while (start < b.size()) {
    std::size_t end = start;
    while (end < b.size() && b[end] != '\n') ++end;
    const std::string line(b.begin() + static_cast<std::ptrdiff_t>(start),
                           b.begin() + static_cast<std::ptrdiff_t>(end));
    const std::string where = path + ": line " + std::to_string(++n) + ": ";
    start = end + 1;
    if (line.empty()) continue;
    // nlohmann's reader ends its input at a NUL byte: what follows would go unread.
    if (line.find('\0') != std::string::npos) throw InputError(where + "a NUL byte in the line: not JSON");
    std::string refused;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line, strict_json_reader(refused));
    } catch (const nlohmann::json::exception& e) {
      // Its reason, without "[json.exception.parse_error.101] " and with "parse error at line
      // 1, column 10: " said as "column 10: " (the line is ours).
      std::string why = e.what();
      if (const auto at = why.find("] "); at != std::string::npos) why.erase(0, at + 2);
      if (const auto col = why.find("column "); why.starts_with("parse error at line ") && col != std::string::npos)
        why.erase(0, col);
      throw InputError(where + "not JSON: " + why);
    }
    if (!refused.empty()) throw InputError(where + refused);
    if (!j.is_object()) throw InputError(where + "not a JSON object");
    f(j, where);
  }
}

/// A field of line `where` ("MANIFEST: line N: ") of the type `T`, or InputError.
template <class T>
T field(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) throw InputError(where + "no \"" + key + "\"");
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) { throw InputError(where + "\"" + key + "\" has the wrong type"); }
}

Bytes hex_field(const nlohmann::json& j, const char* key, const std::string& where) {
  try {
    return from_hex(field<std::string>(j, key, where));
  } catch (const std::invalid_argument&) { throw InputError(where + "\"" + key + "\" is not hex"); }
}

struct ManifestEntry {
  std::size_t index = 0;
  PreparedModule p;
  std::string where;  ///< "MANIFEST: line N: "
};

std::vector<ManifestEntry> read_manifest(const std::string& path) {
  std::vector<ManifestEntry> out;
  for_each_json_line(path, [&](const nlohmann::json& j, const std::string& where) {
    ManifestEntry e;
    e.where = where;
    // Whole non-negative numbers only: nlohmann would wrap -1, truncate 1.0 and overflow
    // an index or size beyond 64 bits without a word.
    for (const char* k : {"index", "size"})
      if (j.contains(k) && !j.at(k).is_number_unsigned())
        throw InputError(where + "\"" + k + "\" is not a whole number from 0 to 2^64-1");
    e.index = field<std::size_t>(j, "index", where);
    if (e.index == 0) throw InputError(where + "\"index\" 0: indexes start at 1");
    PreparedModule& p = e.p;
    p.path = field<std::string>(j, "path", where);
    if (p.path.empty() || p.path.find('\0') != std::string::npos)
      throw InputError(where + "\"path\" is empty or holds a NUL byte");
    p.size = field<std::uint64_t>(j, "size", where);
    p.sha256 = hex_field(j, "sha256", where);
    if (!j.contains("compression")) throw InputError(where + "no \"compression\"");
    if (!j.at("compression").is_null()) {
      p.compression = field<std::string>(j, "compression", where);
      if (p.compression.empty()) throw InputError(where + "\"compression\" is \"\": null, or the format's name");
    }
    p.certificate = field<std::string>(j, "certificate", where);
    p.certificate_sha256 = hex_field(j, "certificate_sha256", where);
    p.algorithm = field<std::string>(j, "algorithm", where);
    p.hash = field<std::string>(j, "hash", where);
    const auto form = field<std::string>(j, "form", where);
    if (form != "signedAttrs" && form != "no signedAttrs")
      throw InputError(where + "\"form\" is neither \"signedAttrs\" nor \"no signedAttrs\"");
    p.signed_attrs = form == "signedAttrs";
    p.skid = field<bool>(j, "keyid", where);
    p.replace = field<bool>(j, "replace", where);
    p.recompress = field<bool>(j, "recompress", where);
    const auto kind = field<std::string>(j, "to_sign_type", where);
    if (kind == to_sign_name(ToSign::mu)) p.kind = ToSign::mu;
    else if (kind == to_sign_name(ToSign::signed_attrs)) p.kind = ToSign::signed_attrs;
    else if (kind == to_sign_name(ToSign::digest)) p.kind = ToSign::digest;
    else throw InputError(where + "\"to_sign_type\" is neither mu, signed-attrs nor digest");
    p.to_sign = hex_field(j, "to_sign", where);
    if (j.contains("signed_attrs_der")) p.signed_attrs_der = hex_field(j, "signed_attrs_der", where);
    for (const auto& prev : out)
      if (prev.index == e.index) throw InputError(where + "index " + std::to_string(e.index) + " given twice");
    out.push_back(std::move(e));
  });
  return out;
}

/// A module's signature, or why there is none usable ("" = none given).
using SigOrError = std::variant<Bytes, std::string>;

/// --signatures FILE: JSON lines {"index" or "path", "signature" (hex) or "signature_base64"}.
std::map<std::size_t, SigOrError> read_signature_lines(const std::string& path, const std::vector<ManifestEntry>& m) {
  std::map<std::size_t, SigOrError> out;
  for_each_json_line(path, [&](const nlohmann::json& j, const std::string& where) {
    std::optional<std::size_t> index;
    if (j.contains("index") && j.contains("path"))
      throw InputError(where + "gives both \"index\" and \"path\": give one");
    if (j.contains("index")) {
      if (!j.at("index").is_number_unsigned())  // as the manifest's: no wrapped -1, no cut 1.9
        throw InputError(where + "\"index\" is not a whole number from 0 to 2^64-1");
      index = field<std::size_t>(j, "index", where);
      if (std::none_of(m.begin(), m.end(), [&](const ManifestEntry& e) { return e.index == *index; }))
        throw InputError(where + "index " + std::to_string(*index) + " is not in the manifest");
    } else if (j.contains("path")) {
      const auto p = field<std::string>(j, "path", where);
      for (const auto& e : m)
        if (e.p.path == p) index = e.index;
      if (!index) throw InputError(where + "path " + p + " is not in the manifest");
    } else {
      throw InputError(where + "neither \"index\" nor \"path\"");
    }
    if (out.count(*index)) throw InputError(where + "a second signature for index " + std::to_string(*index));
    const bool hex = j.contains("signature"), b64 = j.contains("signature_base64");
    if (hex == b64) throw InputError(where + "needs one of \"signature\" (hex) and \"signature_base64\"");
    const std::string text = field<std::string>(j, hex ? "signature" : "signature_base64", where);
    try {
      out[*index] = hex ? from_hex(text) : from_base64(text);
    } catch (const std::exception&) {  // a malformed signature file: refused before any module is touched
      throw InputError(where + "\"" + (hex ? "signature" : "signature_base64") + "\" is not " +
                       (hex ? "hex" : "base64"));
    }
  });
  return out;
}

/// --signatures DIR: DIR/<index>.sig, raw bytes.
SigOrError signature_file(const std::string& dir, std::size_t index) {
  const std::string f = dir + "/" + std::to_string(index) + ".sig";
  try {
    return read_file(f, kMaxSmallFileSize);
  } catch (const IoError& e) { return std::string("no signature: ") + e.what(); }
}

/// --signatures DIR: every DIR/NAME.sig must name an index of the manifest (NAME its
/// decimal spelling): a signature for a module the manifest does not have is an error
/// before any module is touched, as for the JSON-lines form.
void check_signature_dir(const std::string& dir, const std::vector<ManifestEntry>& m) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < 5 || name.compare(name.size() - 4, 4, ".sig") != 0) continue;
    const std::string stem = name.substr(0, name.size() - 4);
    const bool canonical = std::all_of(stem.begin(), stem.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                           stem.size() <= 19 && stem[0] != '0';
    if (!canonical ||
        std::none_of(m.begin(), m.end(), [&](const ManifestEntry& e) { return std::to_string(e.index) == stem; }))
      throw InputError(dir + "/" + name + ": no index " + stem + " in the manifest");
  }
  if (ec) throw InputError(dir + ": " + ec.message());
}

/// A module's SignError: its hint (words.hint) named with the module, else the message.
void report_refusal(const SignError& e, const std::string& path, const SignWording& words, ItemResult& res) {
  res.bytes = e.bytes_read();
  const std::string hint = words.hint(e);
  if (hint.empty()) complain("", e.what());
  else complain(path, hint);
}

// ------------------------------------------------------------------------------ prepare

int run_prepare(const RemoteArgs& r, const std::string& cert_path, const SignOptions& opt, const BatchOptions& bo,
                const std::vector<std::string>& modules, const std::vector<std::string>& dirs,
                const SignWording& words) {
  if (cert_path.empty()) {
    complain("", "--prepare needs --cert (the signer's certificate; the private key stays with the signer)");
    return kExitUsage;
  }
  if (!opt.out.empty() || opt.p7s || opt.p7s_only) {
    complain("", "-o, --p7s and --p7s-only are options of --attach, which writes the modules");
    return kExitUsage;
  }
  if (opt.deterministic) {
    complain("",
             "--deterministic is the signer's choice with --prepare/--attach (e.g. openssl pkeyutl -pkeyopt "
             "deterministic:1)");
    return kExitUsage;
  }
  std::size_t dir_error = 0;  // entries under -r DIR not handled (reported)
  const auto inputs = expand_module_tree(modules, dirs, &dir_error);
  if (inputs.empty() && dir_error) return kExitInput;  // every -r DIR failed or was empty (reported)
  if (!module_inputs_usable(inputs, dirs, "")) return kExitUsage;
  std::optional<SignerCertificate> cert;
  try {
    cert = SignerCertificate::load(cert_path);
    check_sign_options(*cert, opt);
  } catch (const SignError& e) { return words.option_refusal(e); }
  if (r.prepare != "-") {
    std::vector<KeptFile> kept{{cert_path, "the certificate"}};
    for (const auto& in : inputs) kept.push_back({in.path, "the input"});
    refuse_output_over(r.prepare, kept);
  }
  const auto duplicate = duplicate_of(inputs, dirs);
  std::vector<std::optional<PreparedModule>> prepared(inputs.size());
  // The "prepared" lines are printed once MANIFEST is in place: none if it cannot be written.
  std::vector<std::string> lines(inputs.size());
  auto work = [&](std::size_t i, const OutputRoute&) {
    ItemResult res;
    CaptureComplaints capture(res.err);
    if (skip_sign_input(inputs, duplicate, i, opt.recompress)) {
      res.state = ItemState::skipped;
      return res;
    }
    res.exit = kExitInput;
    res.state = ItemState::failed;
    (void)run_guarded(
        [&] {
          try {
            SignOptions item = opt;
            item.expect_file = walked_file(inputs[i], dirs);  // a walked entry: read from the file the walk found
            PreparedModule p = prepare_module_file(*cert, inputs[i].path, item);
            try {
              (void)manifest_line(0, p).dump();  // strict: a path that is not UTF-8 cannot be a JSON string
            } catch (const nlohmann::json::exception&) {
              throw InputError(p.path + ": the path is not UTF-8, which a JSON manifest cannot hold");
            }
            prepared[i] = std::move(p);
            const PreparedModule& q = *prepared[i];
            res.bytes = q.size;
            if (r.prepare != "-")
              lines[i] = printable(q.path) + ": prepared (" + q.algorithm + ", " +
                         (q.signed_attrs ? "signedAttrs" : "no signedAttrs") + ", " + q.hash + ", to_sign " +
                         std::string(to_sign_name(q.kind)) + " " + std::to_string(q.to_sign.size()) + " bytes)\n";
            res.exit = kExitOk;
            res.state = ItemState::done;
          } catch (const SignError& e) { report_refusal(e, inputs[i].path, words, res); }
          return res.exit;
        },
        nullptr, inputs[i].path);
    return res;
  };
  BatchOptions counted = bo;
  counted.not_handled = dir_error;
  int status = run_batch("prepare", inputs.size(), work, counted, inputs.size() > 1 || !dirs.empty(),
                         [&](std::size_t i) { return inputs[i].path; });
  std::string text;
  std::size_t index = 0;
  for (const auto& p : prepared)
    if (p) text += dump_line(manifest_line(++index, *p));
  if (r.prepare == "-") {
    std::cout << text;
    std::cout.flush();
  } else if (index == 0) {  // an old manifest is not replaced by an empty one
    complain(r.prepare, "not written: no module was prepared");
    status = std::max(status, kExitInput);
  } else {
    try {
      write_file_atomic(r.prepare, ByteView(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
      if (!bo.quiet)
        for (const auto& l : lines) std::cout << l;
    } catch (const IoError& e) {
      complain("", std::string(e.what()) + "; no module was prepared");
      status = std::max(status, kExitInput);
    }
  }
  return dir_error ? std::max(status, kExitInput) : status;
}

// ------------------------------------------------------------------------------- attach

int run_attach(const RemoteArgs& r, const std::string& cert_path, const SignOptions& opt, const BatchOptions& bo,
               const std::vector<std::string>& modules, const std::vector<std::string>& dirs,
               const SignWording& words) {
  if (!modules.empty() || !dirs.empty()) {
    complain("", "--attach takes its modules from MANIFEST (no MODULE or -r)");
    return kExitUsage;
  }
  static const SignOptions defaults;  // a named object: GCC 12 -Wdangling-pointer misreads a temporary's member
  if (opt.signed_attrs || opt.skid || opt.replace || opt.recompress || opt.hash != defaults.hash) {
    complain("",
             "--hash, --signed-attrs, --keyid, --replace and --recompress are recorded in MANIFEST: give them "
             "to --prepare");
    return kExitUsage;
  }
  if (opt.deterministic) {
    complain("",
             "--deterministic is the signer's choice with --prepare/--attach (e.g. openssl pkeyutl -pkeyopt "
             "deterministic:1)");
    return kExitUsage;
  }
  std::vector<ManifestEntry> manifest;
  std::map<std::size_t, SigOrError> sig_lines;
  std::map<std::string, SignerCertificate> certs;  // by path
  bool sig_dir = false;
  manifest = read_manifest(r.attach);
  // Said before the signatures are read: an empty manifest is the manifest's fault.
  if (manifest.empty()) throw InputError(r.attach + ": no modules in the manifest; nothing to attach");
  if (!opt.out.empty() && manifest.size() != 1) {
    complain("", "-o needs a MANIFEST of exactly one module");
    return kExitUsage;
  }
  std::error_code ec;
  sig_dir = std::filesystem::is_directory(r.signatures, ec);
  if (!sig_dir) sig_lines = read_signature_lines(r.signatures, manifest);
  for (std::size_t i = 0; i < manifest.size(); ++i) {
    const ManifestEntry& e = manifest[i];
    const std::string& c = cert_path.empty() ? e.p.certificate : cert_path;
    if (!certs.count(c)) certs.emplace(c, SignerCertificate::load(c));
    try {  // an edited manifest line: refused before anything is written
      if (certs.at(c).sha256() == e.p.certificate_sha256) recheck_prepared(certs.at(c), e.p, opt);
    } catch (const InputError& ex) {
      throw InputError(e.where + ex.what() + "; nothing was written");
    } catch (const IoError&) {  // an unreadable module: reported with that module below
    }
    // No output replaces the manifest, the signatures or this module's .sig file, and no
    // module is named twice (two workers would write it), before anything is written.
    std::vector<KeptFile> kept{{r.attach, "the manifest"}, {r.signatures, "the signatures"}};
    if (sig_dir) kept.push_back({r.signatures + "/" + std::to_string(e.index) + ".sig", "its signature file"});
    refuse_output_over(opt.out.empty() ? e.p.path : opt.out, kept);
    for (std::size_t k = 0; k < i; ++k)
      if (manifest[k].p.path == e.p.path || same_file(manifest[k].p.path, e.p.path))
        throw InputError(r.attach + ": indexes " + std::to_string(manifest[k].index) + " and " +
                         std::to_string(e.index) + " name the same module " + e.p.path + "; nothing was written");
  }
  if (sig_dir) check_signature_dir(r.signatures, manifest);
  auto work = [&](std::size_t i, const OutputRoute& to) {
    const ManifestEntry& e = manifest[i];
    ItemResult res;
    CaptureComplaints capture(res.err);
    res.exit = kExitInput;
    res.state = ItemState::failed;
    SigOrError sig =
        sig_dir ? signature_file(r.signatures, e.index)
        : sig_lines.count(e.index)
            ? sig_lines.at(e.index)
            : SigOrError(std::string("no signature in ") + r.signatures + " for index " + std::to_string(e.index));
    if (const auto* why = std::get_if<std::string>(&sig)) {
      complain(e.p.path, *why + "; module left as it is");
      return res;
    }
    (void)run_guarded(
        [&] {
          try {
            const SignerCertificate& cert = certs.at(cert_path.empty() ? e.p.certificate : cert_path);
            const SignReport rep = attach_signature_file(cert, e.p, std::get<Bytes>(sig), opt, to);
            res.bytes = rep.bytes_read;
            res.out = rep.already_attached ? printable(e.p.path) + ": already attached (it carries this signature)\n"
                                           : words.done_line(rep);
            res.exit = kExitOk;
            res.state = ItemState::done;
          } catch (const SignError& ex) {
            if (ex.reason() != SignRefusal::signature_mismatch) report_refusal(ex, e.p.path, words, res);
            else  // which signature: a wrong file in DIR, a line for another index
              complain("", std::string(ex.what()) + " (the signature from " +
                               (sig_dir ? r.signatures + "/" + std::to_string(e.index) + ".sig"
                                        : r.signatures + ", index " + std::to_string(e.index)) +
                               ")");
          }
          return res.exit;
        },
        nullptr, e.p.path);
    return res;
  };
  return run_batch("attach", manifest.size(), work, bo, manifest.size() > 1,
                   [&](std::size_t i) { return manifest[i].p.path; });
}

}  // namespace

void add_remote_options(CLI::App& sign, RemoteArgs& r) {
  sign.add_option("--prepare", r.prepare,
                  "no private key: write what the key must sign for each module to MANIFEST, one JSON line each ('-': "
                  "standard output); needs --cert");
  sign.add_option("--attach", r.attach,
                  "complete the modules of MANIFEST (from --prepare) with the signatures of --signatures, each checked "
                  "before its module is written");
  sign.add_option("--signatures", r.signatures,
                  "for --attach: a file of JSON lines {\"index\" or \"path\", \"signature\" (hex) or "
                  "\"signature_base64\"}, or a directory of INDEX.sig raw signatures");
}

bool remote_requested(const RemoteArgs& r) { return !r.prepare.empty() || !r.attach.empty() || !r.signatures.empty(); }

int run_remote(const RemoteArgs& r, const std::string& key, const std::string& cert, const SignOptions& opt,
               const BatchOptions& batch, const std::vector<std::string>& modules, const std::vector<std::string>& dirs,
               const SignWording& words) {
  const char* usage = !key.empty() ? "--prepare and --attach take no --key (the private key stays with the signer)"
                      : !r.prepare.empty() && !r.attach.empty() ? "--prepare and --attach are separate steps: give one"
                      : !r.attach.empty() && r.signatures.empty() ? "--attach needs --signatures FILE|DIR"
                      : r.attach.empty() && !r.signatures.empty() ? "--signatures is an option of --attach"
                                                                  : nullptr;
  if (usage) {
    complain("", usage);
    return kExitUsage;
  }
  if (!r.prepare.empty()) return run_prepare(r, cert, opt, batch, modules, dirs, words);
  return run_attach(r, cert, opt, batch, modules, dirs, words);
}

}  // namespace modsign::cli
