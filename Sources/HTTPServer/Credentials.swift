import HTTPCore

/// What a request's `Authorization` field says, read once per request (RFC 9110 §11.6.2, RFC 6750 §2.1) and handed
/// to every stage: the rate limiter's key, the handler's account, the problem a route refuses with. The server reads
/// only its form; whether a token is accepted is for whoever it is sent to.
public enum Credentials: Sendable, Equatable {
    /// No `Authorization` field.
    case none
    /// A bearer token of valid form, as it is sent on: `Bearer <token>` (the scheme written so, one space).
    case bearer(String)
    /// An `Authorization` that is no single valid bearer token.
    case invalid(Invalid)

    public enum Invalid: Sendable, Equatable {
        /// The field came more than once.
        case repeated
        /// Another scheme than Bearer (or no token after it).
        case scheme
        /// A bearer token that is not RFC 6750's b64token, or longer than 4,096 bytes.
        case token
    }

    /// The bearer token, when there is one of valid form.
    public var bearer: String? {
        if case .bearer(let token) = self { return token }
        return nil
    }

    /// Reads `Authorization` (a request the parser saw without one costs nothing; one it saw is read where the parser
    /// found it, with no search by name).
    public static func read(_ request: HTTPRequest) -> Credentials {
        guard request.mayHaveAuthorization else { return .none }
        if let (at, count) = request.authorizationNoted {
            guard count == 1 else { return .invalid(.repeated) }
            if let read = request.headers.withReceivedValue(at: at, { credentials(in: $0) }) { return read }
        }
        return read(request.headers)
    }

    public static func read(_ headers: HTTPHeaders) -> Credentials {
        var count = 0
        var read = Credentials.none
        headers.forEach(named: "Authorization") { u in
            count += 1
            if count == 1 { read = credentials(in: u) }
        }
        return count > 1 ? .invalid(.repeated) : read
    }

    /// What one `Authorization` value says, judged where it lies: the one string made is the credentials as they are
    /// sent on.
    private static func credentials(in u: UnsafeBufferPointer<UInt8>) -> Credentials {
        switch judge(u) {
        case .scheme: return .invalid(.scheme)
        case .token: return .invalid(.token)
        case .exact: return .bearer(String(decoding: u, as: UTF8.self))
        case .other: return .bearer("Bearer " + String(decoding: UnsafeBufferPointer(rebasing: u[7...]), as: UTF8.self))
        }
    }

    private enum Verdict { case exact, other, scheme, token }

    /// "Bearer" (any case), one space, then the token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
    private static func judge(_ u: UnsafeBufferPointer<UInt8>) -> Verdict {
        var space = 0
        while space < u.count, u[space] != 32 { space += 1 }
        guard space < u.count, ASCII.equalsLowercase(UnsafeBufferPointer(rebasing: u[0..<space]), "bearer") else { return .scheme }
        let token = UnsafeBufferPointer(rebasing: u[(space + 1)...])
        guard !token.isEmpty, token.count <= 4096, token.allSatisfy(isTokenByte) else { return .token }
        // Sent on as written when the client wrote the scheme as Wikimedia and RFC 6750 do.
        return space == 6 && u[0] == UInt8(ascii: "B") && u[1] == UInt8(ascii: "e") && u[2] == UInt8(ascii: "a")
            && u[3] == UInt8(ascii: "r") && u[4] == UInt8(ascii: "e") && u[5] == UInt8(ascii: "r") ? .exact : .other
    }

    @inline(__always)
    private static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case 48...57, 65...90, 97...122, 45, 46, 95, 126, 43, 47, 61: return true   // digits, letters, - . _ ~ + / =
        default: return false
        }
    }
}
