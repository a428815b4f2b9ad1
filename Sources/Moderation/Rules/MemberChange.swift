/// A change to one member of a group (scope change, ownership transfer) whose shared checks have
/// passed: the group locked for the change with the actor's standing in it, the target user, and
/// the target's membership.
struct MemberChange {
    var access: GroupAccess
    let target: StoredUser
    let membership: Membership
}
