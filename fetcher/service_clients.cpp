#include "fetcher/service_clients.h"

#include "common/uuid_text.h"

namespace hh::fetcher {

Result<void> check_api_key(std::string_view key, std::string_view setting) {
  if (key.empty()) return fail(std::string(setting) + ": the API key is empty");
  if (key.find_first_of("\r\n") != std::string_view::npos) {
    return fail(std::string(setting) + ": the API key contains a line break");
  }
  return {};
}

Result<std::unique_ptr<ServiceClients>> ServiceClients::create(boost::asio::any_io_executor executor,
                                                               BaseUrl primary_base, const ClientOptions& options,
                                                               const std::vector<TeamAccess>& teams) {
  std::unique_ptr<ServiceClients> clients(new ServiceClients());
  auto primary = HttpsClient::create(executor, std::move(primary_base), options);
  if (!primary) return fail(primary);
  clients->primary_ = std::move(*primary);
  for (size_t i = 0; i < teams.size(); ++i) {
    const TeamAccess& team = teams[i];
    const std::string where = "service.teams[" + std::to_string(i) + "]";
    auto base = BaseUrl::parse(team.base_url);
    if (!base) return fail(base, where + ".base_url");
    if (auto key = check_api_key(team.api_key, where + ".api_key_file"); !key) return fail(key);
    ClientOptions team_options = options;
    team_options.api_key = team.api_key;
    auto client = HttpsClient::create(executor, std::move(*base), team_options);
    if (!client) return fail(client, where);
    clients->teams_.emplace_back(team.team_id, std::move(*client));
  }
  return clients;
}

size_t ServiceClients::team_index(std::string_view team_id) const {
  size_t index = 0;
  // A delivery may name the team in capitals: the same UUID, the same team.
  while (index < teams_.size() && (team_id.empty() || !same_uuid(teams_[index].first, team_id))) ++index;
  return index;
}

HttpsClient& ServiceClients::for_team(std::string_view team_id) {
  const size_t index = team_index(team_id);
  return index < teams_.size() ? *teams_[index].second : *primary_;
}

std::string ServiceClients::base_url_setting(std::string_view team_id) const {
  const size_t index = team_index(team_id);
  return index < teams_.size() ? "service.teams[" + std::to_string(index) + "].base_url" : "service.base_url";
}

void ServiceClients::close_all() {
  primary_->close_all();
  for (auto& team : teams_) team.second->close_all();
}

uint64_t ServiceClients::connections_opened() const {
  uint64_t opened = primary_->connections_opened();
  for (const auto& team : teams_) opened += team.second->connections_opened();
  return opened;
}

}  // namespace hh::fetcher
