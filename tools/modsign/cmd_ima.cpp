// `modsign ima template|replay|appraise`: the template data and hashes IMA records for a
// file, the replay of a binary measurement list, and what an enforcing IMA appraise rule
// for MODULE_CHECK with appraise_type=imasig|modsig does with each module file
// (include/modsign/ima.hpp: ima_template_file, parse_measurement_list, parse_expected_pcrs,
// replay_pcrs, ima_appraise_modsig); `ima sign` and `ima verify` are in cmd_ima_sign.cpp
// and cmd_ima_verify.cpp.  Flags, calls and printing only.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <modsign/ima.hpp>
#include <modsign/output.hpp>
#include <modsign/profile.hpp>
#include <modsign/trust.hpp>

#include "cli_common.hpp"
#include "cmd_ima.hpp"
#include "cmd_ima_fit.hpp"
#include "common/file.hpp"
#include "options.hpp"
#include "registry.hpp"
#include "report_render.hpp"

namespace modsign::cli {

namespace {

struct AppraiseArgs {
  TrustOptions trust;
  std::vector<std::string> modules;
  std::string kernel = "v7.0", ima_hash = "sha256";
  std::vector<std::string> kernel_lacks;
  ByteOrderOptions byte_order;
  bool waive = false, json = false;
  std::uint64_t max_size = kMaxModuleSize;  // --max-size
};

int cmd_appraise(const AppraiseArgs& a) {
  auto profile = public_profile(a.kernel);
  apply_kernel_lacks(profile, a.kernel_lacks);
  if (!apply_byte_order(profile, a.byte_order)) return kExitUsage;
  set_waive_option(profile, a.waive);
  (void)ima_hash_option(a.ima_hash, profile);
  const auto trust = load_trust(a.trust, profile);
  int worst = kExitOk;
  for (const auto& path : a.modules) {
    const auto g = guarded(path, [&] { return ima_appraise_modsig(path, trust, profile, {a.ima_hash, a.max_size}); });
    const std::optional<Appraisal>& ap = g.value;
    if (!ap) {  // as verify --json: line N stays input N (the message is on stderr too)
      worst = std::max(worst, g.status);
      if (a.json) std::cout << dump(appraisal_error_json(path, profile, g.reason)) << "\n";
      continue;
    }
    if (!ap->passes()) worst = std::max(worst, kExitVerdict);
    std::cout << (a.json ? dump(to_json(*ap, path, profile)) + "\n" : to_text(*ap, path));
  }
  return worst;
}

struct ImaArgs {
  std::string template_name = "ima-modsig", path, kernel = "v7.2", ima_hash = "sha256", bank = "sha1", pcrs;
  std::string file, security_ima;
  std::string list_order = "auto";  // ima replay --byte-order
  ByteOrderOptions byte_order;      // ima template
  std::vector<std::string> kernel_lacks;
  bool side = false, json = false, strict = false;
  std::uint64_t max_size = kMaxModuleSize;  // --max-size (ima template)
};

int cmd_ima_template(const ImaArgs& a) {
  auto profile = public_profile(a.kernel);
  apply_kernel_lacks(profile, a.kernel_lacks);
  if (!apply_byte_order(profile, a.byte_order)) return kExitUsage;
  (void)ima_hash_option(a.ima_hash, profile);
  Result<TemplateEntry> e = make_error(KErr::einval, "");
  std::optional<Bytes> security_ima;
  if (!a.security_ima.empty()) {
    try {
      security_ima = from_hex(a.security_ima);
    } catch (const std::invalid_argument&) {
      complain("", "--security-ima: not hex: " + a.security_ima);
      return kExitUsage;
    }
  }
  const std::string recorded = a.path.empty() ? a.file : a.path;
  try {
    if (security_ima)  // the value given instead of the file's own
      e = ima_template(a.template_name, recorded, read_file(a.file, a.max_size), security_ima, profile,
                       {a.ima_hash, a.side, a.max_size});
    else e = ima_template_file(a.template_name, a.file, a.path, profile, {a.ima_hash, a.side, a.max_size});
  } catch (const IoError& err) {
    complain("", err.what());
    if (a.json) std::cout << dump({{"path", a.file}, {"error", without_path(a.file, err.what())}}) << "\n";
    return kExitInput;
  } catch (const InputError& err) {  // a hash modsign cannot compute: named after FILE
    const std::string why = without_path(a.file, without_path(recorded, err.what()));
    complain(a.file, why);
    if (a.json) std::cout << dump({{"path", a.file}, {"error", why}}) << "\n";
    return kExitInput;
  } catch (const UsageError& err) {  // an unknown template: a usage error, about the option
    complain("", std::string("--template: ") + err.what());
    return kExitUsage;
  }
  if (!e) {  // with --json a line for the input too, as info --json
    const std::string why = std::string(errno_name(e.error().code)) + ": " + e.error().message;
    complain(a.file, why);
    if (a.json) std::cout << dump({{"path", a.file}, {"error", why}}) << "\n";
    return kExitVerdict;
  }
  for (const auto& n : e->notes) complain(a.file, "note: " + n);
  if (a.json) {
    nlohmann::json f = nlohmann::json::array();
    for (const auto& fld : e->fields)
      f.push_back({{"name", fld.name}, {"hex", to_hex(fld.data)}, {"length", fld.data.size()}});
    std::cout << dump({{"template", e->name},
                       {"kernel", profile.name()},
                       {"fields", f},
                       {"template_data", to_hex(e->data)},
                       {"kernel_arch", machine_name(profile.machine())},
                       {"byte_order", byte_order_name(profile.byte_order())},
                       {"ima_canonical_fmt", profile.ima_canonical_fmt()},
                       {"field_length_order", byte_order_name(profile.ima_byte_order())},
                       {"side_sha256", a.side},
                       {"template_hash_sha1", to_hex(e->sha1)},
                       {"template_hash_sha256", to_hex(e->sha256)},
                       {"notes", e->notes}})
              << "\n";
    return kExitOk;
  }
  std::cout << "template: " << e->name << " (kernel " << profile.name() << ", " << machine_name(profile.machine())
            << ", " << byte_order_name(profile.byte_order())
            << (profile.ima_canonical_fmt() ? ", ima_canonical_fmt" : "") << (a.side ? ", side SHA-256 d-modsig" : "")
            << ")\n";
  for (const auto& fld : e->fields)
    std::cout << "  " << fld.name << " (" << fld.data.size()
              << " bytes): " << (fld.data.size() > 48 ? to_hex(ByteView(fld.data).first(48)) + "..." : to_hex(fld.data))
              << "\n";
  std::cout << "  template hash sha1:   " << to_hex(e->sha1) << "\n  template hash sha256: " << to_hex(e->sha256)
            << "\n";
  return kExitOk;
}

namespace {
/// The expected PCRs of --pcrs FILE (empty without it), or the exit status of an error.
std::variant<std::map<std::uint32_t, Bytes>, int> expected_pcrs(const ImaArgs& a) {
  if (a.pcrs.empty()) return std::map<std::uint32_t, Bytes>{};
  Result<std::map<std::uint32_t, Bytes>> ex = make_error(KErr::einval, "");
  ex = read_expected_pcrs(a.pcrs, a.bank);
  if (!ex) {
    complain(a.pcrs, ex.error().message);
    return kExitInput;
  }
  return std::move(ex.value());
}

/// --byte-order of ima replay: nullopt for "auto" (the list says).
std::optional<ByteOrder> list_order(const ImaArgs& a) {
  if (a.list_order == "auto") return std::nullopt;
  return a.list_order == "big" ? ByteOrder::big : ByteOrder::little;
}

nlohmann::json violation_json(std::uint64_t i, const MeasurementRecord& r) {
  return {{"record", i}, {"offset", r.offset}, {"template", r.template_name}, {"file", r.file_name}};
}
nlohmann::json mismatch_json(std::uint64_t i, const MeasurementRecord& r) {
  return {{"record", i},
          {"offset", r.offset},
          {"template", r.template_name},
          {"recorded", to_hex(r.digest)},
          {"recomputed", to_hex(r.recomputed)}};
}

/// `[` the records `pick` selects, as `to_json` gives them, `]`, read again from the list.
void stream_json_array(const ImaArgs& a, bool (*pick)(const MeasurementRecord&),
                       nlohmann::json (*to_json)(std::uint64_t, const MeasurementRecord&)) {
  bool first = true;
  std::cout << "[";
  (void)replay_measurement_list_file(
      a.file, a.bank, {},
      [&](std::uint64_t i, const MeasurementRecord& r) {
        if (!pick(r)) return;
        std::cout << (first ? "" : ",") << dump(to_json(i, r));
        first = false;
      },
      list_order(a));
  std::cout << "]";
}
}  // namespace

// The list is read one record at a time, twice or three times (a pass to check it and
// replay it; then the records to list, each array of --json in a pass of its own), so that
// memory does not grow with the list; nothing is printed for a list with a bad record.
int cmd_ima_replay(const ImaArgs& a) {
  if (!pcr_bank_size(a.bank)) {
    complain("", "unknown --bank '" + a.bank + "'");
    return kExitUsage;
  }
  auto ex = expected_pcrs(a);
  if (const int* st = std::get_if<int>(&ex)) return *st;
  const auto& expected = std::get<std::map<std::uint32_t, Bytes>>(ex);
  Result<ListReplay> rep = Error{};
  rep = replay_measurement_list_file(a.file, a.bank, expected, {}, list_order(a));
  if (!rep) {
    complain(a.file, rep.error().message);
    return kExitInput;
  }
  if (!expected.empty() &&
      std::none_of(rep->pcrs.begin(), rep->pcrs.end(), [](const PcrReplay& p) { return p.extended && p.expected; })) {
    std::string listed;
    for (const auto& p : rep->pcrs)
      if (p.extended) listed += (listed.empty() ? "" : ", ") + std::to_string(p.index);
    complain(a.pcrs,
             "gives none of the PCRs the list extends (" + (listed.empty() ? std::string("none") : listed) + ")");
    return kExitInput;
  }
  std::size_t pcr_mismatch = 0;
  nlohmann::json pj = nlohmann::json::object();
  for (const auto& p : rep->pcrs) {
    pj[std::to_string(p.index)] = to_hex(p.value);
    pcr_mismatch += !p.matches();
  }
  const auto is_violation = [](const MeasurementRecord& r) { return r.violation; };
  const auto is_mismatch = [](const MeasurementRecord& r) { return r.template_hash_mismatch(); };
  if (a.json) {
    // The keys in nlohmann::json's (sorted) order, the two arrays streamed.
    std::cout << "{\"bank\":" << dump(a.bank) << ",\"byte_order\":"
              << (rep->byte_order ? dump(std::string(byte_order_name(*rep->byte_order))) : std::string("null"))
              << ",\"list\":" << dump(a.file) << ",\"pcr_mismatches\":" << pcr_mismatch << ",\"pcrs\":" << dump(pj)
              << ",\"records\":" << rep->records << ",\"template_hash_mismatches\":";
    if (rep->template_hash_mismatches) stream_json_array(a, is_mismatch, mismatch_json);
    else std::cout << "[]";
    std::cout << ",\"violation_records\":";
    if (rep->violations) stream_json_array(a, is_violation, violation_json);
    else std::cout << "[]";
    std::cout << ",\"violations\":" << rep->violations << "}\n";
  } else {
    if (rep->violations || rep->template_hash_mismatches)
      (void)replay_measurement_list_file(
          a.file, a.bank, {},
          [&](std::uint64_t i, const MeasurementRecord& r) {
            if (r.violation)
              std::cout << "record " << i << " (" << printable(r.template_name) << ", offset " << r.offset
                        << "): violation: " << printable(r.file_name) << "\n";
            else if (r.template_hash_mismatch())
              std::cout << "record " << i << " (" << printable(r.template_name) << ", offset " << r.offset
                        << "): template hash " << to_hex(r.digest) << " != recomputed " << to_hex(r.recomputed) << "\n";
          },
          list_order(a));
    for (const auto& p : rep->pcrs)
      std::cout << "PCR-" << p.index << ": " << to_hex(p.value)
                << (!p.expected    ? ""
                    : !p.matches() ? "  MISMATCH (expected " + to_hex(*p.expected) + ")"
                                   : "  matches")
                << "\n";
    std::cout << counted(rep->records, "record", "records") << ", "
              << counted(rep->violations, "violation", "violations") << ", "
              << counted(rep->template_hash_mismatches, "template hash mismatch", "template hash mismatches")
              << (rep->byte_order ? " (" + std::string(byte_order_name(*rep->byte_order)) + " list" +
                                        (a.list_order == "auto" ? ", as its first record says" : "") + ")"
                                  : std::string())
              << "\n";
  }
  return rep->template_hash_mismatches || pcr_mismatch || (a.strict && rep->violations) ? kExitVerdict : kExitOk;
}

Runner setup_ima(CLI::App& ima) {
  ima.require_subcommand(1);
  Commands subs;
  auto im = std::make_shared<ImaArgs>();
  auto* t = ima.add_subcommand("template", "the template data and hashes IMA records for a file");
  t->add_option("--template", im->template_name, "ima-modsig|ima-sig|ima-ng|ima-sigv2|ima-ngv2")->capture_default_str();
  t->add_option("--path", im->path, "the path IMA would record (n-ng); default: FILE");
  add_kernel_option(t, im->kernel);
  add_kernel_lacks_option(t, im->kernel_lacks);
  add_ima_hash_option(t, im->ima_hash);
  add_byte_order_options(t, im->byte_order);
  t->add_flag("--side-sha256", im->side, "d-modsig from the side SHA-256 (the proposal)");
  t->add_option("--security-ima", im->security_ima, "the file's security.ima value (hex) instead of its own xattr");
  add_json_flag(t, im->json, "");
  add_module_inputs(t, im->max_size);
  t->add_option("FILE", im->file, "file")->required();
  subs.emplace_back(t, [im] { return cmd_ima_template(*im); });

  auto* r = ima.add_subcommand("replay", "recompute template hashes and replay PCRs of a binary measurement list");
  r->add_option("--bank", im->bank,
                "digest size of the list's records: sha1 (binary_runtime_measurements), sha256, ...")
      ->capture_default_str();
  r->add_option("--pcrs", im->pcrs, "expected PCR values (lines 'PCR-10: <hex>')");
  r->add_flag("--strict", im->strict, "exit 1 when the list holds any violation record");
  r->add_option("--byte-order", im->list_order,
                "the order of the list's u32 fields: the kernel's own (big: s390x), little with ima_canonical_fmt; "
                "auto: as the first record's template name length says")
      ->check(CLI::IsMember({"auto", "little", "big"}))
      ->capture_default_str();
  add_json_flag(r, im->json, "");
  r->add_option("LIST", im->file, "binary_runtime_measurements file")->required();
  subs.emplace_back(r, [im] { return cmd_ima_replay(*im); });

  auto ap = std::make_shared<AppraiseArgs>();
  auto* c = ima.add_subcommand(
      "appraise",
      "would an enforcing 'appraise func=MODULE_CHECK appraise_type=imasig|modsig' rule let each module through");
  add_trust_options(c, ap->trust);
  add_kernel_option(c, ap->kernel);
  add_kernel_lacks_option(c, ap->kernel_lacks);
  add_waive_option(c, ap->waive);
  add_ima_hash_option(c, ap->ima_hash);
  add_byte_order_options(c, ap->byte_order);
  add_json_flag(c, ap->json);
  add_module_inputs(c, ap->max_size);
  c->add_option("MODULE", ap->modules, "modules")->required();
  subs.emplace_back(c, [ap] { return cmd_appraise(*ap); });
  add_ima_sign_command(ima, subs);
  add_ima_verify_command(ima, subs);
  add_ima_fit_commands(ima, subs);
  return run_selected(std::move(subs));
}

}  // namespace

const Registration kIma{
    {"ima", "IMA template data, measurement lists, modsig appraisal and security.ima file signatures", setup_ima}};

}  // namespace modsign::cli
