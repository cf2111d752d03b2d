#include "store/postgres/read/pg_listings.h"

namespace hh::store::pgread {

pg::Params params_of(const QueryArgs& args) {
  pg::Params params;
  for (size_t i = 0; i < args.size(); ++i) {
    const QueryArg& arg = args[i];
    switch (arg.kind) {
      case QueryArg::Kind::null: params.add_null(); break;
      case QueryArg::Kind::integer: params.add(arg.integer); break;
      case QueryArg::Kind::text: params.add(arg.text); break;
    }
  }
  return params;
}

Result<void> TwoWayListing::open_cursor(std::string_view sql, const pg::Params& params) {
  close();
  from_cursor_ = true;
  return cursor_.open(sql, params);
}

Result<void> TwoWayListing::open_listing(std::string_view sql, const pg::Params& params) {
  close();
  from_cursor_ = false;
  return listing_.open(sql, params);
}

Result<bool> TwoWayListing::next(ResultRow& row) {
  if (from_cursor_) return cursor_.next(row);
  return listing_.next(row);
}

void TwoWayListing::close() {
  cursor_.close();
  listing_.close();
}

}  // namespace hh::store::pgread
