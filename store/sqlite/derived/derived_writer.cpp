#include "store/sqlite/derived/derived_writer.h"

namespace hh::store {

template class DerivedWriterOf<SqliteWrites>;

}  // namespace hh::store
