// libpq (Debian's libpq-dev), the PostgreSQL client library of the PostgreSQL store.
#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
#include <libpq-fe.h>

/// PG_DIAG_SQLSTATE and PG_DIAG_MESSAGE_PRIMARY are character-literal macros Swift does not
/// import as field codes: these read the two fields an error is classified and reported by.
static inline const char *cpq_sqlstate(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_SQLSTATE);
}

static inline const char *cpq_primary_message(const PGresult *result) {
    return PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY);
}

static void cpq_ignore_notice(void *argument, const char *message) {
    (void)argument;
    (void)message;
}

/// NOTICEs ("relation already exists, skipping") would go to stderr: the store drops them (its
/// errors come from result statuses, never from notices).
static inline void cpq_silence_notices(PGconn *connection) {
    PQsetNoticeProcessor(connection, cpq_ignore_notice, (void *)0);
}
#endif
