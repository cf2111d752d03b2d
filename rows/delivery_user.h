#pragma once
// Whom an inbox row is about, read from the row itself: for the outcome the processor
// records (delivery_outcomes.user_id, by which `healthhook purge-user` finds the row once
// its body is gone: store/erasure_plan.h) when its parse did not name the user (an invalid
// delivery), and for erasure of rows not applied yet. The places looked at are the ones the
// processor takes user ids from (delivery_parser.cpp):
//   webhook rows:  the envelope's $.user_id and $.data.user_id (envelopes before Mar 2024
//                  carry only the latter); both are read, so a row naming the user in
//                  either place is theirs, whether or not it was valid.
//   fetched rows:  the fetch context's user_id (InboxRow::headers_json); every item of a
//                  fetched page is about the user in the request path.
// A body that is almost a JSON object (bytes that are not UTF-8, something after its
// closing brace: a signed delivery the parser marks invalid) is read up to the object's
// end without a UTF-8 check, its ids kept when they are valid UTF-8; any other body that
// is not a JSON object (cut short, an array, broken before its end) names the user of its
// first `"user_id": "<string>"`, wherever it stands. Best effort by design: it never fails.
#include <optional>
#include <string>
#include <string_view>

namespace hh::rows {

// The user the row names first: a webhook's $.user_id, else its $.data.user_id; a fetched
// row's context user_id. nullopt when it names nobody. The processor records it with the
// row's outcome when its parse did not say (an invalid delivery): DeliveryRows::delivery_user.
std::optional<std::string> delivery_user_of(std::string_view origin, std::string_view headers_json,
                                            std::string_view body);

// The user the row's derived rows are written under: a webhook's $.data.user_id, else its
// $.user_id, read as the parser reads them (delivery_parser.cpp fills a row's user from
// the envelope only where data has none; the last user_id of an object wins, only the
// first "data" counts, a number is its JSON text); a fetched row's context user_id. What
// PostgreSQL's processing shards follow (store/postgres/processing_shards.h), so that
// every row of one user is applied by one session.
std::optional<std::string> rows_user_of(std::string_view origin, std::string_view headers_json,
                                        std::string_view body);

// True when the row (origin "webhook" or "fetch") names `user_id` in one of the places above.
bool delivery_names_user(std::string_view origin, std::string_view headers_json, std::string_view body,
                         std::string_view user_id);

}  // namespace hh::rows
