// modsign — IMA template entries, measurement lists, PCR replay and modsig appraisal
// (include/modsign/ima.hpp).
#include "modsign/ima.hpp"

#include <sys/xattr.h>

#include <cctype>
#include <set>

#include "api/internal.hpp"
#include "blacklist/check.hpp"
#include "blacklist/sources.hpp"
#include "common/file.hpp"
#include "common/module_read.hpp"
#include "digest/ima.hpp"
#include "digest/ima_appraise.hpp"
#include "digest/ima_fs.hpp"
#include "digest/ima_main.hpp"
#include "digest/ima_queue.hpp"

namespace modsign {

namespace {

crypto::HashAlgo hash_named(std::string_view name, const char* what) {
  auto h = crypto::hash_by_name(name);
  if (!h) throw UsageError("unknown " + std::string(what) + " '" + std::string(name) + "'");
  return *h;
}

/// The value of security.ima, if the file has one that can be read.
std::optional<Bytes> security_ima_of(const std::string& path) {
  const ssize_t want = ::getxattr(path.c_str(), "security.ima", nullptr, 0);
  if (want <= 0) return std::nullopt;
  Bytes buf(static_cast<std::size_t>(want));
  const ssize_t n = ::getxattr(path.c_str(), "security.ima", buf.data(), buf.size());
  if (n <= 0) return std::nullopt;
  buf.resize(static_cast<std::size_t>(n));
  return buf;
}

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t"));
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.pop_back();
  return s;
}

void check_template_name(const std::string& template_name) {
  if (template_name != "ima-ng" && template_name != "ima-sig" && template_name != "ima-modsig" &&
      template_name != "ima-ngv2" && template_name != "ima-sigv2")
    throw UsageError("unknown template '" + template_name + "' (ima-ng, ima-sig, ima-modsig, ima-ngv2, ima-sigv2)");
}

// digest::ima_template; a hash the kernel would use but modsign cannot compute (ENOPKG) is an
// input error naming `label` (the file), as for ima_appraise_file.
Result<TemplateEntry> template_named(const std::string& label, const std::string& template_name,
                                     const std::string& recorded_path, ByteView file,
                                     const std::optional<Bytes>& security_ima, const KernelProfile& profile,
                                     const TemplateOptions& options) {
  auto e = digest::ima_template(template_name, recorded_path, file, security_ima, api::to_model(profile),
                                hash_named(options.ima_hash, "IMA hash"), options.side_sha256);
  if (!e && e.error().code == KErr::enopkg) throw InputError(label + ": " + e.error().message);
  return e;
}
}  // namespace

Result<TemplateEntry> ima_template(const std::string& template_name, const std::string& recorded_path, ByteView file,
                                   const std::optional<Bytes>& security_ima, const KernelProfile& profile,
                                   const TemplateOptions& options) {
  check_template_name(template_name);
  return template_named(recorded_path, template_name, recorded_path, file, security_ima, profile, options);
}

std::string ima_hash_setup(std::string_view name, const KernelProfile& profile) {
  return std::string(crypto::hash_info(digest::ima_hash_setup(name, api::to_model(profile))).name);
}

TemplateEntry ima_buffer_template(const std::string& event_name, ByteView buf, const std::string& ima_hash,
                                  const KernelProfile& profile) {
  return digest::ima_buffer_template(event_name, buf, hash_named(ima_hash, "IMA hash"), api::to_model(profile));
}

Result<TemplateEntry> ima_template_file(const std::string& template_name, const std::string& path,
                                        const std::string& recorded_path, const KernelProfile& profile,
                                        const TemplateOptions& options) {
  const Bytes file = read_module_bytes(path, options.max_size);
  check_template_name(template_name);
  return template_named(path, template_name, recorded_path.empty() ? path : recorded_path, file, security_ima_of(path),
                        profile, options);
}

std::optional<std::size_t> pcr_bank_size(std::string_view bank) {
  auto h = crypto::hash_by_name(bank);
  if (!h) return std::nullopt;
  return crypto::hash_info(*h).size;
}

Result<std::vector<MeasurementRecord>> parse_measurement_list(ByteView list, std::string_view bank,
                                                              std::optional<ByteOrder> order) {
  return digest::parse_measurement_list(list, hash_named(bank, "bank"), order);
}

Result<std::map<std::uint32_t, Bytes>> read_expected_pcrs(const std::string& path, std::string_view bank) {
  hash_named(bank, "bank");  // a usage error before any reading
  const Bytes text = FileReader(path).read_to_end(kMaxSmallFileSize);
  return parse_expected_pcrs(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()), bank);
}

