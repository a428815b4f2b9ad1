// A SQLite VFS over the default one that coalesces the WAL's writes (see CSQLiteWAL.h).
//
// Why it is safe: SQLite writes a commit's frames, then publishes the commit by updating the
// WAL index (walIndexWriteHdr), and only then can another connection read those frames. Every
// frame is written as a 24-byte header followed by the page, and the commit's last frame is the
// one whose header carries a non-zero database size (bytes 4..7, big-endian). This VFS writes
// its buffer out right after that frame's page is handed to it, inside the same xWrite call, so
// the frames are in the file before the index points at them and a failed write fails the
// COMMIT. Frames of a transaction still in progress (a cache spill) stay buffered until then or
// until SQLite touches the file in any other way; nobody else reads uncommitted frames, and the
// writer reads its own only through xRead, which writes the buffer first.
#include "CSQLiteWAL.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/// Enough for a commit of 254 frames of 4 KiB pages; larger runs go out in pieces.
#define BUFFER_CAPACITY (1 << 20)
/// The most the unix VFS writes in one call: its seekAndWrite keeps 17 bits of the length (a
/// longer write comes back short, as SQLITE_FULL).
#define LARGEST_WRITE (1 << 16)
#define FRAME_HEADER_SIZE 24

typedef struct WALFile {
    sqlite3_file base;
    /// The wrapped VFS's file, in the same allocation right after this struct.
    sqlite3_file *real;
    /// Set for the WAL: only its writes are gathered.
    int isWAL;
    unsigned char *buffer;
    /// The file offset of buffer[0], and how many bytes are buffered from there.
    sqlite3_int64 start;
    int length;
    /// The last header written was a commit frame's: its page completes the commit.
    int commitFramePending;
    /// Writes handed to the wrapped VFS (csqlitewal_writes).
    sqlite3_int64 writes;
} WALFile;

static sqlite3_io_methods methods;
static int registered = SQLITE_ERROR;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/// The VFS an instance wraps.
#define BASE(self) ((sqlite3_vfs *)(self)->pAppData)

static int flush(WALFile *file) {
    int length = file->length;
    file->length = 0;
    for (int done = 0; done < length;) {
        int piece = length - done < LARGEST_WRITE ? length - done : LARGEST_WRITE;
        int status = file->real->pMethods->xWrite(file->real, file->buffer + done, piece, file->start + done);
        file->writes++;
        if (status != SQLITE_OK) return status;
        done += piece;
    }
    return SQLITE_OK;
}

static int fileClose(sqlite3_file *handle) {
    WALFile *file = (WALFile *)handle;
    int status = flush(file);
    int closed = file->real->pMethods->xClose(file->real);
    free(file->buffer);
    file->buffer = NULL;
    return status != SQLITE_OK ? status : closed;
}

static int fileRead(sqlite3_file *handle, void *data, int amount, sqlite3_int64 offset) {
    WALFile *file = (WALFile *)handle;
    int status = flush(file);
    if (status != SQLITE_OK) return status;
    return file->real->pMethods->xRead(file->real, data, amount, offset);
}

static int fileWrite(sqlite3_file *handle, const void *data, int amount, sqlite3_int64 offset) {
    WALFile *file = (WALFile *)handle;
    if (!file->isWAL) return file->real->pMethods->xWrite(file->real, data, amount, offset);
    int status;
    int contiguous = file->length > 0 && offset == file->start + file->length;
    if (!contiguous || file->length + amount > BUFFER_CAPACITY) {
        if ((status = flush(file)) != SQLITE_OK) return status;
    }
    if (amount > BUFFER_CAPACITY) {
        status = file->real->pMethods->xWrite(file->real, data, amount, offset);
        file->writes++;
    } else {
        if (file->buffer == NULL && (file->buffer = malloc(BUFFER_CAPACITY)) == NULL) return SQLITE_IOERR_NOMEM;
        if (file->length == 0) file->start = offset;
        memcpy(file->buffer + file->length, data, (size_t)amount);
        file->length += amount;
        status = SQLITE_OK;
    }
    if (amount == FRAME_HEADER_SIZE) {
        const unsigned char *header = data;
        // A frame header: a non-zero "database size after commit" marks the commit's last frame.
        file->commitFramePending = (header[4] | header[5] | header[6] | header[7]) != 0;
    } else if (file->commitFramePending) {
        file->commitFramePending = 0;
        if (status == SQLITE_OK) status = flush(file);
    }
    return status;
}

