import Foundation
import HTTPServer
import LedeBasics
import Wikimedia
import HTTPCore

/// The client's bearer credentials, checked for shape only (upstream decides whether they are valid).
enum BearerAuthorization {
    /// The credentials when the request sends any (checked as `extract` does), nil for an anonymous request.
    static func optional(_ headers: HTTPHeaders) throws -> String? {
        headers["Authorization"] == nil ? nil : try extract(headers)
    }

    static func extract(_ headers: HTTPHeaders) throws -> String {
        // Read over bytes: this runs on every user-bound request.
        var value: String?
        var count = 0
        headers.forEach(named: "Authorization") { v in
            count += 1
            if count == 1 { value = String(decoding: v, as: UTF8.self) }
        }
        guard count == 1, var value else {
            throw unauthorised(count == 0 ? "Authorization: Bearer <token> is required." : "Send one Authorization header.")
        }
        enum Verdict { case ok, exact, scheme, malformed }
        let verdict: Verdict = value.withUTF8 { u in
            // "Bearer" (any case), one space, then the token: RFC 6750 b64token, 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
            var space = 0
            while space < u.count, u[space] != 32 { space += 1 }
            guard space < u.count, ASCII.equalsLowercase(UnsafeBufferPointer(rebasing: u[0..<space]), "bearer") else { return .scheme }
            let token = UnsafeBufferPointer(rebasing: u[(space + 1)...])
            guard !token.isEmpty, token.count <= 4096, token.allSatisfy(isTokenByte) else { return .malformed }
            // Sent as Wikimedia expects it ("Bearer", one space) unless the client wrote the scheme otherwise.
            return space == 6 && u[0] == UInt8(ascii: "B") && u[1] == UInt8(ascii: "e") && u[2] == UInt8(ascii: "a")
                && u[3] == UInt8(ascii: "r") && u[4] == UInt8(ascii: "e") && u[5] == UInt8(ascii: "r") ? .exact : .ok
        }
        switch verdict {
        case .scheme: throw unauthorised("Use the Bearer scheme: Authorization: Bearer <token>.")
        case .malformed: throw unauthorised("The bearer token is malformed.")
        case .exact: return value
        case .ok: return "Bearer " + value.dropFirst(7)
        }
    }

    @inline(__always)
    private static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case 48...57, 65...90, 97...122, 45, 46, 95, 126, 43, 47, 61: return true   // digits, letters, - . _ ~ + / =
        default: return false
        }
    }

    static func unauthorised(_ detail: String) -> Problem {
        Problem(status: 401, slug: "not-authorised", detail: detail, headers: ["WWW-Authenticate": "Bearer realm=\"lede\""])
    }
}
