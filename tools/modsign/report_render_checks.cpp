// modsign command line: renderers of the check reports beside verify's (report_render.hpp):
// ima appraise's Appraisal and blacklist check's BlacklistVerdict, as JSON and as text.
#include <sstream>

#include "cli_common.hpp"
#include "report_render.hpp"

namespace modsign::cli {

namespace {

std::string origins_text(const std::vector<TrustOrigin>& os) {
  std::string t;
  for (const auto& o : os) t += (t.empty() ? "" : ", ") + o.file + (o.where.empty() ? "" : " " + o.where);
  return t;
}

/// "<entry> (<origins>): <check>: <ERRNO>[ [<condition>]]".
std::string stop_text(const BlacklistStop& s) {
  std::string t = s.entry;
  if (!s.origins.empty()) t += " (" + origins_text(s.origins) + ")";
  t += ": " + s.check + ": " + std::string(errno_name(s.err));
  if (!s.condition.empty()) t += " [" + s.condition + "]";
  return t;
}

nlohmann::json or_null(const std::optional<std::string>& s) { return s ? nlohmann::json(*s) : nlohmann::json(nullptr); }

}  // namespace

std::string source_name(ModuleBlacklistEntry::Source s) {
  switch (s) {
    case ModuleBlacklistEntry::Source::d_modsig: return "d-modsig";
    case ModuleBlacklistEntry::Source::ima_hash: return "ima-hash";
    case ModuleBlacklistEntry::Source::none: break;
  }
  return "none";
}

nlohmann::json origins_json(const std::vector<TrustOrigin>& os) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& o : os) a.push_back({{"file", o.file}, {"where", o.where}});
  return a;
}

nlohmann::json to_json(const Appraisal& ap, const std::string& path, const KernelProfile& profile) {
  const bool pass = ap.passes();
  nlohmann::json j{{"path", path},
                   {"kernel", profile.name()},
                   {"outcome", pass ? "pass" : "refused"},
                   {"errno", pass ? nlohmann::json(nullptr) : nlohmann::json(errno_name(ap.err))},
                   {"cause", pass ? nlohmann::json(nullptr) : nlohmann::json(ap.cause)},
                   {"check_errno", pass ? nlohmann::json(nullptr) : nlohmann::json(errno_name(ap.check_err))},
                   {"reason", ap.reason},
                   {"trusted_by", ap.trusted_by}};
  if (ap.blacklist_entry) j["blacklist_entry"] = *ap.blacklist_entry;
  if (ap.ima_record) {
    j["ima_record"] = blacklisted_hash_record_json(*ap.ima_record);
    j["ima_record"]["field_length_order"] = byte_order_name(profile.ima_byte_order());
  }
  return j;
}

nlohmann::json appraisal_error_json(const std::string& path, const KernelProfile& profile, const std::string& reason) {
  return {
      {"path", path},     {"kernel", profile.name()}, {"outcome", "error"}, {"errno", nullptr},
      {"cause", nullptr}, {"check_errno", nullptr},   {"reason", reason},   {"trusted_by", nlohmann::json::array()}};
}

std::string to_text(const Appraisal& ap, const std::string& path) {
  if (ap.passes())
    return printable(path) + ": passes: modsig verified" +
           (ap.trusted_by.empty() ? std::string() : " (trusted: " + printable(ap.trusted_by[0]) + ")") + "\n";
  return printable(path) + ": refused (" + std::string(errno_name(ap.err)) + "): " + ap.cause + ": " +
         std::string(errno_name(ap.check_err)) + ": " + printable(ap.reason) + "\n";
}

nlohmann::json to_json(const BlacklistVerdict& v, const std::string& label, const KernelProfile& profile,
                       const std::string& ima_hash) {
  nlohmann::json j{{"path", label},
                   {"kind", v.certificate ? "certificate" : "module"},
                   {"kernel", profile.name()},
                   {"stopped", v.outcome == "refused"},
                   {"outcome", v.outcome},
                   {"errno", v.err == KErr::none ? nlohmann::json(nullptr) : nlohmann::json(errno_name(v.err))}};
  nlohmann::json stops = nlohmann::json::array();
  for (const auto& s : v.stops) {
    nlohmann::json js{{"entry", s.entry},
                      {"origins", origins_json(s.origins)},
                      {"check", s.check},
                      {"errno", errno_name(s.err)},
                      {"condition", s.condition.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.condition)}};
    if (s.ima_buffer) js["ima_record"] = blacklisted_hash_record_json(*s.ima_buffer, ima_hash);
    stops.push_back(std::move(js));
  }
  j["stops"] = stops;
  if (v.entry) {
    j["entry"] = or_null(v.entry->description);
    j["source"] = source_name(v.entry->source);
    j["side_sha256_entry"] = or_null(v.entry->side_sha256);
  } else {
    j["entry"] = or_null(v.tbs);
    j["source"] = v.tbs ? "tbs" : "none";
  }
  j["notes"] = v.notes;
  return j;
}

nlohmann::json blacklist_error_json(const std::string& path, const KernelProfile& profile, const std::string& reason) {
  return {{"path", path},
          {"kind", nullptr},
          {"kernel", profile.name()},
          {"stopped", false},
          {"outcome", "error"},
          {"errno", nullptr},
          {"stops", nlohmann::json::array()},
          {"entry", nullptr},
          {"source", nullptr},
          {"notes", nlohmann::json::array()},
          {"reason", reason}};
}

std::string to_text(const BlacklistVerdict& v, const std::string& label) {
  std::ostringstream os;
  if (v.outcome == "loads-tainted" || !v.soft_refusal.empty()) {
    // The signer's key is kept out of the keyring (ENOKEY): tainted, or refused by
    // enforcement or lockdown (the library says which).
    const std::string how = v.outcome == "loads-tainted"
                                ? "loads-tainted (ENOKEY)"  // verify's words
                                : "refused (" + std::string(errno_name(v.err)) + ", " + v.soft_refusal + ")";
    os << printable(label) << ": " << how << ": signing key not loaded: " << printable(stop_text(v.stops[0])) << "\n";
  } else if (v.stopped()) {
    os << printable(label) << ": stopped by " << printable(stop_text(v.stops[0])) << "\n";
  } else {
    os << printable(label) << ": not stopped\n";
  }
  for (std::size_t i = 1; i < v.stops.size(); ++i) os << "  also: " << printable(stop_text(v.stops[i])) << "\n";
  for (const auto& n : v.notes) os << "  note: " << printable(n) << "\n";
  return os.str();
}

}  // namespace modsign::cli
