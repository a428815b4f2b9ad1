internal import Moderation
internal import ModerationStoreSupport

extension SQLiteSession {
    func group(appID: Int64, guid: String) throws(ModerationError) -> StoredGroup? {
        let key = WriterCache.GroupKey(appID: appID, guid: guid)
        if isWriter, let cached = cache.group(key) { return cached }
        let found = try connection.run(.groupByGUID) { (statement) throws(ModerationError) -> StoredGroup? in
            statement.bind(1, appID)
            statement.bind(2, guid)
            return try statement.step() ? try decodeGroup(statement) : nil
        }
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
            statement.bind(5, group.icon)
            statement.bind(6, group.description)
            statement.bind(7, StorageCodes.code(group.type))
            statement.bind(8, passwordHash)
            statement.bind(9, blob: RecordCoding.encode(group.metadata))
            statement.bind(10, blob: RecordCoding.encode(group.tags))
            statement.bind(11, group.owner)
            statement.bind(12, group.membersCount)
            statement.bind(13, group.version)
            statement.bind(14, Int64(1))
            statement.bind(15, group.createdAt)
            statement.bind(16, group.updatedAt)
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
        try connection.run(.updateGroupAll) { (statement) throws(ModerationError) in
            statement.bind(1, value.id)
            statement.bind(2, value.group.name)
            statement.bind(3, folded)
            statement.bind(4, value.group.icon)
            statement.bind(5, value.group.description)
            statement.bind(6, StorageCodes.code(value.group.type))
            statement.bind(7, value.passwordHash)
            statement.bind(8, blob: RecordCoding.encode(value.group.metadata))
            statement.bind(9, blob: RecordCoding.encode(value.group.tags))
            statement.bind(10, value.group.owner)
            statement.bind(11, value.group.membersCount)
            statement.bind(12, value.group.version)
            statement.bind(13, value.revision)
            statement.bind(14, value.group.updatedAt)
            statement.bind(15, value.group.frozen ? 1 : 0)
            statement.bind(16, value.group.frozenReason)
            statement.bind(17, value.group.joinRequests ? 1 : 0)
            try statement.execute()
        }
        try insertRevision(value)
        try reindexSearch(kind: .group, id: value.id, old: old, key: value.group.guid, folded: folded)
        try connection.run(.deleteTags) { (statement) throws(ModerationError) in
            statement.bind(1, value.id)
            try statement.execute()
        }
        try writeTags(groupID: value.id, value.group.tags)
    }

    /// Writes a group's members_count and version.
    func writeCounters(_ group: StoredGroup) throws(ModerationError) {
        try connection.run(.updateGroupCounters) { (statement) throws(ModerationError) in
            statement.bind(1, group.id)
            statement.bind(2, group.group.membersCount)
            statement.bind(3, group.group.version)
            try statement.execute()
        }
    }

    func deleteGroup(_ group: StoredGroup, at time: Int64) throws(ModerationError) {
        cache.forgetDeleted(group)
        try supersede(groupID: group.id, revision: group.revision, at: time)
        let appID = try appOfGroup(group.id)
        try indexSearch(
            kind: .group, appID: appID, id: group.id, old: [group.group.guid, TextFolding.fold(group.group.name)],
            new: [])
        try connection.run(.deleteGroup) { (statement) throws(ModerationError) in
            statement.bind(1, group.id)
            try statement.execute()
        }
    }

    /// The app a group belongs to.
    func appOfGroup(_ groupID: Int64) throws(ModerationError) -> Int64 {
        try connection.run(.groupFolded) { (statement) throws(ModerationError) -> Int64 in
            statement.bind(1, groupID)
            guard try statement.step() else { throw .storage("group \(groupID) vanished") }
            return statement.int64(2)
        }
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
            statement.bind(1, appID)
            statement.bind(2, query.viewer ?? "")
            statement.bind(3, query.viewer == nil ? 1 : 0)
            statement.bind(4, query.after?.createdAt ?? Int64.min)
            statement.bind(5, query.after?.guid ?? "")
            statement.bind(6, StorageCodes.mask(query.types))
            statement.bind(7, query.tags.isEmpty ? "" : JSON.array(query.tags))
            statement.bind(8, query.now)
            statement.bind(9, query.limit)
            statement.bind(10, keyword)
            if let candidates { statement.bind(11, candidates) }
            var rows: [GroupListing] = []
            while try statement.step() {
                let group = try decodeGroup(statement)
                var membership: Membership? = nil
                if !statement.isNull(18), let scope = StorageCodes.scope(statement.int(18)) {
                    membership = Membership(scope: scope, joinedAt: statement.int64(19))
                }
                rows.append(GroupListing(group: group, membership: membership))
            }
            return rows
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
        try connection.run(.insertRevision) { (statement) throws(ModerationError) in
            statement.bind(1, stored.id)
            statement.bind(2, stored.revision)
            statement.bind(3, stored.group.guid)
            statement.bind(4, stored.group.name)
            statement.bind(5, stored.group.icon)
            statement.bind(6, stored.group.description)
            statement.bind(7, StorageCodes.code(stored.group.type))
            statement.bind(8, blob: RecordCoding.encode(stored.group.metadata))
            statement.bind(9, blob: RecordCoding.encode(stored.group.tags))
            statement.bind(10, stored.group.owner)
            statement.bind(11, stored.group.createdAt)
            statement.bind(12, stored.group.updatedAt)
            statement.bind(13, stored.group.frozen ? 1 : 0)
            statement.bind(14, stored.group.joinRequests ? 1 : 0)
            try statement.execute()
        }
    }

    private func supersede(groupID: Int64, revision: UInt64, at time: Int64) throws(ModerationError) {
        try connection.run(.supersedeRevision) { (statement) throws(ModerationError) in
            statement.bind(1, groupID)
            statement.bind(2, revision)
            statement.bind(3, time)
            try statement.execute()
        }
    }

    private func writeTags(groupID: Int64, _ tags: [String]) throws(ModerationError) {
        for tag in tags {
            try connection.run(.insertTag) { (statement) throws(ModerationError) in
                statement.bind(1, groupID)
                statement.bind(2, tag)
                try statement.execute()
            }
        }
    }
}