Result<std::map<std::uint32_t, Bytes>> parse_expected_pcrs(std::string_view text, std::string_view bank) {
  const auto want = hash_named(bank, "bank");
  const std::size_t size = crypto::hash_info(want).size;
  auto bad_line = [](std::size_t lineno, const std::string& line) {
    return make_error(KErr::einval, "line " + std::to_string(lineno) + ": not a PCR value: " + line);
  };
  std::map<std::uint32_t, std::string> hexes;
  std::string section;  // the current tpm2_pcrread bank header, if any
  std::size_t lineno = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t nl = text.find('\n', pos);
    const std::string line(text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos));
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++lineno;
    const std::string t = trim(line);
    if (t.empty()) continue;
    if (t.back() == ':' && crypto::hash_by_name(t.substr(0, t.size() - 1))) {
      section = t.substr(0, t.size() - 1);
      continue;
    }
    // [label] digits [:= ws]* [0x] hex, the hex possibly spaced.
    std::size_t i = 0;
    while (i < t.size() && !std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
    std::string digits;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) digits += t[i++];
    while (i < t.size() && (t[i] == ':' || t[i] == ' ' || t[i] == '\t' || t[i] == '=')) ++i;
    if (i + 1 < t.size() && t[i] == '0' && (t[i + 1] == 'x' || t[i + 1] == 'X')) i += 2;
    std::string hex;
    for (; i < t.size(); ++i) {
      const char c = t[i];
      if (c == ' ' || c == '\t') continue;
      if (!std::isxdigit(static_cast<unsigned char>(c))) return bad_line(lineno, line);
      hex += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (digits.empty() || hex.empty() || digits.size() > 3) return bad_line(lineno, line);
    if (!section.empty() && crypto::hash_by_name(section) != want) continue;  // another bank
    if (!hexes.emplace(static_cast<std::uint32_t>(std::stoul(digits)), hex).second)
      return make_error(KErr::einval, "line " + std::to_string(lineno) + ": PCR " + digits + " given twice");
  }
  if (hexes.empty()) return make_error(KErr::einval, "no PCR value for bank " + std::string(bank) + " in this file");
  std::map<std::uint32_t, Bytes> out;
  for (const auto& [idx, hex] : hexes) {
    if (hex.size() != 2 * size)
      return make_error(KErr::einval, "PCR " + std::to_string(idx) + ": " + std::to_string(hex.size() / 2) +
                                          " bytes, a " + std::string(bank) + " PCR has " + std::to_string(size));
    out.emplace(idx, from_hex(hex));
  }
  return out;
}

namespace {
/// The PCRs a replay gives (`pcrs`), plus every PCR of `expected` the list never extends
/// (at its zero reset value), each with its expectation, sorted by index.
std::vector<PcrReplay> pcr_results(std::map<std::uint32_t, Bytes> pcrs, crypto::HashAlgo h,
                                   const std::map<std::uint32_t, Bytes>& expected) {
  std::set<std::uint32_t> extended;
  for (const auto& [idx, v] : pcrs) extended.insert(idx);
  for (const auto& [idx, v] : expected) pcrs.try_emplace(idx, Bytes(crypto::hash_info(h).size, 0));
  std::vector<PcrReplay> out;
  for (auto& [idx, v] : pcrs) {
    PcrReplay r{idx, std::move(v), std::nullopt, extended.count(idx) != 0};
    if (auto it = expected.find(idx); it != expected.end()) r.expected = it->second;
    out.push_back(std::move(r));
  }
  return out;
}
}  // namespace

std::vector<PcrReplay> replay_pcrs(const std::vector<MeasurementRecord>& records, std::string_view bank,
                                   const std::map<std::uint32_t, Bytes>& expected) {
  const auto h = hash_named(bank, "bank");
  return pcr_results(digest::replay_pcrs(records, h), h, expected);
}

Result<ListReplay> replay_measurement_list_file(
    const std::string& path, std::string_view bank, const std::map<std::uint32_t, Bytes>& expected,
    const std::function<void(std::uint64_t, const MeasurementRecord&)>& each, std::optional<ByteOrder> order) {
  const auto h = hash_named(bank, "bank");
  digest::MeasurementListReader reader(path, h, order);
  digest::PcrReplayer replayer(h);
  ListReplay out;
  for (;;) {
    auto r = reader.next();
    if (!r) return r.error();
    if (!*r) break;
    const MeasurementRecord& rec = **r;
    ++out.records;
    out.violations += rec.violation;
    out.template_hash_mismatches += rec.template_hash_mismatch();
    replayer.extend(rec);
    if (each) each(out.records, rec);
  }
  out.pcrs = pcr_results(replayer.pcrs(), h, expected);
  out.byte_order = reader.byte_order();
  return out;
}

Appraisal ima_appraise_modsig(const std::string& path, const TrustStore& ima, const KernelProfile& profile,
                              const AppraiseOptions& options) {
  const cms::KernelModel kp = api::to_model(profile);
  const auto ih = hash_named(options.ima_hash, "IMA hash");
  const digest::ModuleFile f = digest::read_module_file(path, options.max_size);
  const auto& t = impl_of(ima);
  return digest::ima_appraise_modsig(f, t.keyring, kp, ih, [&]() -> std::optional<digest::ImaBlacklistHit> {
    // The key an imasig|modsig rule looks up, and where the blacklist has it.
    const auto v = blacklist::check_module(f.stored, f.m, t.sources, {}, kp, ih);
    for (const auto& s : v.stops)
      if (s.ima_buffer && !s.imasig_only) return digest::ImaBlacklistHit{s.entry, s.err, *s.ima_buffer};
    return std::nullopt;
  });
}

}  // namespace modsign
