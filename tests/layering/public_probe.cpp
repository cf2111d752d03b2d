// Compiles: store/processing_store.h is one of store/'s public headers.
#include "store/processing_store.h"

int layering_public_probe() { return 0; }
