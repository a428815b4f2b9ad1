internal import Moderation
internal import ModerationStoreSupport

extension PostgresSession {
    func group(appID: Int64, guid: String) throws(ModerationError) -> StoredGroup? {
        let key = WriterCache.GroupKey(appID: appID, guid: guid)
        if isWriter, let cached = cache.group(key) { return focus(cached) }
        let row = try connection.query(.groupByGUID, [.int(appID), .text(guid)])
        guard row.rowCount > 0 else { return nil }
        let found = decodeGroup(row, 0)
        if isWriter { cache.set(key, found) }
        return isWriter ? focus(found) : found
    }

    /// A reader's group and `uid`'s membership in it in one statement; a writer reads them as
    /// the rules do, one after the other, through its cache.
    func groupAndMembership(appID: Int64, guid: String, uid: String) throws(ModerationError)
        -> (group: StoredGroup, membership: Membership?)?
    {
        guard !isWriter else {
            guard let group = try group(appID: appID, guid: guid) else { return nil }
            return (group, try membership(groupID: group.id, uid: uid))
        }
        let row = try connection.query(.groupWithMembership, [.int(appID), .text(guid), .text(uid)])
        guard row.rowCount > 0 else { return nil }
        return (decodeGroup(row, 0), decodeMembership(row, 0, from: Self.groupColumnCount))
    }

    /// A group a write reads becomes its focus (`WriterState.focusGroup`).
    private func focus(_ group: StoredGroup) -> StoredGroup {
        writer.focusGroup = group.id
        return group
    }

    /// The group a write is about to change. No row lock of its own: the app's lock (taken first
    /// when not yet held) keeps every other change of the app, the group's included, out until
    /// COMMIT. (A row lock per group cost each batch a WAL record and a dirtied page per group.)
    func groupForUpdate(appID: Int64, guid: String) throws(ModerationError) -> StoredGroup? {
        try lockApp(id: appID)
        let key = WriterCache.GroupKey(appID: appID, guid: guid)
        // Read in this transaction: the copy is current (its counters may be newer than the row's).
        if let cached = cache.group(key) { return focus(cached) }
        // Not created since the read-ahead missed it: creating it caches it (below).
        if missingGroups.contains(key) { return nil }
        let row = try connection.query(.groupByGUID, [.int(appID), .text(guid)])
        guard row.rowCount > 0 else { return nil }
        let found = decodeGroup(row, 0)
        cache.set(key, found)
        return focus(found)
    }

    func insertGroup(appID: Int64, _ group: Group, passwordHash: String?) throws(ModerationError) -> StoredGroup {
        try lockApp(id: appID)
        let row = try connection.query(
            .insertGroup,
            [
                .int(appID), .text(group.guid), .text(group.name), .text(TextFolding.fold(group.name)),
                .text(group.icon), .text(group.description), .int(StorageCodes.code(group.type)),
                .optional(passwordHash), RecordCoding.encode(group.metadata), RecordCoding.encode(group.tags),
                .text(group.owner), .int(group.membersCount), .int(group.version), .int(Int64(1)),
                .int(group.createdAt), .int(group.updatedAt),
            ])
        let stored = StoredGroup(id: row.int64(0, 0), revision: 1, group: group, passwordHash: passwordHash)
        cache.set(WriterCache.GroupKey(appID: appID, guid: group.guid), stored)
        try insertRevision(stored)
        try connection.send(.insertTags, [.int(stored.id), RecordCoding.encode(group.tags)])
        return focus(stored)
    }

    func updateGroup(_ group: inout StoredGroup, descriptive: Bool) throws(ModerationError) {
        guard descriptive else {
            if !cache.keepCounters(of: group) { try writeCounters([group]) }
            return
        }
        let key = cache.key(ofGroup: group.id, guid: group.group.guid)
        try supersede(groupID: group.id, revision: group.revision, at: group.group.updatedAt)
        group.revision += 1
        let value = group
        try connection.send(
            .updateGroupAll,
            [
                .int(value.id), .text(value.group.name), .text(TextFolding.fold(value.group.name)),
                .text(value.group.icon), .text(value.group.description), .int(StorageCodes.code(value.group.type)),
                .optional(value.passwordHash), RecordCoding.encode(value.group.metadata),
                RecordCoding.encode(value.group.tags), .text(value.group.owner), .int(value.group.membersCount),
                .int(value.group.version), .int(value.revision), .int(value.group.updatedAt), .bool(value.group.frozen),
                .text(value.group.frozenReason), .bool(value.group.joinRequests),
            ])
        try insertRevision(value)
        try connection.send(.deleteTags, [.int(value.id)])
        try connection.send(.insertTags, [.int(value.id), RecordCoding.encode(value.group.tags)])
        if let key {
            // The row now holds every field, the counters included.
            cache.set(key, value)
            cache.setDirty(key, false)
        }
    }

