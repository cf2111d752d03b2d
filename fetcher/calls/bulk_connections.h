#pragma once
// Bulk export and import of provider connections (service interface: POST
// /v2/link/bulk_export, POST /v2/link/bulk_import): a migration feature the service
// enables on request. A connection travels as a ConnectionRecipe, a JSON object with the
// user's OAuth tokens (recipe_file.h keeps them in a file).
//
// Tokens are secrets: they go only into the request body. No error names them: a failed
// import's answer is shown with every token of its batch redacted.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "fetcher/calls/service_request.h"
#include "fetcher/service_values.h"

namespace hh::fetcher {

// The `provider` enum of both endpoints (non-exhaustive in the interface, but the
// endpoints are a feature the service enables per provider: a value outside it is refused
// before any request).
bool is_bulk_provider(std::string_view provider);
std::string bulk_providers_list();  // "oura, fitbit, …" for a message

// Connections per import request: the interface sets no limit; a batch is one request,
// reported on its own.
inline constexpr size_t kImportBatchDefault = 100;
inline constexpr size_t kImportBatchMax = 1000;

// Pages POST /v2/link/bulk_export {provider, user_ids, next_token} until next_token is
// null; `write_recipe` gets each recipe of `data` as minified JSON. An item that is not
// an object with a user_id is an error (without its content); so is a user on two pages
// (import would refuse the file), a next_token that repeats, or more than `max_pages`
// pages (service_values.h; tests lower it). Returns the count.
Result<size_t> export_connections(const ServiceAccess& access, std::string_view provider,
                                  const std::optional<std::vector<std::string>>& user_ids,
                                  const std::function<Result<void>(std::string_view recipe)>& write_recipe,
                                  int64_t max_pages = kMaxCursorPages);

struct ImportAnswer {
  unsigned status = 0;  // 200: done; 202: queued (still running at the service)
  // The answer's user_ids_imported and user_ids_failed: required with 200; a 202's body is
  // not shown in the interface, so they are read when present (`lists` says whether).
  bool lists = false;
  std::vector<std::string> imported, failed;
};

// POST /v2/link/bulk_import {provider, connections: recipes, wait_for_completion: wait}.
// `recipes` are JSON objects (checked: recipe_file.h); `tokens` are their token values,
// redacted from any error. With `wait` the service may hold the answer up to 20 s.
Result<ImportAnswer> import_connections(const ServiceAccess& access, std::string_view provider,
                                        const std::vector<std::string>& recipes, bool wait,
                                        const std::vector<std::string>& tokens);

}  // namespace hh::fetcher
