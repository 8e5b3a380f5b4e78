import Upstream

/// The kinds of Wikimedia's calls, each its own metrics label and `Retry-After` unit.
extension CallKind {
    // Feed and pages (REST v1 and the Action API's `query`).
    public static let feed = CallKind("feed"), summary = CallKind("summary"), related = CallKind("related")
    public static let random = CallKind("random"), nearby = CallKind("nearby"), search = CallKind("search")
    // The article screen.
    public static let contents = CallKind("contents"), languages = CallKind("languages"), siteinfo = CallKind("siteinfo")
    public static let media = CallKind("media"), files = CallKind("files"), html = CallKind("html")
    // Echo.
    public static let notifications = CallKind("notifications"), token = CallKind("token"), markread = CallKind("markread")
    // The Saved tab, the editor.
    public static let readinglists = CallKind("readinglists"), editor = CallKind("editor"), edit = CallKind("edit")
    public static let readinglistsSetup = CallKind("readinglists-setup"), readinglistsEntries = CallKind("readinglists-entries")
    public static let readinglistsAdd = CallKind("readinglists-add"), readinglistsDelete = CallKind("readinglists-delete")
    public static let readinglistsChanges = CallKind("readinglists-changes")
    // Saved articles offline: the saved pages' current revisions (Action API), the mobile HTML's CSS and JavaScript (PCS).
    public static let revisions = CallKind("revisions"), offlineResources = CallKind("offline-resources")
}
