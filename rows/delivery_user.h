#pragma once
// Whom an inbox row is about, for erasure (`healthhook purge-user`, store/erasure.h).
//
// Read from the row itself, not from the derived tables: a derived row remembers only the
// delivery that last wrote it (`seq`), so earlier versions, invalid deliveries and ignored
// or unknown ones would be missed, and their raw bodies are exactly what must go. The
// places looked at are the ones the processor takes user ids from (delivery_parser.cpp):
//   webhook rows:  the envelope's $.user_id and $.data.user_id (envelopes before Mar 2024
//                  carry only the latter); both are read, so a row naming the user in
//                  either place is theirs, whether or not it was valid.
//   fetched rows:  the fetch context's user_id (InboxRow::headers_json); every item of a
//                  fetched page is about the user in the request path.
// A body that is not JSON names nobody. Best effort by design: it never fails.
#include <string_view>

namespace hh::rows {

// True when the row (origin "webhook" or "fetch") names `user_id` in one of the places above.
bool delivery_names_user(std::string_view origin, std::string_view headers_json, std::string_view body,
                         std::string_view user_id);

}  // namespace hh::rows
