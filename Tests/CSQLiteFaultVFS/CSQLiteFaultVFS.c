// A SQLite VFS over the default one whose WAL writes fail on demand (SQLITE_IOERR_WRITE), for
// the tests of what a failed write does.
#include "CSQLiteFaultVFS.h"
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct FailingFile {
    sqlite3_file base;
    sqlite3_file *real;
    int isWAL;
} FailingFile;

static atomic_int failWALWrites;
static sqlite3_io_methods failingMethods;
static sqlite3_vfs failingVFS;

#define REAL(handle) (((FailingFile *)(handle))->real)

static int failingClose(sqlite3_file *f) { return REAL(f)->pMethods->xClose(REAL(f)); }
static int failingRead(sqlite3_file *f, void *d, int n, sqlite3_int64 o) { return REAL(f)->pMethods->xRead(REAL(f), d, n, o); }
static int failingWrite(sqlite3_file *f, const void *d, int n, sqlite3_int64 o) {
    if (((FailingFile *)f)->isWAL && atomic_load(&failWALWrites)) return SQLITE_IOERR_WRITE;
    return REAL(f)->pMethods->xWrite(REAL(f), d, n, o);
}
static int failingTruncate(sqlite3_file *f, sqlite3_int64 s) { return REAL(f)->pMethods->xTruncate(REAL(f), s); }
static int failingSync(sqlite3_file *f, int flags) { return REAL(f)->pMethods->xSync(REAL(f), flags); }
static int failingFileSize(sqlite3_file *f, sqlite3_int64 *s) { return REAL(f)->pMethods->xFileSize(REAL(f), s); }
static int failingLock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int failingUnlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int failingCheck(sqlite3_file *f, int *r) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), r); }
static int failingControl(sqlite3_file *f, int op, void *a) { return REAL(f)->pMethods->xFileControl(REAL(f), op, a); }
static int failingSector(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int failingDevice(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int failingShmMap(sqlite3_file *f, int p, int s, int e, void volatile **a) { return REAL(f)->pMethods->xShmMap(REAL(f), p, s, e, a); }
static int failingShmLock(sqlite3_file *f, int o, int n, int fl) { return REAL(f)->pMethods->xShmLock(REAL(f), o, n, fl); }
static void failingShmBarrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int failingShmUnmap(sqlite3_file *f, int d) { return REAL(f)->pMethods->xShmUnmap(REAL(f), d); }
static int failingFetch(sqlite3_file *f, sqlite3_int64 o, int n, void **p) { return REAL(f)->pMethods->xFetch(REAL(f), o, n, p); }
static int failingUnfetch(sqlite3_file *f, sqlite3_int64 o, void *p) { return REAL(f)->pMethods->xUnfetch(REAL(f), o, p); }

static int failingOpen(sqlite3_vfs *self, sqlite3_filename name, sqlite3_file *handle, int flags, int *outFlags) {
    sqlite3_vfs *base = self->pAppData;
    FailingFile *file = (FailingFile *)handle;
    memset(file, 0, sizeof *file);
    file->real = (sqlite3_file *)(file + 1);
    int status = base->xOpen(base, name, file->real, flags, outFlags);
    if (file->real->pMethods == NULL) return status;
    file->isWAL = (flags & SQLITE_OPEN_WAL) != 0;
    file->base.pMethods = &failingMethods;
    return status;
}

/// Not thread-safe: the tests call it from one place, under a Swift `static let`.
int ctest_register_failing_vfs(const char *name) {
    static int registered = 0;
    if (registered) return SQLITE_OK;
    sqlite3_vfs *base = sqlite3_vfs_find(NULL);
    if (base == NULL) return SQLITE_ERROR;
    failingMethods = (sqlite3_io_methods){
        3, failingClose, failingRead, failingWrite, failingTruncate, failingSync, failingFileSize, failingLock,
        failingUnlock, failingCheck, failingControl, failingSector, failingDevice, failingShmMap, failingShmLock,
        failingShmBarrier, failingShmUnmap, failingFetch, failingUnfetch,
    };
    failingVFS = *base;
    failingVFS.szOsFile = (int)sizeof(FailingFile) + base->szOsFile;
    // SQLite keeps the name pointer, and Swift passes a temporary: keep a copy for the process.
    failingVFS.zName = strdup(name);
    if (failingVFS.zName == NULL) return SQLITE_NOMEM;
    failingVFS.pAppData = base;
    failingVFS.pNext = NULL;
    failingVFS.xOpen = failingOpen;
    int status = sqlite3_vfs_register(&failingVFS, 0);
    registered = status == SQLITE_OK;
    return status;
}

void ctest_failing_vfs_fail_wal_writes(int fail) { atomic_store(&failWALWrites, fail); }
