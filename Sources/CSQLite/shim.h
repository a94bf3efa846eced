#ifndef CORELOCATION_CSQLITE_SHIM_H
#define CORELOCATION_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro (a cast of -1) that Swift does not import.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
