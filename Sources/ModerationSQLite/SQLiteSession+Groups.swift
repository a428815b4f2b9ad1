internal import Moderation
internal import ModerationStoreSupport

extension SQLiteSession {
    func group(appID: Int64, guid: String) throws(ModerationError) -> StoredGroup? {
        let key = WriterCache.GroupKey(appID: appID, guid: guid)
        if isWriter, let cached = cache.group(key) { return cached }
        let found = try connection.row(.groupByGUID, appID, guid, decode: decodeGroup)
        if isWriter, let found { cache.set(key, found) }
        return found
    }

    /// The single writer already serializes every change, so reading the group is locking it.
    func groupForUpdate(appID: Int64, guid: String) throws(ModerationError) -> StoredGroup? {
        try group(appID: appID, guid: guid)
    }

    func insertGroup(appID: Int64, _ group: Group, passwordHash: String?) throws(ModerationError) -> StoredGroup {
        let id = try insertSearchable(.insertGroup, kind: .group, appID: appID, key: group.guid, name: group.name) {
            statement in
            statement.bind(
                from: 5, group.icon, group.description, StorageCodes.code(group.type), passwordHash,
                RecordCoding.encode(group.metadata), RecordCoding.encode(group.tags), group.owner, group.membersCount,
                group.version, Int64(1), group.createdAt, group.updatedAt)
        }
        let stored = StoredGroup(id: id, revision: 1, group: group, passwordHash: passwordHash)
        cache.set(WriterCache.GroupKey(appID: appID, guid: group.guid), stored)
        try insertRevision(stored)
        try writeTags(groupID: stored.id, group.tags)
        return stored
    }

    func updateGroup(_ group: inout StoredGroup, descriptive: Bool) throws(ModerationError) {
        guard descriptive else {
            if !cache.keepCounters(of: group) { try writeCounters(group) }
            return
        }
        if let key = cache.key(ofGroup: group.id, guid: group.group.guid) { cache.set(key, nil) }
        guard let old = try searchableRow(.groupFolded, id: group.id) else {
            throw .storage("group \(group.group.guid) vanished during an update")
        }
        try supersede(groupID: group.id, revision: group.revision, at: group.group.updatedAt)
        group.revision += 1
        let folded = TextFolding.fold(group.group.name)
        let value = group
        try connection.execute(
            .updateGroupAll, value.id, value.group.name, folded, value.group.icon, value.group.description,
            StorageCodes.code(value.group.type), value.passwordHash, RecordCoding.encode(value.group.metadata),
            RecordCoding.encode(value.group.tags), value.group.owner, value.group.membersCount, value.group.version,
            value.revision, value.group.updatedAt, value.group.frozen, value.group.frozenReason,
            value.group.joinRequests)
        try insertRevision(value)
        try reindexSearch(kind: .group, id: value.id, old: old, key: value.group.guid, folded: folded)
        try connection.execute(.deleteTags, value.id)
        try writeTags(groupID: value.id, value.group.tags)
    }

    /// Writes a group's members_count and version.
    func writeCounters(_ group: StoredGroup) throws(ModerationError) {
        try connection.execute(.updateGroupCounters, group.id, group.group.membersCount, group.group.version)
    }

    func deleteGroup(_ group: StoredGroup, at time: Int64) throws(ModerationError) {
        cache.forgetDeleted(group)
        try supersede(groupID: group.id, revision: group.revision, at: time)
        let appID = try appOfGroup(group.id)
        try indexSearch(
            kind: .group, appID: appID, id: group.id, old: [group.group.guid, TextFolding.fold(group.group.name)],
            new: [])
        try connection.execute(.deleteGroup, group.id)
    }

    /// The app a group belongs to.
    func appOfGroup(_ groupID: Int64) throws(ModerationError) -> Int64 {
        guard let appID = try connection.row(.groupFolded, groupID, decode: { $0.int64(2) }) else {
            throw .storage("group \(groupID) vanished")
        }
        return appID
    }

    func groups(appID: Int64, query: GroupPageQuery) throws(ModerationError) -> [GroupListing] {
        if query.joinedOnly && query.viewer == nil { return [] }
        // A viewer's own groups are few: filter them directly.
        let plan: SearchPlan =
            query.joinedOnly ? .scan(keyword: query.search) : try searchPlan(query.search, kind: .group, appID: appID)
        let statementQuery: Query
        var keyword = ""
        var candidates: String? = nil
        switch plan {
        case .none: statementQuery = query.joinedOnly ? .groupsPageJoined : .groupsPage
        case .scan(let text): (statementQuery, keyword) = (query.joinedOnly ? .groupsPageJoined : .groupsPage, text)
        case .candidates(let text, let ids): (statementQuery, keyword, candidates) = (.groupsPageSearch, text, ids)
        }
        return try connection.run(statementQuery) { (statement) throws(ModerationError) -> [GroupListing] in
            statement.bind(
                from: 1, appID, query.viewer ?? "", query.viewer == nil, query.after?.createdAt ?? Int64.min,
                query.after?.guid ?? "", StorageCodes.mask(query.types),
                query.tags.isEmpty ? "" : JSON.array(query.tags),
                query.now, query.limit, keyword)
            if let candidates { statement.bind(11, candidates) }
            return try statement.rows { (statement) throws(ModerationError) in
                var membership: Membership? = nil
                if !statement.isNull(18), let scope = StorageCodes.scope(statement.int(18)) {
                    membership = Membership(scope: scope, joinedAt: statement.int64(19))
                }
                return GroupListing(group: try decodeGroup(statement), membership: membership)
            }
        }
    }

    /// A group row in the order of `Query.groupColumns`.
    func decodeGroup(_ statement: SQLiteStatement) throws(ModerationError) -> StoredGroup {
        let group = Group(
            guid: statement.string(2), name: statement.string(3), icon: statement.string(4),
            description: statement.string(5),
            type: StorageCodes.groupType(statement.int(6)), metadata: try RecordCoding.metadata(statement.blob(8)),
            tags: try RecordCoding.strings(statement.blob(9)), owner: statement.string(10),
            membersCount: statement.int(11),
            version: statement.uint64(12), createdAt: statement.int64(13), updatedAt: statement.int64(14),
            frozen: statement.int(15) != 0, frozenReason: statement.string(16), joinRequests: statement.int(17) != 0)
        return StoredGroup(
            id: statement.int64(0), revision: statement.uint64(1), group: group,
            passwordHash: statement.optionalString(7))
    }

    private func insertRevision(_ stored: StoredGroup) throws(ModerationError) {
        try connection.execute(
            .insertRevision, stored.id, stored.revision, stored.group.guid, stored.group.name, stored.group.icon,
            stored.group.description, StorageCodes.code(stored.group.type), RecordCoding.encode(stored.group.metadata),
            RecordCoding.encode(stored.group.tags), stored.group.owner, stored.group.createdAt, stored.group.updatedAt,
            stored.group.frozen, stored.group.joinRequests)
    }

    private func supersede(groupID: Int64, revision: UInt64, at time: Int64) throws(ModerationError) {
        try connection.execute(.supersedeRevision, groupID, revision, time)
    }

    private func writeTags(groupID: Int64, _ tags: [String]) throws(ModerationError) {
        for tag in tags { try connection.execute(.insertTag, groupID, tag) }
    }
}
