#include "store/postgres/derived/pg_derived_writer.h"

namespace hh::store {

template class DerivedWriterOf<PgWrites>;

}  // namespace hh::store
