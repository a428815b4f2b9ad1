// SQLite (Debian's libsqlite3-dev), the embedded store.
#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast macro Swift cannot import: bind calls use it to make SQLite copy.
static inline sqlite3_destructor_type csqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// sqlite3_db_config is variadic; this sets one integer option (e.g. SQLITE_DBCONFIG_DEFENSIVE).
static inline int csqlite_db_config_int(sqlite3 *db, int option, int value) {
    return sqlite3_db_config(db, option, value, (int *)0);
}

/// sqlite3_config is variadic; this turns SQLite's memory statistics off (process-wide, before
/// the first connection opens), so that allocations stop taking a global mutex.
static inline int csqlite_config_memstatus(int enabled) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, enabled);
}
#endif
