// Must not compile outside store/: the SQLite backend is private to the store's libraries.
#include "store/sqlite/database.h"

int layering_private_probe() { return 0; }