static int fileTruncate(sqlite3_file *handle, sqlite3_int64 size) {
    WALFile *file = (WALFile *)handle;
    int status = flush(file);
    if (status != SQLITE_OK) return status;
    return file->real->pMethods->xTruncate(file->real, size);
}

static int fileSync(sqlite3_file *handle, int flags) {
    WALFile *file = (WALFile *)handle;
    int status = flush(file);
    if (status != SQLITE_OK) return status;
    return file->real->pMethods->xSync(file->real, flags);
}

static int fileSize(sqlite3_file *handle, sqlite3_int64 *size) {
    WALFile *file = (WALFile *)handle;
    int status = flush(file);
    if (status != SQLITE_OK) return status;
    return file->real->pMethods->xFileSize(file->real, size);
}

static int fileLock(sqlite3_file *handle, int level) {
    WALFile *file = (WALFile *)handle;
    return file->real->pMethods->xLock(file->real, level);
}

static int fileUnlock(sqlite3_file *handle, int level) {
    WALFile *file = (WALFile *)handle;
    return file->real->pMethods->xUnlock(file->real, level);
}

static int fileCheckReservedLock(sqlite3_file *handle, int *result) {
    WALFile *file = (WALFile *)handle;
    return file->real->pMethods->xCheckReservedLock(file->real, result);
}

static int fileControl(sqlite3_file *handle, int op, void *argument) {
    WALFile *file = (WALFile *)handle;
    int status = flush(file);
    if (status != SQLITE_OK) return status;
    return file->real->pMethods->xFileControl(file->real, op, argument);
}

static int fileSectorSize(sqlite3_file *handle) {
    WALFile *file = (WALFile *)handle;
    return file->real->pMethods->xSectorSize(file->real);
}

static int fileDeviceCharacteristics(sqlite3_file *handle) {
    WALFile *file = (WALFile *)handle;
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}

static int fileShmMap(sqlite3_file *handle, int page, int size, int extend, void volatile **address) {
    WALFile *file = (WALFile *)handle;
    return file->real->pMethods->xShmMap(file->real, page, size, extend, address);
}

static int fileShmLock(sqlite3_file *handle, int offset, int count, int flags) {
    WALFile *file = (WALFile *)handle;
    return file->real->pMethods->xShmLock(file->real, offset, count, flags);
}

static void fileShmBarrier(sqlite3_file *handle) {
    WALFile *file = (WALFile *)handle;
    file->real->pMethods->xShmBarrier(file->real);
}

static int fileShmUnmap(sqlite3_file *handle, int deleteFlag) {
    WALFile *file = (WALFile *)handle;
    return file->real->pMethods->xShmUnmap(file->real, deleteFlag);
}

static int fileFetch(sqlite3_file *handle, sqlite3_int64 offset, int amount, void **pointer) {
    WALFile *file = (WALFile *)handle;
    int status = flush(file);
    if (status != SQLITE_OK) return status;
    return file->real->pMethods->xFetch(file->real, offset, amount, pointer);
}

static int fileUnfetch(sqlite3_file *handle, sqlite3_int64 offset, void *pointer) {
    WALFile *file = (WALFile *)handle;
    return file->real->pMethods->xUnfetch(file->real, offset, pointer);
}

static int vfsOpen(sqlite3_vfs *self, sqlite3_filename name, sqlite3_file *handle, int flags, int *outFlags) {
    WALFile *file = (WALFile *)handle;
    memset(file, 0, sizeof *file);
    file->real = (sqlite3_file *)(file + 1);
    int status = BASE(self)->xOpen(BASE(self), name, file->real, flags, outFlags);
    // SQLite calls xClose only when pMethods is set: leave it NULL when the wrapped open failed.
    if (file->real->pMethods == NULL) return status;
    file->isWAL = (flags & SQLITE_OPEN_WAL) != 0;
    file->base.pMethods = &methods;
    return status;
}

static int vfsDelete(sqlite3_vfs *self, const char *name, int syncDirectory) {
    return BASE(self)->xDelete(BASE(self), name, syncDirectory);
}

static int vfsAccess(sqlite3_vfs *self, const char *name, int flags, int *result) {
    return BASE(self)->xAccess(BASE(self), name, flags, result);
}

static int vfsFullPathname(sqlite3_vfs *self, const char *name, int size, char *out) {
    return BASE(self)->xFullPathname(BASE(self), name, size, out);
}

static void *vfsDlOpen(sqlite3_vfs *self, const char *name) {
    return BASE(self)->xDlOpen(BASE(self), name);
}

