import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OpenAPIRuntime
import OpenAPIURLSession

extension Client {
    /// A client of the Lede server at `serverURL` (for example `http://localhost:8080`), over URLSession, with the
    /// generator's default configuration (RFC 3339 timestamps in whole seconds, as Lede sends them).
    public static func lede(_ serverURL: URL, session: URLSession = .shared) -> Client {
        Client(serverURL: serverURL, transport: URLSessionTransport(configuration: .init(session: session)))
    }
}

/// One event of the live bell (`GET /notifications/stream`), typed by its name: `openapi.yaml`'s `BellEvent` with its
/// `data` decoded as the JSON schema the event names.
public enum BellUpdate: Sendable {
    /// `event: badge`: the badge at the start and whenever the count changes; `id` is the newest notification seen.
    case badge(Components.Schemas.Badge, id: String?)
    /// `event: notification`: a new unread notification (send `id` back as `Last-Event-ID` when reconnecting).
    case notification(Components.Schemas.Notification, id: String?)
    /// `event: error`: the token was refused; the stream ends.
    case error(Components.Schemas.Problem)
}

extension HTTPBody {
    /// The bell's events as they arrive (`asDecodedServerSentEvents`, then each event's JSON data by its name); an event
    /// of another name is skipped, as EventSource skips a name it has no listener for.
    public func bellUpdates() -> AsyncThrowingStream<BellUpdate, any Error> {
        let events = asDecodedServerSentEvents()
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let decoder = JSONDecoder()
                    decoder.dateDecodingStrategy = .iso8601   // RFC 3339 timestamps
                    for try await event in events {
                        guard let data = event.data.map({ Data($0.utf8) }) else { continue }
                        switch event.event {
                        case "badge": continuation.yield(.badge(try decoder.decode(Components.Schemas.Badge.self, from: data), id: event.id))
                        case "notification": continuation.yield(.notification(try decoder.decode(Components.Schemas.Notification.self, from: data), id: event.id))
                        case "error": continuation.yield(.error(try decoder.decode(Components.Schemas.Problem.self, from: data)))
                        default: continue
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
