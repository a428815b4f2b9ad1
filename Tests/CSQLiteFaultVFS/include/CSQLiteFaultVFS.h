// A SQLite VFS for the store's tests of failed writes (the SQLite store's test support layer).
#ifndef CSQLITEFAULTVFS_H
#define CSQLITEFAULTVFS_H

/// Registers (once) `name`: a SQLite VFS over the default one whose writes to WAL files fail
/// with SQLITE_IOERR_WRITE while ctest_failing_vfs_fail_wal_writes(1) is in effect.
int ctest_register_failing_vfs(const char *name);
void ctest_failing_vfs_fail_wal_writes(int fail);
#endif
