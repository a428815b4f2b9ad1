// The SQLite floor of a durable mutation: what the store alone must spend on the wire bench's
// mutations, with no sockets, no threads and no Swift.
//
// It opens a database the server created (so the schema, its indexes and foreign keys are the
// server's own), sets the writer's pragmas, seeds the wire bench's shape (32 groups, each slot
// its own (group, user), the owner an admin of every group) and then runs the same cycle of
// Join → Kick → Join → Ban → Unban per slot, with the statements the server's writer runs for
// them: the member or ban row, one action row, and per commit the counters of each group
// changed and the app's head seq. A batch of `--batch` writes is one transaction, and each
// commit is made durable with one fdatasync of the WAL (what the server's completer does).
// Prints CPU time (user + system, getrusage) per mutation and mutations/s.
//
// It opens the database through the server's VFS (Sources/CSQLiteWAL: a commit's WAL frames in
// one write), as the server does; --vfs default opens it through SQLite's own.
//
//   cc -O2 -ISources/CSQLiteWAL/include bench/sqlite-floor.c Sources/CSQLiteWAL/wal.c -lsqlite3
//   sqlite-floor DATABASE [--seconds S] [--batch N] [--slots N] [--vfs default]
#include "CSQLiteWAL.h"

#include <sqlite3.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define GROUPS 32

static sqlite3 *db;

static void fail(const char *what) {
    fprintf(stderr, "sqlite-floor: %s: %s\n", what, sqlite3_errmsg(db));
    exit(1);
}

static void exec(const char *sql) {
    char *error = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &error) != SQLITE_OK) {
        fprintf(stderr, "sqlite-floor: %s: %s\n", sql, error);
        exit(1);
    }
}

static sqlite3_stmt *prepare(const char *sql) {
    sqlite3_stmt *statement;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &statement, NULL) != SQLITE_OK) fail(sql);
    return statement;
}

static void step(sqlite3_stmt *statement) {
    if (sqlite3_step(statement) != SQLITE_DONE) fail(sqlite3_sql(statement));
    sqlite3_reset(statement);
}