    /// Writes groups' members_count and version, in one statement however many.
    func writeCounters(_ groups: [StoredGroup]) throws(ModerationError) {
        try connection.send(
            .updateGroupCounters,
            [
                .intArray(groups.map(\.id)), .intArray(groups.map { Int64($0.group.membersCount) }),
                .intArray(groups.map { Int64(clamping: $0.group.version) }),
            ])
    }

    func deleteGroup(_ group: StoredGroup, at time: Int64) throws(ModerationError) {
        cache.forgetDeleted(group)
        try supersede(groupID: group.id, revision: group.revision, at: time)
        try connection.send(.deleteGroup, [.int(group.id)])
    }

    func groups(appID: Int64, query: GroupPageQuery) throws(ModerationError) -> [GroupListing] {
        if query.joinedOnly && query.viewer == nil { return [] }
        let rows = try SearchSQL.page(
            query.joinedOnly ? .groupsPageJoined : .groupsPage,
            orSearch: query.joinedOnly ? SearchSQL.groupsJoined : SearchSQL.groups, for: query.search,
            [
                .int(appID), .text(query.viewer ?? ""), .bool(query.viewer == nil),
                .int(query.after?.createdAt ?? Int64.min), .text(query.after?.guid ?? ""),
                .int(StorageCodes.mask(query.types)), query.tags.isEmpty ? .null : .textArray(query.tags),
                .int(query.now), .int(query.limit),
            ], on: connection)
        var listings: [GroupListing] = []
        listings.reserveCapacity(rows.rowCount)
        for row in 0..<rows.rowCount {
            var membership: Membership? = nil
            if !rows.isNull(row, 18), let scope = StorageCodes.scope(rows.int(row, 18)) {
                membership = Membership(scope: scope, joinedAt: rows.int64(row, 19))
            }
            listings.append(GroupListing(group: decodeGroup(rows, row), membership: membership))
        }
        return listings
    }

    /// A group row in the order of `Statement.groupColumns`.
    func decodeGroup(_ rows: PGResult, _ row: Int) -> StoredGroup {
        let group = Group(
            guid: rows.string(row, 2), name: rows.string(row, 3), icon: rows.string(row, 4),
            description: rows.string(row, 5), type: StorageCodes.groupType(rows.int(row, 6)),
            metadata: RecordCoding.metadata(rows.strings(row, 8)), tags: rows.strings(row, 9),
            owner: rows.string(row, 10), membersCount: rows.int(row, 11), version: rows.uint64(row, 12),
            createdAt: rows.int64(row, 13), updatedAt: rows.int64(row, 14), frozen: rows.bool(row, 15),
            frozenReason: rows.string(row, 16), joinRequests: rows.bool(row, 17))
        return StoredGroup(
            id: rows.int64(row, 0), revision: rows.uint64(row, 1), group: group,
            passwordHash: rows.optionalString(row, 7))
    }

    private func insertRevision(_ stored: StoredGroup) throws(ModerationError) {
        try connection.send(
            .insertRevision,
            [
                .int(stored.id), .int(stored.revision), .text(stored.group.guid), .text(stored.group.name),
                .text(stored.group.icon), .text(stored.group.description), .int(StorageCodes.code(stored.group.type)),
                RecordCoding.encode(stored.group.metadata), RecordCoding.encode(stored.group.tags),
                .text(stored.group.owner), .int(stored.group.createdAt), .int(stored.group.updatedAt),
                .bool(stored.group.frozen), .bool(stored.group.joinRequests),
            ])
    }

    private func supersede(groupID: Int64, revision: UInt64, at time: Int64) throws(ModerationError) {
        try connection.send(.supersedeRevision, [.int(groupID), .int(revision), .int(time)])
    }
}
