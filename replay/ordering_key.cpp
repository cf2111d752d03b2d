#include "replay/ordering_key.h"

#include "rows/delivery_user.h"

namespace hh::replay {

OrderingKey ordering_key(std::string_view body) {
  // As the processor reads them (rows/delivery_user.h): the user its rows are written
  // under, and the user the envelope names first.
  const auto rows_user = rows::rows_user_of("webhook", "", body);
  const auto named = rows::delivery_user_of("webhook", "", body);
  OrderingKey key;
  key.user = rows_user.value_or(named.value_or(""));
  key.two_users = rows_user && named && *rows_user != *named;
  return key;
}

}  // namespace hh::replay
