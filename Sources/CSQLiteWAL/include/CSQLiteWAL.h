// A SQLite VFS that writes each commit's WAL frames in one system call.
#ifndef CSQLITEWAL_H
#define CSQLITEWAL_H

#include <sqlite3.h>

/// The name the VFS registers under; pass it to sqlite3_open_v2.
#define CSQLITEWAL_VFS_NAME "moderation-wal"

/// Registers the VFS (once per process; later calls return the first call's result). It wraps
/// the default VFS and changes one thing: the WAL's writes. SQLite writes every WAL frame as two
/// `pwrite`s (its 24-byte header, then the page); this VFS gathers a WAL file's consecutive
/// writes in a buffer and writes them as one `pwrite` when the commit's last frame is complete,
/// before SQLite publishes the commit to readers — so an error is still the COMMIT's. Anything
/// else that touches the WAL file (a read, a sync, a truncation, its size, a write elsewhere,
/// closing it) writes the buffer first. Returns SQLITE_OK or SQLite's error code.
int csqlitewal_register(void);

/// Registers another instance of the VFS under `name`, over the VFS named `baseName` (NULL: the
/// default) — a test's fault-injecting VFS, say. The name is copied; the base VFS must stay registered.
int csqlitewal_register_over(const char *baseName, const char *name);

/// How many writes the WAL of `db`'s main database has handed to the wrapped VFS since the
/// connection opened it; -1 when the connection is not in WAL mode through this VFS. For tests.
sqlite3_int64 csqlitewal_writes(sqlite3 *db);

#endif
