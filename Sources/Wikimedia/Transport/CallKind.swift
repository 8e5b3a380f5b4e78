/// What an upstream call is for: the label its metrics are counted under, and the unit Wikimedia's `Retry-After` stops
/// (a 429 on one kind of call to an origin pauses that kind there, not the others).
public enum CallKind: String, Sendable, CaseIterable {
    // Feed and pages (REST v1 and the Action API's `query`).
    case feed, summary, related, random, nearby, search
    // The article screen.
    case contents, languages, siteinfo, media, files, html
    // Echo.
    case notifications, token, markread
    // The Saved tab, the editor.
    case readinglists, editor, edit
    case readinglistsSetup = "readinglists-setup", readinglistsEntries = "readinglists-entries"
    case readinglistsAdd = "readinglists-add", readinglistsDelete = "readinglists-delete"
    // Not Wikimedia: the rgallery screen's listings.
    case reddit
}
