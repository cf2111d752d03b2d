#include "store/sqlite/queries/query_statements.h"

namespace hh::store {

void bind_args(sqlite::Statement& statement, const QueryArgs& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const QueryArg& arg = args[i];
    const int index = static_cast<int>(i + 1);
    switch (arg.kind) {
      case QueryArg::Kind::null: statement.bind_null(index); break;
      case QueryArg::Kind::integer: statement.bind(index, arg.integer); break;
      case QueryArg::Kind::text: statement.bind(index, arg.text); break;
    }
  }
}

}  // namespace hh::store
