#include "config/settings_reference.h"

#include "common/http_url.h"
#include "config/forward_settings.h"
#include "config/setting_keys.h"

namespace hh::config {
namespace {

// "1024 to 1073741824": plain numbers, so a reader can paste them.
std::string allowed_text(const KeyDoc& doc) {
  std::string out;
  if (doc.range) out = std::to_string(doc.range->lo) + " to " + std::to_string(doc.range->hi);
  if (!doc.allowed.empty()) out += (out.empty() ? "" : "; ") + doc.allowed;
  return out;
}

// A Markdown table cell: '|' would end it.
std::string cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += "\\";
    out.push_back(c);
  }
  return out;
}

void add_row(std::string& out, const KeyDoc& doc, const std::string& default_value) {
  out += "| `" + doc.name + "` | " + cell(doc.type) + (doc.file_only ? " (file only)" : "") + " | `" +
         cell(default_value) + "` | " + cell(allowed_text(doc)) + " | " + cell(doc.meaning) + " |\n";
}

}  // namespace

std::string settings_reference_markdown() {
  std::string out = "| Key | Type | Default | Allowed | Meaning |\n|---|---|---|---|---|\n";
  const Settings defaults;
  for (const auto& key : setting_keys()) add_row(out, key.doc, key.show(defaults));
  const ForwardSettings forward_defaults;
  for (const auto& key : forward_keys()) add_row(out, key.doc, key.show(forward_defaults));
  return out;
}

std::vector<std::pair<std::string, std::string>> settings_in_effect(const Settings& settings) {
  std::vector<std::pair<std::string, std::string>> values;
  for (const SettingKey& key : setting_keys()) {
    if (key.doc.type == "list of tables") continue;
    values.emplace_back(key.doc.name, key.show(settings));
  }
  return values;
}

std::vector<std::vector<std::pair<std::string, std::string>>> forward_blocks_in_effect(const Settings& settings) {
  std::vector<std::vector<std::pair<std::string, std::string>>> blocks;
  for (const ForwardSettings& forward : settings.forwards) {
    auto& values = blocks.emplace_back();
    for (const ForwardKey& key : forward_keys()) {
      const std::string name(block_key(key));
      values.emplace_back(name, name == "url" ? toml_string(loggable_url(forward.url)) : key.show(forward));
    }
  }
  return blocks;
}

std::vector<std::vector<std::pair<std::string, std::string>>> teams_in_effect(const Settings& settings) {
  std::vector<std::vector<std::pair<std::string, std::string>>> teams;
  for (const TeamSettings& team : settings.service.teams) {
    teams.push_back({{"team_id", toml_string(team.team_id)},
                     {"base_url", toml_string(loggable_url(team.base_url))},
                     {"api_key_file", toml_string(team.api_key_file)}});
  }
  return teams;
}

}  // namespace hh::config
