#pragma once
// The service's HTTPS clients: one for [service] (the primary: its base URL and API key)
// and one per [[service.teams]] entry, so that a follow-up for a user of an EU team goes
// to the EU base URL with that team's key (issue 37, "Regions and teams"). Everything but
// the base URL and the key (header name, CA file, deadlines, limits) is [service]'s.
//
// Used on the fetcher's io thread, like the clients themselves.
#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "fetcher/https_client.h"

namespace hh::fetcher {

// A team's own base URL and key ([[service.teams]] with its key file read).
struct TeamAccess {
  std::string team_id;
  std::string base_url;
  std::string api_key;  // never logged
};

// Fails when `key` cannot be sent as a header value; `setting` names where it came from.
Result<void> check_api_key(std::string_view key, std::string_view setting);

class ServiceClients {
 public:
  // `options` carry the primary's key; each team's replaces it for that team's client.
  static Result<std::unique_ptr<ServiceClients>> create(boost::asio::any_io_executor executor, BaseUrl primary_base,
                                                        const ClientOptions& options,
                                                        const std::vector<TeamAccess>& teams);

  HttpsClient& primary() { return *primary_; }
  // The client of `team_id`'s entry (either case), or the primary for an unknown or empty team id.
  HttpsClient& for_team(std::string_view team_id);
  // The setting for_team(team_id)'s base URL came from, for a message that asks to check it:
  // "service.teams[N].base_url" or "service.base_url".
  std::string base_url_setting(std::string_view team_id) const;

  void close_all();
  uint64_t connections_opened() const;

 private:
  ServiceClients() = default;
  // The index of `team_id`'s entry in teams_ (the [[service.teams]] order), or teams_.size().
  size_t team_index(std::string_view team_id) const;
  std::unique_ptr<HttpsClient> primary_;
  std::vector<std::pair<std::string, std::unique_ptr<HttpsClient>>> teams_;
};

}  // namespace hh::fetcher
