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
