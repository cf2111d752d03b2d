#include "store/sqlite/derived/sqlite_derived_writer.h"

namespace hh::store {

template class DerivedWriterOf<SqliteWrites>;

}  // namespace hh::store
