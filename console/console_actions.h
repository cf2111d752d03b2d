#pragma once
// What the console's admin may do (docs/console.md, "Actions"), as one interface so that
// console code holds no store or service call: `serve` implements it with the same
// library calls as the commands (app/serve_console_actions.h): `forward requeue`, `forward
// pause|resume`, `jobs requeue --all-dead`, `backfill`, `refresh`.
//
// run() is called on the blocking pool, never on a thread that answers webhooks; it may
// block (a store write, a call to the service).
#include <map>
#include <string>
#include <string_view>

#include "common/result.h"

namespace hh::console {

// An action's name (the last segment of POST /console/api/actions/NAME) and its fields
// (the form-encoded body).
struct ActionRequest {
  std::string name;
  std::map<std::string, std::string, std::less<>> fields;
};

class ConsoleActions {
 public:
  virtual ~ConsoleActions() = default;
  // The action's outcome as a JSON object ({"requeued":3}, …). Error kind `data`: the
  // request is wrong (unknown action, missing field: 400); `not_found`-like errors are
  // `data` too; anything else: 500.
  virtual Result<std::string> run(const ActionRequest& request) = 0;
};

}  // namespace hh::console