static double seconds_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec + now.tv_nsec / 1e9;
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: sqlite-floor DATABASE [--seconds S] [--batch N] [--slots N]\n");
        return 2;
    }
    const char *path = argv[1];
    double duration = 5;
    int batch = 28, slots = 128;
    if (csqlitewal_register() != SQLITE_OK) { fprintf(stderr, "sqlite-floor: cannot register the VFS\n"); return 1; }
    const char *vfs = CSQLITEWAL_VFS_NAME;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seconds")) duration = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--batch")) batch = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--slots")) slots = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--vfs")) vfs = strcmp(argv[i + 1], "default") ? argv[i + 1] : NULL;
        else { fprintf(stderr, "sqlite-floor: unknown flag %s\n", argv[i]); return 2; }
    }
    if (batch < 1 || slots < 1 || duration <= 0) { fprintf(stderr, "sqlite-floor: bad value\n"); return 2; }

    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, vfs) != SQLITE_OK) fail(path);
    // The server's writer connection (SQLiteStore's pragmas at their defaults).
    exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;"
         "PRAGMA trusted_schema = OFF; PRAGMA secure_delete = FAST; PRAGMA temp_store = MEMORY;"
         "PRAGMA cache_size = -2048; PRAGMA mmap_size = 1073741824; PRAGMA wal_autocheckpoint = 4000;"
         "PRAGMA journal_size_limit = 67108864;");

    // The wire bench's shape: the owner and groups g0…g31; slot s is user (s / 32) of group (s % 32).
    exec("BEGIN IMMEDIATE");
    exec("INSERT INTO apps (id, name) VALUES (1, 'bench')");
    exec("INSERT INTO users (id, app_id, uid, name, name_folded, avatar, metadata, created_at)"
         " VALUES (1, 1, 'owner', 'owner', 'owner', '', x'', 1)");
    sqlite3_stmt *insertGroup = prepare(
        "INSERT INTO groups (id, app_id, guid, name, name_folded, icon, description, type, metadata, tags, owner,"
        " members_count, version, revision, created_at, updated_at) VALUES (?1, 1, ?2, ?2, ?2, '', '', 1, x'', x'', 'owner', 1, 1, 1, 1, 1)");
    sqlite3_stmt *insertUser = prepare(
        "INSERT INTO users (id, app_id, uid, name, name_folded, avatar, metadata, created_at) VALUES (?1, 1, ?2, ?2, ?2, '', x'', 1)");
    sqlite3_stmt *insertMember = prepare(
        "INSERT INTO members (group_id, uid, user_id, scope, joined_at) VALUES (?1, ?2, ?3, ?4, ?5)");
    char text[64];
    for (int g = 0; g < GROUPS; g++) {
        snprintf(text, sizeof text, "g%d", g);
        sqlite3_bind_int64(insertGroup, 1, g + 1);
        sqlite3_bind_text(insertGroup, 2, text, -1, SQLITE_TRANSIENT);
        step(insertGroup);
        sqlite3_bind_int64(insertMember, 1, g + 1);
        sqlite3_bind_text(insertMember, 2, "owner", -1, SQLITE_STATIC);
        sqlite3_bind_int64(insertMember, 3, 1);
        sqlite3_bind_int64(insertMember, 4, 1);
        sqlite3_bind_int64(insertMember, 5, 1);
        step(insertMember);
    }
    char (*uids)[32] = calloc(slots, 32);
    for (int s = 0; s < slots; s++) {
        snprintf(uids[s], 32, "g%d-u%d", s % GROUPS, s / GROUPS);
        sqlite3_bind_int64(insertUser, 1, s + 2);
        sqlite3_bind_text(insertUser, 2, uids[s], -1, SQLITE_STATIC);
        step(insertUser);
    }
    exec("COMMIT");

    // The writer's statements (Query.swift).
    sqlite3_stmt *deleteMember = prepare("DELETE FROM members WHERE group_id = ?1 AND uid = ?2");
    sqlite3_stmt *insertBan = prepare(
        "INSERT INTO bans (group_id, uid, user_id, scope_before, joined_at, banned_at, banned_by, reason, expires_at)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    sqlite3_stmt *deleteBan = prepare("DELETE FROM bans WHERE group_id = ?1 AND uid = ?2");
    sqlite3_stmt *insertAction = prepare(
        "INSERT INTO actions (id, group_id, revision, kind, by_uid, on_uid, members_count, version, old_scope, new_scope,"
        " reason, expires_at, timestamp, idempotency_key, request_id, report_id)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)");
    sqlite3_stmt *updateCounters = prepare("UPDATE groups SET members_count = ?2, version = ?3 WHERE id = ?1");
    sqlite3_stmt *setAppHead = prepare("UPDATE apps SET head_seq = ?2 WHERE id = ?1");
    sqlite3_stmt *begin = prepare("BEGIN IMMEDIATE");
    sqlite3_stmt *commit = prepare("COMMIT");

    char wal[4096];
    snprintf(wal, sizeof wal, "%s-wal", path);
    int walDescriptor = open(wal, O_RDONLY | O_CLOEXEC);
    if (walDescriptor < 0) { perror(wal); return 1; }

    long long members[GROUPS], versions[GROUPS];
    for (int g = 0; g < GROUPS; g++) { members[g] = 1; versions[g] = 1; }
    int dirty[GROUPS];
    int *steps = calloc(slots, sizeof(int));
    long long seq = 0, mutations = 0, commits = 0;
    int slot = 0;
    double startWall = seconds_now(), startCPU = cpu_seconds(), deadline = startWall + duration;
    while (seconds_now() < deadline) {
        step(begin);
        memset(dirty, 0, sizeof dirty);
        for (int b = 0; b < batch; b++, slot = (slot + 1) % slots) {
            int g = slot % GROUPS, kind;
            long long now = (long long)(seconds_now() * 1000);
            const char *actor = "owner";
            switch (steps[slot]++ % 5) {
            case 0: case 2:  // JoinGroup, as the user
                sqlite3_bind_int64(insertMember, 1, g + 1);
                sqlite3_bind_text(insertMember, 2, uids[slot], -1, SQLITE_STATIC);
                sqlite3_bind_int64(insertMember, 3, slot + 2);
                sqlite3_bind_int64(insertMember, 4, 3);
                sqlite3_bind_int64(insertMember, 5, now);
                step(insertMember);
                members[g]++;
                actor = uids[slot];
                kind = 1;
                break;
            case 1:  // KickMember
                sqlite3_bind_int64(deleteMember, 1, g + 1);
                sqlite3_bind_text(deleteMember, 2, uids[slot], -1, SQLITE_STATIC);
                step(deleteMember);
                members[g]--;
                kind = 3;
                break;
            case 3:  // BanMember: the membership goes, the ban row comes
                sqlite3_bind_int64(deleteMember, 1, g + 1);
                sqlite3_bind_text(deleteMember, 2, uids[slot], -1, SQLITE_STATIC);
                step(deleteMember);
                sqlite3_bind_int64(insertBan, 1, g + 1);
                sqlite3_bind_text(insertBan, 2, uids[slot], -1, SQLITE_STATIC);
                sqlite3_bind_int64(insertBan, 3, slot + 2);
                sqlite3_bind_int64(insertBan, 4, 3);
                sqlite3_bind_int64(insertBan, 5, now);
                sqlite3_bind_int64(insertBan, 6, now);
                sqlite3_bind_text(insertBan, 7, "owner", -1, SQLITE_STATIC);
                sqlite3_bind_text(insertBan, 8, "bench", -1, SQLITE_STATIC);
                sqlite3_bind_int64(insertBan, 9, 0);
                step(insertBan);
                members[g]--;
                kind = 4;
                break;
            default:  // UnbanMember
                sqlite3_bind_int64(deleteBan, 1, g + 1);
                sqlite3_bind_text(deleteBan, 2, uids[slot], -1, SQLITE_STATIC);
                step(deleteBan);
                kind = 5;
                break;
            }
            versions[g]++;
            dirty[g] = 1;
            seq++;
            sqlite3_bind_int64(insertAction, 1, (1LL << 43) | seq);
            sqlite3_bind_int64(insertAction, 2, g + 1);
            sqlite3_bind_int64(insertAction, 3, 1);
            sqlite3_bind_int64(insertAction, 4, kind);
            sqlite3_bind_text(insertAction, 5, actor, -1, SQLITE_STATIC);
            sqlite3_bind_text(insertAction, 6, uids[slot], -1, SQLITE_STATIC);
            sqlite3_bind_int64(insertAction, 7, members[g]);
            sqlite3_bind_int64(insertAction, 8, versions[g]);
            sqlite3_bind_null(insertAction, 9);
            sqlite3_bind_null(insertAction, 10);
            sqlite3_bind_text(insertAction, 11, kind == 4 ? "bench" : "", -1, SQLITE_STATIC);
            sqlite3_bind_int64(insertAction, 12, 0);
            sqlite3_bind_int64(insertAction, 13, now);
            sqlite3_bind_text(insertAction, 14, "", -1, SQLITE_STATIC);
            sqlite3_bind_text(insertAction, 15, "", -1, SQLITE_STATIC);
            sqlite3_bind_int64(insertAction, 16, 0);
            step(insertAction);
            mutations++;
        }
        for (int g = 0; g < GROUPS; g++) {
            if (!dirty[g]) continue;
            sqlite3_bind_int64(updateCounters, 1, g + 1);
            sqlite3_bind_int64(updateCounters, 2, members[g]);
            sqlite3_bind_int64(updateCounters, 3, versions[g]);
            step(updateCounters);
        }
        sqlite3_bind_int64(setAppHead, 1, 1);
        sqlite3_bind_int64(setAppHead, 2, seq);
        step(setAppHead);
        step(commit);
        if (fdatasync(walDescriptor) != 0) { perror("fdatasync"); return 1; }
        commits++;
    }
    double wall = seconds_now() - startWall, cpu = cpu_seconds() - startCPU;
    printf("{\"mutations\": %lld, \"commits\": %lld, \"seconds\": %.3f, \"cpu_seconds\": %.4f,"
           " \"mutations_per_second\": %.0f, \"cpu_us_per_mutation\": %.2f}\n",
           mutations, commits, wall, cpu, mutations / wall, cpu / mutations * 1e6);
    sqlite3_close(db);
    return 0;
}
