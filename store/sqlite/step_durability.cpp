#include "store/sqlite/step_durability.h"

#include <string>

namespace hh::store {
namespace {
constexpr int64_t kNormal = 1;
}

Result<StepDurability> StepDurability::create(sqlite::Connection& db) {
  auto level = db.query_int("PRAGMA synchronous");
  if (!level) return fail(level);
  return StepDurability(db, level->value_or(kNormal));
}

Result<void> StepDurability::relax() {
  if (configured_level_ <= kNormal) return {};
  return db_->exec("PRAGMA synchronous = NORMAL");
}

Result<void> StepDurability::restore() {
  if (configured_level_ <= kNormal) return {};
  return db_->exec("PRAGMA synchronous = " + std::to_string(configured_level_));
}

}  // namespace hh::store