static void vfsDlError(sqlite3_vfs *self, int size, char *message) {
    BASE(self)->xDlError(BASE(self), size, message);
}

static void (*vfsDlSym(sqlite3_vfs *self, void *library, const char *symbol))(void) {
    return BASE(self)->xDlSym(BASE(self), library, symbol);
}

static void vfsDlClose(sqlite3_vfs *self, void *library) {
    BASE(self)->xDlClose(BASE(self), library);
}

static int vfsRandomness(sqlite3_vfs *self, int size, char *out) {
    return BASE(self)->xRandomness(BASE(self), size, out);
}

static int vfsSleep(sqlite3_vfs *self, int microseconds) {
    return BASE(self)->xSleep(BASE(self), microseconds);
}

static int vfsCurrentTime(sqlite3_vfs *self, double *now) {
    return BASE(self)->xCurrentTime(BASE(self), now);
}

static int vfsGetLastError(sqlite3_vfs *self, int size, char *message) {
    return BASE(self)->xGetLastError(BASE(self), size, message);
}

static int vfsCurrentTimeInt64(sqlite3_vfs *self, sqlite3_int64 *now) {
    return BASE(self)->xCurrentTimeInt64(BASE(self), now);
}

static void initializeMethods(void) {
    methods = (sqlite3_io_methods){
        .iVersion = 3,
        .xClose = fileClose,
        .xRead = fileRead,
        .xWrite = fileWrite,
        .xTruncate = fileTruncate,
        .xSync = fileSync,
        .xFileSize = fileSize,
        .xLock = fileLock,
        .xUnlock = fileUnlock,
        .xCheckReservedLock = fileCheckReservedLock,
        .xFileControl = fileControl,
        .xSectorSize = fileSectorSize,
        .xDeviceCharacteristics = fileDeviceCharacteristics,
        .xShmMap = fileShmMap,
        .xShmLock = fileShmLock,
        .xShmBarrier = fileShmBarrier,
        .xShmUnmap = fileShmUnmap,
        .xFetch = fileFetch,
        .xUnfetch = fileUnfetch,
    };
}

int csqlitewal_register_over(const char *baseName, const char *name) {
    static pthread_once_t methodsOnce = PTHREAD_ONCE_INIT;
    pthread_once(&methodsOnce, initializeMethods);
    sqlite3_vfs *base = sqlite3_vfs_find(baseName);
    // Files of version 3 (shared memory and memory-mapped reads, as the unix VFS's) and a version 2 VFS.
    if (base == NULL || base->iVersion < 2 || base->xCurrentTimeInt64 == NULL) return SQLITE_ERROR;
    sqlite3_vfs *vfs = malloc(sizeof *vfs);
    // SQLite keeps the name pointer: a copy, since callers (Swift) may pass a temporary.
    char *copy = strdup(name);
    if (vfs == NULL || copy == NULL) {
        free(vfs);
        free(copy);
        return SQLITE_NOMEM;
    }
    *vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(WALFile) + base->szOsFile,
        .mxPathname = base->mxPathname,
        .zName = copy,
        .pAppData = base,
        .xOpen = vfsOpen,
        .xDelete = vfsDelete,
        .xAccess = vfsAccess,
        .xFullPathname = vfsFullPathname,
        .xDlOpen = vfsDlOpen,
        .xDlError = vfsDlError,
        .xDlSym = vfsDlSym,
        .xDlClose = vfsDlClose,
        .xRandomness = vfsRandomness,
        .xSleep = vfsSleep,
        .xCurrentTime = vfsCurrentTime,
        .xGetLastError = vfsGetLastError,
        .xCurrentTimeInt64 = vfsCurrentTimeInt64,
    };
    int status = sqlite3_vfs_register(vfs, 0);
    // A registered VFS lives as long as the process; one that failed to register is not used.
    if (status != SQLITE_OK) {
        free(vfs);
        free(copy);
    }
    return status;
}

static void registerOnce(void) {
    registered = csqlitewal_register_over(NULL, CSQLITEWAL_VFS_NAME);
}

int csqlitewal_register(void) {
    pthread_once(&once, registerOnce);
    return registered;
}

sqlite3_int64 csqlitewal_writes(sqlite3 *db) {
    sqlite3_file *journal = NULL;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &journal) != SQLITE_OK) return -1;
    if (journal == NULL || journal->pMethods != &methods) return -1;
    WALFile *file = (WALFile *)journal;
    return file->isWAL ? file->writes : -1;
}
