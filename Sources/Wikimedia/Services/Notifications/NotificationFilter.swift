import EventLoops
import LedeBasics
import Foundation

/// Which notifications to list (`notfilter`).
public enum NotificationFilter: String, Sendable, CaseIterable {
    case unread, read, all
    var upstreamValue: String {
        switch self {
        case .unread: return "!read"
        case .read: return "read"
        case .all: return "read|!read"
        }
    }
}
