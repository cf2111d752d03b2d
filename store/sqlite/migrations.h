#pragma once
// The schema's migrations, in order: migration i (0-based) brings user_version from i to
// i + 1. Each is applied with its user_version bump in one transaction.
#include <vector>

#include "store/migration.h"

namespace hh::store {

const std::vector<Migration>& migrations();

}  // namespace hh::store
